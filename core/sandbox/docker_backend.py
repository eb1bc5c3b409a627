"""Sandboxes as containers behind any Docker-API engine: Docker, or podman's Docker-API service.

Why it is built this way (facts in DESIGN.md section 6):

- One long-lived container per attempt, and every command is an exec into it. podman takes ~20 s to
  report that a detached container exited, so we never run-and-wait.
- pid 1 is a shell blocked on a private fifo. It never exits on its own, and bash as pid 1 reaps the
  orphans that commands leave behind (dash does not, hence bash when the image has it).
- Each command runs under a small wrapper that, when the command ends, SIGKILLs every other process
  in the container until none is left (``kill -9 -1`` spares only pid 1 and the caller), so nothing a
  command started survives it, ``setsid`` daemons included. On a timeout a root exec does the same
  sweep from outside. Commands in one sandbox therefore run one at a time.
- Images cannot be pulled: base images come from the local Debian root filesystem and task images
  are built through the engine and cached (docker_images.py).
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
import io
import os
import re
import shlex
import socket
import tarfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import PurePosixPath
from typing import Any, Callable, Mapping, TypeVar

from ..errors import BuildError, MissingPrerequisite, SandboxError
from ..tasks import Task
from .base import DEFAULT_OUTPUT_LIMIT, ExecResult, PreparedEnvironment, Protection, Sandbox, SandboxBackend, make_tar
from .docker_images import BASE_REPO, LABEL, ImageStore, docker_errors, env_tag, short_error
from .podman import SYSTEM_SOCKET, docker_host
from .rootfs import map_base_image

T = TypeVar("T")

# What root inside needs to act as root on its own files (chown, chmod, su, kill), and no more.
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE"]
_CAP_BITS = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6, "SETUID": 7,
             "NET_BIND_SERVICE": 10}
ULIMITS = [("nofile", 1024, 1024), ("nproc", 4096, 4096)]
CONTROL_TIMEOUT = 120.0  # create/start/inspect/remove: an engine that takes longer is broken
ARCHIVE_LIMIT = 512 * 1024 * 1024  # get_archive refuses more than this (host memory)
SWEEP_TIMEOUT = 30.0
GO_MODE_SYMLINK = 1 << 27  # os.ModeSymlink in the engine's (Go) file-mode bits of an archive stat
FIX_HINT = (f"start Docker, or serve podman's Docker API: `podman system service --time=0 unix://{SYSTEM_SOCKET} &` "
            f"then `export DOCKER_HOST=unix://{SYSTEM_SOCKET}` (.ci/podman.sh does both)")

# pid 1: open a fifo read-write (so reads block forever), unlink it, then wait on it. It installs no
# signal handler, so nothing inside can stop it (pid 1 ignores signals it does not handle); the
# engine stops it with SIGKILL (stop_signal), so removing the container never waits.
_INIT = ("f=/dev/.autoenvscaling-init-$$; mkfifo \"$f\" && exec 3<>\"$f\" && rm -f \"$f\" || exit 1; "
         "while :; do read -r _ <&3; done")
_LAUNCH = f"if command -v bash >/dev/null 2>&1; then exec bash -c {shlex.quote(_INIT)}; fi; {_INIT}"
# Kill every process but pid 1 and ourselves until none is left (bounded: zombies count while pid 1
# has not reaped them yet).
_SWEEP = "i=0; while [ $i -lt 1000 ] && kill -9 -1 2>/dev/null; do i=$((i+1)); done"
# The command wrapper: $1 command, $2 working directory, $3 file to read stdin from ("" = none).
_WRAPPER = (f'cd -- "$2" || exit 1; if command -v bash >/dev/null 2>&1; then s=bash; else s=sh; fi; '
            f'if [ -n "$3" ]; then "$s" -c "$1" <"$3"; rc=$?; rm -f -- "$3"; else "$s" -c "$1" </dev/null; rc=$?; fi; '
            f'{_SWEEP}; exit $rc')
_PROBE = ("grep -E '^(CapBnd|NoNewPrivs):' /proc/self/status; "
          "for f in memory.max memory/memory.limit_in_bytes pids.max pids/pids.max; do "
          "[ -r /sys/fs/cgroup/$f ] && echo \"$f: $(cat /sys/fs/cgroup/$f)\"; done; true")


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
        return docker.from_env(timeout=timeout, max_pool_size=64)  # type: ignore[arg-type]
    except docker.errors.DockerException as exc:
        reason = short_error(exc)
        why = ("no socket there" if "No such file" in reason else
               "connection refused" if "refused" in reason.lower() else reason[:120])
        raise MissingPrerequisite(f"no Docker-API engine is reachable at {url} ({why})", hint=FIX_HINT) from exc


class DockerBackend(SandboxBackend):
    """Containers through the Docker API. Thread-safe client; blocking SDK calls run in a private
    thread pool (the default one is too small for many concurrent execs)."""

    name = "docker"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._client: Any = None
        self._client_lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=64, thread_name_prefix="aes-docker")
        self.images = ImageStore(lambda: self.client, self.cache_dir)
        self._storage_opt: bool | None = None  # does the engine accept storage_opt? (None: not tried)
        self._observed: dict[str, Protection] = {}

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
                try:
                    self.remove_stale(self._client)
                except docker_errors().DockerException:
                    pass  # best effort: leftovers of crashed processes only cost disk
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
        env = task.config.environment
        if any(name in task.environment_files for name in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml")):
            raise BuildError(f"task {task.name}: docker-compose environments are not supported yet",
                             hint="describe the environment with environment/Dockerfile")
        if task.dockerfile is None:
            if not env.docker_image:
                raise BuildError(f"task {task.name} has no environment/Dockerfile and no [environment].docker_image",
                                 hint="add environment/Dockerfile (FROM ubuntu:24.04 is the usual start)")
            ref = await self.call(self.images.resolve, env.docker_image, timeout=None, what="base image")
            image, cached, log = ref, True, ""
        else:
            dockerfile, bases = await self.call(self.images.render_dockerfile, task.dockerfile, timeout=None,
                                                what="base image")
            image, cached, log = await self._build(task, dockerfile, bases)
        attrs = await self.call(self.client.api.inspect_image, image, what="inspect image")
        config = attrs.get("Config") or {}
        image_env = dict(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
        return PreparedEnvironment(
            backend=self.name, ref=attrs["Id"], workdir=env.workdir or config.get("WorkingDir") or "/",
            env=image_env, user=config.get("User") or None, build_seconds=time.monotonic() - start,
            cached=cached, details={"image": image, "output_tail": log})

    async def _build(self, task: Task, dockerfile: str, bases: list[str]) -> tuple[str, bool, str]:
        """Build (or reuse) the task's image within its build timeout: (tag, cached, output tail)."""
        files = {rel: (f.data, f.executable) for rel, f in task.environment_files.items() if rel != "Dockerfile"}
        files["Dockerfile"] = (dockerfile.encode(), False)
        tag = env_tag(files, bases)
        limit = task.config.environment.build_timeout_sec
        cancelled = threading.Event()
        try:
            cached, log = await asyncio.wait_for(self.in_pool(self.images.build, tag, make_tar(files), cancelled), limit)
        except asyncio.TimeoutError:
            cancelled.set()  # the engine may still finish the build: it must not be tagged (cached) then
            raise BuildError(f"task {task.name}: build timed out after {limit:g}s",
                             hint="raise [environment].build_timeout_sec in task.toml") from None
        except docker_errors().DockerException as exc:
            raise BuildError(f"task {task.name}: docker build failed: {short_error(exc)}") from exc
        return tag, cached, log

    # -- sandboxes ----------------------------------------------------------------------------
    async def create(self, task: Task, prepared: PreparedEnvironment) -> Sandbox:
        return DockerSandbox(self, task, prepared)

    def container_settings(self, task: Task, prepared: PreparedEnvironment) -> dict[str, Any]:
        """Keyword arguments for ``containers.create``: the policy's limits for this task."""
        from docker.types import Ulimit

        memory = self.policy.memory_for(task)
        settings: dict[str, Any] = dict(
            image=prepared.ref, command=["sh", "-c", _LAUNCH], user="0", detach=True, stop_signal="SIGKILL",
            working_dir=prepared.workdir, environment=dict(task.config.environment.env),
            network_mode="bridge" if self.policy.network_for(task) else "none",
            mem_limit=f"{memory}m", memswap_limit=f"{memory}m", pids_limit=self.policy.pids,
            cap_drop=["ALL"], cap_add=list(CAPABILITIES), security_opt=["no-new-privileges"],
            ulimits=[Ulimit(name=n, soft=s, hard=h) for n, s, h in ULIMITS], read_only=False,
            labels={LABEL: "sandbox", f"{LABEL}.task": task.name[:200], f"{LABEL}.pid": str(os.getpid()),
                    f"{LABEL}.host": socket.gethostname()},
            name=f"aes-{re.sub(r'[^a-zA-Z0-9_.-]', '-', task.name)[:40]}-{uuid.uuid4().hex[:10]}",
        )
        if task.config.environment.cpus and task.config.environment.cpus > 0:
            settings["nano_cpus"] = int(task.config.environment.cpus * 1e9)
        storage = self.policy.storage_for(task)
        if storage > 0 and self._storage_opt is not False:
            settings["storage_opt"] = {"size": f"{storage}m"}
        return settings

    def create_container(self, settings: dict[str, Any]) -> str:
        """Create and start a container; drop storage_opt (and remember) when the engine refuses it."""
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
            container.start()
        except errors.DockerException:
            container.remove(force=True)
            raise
        return str(container.id)

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
        observed = [
            Protection(name="loopback-only network", active=host.get("NetworkMode") == "none",
                       detail=f"network_mode={host.get('NetworkMode')}" + (" (task granted internet)" if network_wanted else "")),
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
                       detail="after each command every other process in the container is SIGKILLed"),
        ]
        if self._storage_opt:
            observed.append(Protection(name="storage cap", active=bool(host.get("StorageOpt")),
                                       detail=f"storage_opt {host.get('StorageOpt')}"))
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
        out.setdefault("storage cap", Protection(name="storage cap", active=False, detail="storage_opt not tried yet"))
        return list(out.values())

    def _probe(self) -> None:
        """Start a container from the base image with the default settings and observe it."""
        errors = docker_errors()
        base = map_base_image("debian") or "debian-bookworm"
        try:
            image = self.client.api.inspect_image(f"{BASE_REPO}:{base}")["Id"]
        except errors.ImageNotFound:
            return
        task = Task.create("protections-probe", {}, None, {})
        settings = self.container_settings(task, PreparedEnvironment(backend=self.name, ref=image))
        container_id = self.create_container(settings)
        try:
            created = self.client.api.exec_create(container_id, ["sh", "-c", _PROBE], user="0")
            probe = self.client.api.exec_start(created["Id"]).decode("utf-8", errors="replace")
            self.observe(container_id, probe, self.policy.network_for(task))
        finally:
            self.client.api.remove_container(container_id, force=True)

    def remove_stale(self, client: Any = None) -> int:
        """Remove sandbox containers left by processes of this host that died without closing them."""
        removed = 0
        filters = {"label": [f"{LABEL}=sandbox", f"{LABEL}.host={socket.gethostname()}"]}
        for container in (client or self.client).containers.list(all=True, filters=filters):
            pid = int(container.labels.get(f"{LABEL}.pid", "0") or 0)
            if pid and pid != os.getpid() and not _alive(pid):
                container.remove(force=True)
                removed += 1
        return removed

    async def aclose(self) -> None:
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self._pool.shutdown(wait=False, cancel_futures=True)


class DockerSandbox(Sandbox):
    """One attempt: a container that lives from ``start`` to ``close``."""

    def __init__(self, backend: DockerBackend, task: Task, prepared: PreparedEnvironment) -> None:
        self.backend = backend
        self.task = task
        self.prepared = prepared
        self.workdir = prepared.workdir
        self.container_id: str | None = None
        self._closed = False
        self._lock = asyncio.Lock()  # one command at a time: the wrapper's sweep kills everything else
        self._start_lock = asyncio.Lock()

    async def start(self) -> None:
        if self.container_id is not None:
            return
        async with self._start_lock:
            if self.container_id is not None:
                return
            if self._closed:
                raise SandboxError("this sandbox was closed; create a new one")
            settings = self.backend.container_settings(self.task, self.prepared)
            self.container_id = await self.backend.call(self.backend.create_container, settings,
                                                        what="start container")
        if not self.backend._observed.get("capabilities dropped"):
            probe = await self.exec(_PROBE, timeout=30, user="0")
            if not probe.ok:
                raise SandboxError(f"the container does not run commands: {probe.tail(200) or probe.exit_code}")
            await self.backend.call(self.backend.observe, self.container_id, probe.stdout,
                                    self.backend.policy.network_for(self.task), what="inspect container")

    async def exec(self, command: str, *, timeout: float = 60.0, env: Mapping[str, str] | None = None,
                   cwd: str | None = None, user: str | None = None, stdin: bytes | None = None,
                   output_limit: int = DEFAULT_OUTPUT_LIMIT) -> ExecResult:
        await self.start()
        async with self._lock:
            stdin_path = ""
            if stdin is not None:
                name = f".autoenvscaling-stdin-{uuid.uuid4().hex}"
                await self._put_locked("/tmp", make_tar({name: (stdin, False)}))
                stdin_path = f"/tmp/{name}"
            user = user or self.prepared.user or "0"
            result = await self._run(command, timeout=timeout, env=env, cwd=cwd or self.workdir, user=user,
                                     stdin_path=stdin_path, limit=output_limit)
            if stdin_path and user not in ("0", "root"):  # /tmp is sticky: only root can remove it
                await self._run(f"rm -f -- {stdin_path}", timeout=30, env=None, cwd="/", user="0", stdin_path="",
                                limit=1024)
            return result

    async def _run(self, command: str, *, timeout: float, env: Mapping[str, str] | None, cwd: str, user: str,
                   stdin_path: str, limit: int) -> ExecResult:
        """Run one command under the wrapper (lock held). Output is captured by a pool thread into a
        shared buffer, so a timeout still returns what was printed before it."""
        api = self.backend.client.api
        start = time.monotonic()
        created = await self.backend.call(
            api.exec_create, self.container_id, ["sh", "-c", _WRAPPER, "autoenvscaling", command, cwd, stdin_path],
            environment=dict(env or {}), user=user, what="exec")
        exec_id = created["Id"]
        capture = _Capture(limit)
        loop = asyncio.get_running_loop()
        reader = loop.run_in_executor(self.backend._pool, capture.drain, api, exec_id)
        timed_out = False
        try:
            await asyncio.wait_for(asyncio.shield(reader), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            await self._sweep()
            # The stream ends once the sweep is done; if the engine keeps it open (or breaks it), the
            # output captured so far is what we return.
            with contextlib.suppress(asyncio.TimeoutError, docker_errors().DockerException):
                await asyncio.wait_for(reader, SWEEP_TIMEOUT)
        except docker_errors().DockerException as exc:
            raise SandboxError(f"exec failed: {short_error(exc)}") from exc
        except asyncio.CancelledError:
            # The caller gave up: the command must not outlive this call (nor collide with the next).
            await asyncio.shield(self._sweep())
            raise
        exit_code: int | None = None
        if not timed_out:
            exit_code = await self._exit_code(exec_id)
        return ExecResult(command=command, exit_code=exit_code, stdout=capture.text(capture.stdout),
                          stderr=capture.text(capture.stderr), seconds=time.monotonic() - start,
                          timed_out=timed_out, truncated=capture.truncated)

    async def _exit_code(self, exec_id: str) -> int | None:
        api = self.backend.client.api
        for _ in range(50):  # the engine may record the exit a moment after the stream ends
            info = await self.backend.call(api.exec_inspect, exec_id, what="exec inspect")
            if not info.get("Running"):
                return info.get("ExitCode")
            await asyncio.sleep(0.02)
        return None

    async def _sweep(self) -> None:
        """Kill every process but pid 1, as root, from a separate exec (after a timeout)."""
        api = self.backend.client.api
        created = await self.backend.call(api.exec_create, self.container_id, ["sh", "-c", _SWEEP], user="0",
                                          what="sweep")
        await self.backend.call(api.exec_start, created["Id"], timeout=SWEEP_TIMEOUT, what="sweep")

    async def put_archive(self, remote_dir: str, data: bytes) -> None:
        await self.start()
        async with self._lock:
            await self._put_locked(remote_dir, data)

    async def _put_locked(self, remote_dir: str, data: bytes) -> None:
        api = self.backend.client.api
        not_found = docker_errors().NotFound

        def put() -> bool | None:
            try:
                return bool(api.put_archive(self.container_id, remote_dir, data))
            except not_found:
                return None

        what = f"upload to {remote_dir}"
        ok = await self.backend.call(put, what=what)
        if ok is None:  # Docker wants the directory to exist (podman creates it): make it, once
            made = await self._run(f"mkdir -p -- {shlex.quote(remote_dir)}", timeout=60, env=None, cwd="/", user="0",
                                   stdin_path="", limit=4096)
            if not made.ok:
                raise SandboxError(f"cannot create {remote_dir} in the sandbox: {made.tail(200)}")
            ok = await self.backend.call(put, what=what)
        if not ok:
            raise SandboxError(f"the engine refused the upload to {remote_dir}")

    async def get_archive(self, remote_path: str) -> bytes:
        """The archive endpoint follows a final symlink (podman does, inside the container's root); we
        answer with the link itself instead, as ``tar -c`` would, so a planted link is never read
        through. The stat header tells, before the body is read."""
        await self.start()
        api = self.backend.client.api
        from docker.utils import decode_json_header

        def fetch() -> bytes | None:
            # The SDK's get_archive hides the response; we need its header before reading the body.
            res = api._get(api._url("/containers/{0}/archive", self.container_id), params={"path": remote_path},
                           stream=True)
            try:
                if res.status_code == 404:
                    return None
                api._raise_for_status(res)
                stat = decode_json_header(res.headers.get("X-Docker-Container-Path-Stat") or "e30=")  # "{}"
                if int(stat.get("mode") or 0) & GO_MODE_SYMLINK:
                    return _symlink_tar(PurePosixPath(remote_path).name, str(stat.get("linkTarget") or ""))
                out = bytearray()
                for chunk in res.iter_content(1 << 16, False):
                    out += chunk
                    if len(out) > ARCHIVE_LIMIT:
                        raise SandboxError(f"{remote_path} is larger than {ARCHIVE_LIMIT >> 20} MiB")
                return bytes(out)
            finally:
                res.close()

        data = await self.backend.call(fetch, what=f"download {remote_path}", timeout=None)
        if data is None:
            raise FileNotFoundError(remote_path)
        return data

    async def close(self) -> None:
        self._closed = True
        container_id, self.container_id = self.container_id, None
        if container_id is None:
            return
        not_found = docker_errors().NotFound

        def remove() -> None:
            with contextlib.suppress(not_found):
                self.backend.client.api.remove_container(container_id, force=True, v=True)

        await self.backend.call(remove, what="remove container")


class _Capture:
    """Reads an exec's demultiplexed stream, keeping at most ``limit`` bytes of stdout+stderr."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.truncated = False

    def drain(self, api: Any, exec_id: str) -> None:
        for out, err in api.exec_start(exec_id, stream=True, demux=True):
            for buf, chunk in ((self.stdout, out), (self.stderr, err)):
                if chunk:
                    room = self.limit - len(self.stdout) - len(self.stderr)
                    if len(chunk) > room:
                        self.truncated = True
                    if room > 0:
                        buf += chunk[:room]

    @staticmethod
    def text(data: bytearray) -> str:
        return bytes(data).decode("utf-8", errors="replace")


def _symlink_tar(name: str, target: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name or "link")
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, target, 0o777
        tar.addfile(info)
    return buf.getvalue()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
