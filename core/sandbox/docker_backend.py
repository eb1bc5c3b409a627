"""Sandboxes as containers behind any Docker-API engine: Docker, or podman's Docker-API service.

Why it is built this way (facts in docs/sandboxes.md, "Facts about our machines"):

- One long-lived container per attempt, and every command is an exec into it. podman takes ~20 s to
  report that a detached container exited, so we never run-and-wait.
- The container's command is a shell blocked on a private fifo (the init), appended to the image's
  ENTRYPOINT as Docker does: an entrypoint that starts services and ends with ``exec "$@"`` runs them
  first. The init never exits on its own, and bash as pid 1 reaps the orphans that commands leave
  behind (dash does not, hence bash when the image has it). Once it runs it leaves a marker; the
  processes alive then (the entrypoint's services, after they settle) are the sandbox's own.
- Each command runs under a small wrapper that, when the command ends, SIGKILLs every other process
  in the container until none is left, so nothing a command started survives it, ``setsid`` daemons
  included. Without entrypoint processes that is ``kill -9 -1`` (it spares only pid 1 and the
  caller); with them, every process not in the ready-time set (pid and start time, so a reused pid
  is not spared) is killed, round after round. On a timeout a root exec does the same sweep from
  outside. Commands in one sandbox therefore run one at a time. The entrypoint's output (the
  container's log) is kept on the sandbox and quoted when the container dies.
- Images cannot be pulled: base images come from the local Debian root filesystems and task images
  are built through the engine and cached (docker_images.py).
- docker-compose tasks (compose.py): ``main`` is this sandbox, on a private network shared with the
  task's sidecars, which start first in depends_on order and are removed with it.
- Limits come from the policy: no network (loopback only), memory without swap, pids, CPUs, all
  capabilities dropped but the few that let root act as root inside, no-new-privileges, low explicit
  ulimits (podman fails to start containers without them here), and a storage cap only where the
  engine accepts ``storage_opt`` (overlay on xfs with pquota). ``protections()`` reports what the
  engine actually applied, read back from the first container started.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import signal
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from ..archive import unpadded_tar
from ..errors import BuildError, BuildTimeout, MissingPrerequisite, SandboxError
from ..tasks import Task
from .base import BackendCapabilities, EnvironmentDetails, PreparedEnvironment, Protection, Sandbox, SandboxBackend
from .compose import load_compose
from .compose_group import ComposeGroup, HostGuard
from .compose_spec import MAIN, MAIN_IMAGE, BuildSpec, ComposeSpec, Service, check_health_conditions, image_healthcheck
from .docker_images import BASE_REPO, LABEL, BuildPlan, ImageStore, docker_errors, short_error
from .docker_sandbox import LAUNCH, PROBE, DockerSandbox
from .docker_verify import ScratchContainers
from .podman import SYSTEM_SOCKET, docker_host
from .rootfs import resolve_base

T = TypeVar("T")

# What root inside needs to act as root on its own files (chown, chmod, su, kill), and no more.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE"]
_CAP_BITS = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6, "SETUID": 7,
             "NET_BIND_SERVICE": 10}
ULIMITS = [("nofile", 1024, 1024), ("nproc", 4096, 4096)]
CONTROL_TIMEOUT = 120.0  # create/start/inspect/remove: an engine that takes longer is broken
FIX_HINT = (f"start Docker, or serve podman's Docker API: `podman system service --time=0 unix://{SYSTEM_SOCKET} &` "
            f"then `export DOCKER_HOST=unix://{SYSTEM_SOCKET}` (.ci/podman.sh does both)")

READY_TIMEOUT = 30.0  # how long an image's ENTRYPOINT may take to run the container's command
LOG_TAIL = 50  # lines of the container's own output (its entrypoint's) kept on the sandbox


def reap_exec_monitors(container_id: str) -> int:
    """Stop the exec monitors podman left for a container just removed; returns how many.

    podman starts one ``conmon`` per exec and keeps it for ``exit_command_delay`` (300 s by default)
    after the command ended, so that a client may still ask for its exit code: a batch of attempts
    left hundreds running for minutes. Once the container is gone nobody can ask. Only exec monitors
    (``-e``) naming this container's full id are touched; with a remote engine or Docker there are none
    in this host's /proc, and nothing happens."""
    if not re.fullmatch(r"[0-9a-f]{64}", container_id):
        return 0
    needle = b"\0-c\0" + container_id.encode() + b"\0"

    def monitors() -> list[int]:
        found = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                        cmdline = fh.read()
                except OSError:
                    continue
                if (os.path.basename(cmdline.split(b"\0", 1)[0]) == b"conmon" and needle in cmdline
                        and b"\0-e\0" in cmdline):
                    found.append(int(entry.name))
        return found

    stopped = monitors()
    for pid in stopped:  # idle: the command they watched has ended, and nobody will ask for its status
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5  # gone (or a zombie, without a command line) within milliseconds
    while stopped and monitors() and time.monotonic() < deadline:
        time.sleep(0.01)
    return len(stopped)


def connect(timeout: float | None = None) -> Any:
    """A Docker SDK client for DOCKER_HOST (or Docker's default socket). Raises MissingPrerequisite,
    in one line, when the SDK is missing or no engine answers there."""
    try:
        import docker
    except ImportError as exc:
        raise MissingPrerequisite("the Docker SDK is not installed",
                                  hint="pip install 'autoenvscaling[docker]'") from exc
    url = docker_host()
    try:
        # timeout=None: exec streams may stay silent for as long as a command runs; every call is
        # bounded by asyncio timeouts instead.
        return docker.from_env(timeout=timeout, max_pool_size=64)
    except docker.errors.DockerException as exc:
        reason = short_error(exc)
        why = ("no socket there" if "No such file" in reason else
               "connection refused" if "refused" in reason.lower() else reason[:120])
        raise MissingPrerequisite(f"no Docker-API engine is reachable at {url} ({why})", hint=FIX_HINT) from exc


class DockerBackend(SandboxBackend):
    """Containers through the Docker API. Thread-safe client; blocking SDK calls run in a private
    thread pool (the default one is too small for many concurrent execs)."""

    name = "docker"
    supports_gpus = True  # device_requests, where the engine has NVIDIA support
    supports_internet = True
    supports_compose = True
    supports_browser = True  # a browser the image brings runs in the container

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="aes-docker")
        self.images = ImageStore(lambda: self.client, self.cache_dir)
        self._storage_opt: bool | None = None  # does the engine accept storage_opt? (None: not tried)
        self.ready_timeout = READY_TIMEOUT
        self._observed: dict[str, Protection] = {}
        self.scratches = ScratchContainers(self)  # the prepared images' pristine files (docker_verify.py)

    @classmethod
    def available(cls) -> tuple[bool, str]:
        try:
            client = connect(timeout=5)
        except MissingPrerequisite as exc:
            return False, f"{exc.message}: {exc.hint}"
        client.close()
        return True, ""

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        with self._client_lock:
            if self._client is None:
                self._client = connect()
                with contextlib.suppress(docker_errors().DockerException):
                    self.remove_stale(self._client)  # best effort: leftovers of crashed processes only cost disk
            return self._client

    async def call(self, fn: Callable[..., T], *args: Any, timeout: float | None = CONTROL_TIMEOUT,
                   what: str = "", **kwargs: Any) -> T:
        """Run a blocking SDK call in the pool. Engine errors become SandboxError (one line); callers
        that expect a specific error (NotFound) catch it inside ``fn``."""
        try:
            return await asyncio.wait_for(self.in_pool(fn, *args, **kwargs), timeout)
        except asyncio.TimeoutError:
            raise SandboxError(f"the Docker engine at {docker_host()} did not answer within {timeout:g}s ({what})") from None
        except docker_errors().DockerException as exc:
            raise SandboxError(f"{what or 'Docker API call'} failed: {short_error(exc)}") from exc

    def in_pool(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> "asyncio.Future[T]":
        return asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    # -- images -------------------------------------------------------------------------------
    async def prepare(self, task: Task) -> PreparedEnvironment:
        start = time.monotonic()
        await self.call(lambda: self.client, what="connect")  # MissingPrerequisite in one line, early
        spec = load_compose(task)
        budget = _Budget(task.config.environment.build_timeout_sec)
        if spec is None:
            env = task.config.environment
            if task.dockerfile is None and not env.docker_image:
                raise BuildError(f"task {task.name} has no environment/Dockerfile and no [environment].docker_image",
                                 hint="add environment/Dockerfile (FROM ubuntu:24.04 is the usual start)")
            main = Service(name=MAIN, build=None if task.dockerfile is None else BuildSpec(), image=env.docker_image)
            return self._prepared(task, await self._image_of(task, main, budget), start)
        services: dict[str, Service] = {}
        built: dict[str, _Image] = {}
        for name in [MAIN, *(n for n in spec.order if n != MAIN)]:  # main first: sidecars may run its image
            service = spec.services[name]
            runs_main = service.build is None and (service.image or "").startswith(MAIN_IMAGE)
            built[name] = built[MAIN] if runs_main else await self._image_of(task, service, budget)
            check = service.healthcheck or (None if service.healthcheck_disabled else image_healthcheck(built[name].config))
            services[name] = service.model_copy(update={"image_id": built[name].id, "healthcheck": check})
        spec = spec.model_copy(update={"services": services})
        check_health_conditions(spec)
        others = [built[n] for n in spec.order if n != MAIN and built[n] is not built[MAIN]]
        return self._prepared(task, built[MAIN], start, spec=spec, others=others)

    def _prepared(self, task: Task, main: "_Image", start: float, *, spec: ComposeSpec | None = None,
                  others: list["_Image"] | None = None) -> PreparedEnvironment:
        config = main.config
        image_env = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
        images = [main, *(others or [])]
        details = EnvironmentDetails(
            image=main.ref, build_log="\n".join(i.log for i in images if i.log)[-4000:],
            entrypoint=config.get("Entrypoint") or None,
            # Every external FROM (sidecars' too) and what it became; base_mapping is main's last one,
            # the final stage's base unless that stage starts FROM an earlier one.
            base_mappings=[m for image in images for m in image.mappings],
            base_mapping=main.mappings[-1] if main.mappings else None,
            notes=[n for image in images for n in image.notes] + list(spec.notes if spec else ()),
            compose=spec)
        workdir = (task.config.environment.workdir or (spec.main.working_dir if spec else None)
                   or config.get("WorkingDir") or "/")
        return PreparedEnvironment(
            backend=self.name, ref=main.id, workdir=workdir, env=image_env, user=config.get("User") or None,
            build_seconds=time.monotonic() - start, cached=all(i.cached for i in images), details=details)

    async def _image_of(self, task: Task, service: Service, budget: "_Budget") -> "_Image":
        """A service's image: built from its build spec (cached by content), or its ``image:``
        resolved to one the engine has."""
        where = "" if service.name == MAIN else f"service {service.name}: "
        if service.build is None:
            assert service.image is not None
            ref, mapping = await self.call(self.images.resolve_mapping, service.image, timeout=None, what="base image")
            image = _Image(ref=ref, cached=True, mappings=[mapping])
        else:
            plan = await self.call(self._plan, task, service.build, timeout=None, what="base image")
            try:
                cached, log = await self._build(task, plan, budget)
            except BuildError as exc:
                raise type(exc)(where + str(exc), hint=exc.hint) from exc  # a timeout stays a timeout
            image = _Image(ref=plan.tag, cached=cached, log=log, mappings=list(plan.mappings), notes=list(plan.notes))
        attrs = await self.call(self.client.api.inspect_image, image.ref, what="inspect image")
        image.id, image.config = attrs["Id"], attrs.get("Config") or {}
        image.notes += [f"{where}FROM {m['image']}: {m['note']}" for m in image.mappings if m.get("note")]
        return image

    def _plan(self, task: Task, build: BuildSpec) -> BuildPlan:
        prefix = f"{build.context}/" if build.context else ""
        files = {rel[len(prefix):]: (f.data, f.executable) for rel, f in task.environment_files.items()
                 if rel.startswith(prefix)}
        if build.inline is not None:
            text, dockerfile = build.inline, "Dockerfile"
        else:
            text, dockerfile = task.files[f"environment/{prefix}{build.dockerfile}"].text, build.dockerfile
        return self.images.plan_build(text, files, dockerfile=dockerfile, buildargs=build.args, target=build.target)

    async def _build(self, task: Task, plan: BuildPlan, budget: "_Budget") -> tuple[bool, str]:
        """Build (or reuse) one image within what is left of the task's build timeout."""
        cancelled = threading.Event()
        started = time.monotonic()
        try:
            return await asyncio.wait_for(self.in_pool(self.images.build, plan, cancelled), budget.left())
        except asyncio.TimeoutError:
            cancelled.set()  # the engine may still finish the build: it must not be tagged (cached) then
            raise BuildTimeout(f"task {task.name}: build timed out after {budget.limit:g}s",
                             hint="raise [environment].build_timeout_sec in task.toml") from None
        except docker_errors().DockerException as exc:
            raise BuildError(f"task {task.name}: docker build failed: {short_error(exc)}") from exc
        finally:
            budget.spend(time.monotonic() - started)

    # -- sandboxes ----------------------------------------------------------------------------
    async def create(self, task: Task, prepared: PreparedEnvironment) -> Sandbox:
        return DockerSandbox(self, task, prepared)

    def labels(self, task_name: str) -> dict[str, str]:
        """What marks our containers, networks and volumes (``remove_stale`` finds a dead owner's)."""
        return {LABEL: "sandbox", f"{LABEL}.task": task_name[:200], f"{LABEL}.pid": str(os.getpid()),
                f"{LABEL}.host": socket.gethostname()}

    def hardening(self, task: Task, *, add_caps: list[str] | None = None,
                  drop_caps: list[str] | None = None) -> dict[str, Any]:
        """The policy's limits and privileges, for every container of an attempt (sidecars too, which
        may add capabilities of CAPABILITIES back after dropping some, or drop more)."""
        from docker.types import Ulimit

        memory = self.policy.memory_for(task)
        dropped = set(CAPABILITIES) if "ALL" in (drop_caps or ()) else set(drop_caps or ())
        caps = sorted(({*CAPABILITIES} - dropped) | {*(add_caps or ())} & set(CAPABILITIES))
        settings: dict[str, Any] = dict(
            detach=True, stop_signal="SIGKILL", mem_limit=f"{memory}m", memswap_limit=f"{memory}m",
            pids_limit=self.policy.pids, cap_drop=["ALL"], cap_add=caps,
            security_opt=["no-new-privileges"], ulimits=[Ulimit(name=n, soft=s, hard=h) for n, s, h in ULIMITS],
            labels=self.labels(task.name))
        if task.config.environment.cpus and task.config.environment.cpus > 0:
            settings["nano_cpus"] = int(task.config.environment.cpus * 1e9)
        return settings

    def container_settings(self, task: Task, prepared: PreparedEnvironment) -> dict[str, Any]:
        """Keyword arguments for ``containers.create``: the sandbox's own container (its command is
        the init, after the image's ENTRYPOINT) with the policy's limits for this task."""
        settings: dict[str, Any] = dict(
            self.hardening(task), image=prepared.ref, command=["sh", "-c", LAUNCH], user="0",
            working_dir=prepared.workdir, environment=dict(task.config.environment.env),
            network_mode="bridge" if self.policy.network_for(task) else "none", read_only=False,
            name=f"aes-{re.sub(r'[^a-zA-Z0-9_.-]', '-', task.name)[:40]}-{uuid.uuid4().hex[:10]}")
        storage = self.policy.storage_for(task)
        if storage > 0 and self._storage_opt is not False:
            settings["storage_opt"] = {"size": f"{storage}m"}
        gpus = task.config.environment.gpus
        if gpus > 0 and task.config.environment.gpu_optional:
            gpus = min(gpus, self.capabilities().gpus)  # a reduced-mode run where the engine has fewer
        if gpus > 0:
            from .gpu import docker_device_requests

            settings["device_requests"] = docker_device_requests(gpus)
        return settings

    def capabilities(self) -> BackendCapabilities:
        """The host's GPUs count only when the engine can hand them out (an nvidia runtime or CDI)."""
        caps = super().capabilities()
        if not caps.gpus:
            return caps
        from .gpu import engine_gpu_support

        supported = False
        with contextlib.suppress(MissingPrerequisite):  # no engine: no GPUs
            client = connect(timeout=5)
            try:
                with contextlib.suppress(docker_errors().DockerException):
                    supported = engine_gpu_support(client.info())
            finally:
                client.close()
        return caps if supported else caps.model_copy(update={"gpus": 0, "gpu_types": ()})

    def create_container(self, settings: dict[str, Any], files: list[tuple[str, bytes]] | None = None) -> str:
        """Create a container, upload ``files`` ((directory, tar) pairs) into it, and start it; drop
        storage_opt (and remember) when the engine refuses it."""
        errors = docker_errors()
        try:
            container = self.client.containers.create(**settings)
            if "storage_opt" in settings:
                self._storage_opt = True
        except errors.APIError as exc:
            if "storage_opt" not in settings or "storage" not in short_error(exc).lower():
                raise
            self._storage_opt = False
            self._observed["storage cap"] = Protection(
                name="storage cap", active=False,
                detail=f"the engine refused storage_opt ({short_error(exc).rsplit(': ', 1)[-1][:160]})")
            container = self.client.containers.create(**{k: v for k, v in settings.items() if k != "storage_opt"})
        try:
            for directory, tar in files or ():
                if not self.client.api.put_archive(container.id, directory, unpadded_tar(tar)):
                    raise SandboxError(f"the engine refused the upload to {directory}")
            container.start()
        except (errors.DockerException, SandboxError):
            container.remove(force=True)
            raise
        return str(container.id)

    def logs_tail(self, container_id: str, lines: int = LOG_TAIL) -> str:
        """The last lines a container printed (its entrypoint's or its service's output)."""
        data = self.client.api.logs(container_id, stdout=True, stderr=True, tail=lines)
        return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)

    def remove_container(self, container_id: str) -> None:
        with contextlib.suppress(docker_errors().NotFound):
            self.client.api.remove_container(container_id, force=True, v=True)
        reap_exec_monitors(container_id)

    def remove_network(self, name: str) -> None:
        with contextlib.suppress(docker_errors().NotFound):
            self.client.api.remove_network(name)

    def remove_volume(self, name: str) -> None:
        with contextlib.suppress(docker_errors().NotFound):
            self.client.api.remove_volume(name, force=True)

    def observed(self, name: str, protection: Protection) -> None:
        """Record a protection seen while running (e.g. a compose network's host guard)."""
        self._observed[name] = protection

    def observe(self, container_id: str, probe: str, network_wanted: bool) -> None:
        """Record which protections the engine applied, from its inspect data and what the first
        container sees of itself (capability bounding set, no_new_privs, cgroup limits)."""
        host = self.client.api.inspect_container(container_id).get("HostConfig") or {}
        facts = dict(line.split(":", 1) for line in probe.splitlines() if ":" in line)
        facts = {k.strip(): v.strip() for k, v in facts.items()}
        expected_caps = sum(1 << _CAP_BITS[c] for c in CAPABILITIES)
        try:
            caps = int(facts.get("CapBnd", ""), 16)
        except ValueError:
            caps = -1
        memory = facts.get("memory.max") or facts.get("memory/memory.limit_in_bytes", "")
        pids = facts.get("pids.max") or facts.get("pids/pids.max", "")
        mode = str(host.get("NetworkMode") or "")
        observed = [
            Protection(name="loopback-only network", active=mode == "none",
                       detail=f"network_mode={mode}" + (" (task granted internet)" if network_wanted else "")),
            Protection(name="capabilities dropped", active=caps == expected_caps,
                       detail=f"bounding set {facts.get('CapBnd', '?')}: {', '.join(CAPABILITIES)} only"),
            Protection(name="no-new-privileges", active=facts.get("NoNewPrivs") == "1",
                       detail="setuid binaries cannot raise privileges"),
            Protection(name="memory cgroup", active=bool(host.get("Memory")) and memory.isdigit(),
                       detail=f"cgroup memory limit {memory or 'not visible'} bytes, swap off"),
            Protection(name="pids cgroup", active=bool(host.get("PidsLimit")) and pids.isdigit(),
                       detail=f"cgroup pids limit {pids or 'not visible'}"),
            Protection(name="cpu limit", active=bool(host.get("NanoCpus")),
                       detail=f"{(host.get('NanoCpus') or 0) / 1e9:g} CPUs"),
            Protection(name="rlimits", active=bool(host.get("Ulimits")),
                       detail=", ".join(f"{n}={s}:{h}" for n, s, h in ULIMITS)),
            Protection(name="no-leftover kill", active=True,
                       detail="after each command every process it started is SIGKILLed (setsid daemons "
                              "too); only an ENTRYPOINT's own services are spared"),
        ]
        if self._storage_opt:
            observed.append(Protection(name="storage cap", active=bool(host.get("StorageOpt")),
                                       detail=f"storage_opt {host.get('StorageOpt')}"))
        if mode.startswith(ComposeGroup.NETWORK_PREFIX):  # a compose sandbox: judged by its network instead
            observed = observed[1:]
        self._observed.update({p.name: p for p in observed})

    def protections(self) -> list[Protection]:
        """What the engine applied to the first container started. A fresh backend (``doctor``)
        starts a short-lived probe container when the base image is already on the engine."""
        if not self._observed:
            try:
                self._probe()
            except (MissingPrerequisite, docker_errors().DockerException) as exc:
                reason = exc.message if isinstance(exc, MissingPrerequisite) else short_error(exc)
                return [Protection(name="container isolation", active=False, detail=f"not observed: {reason}")]
        if not self._observed:
            return [Protection(name="container isolation", active=False,
                               detail=f"not observed yet: {BASE_REPO} is not on the engine; start one docker sandbox")]
        out = dict(self._observed)
        out["tamper-proof verification"] = Protection(
            name="tamper-proof verification", active=True,
            detail="the attempt's changes from the engine's container diff; what the task's verifier view "
                   "hides put back from a scratch container of the image through the archive endpoint; agent "
                   "processes swept by the image's own /bin/sh (docs/verification.md)")
        out.setdefault("storage cap", Protection(name="storage cap", active=False, detail="storage_opt not tried yet"))
        why = HostGuard.unavailable()
        out.setdefault("compose host guard", Protection(
            name="compose host guard", active=False,
            detail=f"no compose sandbox started yet; {why or 'iptables is available, so each compose attempt gets it'}"))
        return list(out.values())

    def _probe(self) -> None:
        """Start a container from the base image with the default settings and observe it."""
        errors = docker_errors()
        mapping = resolve_base("debian")
        preferred = f"{BASE_REPO}:{mapping.base if mapping else 'debian-bookworm'}"
        try:
            image = self.client.api.inspect_image(preferred)["Id"]
        except errors.ImageNotFound:  # any of our bases will do (only Ubuntu tasks may have run here)
            ours = self.client.api.images(name=BASE_REPO)
            if not ours:
                return
            image = ours[0]["Id"]
        task = Task.create("protections-probe", {}, None, {})
        settings = self.container_settings(task, PreparedEnvironment(backend=self.name, ref=image))
        container_id = self.create_container(settings)
        try:
            created = self.client.api.exec_create(container_id, ["sh", "-c", PROBE], user="0")
            probe = self.client.api.exec_start(created["Id"]).decode("utf-8", errors="replace")
            self.observe(container_id, probe, self.policy.network_for(task))
        finally:
            self.remove_container(container_id)

    def remove_stale(self, client: Any = None) -> int:
        """Remove sandbox containers, then compose networks and volumes, left by processes of this
        host that died without closing them (and the host guard rules of those networks)."""
        client = client or self.client
        filters = {"label": [f"{LABEL}=sandbox", f"{LABEL}.host={socket.gethostname()}"]}

        def dead(labels: dict[str, str] | None) -> bool:
            pid = int((labels or {}).get(f"{LABEL}.pid", "0") or 0)
            return bool(pid) and pid != os.getpid() and not _alive(pid)

        removed = 0
        for container in client.containers.list(all=True, filters=filters):
            if dead(container.labels):
                container.remove(force=True)
                reap_exec_monitors(str(container.id))
                removed += 1
        for network in client.networks.list(filters=filters):
            labels = network.attrs.get("Labels") or {}
            if dead(labels):
                network.remove()
                if labels.get(f"{LABEL}.interface") and not HostGuard.unavailable():
                    HostGuard.remove_stale(labels[f"{LABEL}.interface"])
                removed += 1
        for volume in client.volumes.list(filters=filters):
            if dead(volume.attrs.get("Labels")):
                volume.remove(force=True)
                removed += 1
        return removed

    async def aclose(self) -> None:
        if self._client is not None:
            await asyncio.to_thread(self.scratches.remove_all)
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self._pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class _Image:
    """One service's image as prepared: its ref and id, config, build log and base mappings."""

    ref: str
    cached: bool
    log: str = ""
    mappings: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    id: str = ""
    config: dict[str, Any] = field(default_factory=dict)


class _Budget:
    """A task's build timeout, shared by every image it builds (a compose task may build several)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.spent = 0.0

    def left(self) -> float:
        return max(self.limit - self.spent, 0.001)

    def spend(self, seconds: float) -> None:
        self.spent += seconds


def _alive(pid: int) -> bool:
    try:
        with contextlib.suppress(PermissionError):  # alive, and another user's
            os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
