"""A mounted, contained root for the bwrap backend: the overlay of an attempt's (or a build step's)
layers with its cgroups and namespaces (``Jail``), and its long-lived processes (``Service``).

Root filesystem layers are owned by the shifted ids, so "root" inside can write them (through the
attempt's overlay) and nothing else. The overlay is mounted once per attempt, not per exec;
bench/bench_sandbox.py measures what an exec costs over a plain subprocess.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterable

from ..errors import SandboxError
from .isolation import (DEFAULT_PATH, FILE_TIMEOUT, RUN_DIR_MODE, SANDBOX_GID, SANDBOX_UID, TRUSTED_TARGET, UID_RANGE,
                        Cgroups, bind_readonly, host_facts, mount_overlay, mount_pristine, mount_tmpfs, mounts_under,
                        owner_tag, run_dir, umount)
from .launcher import LAUNCH_ENV, ROOT, Identity, Launcher, Limits, Namespaces, Outcome, close_pipes, reap, run_captured
from .spawner import launch

_counter = iter(range(1, 1 << 62))


class Jail:
    """A copy-on-write root (overlay of ``lower`` layers) with its cgroups and namespaces, ready to
    run contained commands. An attempt's writable layer lives on its own size-capped tmpfs; a build
    step passes ``upper``/``work`` on disk so the new layer outlives the jail.

    The overlay is mounted once, in the host mount namespace under ``run_dir()``, so each exec costs
    only the launch chain (no mount per exec). ``close`` unmounts and removes everything; a process
    that dies without closing leaves entries that ``cleanup_stale`` removes."""

    def __init__(self, lower: list[Path], *, memory_mb: int, pids: int, limits: Limits, network: bool,
                 storage_mb: int = 0, upper: Path | None = None, work: Path | None = None,
                 binds: list[tuple[str, str]] | None = None, devices: list[str] | None = None) -> None:
        self.lower, self.memory_mb, self.pids, self.limits, self.network = lower, memory_mb, pids, limits, network
        self.storage_mb, self.upper, self.work, self.binds, self.devices = storage_mb, upper, work, binds, devices
        self.facts = host_facts()
        self.name = f"{owner_tag()}.{next(_counter)}"
        self.dir = run_dir() / self.name
        self.root = self.dir / "merged"
        self.cgroups = Cgroups(self.name, memory_mb + storage_mb, pids, self.facts)
        self.namespaces: Namespaces | None = None
        self.launcher: Launcher | None = None
        self.services: list[Service] = []
        self.opened = self.closed = False

    def open(self) -> None:
        if self.opened:
            return
        self.opened = True
        try:
            self.dir.mkdir(mode=0o700)
            if self.upper is None:
                # tmpfs pages are charged to the memory cgroup of whoever writes them, hence the
                # cgroup limit of memory + storage above: files never eat the processes' memory.
                mount_tmpfs(self.dir, size_mb=self.storage_mb)
                self.upper, self.work = self.dir / "upper", self.dir / "work"
                self.upper.mkdir()
                self.work.mkdir(mode=0o700)
            else:
                os.chown(self.dir, 0, SANDBOX_GID)
                os.chmod(self.dir, RUN_DIR_MODE)
            assert self.work is not None
            os.chown(self.upper, SANDBOX_UID, SANDBOX_GID)
            os.chmod(self.upper, 0o755)  # the merged root takes the upper root's owner and mode
            self.root.mkdir()
            mount_overlay(self.root, self.lower, self.upper, self.work)
            self.cgroups.create()
            self.namespaces = Namespaces.create(network=self.network)
            self.launcher = Launcher(self.root, cgroups=self.cgroups, limits=self.limits, network=self.network,
                                     namespaces=self.namespaces, facts=self.facts, binds=self.binds,
                                     devices=self.devices)
        except BaseException:
            self.close()
            raise

    def _ready(self) -> Launcher:
        if not self.opened or self.closed or self.launcher is None:
            raise SandboxError("the sandbox is not running", hint="call start() before exec()")
        return self.launcher

    def _kill_after_timeout(self) -> None:
        """What a timed-out command's kill sweeps: the whole attempt, unless services run in it
        (then the command's own pid namespace, gone with its bwrap, is all there is to kill)."""
        if not any(service.running for service in self.services):
            self.cgroups.kill()

    async def run(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str = "/",
                  identity: Identity = ROOT, stdin: bytes | None = None, timeout: float = 60.0,
                  limit: int = 1 << 16, tail_bytes: int = 0, ro_binds: Iterable[tuple[str, str]] = ()) -> Outcome:
        """Run ``argv`` contained, in ``cwd`` with ``env`` (default: PATH alone)."""
        launcher = self._ready()
        full = launcher.argv(argv, env={"PATH": DEFAULT_PATH} if env is None else env, cwd=cwd, ro_binds=ro_binds)
        return await run_captured(full, stdin=stdin, timeout=timeout, limit=limit, kill=self._kill_after_timeout,
                                  tail_bytes=tail_bytes, in_child=launcher.in_child(identity))

    def pristine(self) -> Path:
        """The prepared image as built, mounted read-only next to the attempt's root (on first use):
        what restores copy from and what the attempt's changes are compared against."""
        self._ready()
        target = self.dir / "pristine"
        if not target.is_dir():
            top = self.dir / "pristine-top"
            for mount_point in (TRUSTED_TARGET, "/dev"):  # an image without /dev still gets one
                _open_dirs(top / mount_point.lstrip("/"))
            _open_dirs(target)
            mount_pristine(target, self.lower, top)
        return target

    def expose(self, source: Path) -> Path:
        """``source`` (a host directory anywhere, ~root/.cache included) bound read-only under the
        attempt's run directory, which the sandbox uid can reach by path: bwrap binds it from there."""
        self._ready()
        target = self.dir / "exposed" / hashlib.sha256(str(source).encode()).hexdigest()[:16]
        if not target.is_dir():
            _open_dirs(target)
            bind_readonly(source, target)
        return target

    async def run_trusted(self, argv: list[str], *, timeout: float = FILE_TIMEOUT) -> Outcome:
        """Run ``argv`` as root of the attempt's user namespace with the pristine image as its root
        and the attempt's root at TRUSTED_TARGET (Launcher.trusted_argv): the image's own rm and cp,
        whatever the agent did to the attempt's copies."""
        launcher = self._ready()
        full = launcher.trusted_argv(await asyncio.to_thread(self.pristine), argv)
        return await run_captured(full, stdin=None, timeout=timeout, limit=1 << 16, kill=lambda: None,
                                  in_child=launcher.in_child(ROOT))

    async def spawn(self, argv: list[str], *, env: dict[str, str], cwd: str, identity: Identity = ROOT,
                    name: str = "service", log_bytes: int = 16384) -> "Service":
        """Start a long-lived contained process (an image's ENTRYPOINT) in its own pid namespace,
        sharing the attempt's network namespace and root. It runs until it exits or the jail closes;
        the last ``log_bytes`` of its output are kept."""
        launcher = self._ready()
        proc = await launch(launcher.argv(argv, env=env, cwd=cwd), env=LAUNCH_ENV, setup=launcher.in_child(identity),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        service = Service(name, proc, log_bytes)
        self.services.append(service)
        return service

    async def identity(self, spec: str | None) -> Identity:
        """The identity inside the jail for a user spec: "name", "uid", "name:group", None = root.
        Looked up inside (getent, id -G), so users created by the Dockerfile or the agent count. Any
        id inside maps to SANDBOX_UID + id on the host."""
        if spec in (None, "", "root", "0", "0:0", "root:root"):
            return ROOT
        assert spec is not None
        user, _, group = spec.partition(":")
        entry = await self._getent("passwd", user)
        if entry is None and not user.isdigit():
            raise SandboxError(f"user {user!r} does not exist in the sandbox",
                               hint="create it in the Dockerfile (RUN useradd -m NAME)")
        uid = int(user) if user.isdigit() else int(entry[2])  # type: ignore[index]
        gid = int(entry[3]) if entry else uid
        home = entry[5] if entry and len(entry) > 5 else "/"
        groups: tuple[int, ...] = ()
        if group:
            found = None if group.isdigit() else await self._getent("group", group)
            if not group.isdigit() and found is None:
                raise SandboxError(f"group {group!r} does not exist in the sandbox")
            gid = int(group) if group.isdigit() else int(found[2])  # type: ignore[index]
        elif entry is not None:
            groups = await self._groups(entry[0], gid)
        if not (0 <= uid < UID_RANGE and 0 <= gid < UID_RANGE):
            raise SandboxError(f"user {spec!r} has an id outside the sandbox's range 0-{UID_RANGE - 1}",
                               hint="use a uid and gid below 65536")
        return Identity(uid=uid, gid=gid, groups=groups or (gid,), home=home)

    async def _getent(self, database: str, key: str) -> list[str] | None:
        out = await self.run(["getent", database, key], timeout=30)
        fields = out.stdout.decode(errors="replace").strip().split(":")
        return fields if out.exit_code == 0 and len(fields) >= 4 else None

    async def _groups(self, user: str, gid: int) -> tuple[int, ...]:
        """The user's supplementary groups (as login would set them), primary group first."""
        out = await self.run(["id", "-G", "--", user], timeout=30)
        ids = [int(x) for x in out.stdout.decode(errors="replace").split() if x.isdigit()] if out.exit_code == 0 else []
        return tuple(dict.fromkeys([gid, *(i for i in ids if 0 <= i < UID_RANGE)]))

    def close(self) -> None:
        """Kill every process, unmount, remove the cgroups and the attempt's layer (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self.cgroups.remove()  # services included: their output pipes reach EOF and their readers end
        if self.namespaces is not None:
            self.namespaces.close()
        if self.dir.exists():
            for mount in mounts_under(self.dir):
                umount(mount)
            shutil.rmtree(self.dir, ignore_errors=True)


def _open_dirs(path: Path) -> None:
    """``mkdir -p`` with mode 755 whatever this process's umask (bwrap, as the sandbox uid, must
    reach through them; a worker started from a umask-077 shell would otherwise lock it out)."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir()
        os.chmod(directory, 0o755)


class Service:
    """A long-lived process of a jail (see Jail.spawn): its output tail and exit status."""

    def __init__(self, name: str, proc: Any, log_bytes: int) -> None:  # an asyncio Process or spawner.LaunchedProcess
        self.name, self.proc, self.log_bytes = name, proc, log_bytes
        self._log: list[bytes] = []
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self._log.append(chunk)
            while sum(map(len, self._log)) > 2 * self.log_bytes and len(self._log) > 1:
                self._log.pop(0)

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    @property
    def exit_code(self) -> int | None:
        return self.proc.returncode

    def output(self) -> str:
        return b"".join(self._log)[-self.log_bytes:].decode("utf-8", errors="replace")

    async def finished(self, timeout: float = 5.0) -> None:
        """Wait (on the event loop that started it) until its output is read to the end and it was
        reaped; after the jail closed that takes a moment. A pipe still held open is given up on
        after ``timeout``; the process, killed with the jail, is waited for in any case."""
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        except asyncio.TimeoutError:
            self._reader.cancel()
        await reap(self.proc)
        close_pipes(self.proc)
