"""Running a compose environment (``ComposeGroup``): one attempt's sidecars, volumes and private
network, and the host firewall rules that keep the attempt's bridge off the host (``HostGuard``).
What a group does is described in compose.py."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import time
import uuid
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..archive import make_tar
from ..errors import SandboxError
from ..tasks import Task
from .base import Protection
from .compose_spec import MAIN, START_TIMEOUT, ComposeSpec, Healthcheck, Service
from .docker_images import LABEL

if TYPE_CHECKING:
    from .docker_backend import DockerBackend

HEALTH_POLL = 1.0  # seconds between health probes at most (a probe may run sooner than its interval)

# Creates and starts main from the group's settings and file uploads; returns its container id.
StartMain = Callable[[dict[str, Any], list[tuple[str, bytes]]], Awaitable[str]]


class ComposeGroup:
    """The sidecars, volumes and network of one attempt. ``up`` starts everything in order (``main``
    through the sandbox's own hook) and waits until it is healthy; ``down`` removes it all."""

    NETWORK_PREFIX = "aes-net-"

    def __init__(self, backend: "DockerBackend", task: Task, spec: ComposeSpec) -> None:
        self.backend, self.task, self.spec = backend, task, spec
        self.attempt = uuid.uuid4().hex[:12]
        self.network = f"{self.NETWORK_PREFIX}{self.attempt}"
        self.interface = f"aes{self.attempt[:10]}"  # a bridge name has at most 15 characters
        self.labels = {**backend.labels(task.name), f"{LABEL}.attempt": self.attempt}
        self.containers: dict[str, str] = {}  # service -> container id
        self.healthy: set[str] = set()
        self.guard: HostGuard | None = None
        self.volumes: list[str] = []

    def volume(self, name: str) -> str:
        return f"aes-{self.attempt}-{name}"

    async def up(self, start_main: StartMain) -> None:
        await self.backend.call(self._create_network, what="create network")
        self.guard = HostGuard(self.interface)
        self.backend.observed("compose host guard", await asyncio.to_thread(self.guard.apply))
        for name in self.spec.volumes:
            await self.backend.call(self._create_volume, name, what=f"create volume {name}")
        for name in self.spec.order:
            service = self.spec.services[name]
            for dep, condition in service.depends_on.items():
                await self._await_condition(dep, condition)
            if name == MAIN:
                self.containers[MAIN] = await start_main(self.service_settings(service, main=True),
                                                         self.copy_tars(service))
            else:
                self.containers[name] = await self.backend.call(self._start_sidecar, service,
                                                                what=f"start service {name}")
        for name in self.spec.order:  # what `docker compose up --wait` requires
            await self._await_condition(name, "service_healthy" if self._check(name) else "service_started")

    def _create_network(self) -> None:
        wanted = self.backend.policy.network_for(self.task)
        network = self.backend.client.networks.create(
            self.network, driver="bridge", internal=not wanted,
            labels={**self.labels, f"{LABEL}.interface": self.interface},
            options={"com.docker.network.bridge.name": self.interface})
        internal = bool(self.backend.client.api.inspect_network(network.id).get("Internal"))
        self.backend.observed("compose network offline", Protection(
            name="compose network offline", active=internal,
            detail="each compose attempt has a private internal network: services reach each other, not the internet"
                   + (" (task granted internet)" if wanted else "")))

    def _create_volume(self, name: str) -> None:
        self.backend.client.volumes.create(self.volume(name), labels=self.labels)
        self.volumes.append(self.volume(name))

    def service_settings(self, service: Service, *, main: bool = False) -> dict[str, Any]:
        """What every service's container gets on top of its image: the network with its name as
        alias, environment, hosts, mounts."""
        from docker.types import Mount

        settings: dict[str, Any] = {
            "network": self.network, "hostname": service.name,
            "networking_config": {self.network: self.backend.client.api.create_endpoint_config(
                aliases=[service.name, *service.aliases])},
            "environment": dict(service.environment), "labels": {**self.labels, f"{LABEL}.service": service.name},
            "name": f"aes-{self.attempt}-{service.name}",
        }
        optional: dict[str, Any] = {
            "extra_hosts": dict(service.extra_hosts), "tmpfs": {path: "" for path in service.tmpfs},
            "mounts": [Mount(target, self.volume(volume), type="volume", read_only=read_only)
                       for volume, target, read_only in service.volumes], "shm_size": service.shm_size}
        if not main:
            settings.update(image=service.image_id, command=service.command, entrypoint=service.entrypoint,
                            init=service.init or None)
            optional.update(working_dir=service.working_dir, user=service.user)
        return {**settings, **{key: value for key, value in optional.items() if value}}  # those the service sets

    def _start_sidecar(self, service: Service) -> str:
        settings = {**self.backend.hardening(self.task, add_caps=service.cap_add, drop_caps=service.cap_drop),
                    **self.service_settings(service)}
        return self.backend.create_container({k: v for k, v in settings.items() if v is not None},
                                             files=self.copy_tars(service))

    def copy_tars(self, service: Service) -> list[tuple[str, bytes]]:
        """(directory, tar) uploads that place a service's copied files at their targets."""
        out = []
        files = self.task.environment_files
        for source, target in service.copies:
            if source in files:  # one file: it lands at target
                parent, _, base = target.rstrip("/").rpartition("/")
                out.append((parent or "/", make_tar({base: (files[source].data, files[source].executable)})))
            else:
                prefix = f"{source}/" if source else ""
                tree = {rel[len(prefix):]: (f.data, f.executable) for rel, f in files.items() if rel.startswith(prefix)}
                out.append((target, make_tar(tree)))
        return out

    def _check(self, name: str) -> Healthcheck | None:
        service = self.spec.services[name]
        return None if service.healthcheck_disabled else service.healthcheck

    async def _await_condition(self, name: str, condition: str) -> None:
        if condition == "service_healthy":
            await self._await_healthy(name)
        elif condition == "service_completed_successfully":
            await self._await_completed(name)
        else:
            state = await self._state(name)
            if not state.get("Running") and state.get("ExitCode", 0) != 0:
                raise await self._stopped(name, state)

    async def _state(self, name: str) -> dict[str, Any]:
        info = await self.backend.call(self.backend.client.api.inspect_container, self.containers[name],
                                       what=f"inspect service {name}")
        return info.get("State") or {}

    async def _await_completed(self, name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            state = await self._state(name)
            if not state.get("Running"):
                if state.get("ExitCode", 0) != 0:
                    raise await self._stopped(name, state)
                return
            if time.monotonic() > deadline:
                raise SandboxError(f"compose service {name} did not complete within {START_TIMEOUT:g}s",
                                   hint="a service others wait for with service_completed_successfully must exit")
            await asyncio.sleep(0.2)

    async def _await_healthy(self, name: str) -> None:
        check = self._check(name)
        if name in self.healthy or check is None:
            return
        deadline = time.monotonic() + check.patience()
        last = "no probe finished"
        while True:
            state = await self._state(name)
            if not state.get("Running"):
                raise await self._stopped(name, state)
            ok, last = await self._probe(name, check)
            if ok:
                self.healthy.add(name)
                return
            if time.monotonic() > deadline:
                raise SandboxError(f"compose service {name} did not become healthy within {check.patience():g}s; "
                                   f"last health check: {last}",
                                   hint=f"fix its healthcheck or what it checks (test: {shlex.join(check.test)[:120]})")
            await asyncio.sleep(min(check.interval, HEALTH_POLL))

    async def _probe(self, name: str, check: Healthcheck) -> tuple[bool, str]:
        """One health probe as an exec: (passed, its last output line or exit status)."""
        api = self.backend.client.api
        try:
            created = await self.backend.call(api.exec_create, self.containers[name], check.test, what="health check")
            output = await self.backend.call(api.exec_start, created["Id"], timeout=check.timeout, what="health check")
            code = (await self.backend.call(api.exec_inspect, created["Id"], what="health check")).get("ExitCode")
        except SandboxError as exc:
            return False, exc.message
        text = output.decode("utf-8", errors="replace").strip().splitlines()
        line = text[-1][:200] if text else ""
        return code == 0, f"exit {code}" + (f": {line}" if line else "")

    async def _stopped(self, name: str, state: dict[str, Any]) -> SandboxError:
        tail = await self.backend.call(self.backend.logs_tail, self.containers[name], what=f"logs of {name}")
        last = tail.strip().splitlines()[-1][:200] if tail.strip() else "no output"
        return SandboxError(f"compose service {name} exited with code {state.get('ExitCode')} at start: {last}",
                            hint="its full output: the error details; a service must keep running (or complete "
                                 "successfully when others wait for that)")

    async def down(self) -> None:
        """Remove every container, volume and the network; errors are collected, then raised."""
        failures: list[str] = []
        steps: list[tuple[Callable[[str], None], str, str]] = [
            (self.backend.remove_container, container_id, f"remove service {name}")
            for name, container_id in reversed(list(self.containers.items()))
            if name != MAIN]  # the sandbox removes its own container first
        steps += [(self.backend.remove_volume, volume, f"remove volume {volume}") for volume in self.volumes]
        for remove, item, what in [*steps, (self.backend.remove_network, self.network, "remove network")]:
            try:
                await self.backend.call(remove, item, what=what)
            except SandboxError as exc:
                failures.append(exc.message)
        self.containers.clear()
        self.volumes.clear()
        if self.guard is not None:
            await asyncio.to_thread(self.guard.remove)
        if failures:
            raise SandboxError(f"tearing down the compose services failed: {failures[0]}")


class HostGuard:
    """INPUT rules that keep an attempt's bridge from reaching the host's own services (everything
    but DNS to the engine's resolver on the gateway is dropped), on IPv4 and IPv6."""

    RULES = (("iptables", ["-p", "udp", "--dport", "53", "-j", "ACCEPT"]),
             ("iptables", ["-p", "tcp", "--dport", "53", "-j", "ACCEPT"]),
             ("iptables", ["-j", "DROP"]), ("ip6tables", ["-j", "DROP"]))

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self.applied: list[tuple[str, list[str]]] = []

    @staticmethod
    def unavailable() -> str:
        """"" when rules can be added here, else why not."""
        from .podman import docker_host

        if not docker_host().startswith("unix://"):
            return "the engine is remote (DOCKER_HOST is not a unix socket)"
        if os.geteuid() != 0:
            return "not root"
        if shutil.which("iptables") is None:
            return "iptables is not installed"
        return ""

    def apply(self) -> Protection:
        why = self.unavailable()
        if not why:
            # Inserted at the top in reverse, so they end up in RULES order, before any ACCEPT.
            for tool, rule in reversed(self.RULES):
                if shutil.which(tool) is None:
                    continue
                proc = subprocess.run([tool, "-w", "5", "-I", "INPUT", "-i", self.interface, *rule],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    why = f"{tool} failed: {(proc.stderr or proc.stdout).strip()[:120]}"
                    break
                self.applied.append((tool, rule))
        if why:
            self.remove()
            return Protection(name="compose host guard", active=False,
                              detail=f"services could reach the host's own listening services through the "
                                     f"network's gateway ({why})")
        return Protection(name="compose host guard", active=True,
                          detail="compose networks cannot reach the host's services (iptables INPUT drop but DNS)")

    def remove(self) -> None:
        for tool, rule in self.applied:
            subprocess.run([tool, "-w", "5", "-D", "INPUT", "-i", self.interface, *rule], capture_output=True)
        self.applied.clear()

    @classmethod
    def remove_stale(cls, interface: str) -> None:
        """Drop the rules a dead process left for ``interface`` (each may be absent)."""
        guard = cls(interface)
        guard.applied = [(tool, rule) for tool, rule in cls.RULES if shutil.which(tool)]
        guard.remove()
