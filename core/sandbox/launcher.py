"""The contained-process launcher of the bwrap backend, and a process runner that survives hostile
output.

How a command starts: the forked child (still host root) joins the attempt's cgroups, sets its
rlimits and no_new_privs, enters the attempt's network namespace, drops to the unprivileged
SANDBOX_UID, enters the attempt's user namespace, takes the identity the command runs as there and
execs

    bwrap --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try ...

so each command still has its own pid namespace (nothing it starts outlives it), while the network
namespace is the attempt's: a service the image's ENTRYPOINT started keeps serving every command.
Those steps are data (``spawner.ChildSetup``, forkserver.py's list), so a small fork server runs
them and forks, whatever memory this process holds (spawner.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import SandboxError
from .isolation import (DEFAULT_PATH, HOSTNAME, SANDBOX_GID, SANDBOX_UID, TRUSTED_TARGET, UID_RANGE, Cgroups, HostFacts,
                        host_facts)
from .spawner import ChildSetup, launch, launch_sync

if TYPE_CHECKING:
    from .base import SandboxPolicy

@dataclass(frozen=True)
class Limits:
    """Per-process rlimits set just before bwrap starts. ``address_space_mb`` is only set when no
    memory cgroup exists: an address-space cap breaks runtimes that reserve large virtual ranges
    (V8, Go, the JVM), and the cgroup limits what matters, resident memory. ``nproc`` counts every
    process of SANDBOX_UID on the host, all sandboxes together: a backstop, the pids cgroup is the
    per-attempt limit."""

    address_space_mb: int = 0
    cpu_seconds: int = 0
    file_mb: int = 1024
    nofile: int = 4096
    nproc: int = 16384

    def rlimits(self) -> list[tuple[int, int]]:
        out = [(resource.RLIMIT_FSIZE, self.file_mb << 20), (resource.RLIMIT_NOFILE, self.nofile),
               (resource.RLIMIT_NPROC, self.nproc)]
        if self.address_space_mb:
            out.append((resource.RLIMIT_AS, self.address_space_mb << 20))
        if self.cpu_seconds:
            out.append((resource.RLIMIT_CPU, self.cpu_seconds))
        return out


def limits_for(policy: "SandboxPolicy") -> Limits:
    """The rlimits for a policy, never above this process's hard limits (root here lacks
    CAP_SYS_RESOURCE, so asking for more would fail)."""
    def capped(want: int, which: int) -> int:
        hard = resource.getrlimit(which)[1]
        return want if hard == resource.RLIM_INFINITY else min(want, hard)

    return Limits(address_space_mb=0 if host_facts().memory_cgroup else policy.max_memory_mb,
                  cpu_seconds=policy.cpu_seconds, file_mb=policy.max_file_mb,
                  nofile=capped(65536, resource.RLIMIT_NOFILE), nproc=capped(16384, resource.RLIMIT_NPROC))


_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000


_RLIMIT_NAMES = ("CORE", "STACK", "DATA", "RSS", "MEMLOCK", "LOCKS", "SIGPENDING", "MSGQUEUE", "NICE", "RTPRIO",
                 "RTTIME", "CPU", "AS", "FSIZE", "NOFILE", "NPROC")


@functools.lru_cache(maxsize=1)
def _host_init_rlimits() -> tuple[tuple[int, tuple[int, int]], ...]:
    """The rlimits of the host's pid 1, where a container engine's processes (and so a container's)
    take theirs from, each capped at this process's hard limit (root here may not raise one)."""
    out = []
    for name in _RLIMIT_NAMES:
        which = getattr(resource, f"RLIMIT_{name}", None)
        if which is None:
            continue
        try:
            soft, hard = resource.prlimit(1, which)
        except (OSError, ValueError):
            continue
        own_hard = resource.getrlimit(which)[1]
        hard = _lower(hard, own_hard)
        out.append((which, (_lower(soft, hard), hard)))
    return tuple(out)


def _lower(a: int, b: int) -> int:
    infinity = resource.RLIM_INFINITY
    return b if a == infinity else a if b == infinity else min(a, b)


def container_rlimits(ours: Iterable[int]) -> list[tuple[int, tuple[int, int]]]:
    """The rlimits a container would start with, for every limit the policy does not set itself:
    whatever this process inherited (a lowered stack or core size of the worker's shell) stays out."""
    skip = set(ours)
    return [(which, pair) for which, pair in _host_init_rlimits() if which not in skip]


@dataclass
class Namespaces:
    """The user namespace of one attempt (and, unless the internet is granted, its network
    namespace), held open as file descriptors. Made by a short-lived holder process running as
    SANDBOX_UID, so the namespaces are owned by that uid; host root writes the id maps."""

    userns: int
    netns: int | None

    @classmethod
    def create(cls, *, network: bool) -> "Namespaces":
        flags = _CLONE_NEWUSER | (0 if network else _CLONE_NEWNET)
        # As SANDBOX_UID, so the namespaces are owned by it; a new user namespace's creator holds
        # CAP_NET_ADMIN there, enough to bring up its loopback device.
        holder = ChildSetup(steps=(("clean",), ("ids", SANDBOX_UID, SANDBOX_GID, ()), ("unshare", flags),
                                   *((("loopback",),) if not network else ())))
        try:
            pid, stdin, wait = launch_sync([shutil.which("cat") or "/bin/cat"], env=LAUNCH_ENV, setup=holder)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SandboxError(f"cannot create the sandbox's user namespace: {exc}",
                               hint="the bwrap backend needs root and user namespaces (see autoenvscaling doctor)") from exc
        fds: list[int] = []
        try:
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{pid}/{name}", "w") as fh:
                    fh.write(f"0 {SANDBOX_UID} {UID_RANGE}\n")
            fds.append(os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC))
            if not network:
                fds.append(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC))
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"cannot map the sandbox's id range: {exc}",
                               hint="the bwrap backend must run as root") from exc
        finally:
            stdin.close()
            wait()
        return cls(userns=fds[0], netns=fds[1] if len(fds) > 1 else None)

    def close(self) -> None:
        for fd in (self.userns, self.netns):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


@dataclass(frozen=True)
class Identity:
    """Who a command runs as inside: uid, gid, supplementary groups, home."""

    uid: int = 0
    gid: int = 0
    groups: tuple[int, ...] = ()
    home: str = "/root"


ROOT = Identity()
# Each command's own pid, ipc, uts and cgroup namespaces and session; it dies with its parent.
_NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent",
               "--new-session")


class Launcher:
    """How every command of one jail starts: the bwrap argv prefix, and what the forked child does as
    host root before it execs bwrap (the steps in this module's docstring), only syscalls on values
    computed here once. Doing it in the child (rather than through sh, prlimit, nsenter and setpriv)
    saves program starts per exec, about half of the launch cost on a loaded machine."""

    def __init__(self, root: Path, *, cgroups: Cgroups | None, limits: Limits, network: bool,
                 namespaces: Namespaces, facts: HostFacts | None = None,
                 binds: list[tuple[str, str]] | None = None, devices: list[str] | None = None) -> None:
        facts = facts or host_facts()
        assert facts.bwrap
        self.root = root
        self.procs_files = [p.encode() for p in (cgroups.procs_files if cgroups else [])]
        ours = limits.rlimits()
        self.rlimits = [(which, (value, value)) for which, value in ours] + container_rlimits(w for w, _ in ours)
        self.namespaces = namespaces
        # No --unshare-user: the process is already in the attempt's user namespace (as root there,
        # bwrap keeps its capabilities; as another uid, bwrap nests a namespace of its own). No
        # --unshare-net: the attempt's network namespace (or, when granted, the host's) is shared.
        argv = [facts.bwrap, *_NAMESPACES, "--bind", str(root), "/", "--proc", "/proc", "--dev", "/dev",
                "--hostname", HOSTNAME]
        if network and os.path.exists("/etc/resolv.conf"):
            argv += ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"]
        for source, target in binds or []:  # build-time only (the host's CA bundle, ...)
            argv += ["--ro-bind", source, target]
        argv += devices or []  # GPU passthrough: gpu.bwrap_gpu_args, after --dev /dev
        self.prefix = argv

    def argv(self, command: list[str], *, env: dict[str, str], cwd: str,
             ro_binds: Iterable[tuple[str, str]] = ()) -> list[str]:
        """The full bwrap command line: a clean environment, cwd, the command; ``ro_binds`` (host
        directory, path inside) are bound read-only for this command only (the verifier runtimes)."""
        out = list(self.prefix)
        for source, target in ro_binds:
            out += ["--ro-bind", source, target]
        out.append("--clearenv")
        for key, value in env.items():
            out += ["--setenv", key, value]
        return out + ["--chdir", cwd, "--", *command]

    def trusted_argv(self, pristine: Path, command: list[str]) -> list[str]:
        """A command whose root is the pristine image (read-only: every program and library as
        built, none the agent touched), with the attempt's root bound at TRUSTED_TARGET. A symlink
        the agent planted can only lead into the read-only pristine root, never onto the host."""
        assert self.prefix[0]
        return [self.prefix[0], *_NAMESPACES, "--ro-bind", str(pristine), "/", "--dev", "/dev",
                "--bind", str(self.root), TRUSTED_TARGET, "--clearenv", "--setenv", "PATH", DEFAULT_PATH,
                "--chdir", "/", "--", *command]

    def in_child(self, identity: Identity = ROOT) -> ChildSetup:
        """What the forked child runs, as host root, right before exec: every signal to its default
        action and the container umask, the attempt's cgroups, the rlimits, no_new_privs, the
        attempt's network namespace, SANDBOX_UID, the attempt's user namespace, ``identity``."""
        ns = self.namespaces
        fds = (ns.userns,) if ns.netns is None else (ns.userns, ns.netns)
        steps: list[tuple[Any, ...]] = [("clean",)]
        steps += [("cgroup", path.decode()) for path in self.procs_files]
        steps += [("rlimit", which, soft, hard) for which, (soft, hard) in self.rlimits]
        steps.append(("no_new_privs",))
        if ns.netns is not None:
            steps.append(("setns", 1, _CLONE_NEWNET))
        # Now unprivileged on the host; the namespace is ours (its owner is SANDBOX_UID).
        steps += [("ids", SANDBOX_UID, SANDBOX_GID, ()), ("setns", 0, _CLONE_NEWUSER),
                  ("ids", identity.uid, identity.gid, tuple(identity.groups or (identity.gid,)))]
        return ChildSetup(steps=tuple(steps), fds=fds)


# bwrap needs no environment of ours (it clears the sandbox's with --clearenv).
LAUNCH_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


# -- running a process with a timeout, an output cap and a full kill ----------------------------------
@dataclass
class Outcome:
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False
    truncated: bool = False
    tail: bytes = b""  # the last bytes of stdout+stderr as they arrived (build error messages)


class _Capture:
    """Keeps the first ``limit`` bytes of a stream and a rolling tail; drains the rest so a process
    printing gigabytes neither blocks nor fills host memory."""

    def __init__(self, limit: int, tail: list[bytes], tail_bytes: int) -> None:
        self.limit, self.size, self.truncated = limit, 0, False
        self.parts: list[bytes] = []
        self.tail, self.tail_bytes = tail, tail_bytes

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - self.size
            if room > 0:
                self.parts.append(chunk[:room])
                self.size += min(room, len(chunk))
            if len(chunk) > max(room, 0):
                self.truncated = True
            if self.tail_bytes:
                self.tail.append(chunk[-self.tail_bytes:])
                while sum(map(len, self.tail)) > 2 * self.tail_bytes and len(self.tail) > 1:
                    self.tail.pop(0)

    def data(self) -> bytes:
        return b"".join(self.parts)


async def run_captured(argv: list[str], *, stdin: bytes | None, timeout: float, limit: int,
                       kill: Callable[[], None], tail_bytes: int = 0,
                       in_child: ChildSetup | None = None) -> Outcome:
    """Run ``argv`` (bwrap, after ``in_child`` ran in the forked child), feeding ``stdin`` and
    capturing both streams up to ``limit`` bytes each. On timeout bwrap gets SIGKILL, so its pid
    namespace takes every process with it (setsid'd ones included), and ``kill`` (the attempt's
    cgroup kill) sweeps up whatever was still starting."""
    start = time.monotonic()
    stdin_mode = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
    if in_child is not None:
        proc = await launch(argv, env=LAUNCH_ENV, setup=in_child, stdin=stdin_mode)
    else:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=stdin_mode, stdout=subprocess.PIPE,
                                                    stderr=subprocess.PIPE, env=LAUNCH_ENV, close_fds=True)
    try:
        return await _captured(proc, start, stdin=stdin, timeout=timeout, limit=limit, kill=kill,
                               tail_bytes=tail_bytes)
    finally:
        close_pipes(proc)


def close_pipes(proc: Any) -> None:
    """Close what is left of the pipes to a process the fork server started (asyncio closes its own)."""
    if hasattr(proc, "close_pipes"):
        proc.close_pipes()


async def _captured(proc: Any, start: float, *, stdin: bytes | None, timeout: float, limit: int,
                    kill: Callable[[], None], tail_bytes: int) -> Outcome:
    tail: list[bytes] = []
    out, err = _Capture(limit, tail, tail_bytes), _Capture(limit, tail, tail_bytes)

    async def feed() -> None:
        if stdin is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the command did not read all of its input
        finally:
            proc.stdin.close()

    assert proc.stdout is not None and proc.stderr is not None
    work = asyncio.gather(feed(), out.drain(proc.stdout), err.drain(proc.stderr), proc.wait())
    timed_out = False
    try:
        await asyncio.wait_for(asyncio.shield(work), timeout)
    except asyncio.TimeoutError:
        timed_out = True
        _kill(proc, kill)
        try:
            await asyncio.wait_for(work, 10)
        except asyncio.TimeoutError:  # a pipe still held open: give up on the rest of the output
            work.cancel()
            await reap(proc)
    except asyncio.CancelledError:
        _kill(proc, kill)
        raise
    code = proc.returncode
    return Outcome(exit_code=None if timed_out else code, stdout=out.data(), stderr=err.data(),
                   seconds=time.monotonic() - start, timed_out=timed_out,
                   truncated=out.truncated or err.truncated, tail=b"".join(tail)[-tail_bytes:] if tail_bytes else b"")


# How long a killed bwrap may take to exit: its pid namespace's processes all die first, which on a
# loaded machine can take a while. Not waiting would leave it running after the attempt ended.
REAP_TIMEOUT = 120.0


async def reap(proc: Any) -> None:
    """Wait for a process that was killed to exit (a wait that cannot end is given up on)."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), REAP_TIMEOUT)


def _kill(proc: Any, kill: Callable[[], None]) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    kill()


