"""Host-side isolation primitives for the bwrap backend: what this machine offers, mounts, cgroups,
namespaces, the contained-process launcher and a process runner that survives hostile output.

Identity. Every attempt (and every build step) gets its own user namespace that maps a whole range
of host ids, ``SANDBOX_UID + n`` for n in [0, UID_RANGE), to ``n`` inside, as rootless container
engines map subordinate ids. Host root writes that map (only root may map a range), so files inside
can belong to other users and groups (dpkg chgrp's to ``adm`` or ``utmp``), ``USER app`` really is
an unprivileged uid with file permissions that hold, and all of it stays unprivileged on the host:
no host uid below SANDBOX_UID is mapped, so nothing inside is ever host root (docs/sandboxes.md,
facts about our machines: bwrap started by host root would give the sandbox host-root rights on
bound files).

How a command starts: the forked child (still host root) joins the attempt's cgroups, sets its
rlimits and no_new_privs, enters the attempt's network namespace, drops to the unprivileged
SANDBOX_UID, enters the attempt's user namespace, takes the identity the command runs as there and
execs

    bwrap --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try ...

so each command still has its own pid namespace (nothing it starts outlives it), while the network
namespace is the attempt's: a service the image's ENTRYPOINT started keeps serving every command.
Root filesystem layers are owned by the shifted ids, so "root" inside can write them (through the
attempt's overlay) and nothing else. The overlay is mounted once per attempt (Jail), not per exec;
bench/bench_sandbox.py measures what an exec costs over a plain subprocess.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import errno
import fcntl
import functools
import hashlib
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from ..errors import SandboxError

if TYPE_CHECKING:
    from .base import SandboxPolicy

# The host uid/gid every sandbox process runs as. It sits above systemd's container uid range
# (524288-1879048191) and below its dynamic user-namespace range, and far above the 100000+ ranges
# that /etc/subuid hands to rootless podman users, so no other container shares it. Layers are
# chowned to it at build time; changing it (AUTOENVSCALING_SANDBOX_UID) rebuilds the layers.
SANDBOX_UID = int(os.environ.get("AUTOENVSCALING_SANDBOX_UID", "1900000000"))
SANDBOX_GID = SANDBOX_UID
# Ids 0..UID_RANGE-1 inside map to SANDBOX_UID.. on the host (65534 = nobody/nogroup included).
UID_RANGE = 65536
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
HOSTNAME = "sandbox"
# Where the trusted helper (Jail.run_trusted) sees the attempt's root, and how long it may take.
TRUSTED_TARGET = "/.autoenvscaling-target"
FILE_TIMEOUT = 300.0
INSTALL_HINT = "apt-get install bubblewrap mmdebstrap"

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 32, 4096
_MNT_DETACH = 2


@dataclass(frozen=True)
class HostFacts:
    """What this machine offers the bwrap backend, detected once per process."""

    root: bool
    bwrap: str | None
    mmdebstrap: str | None
    overlay: bool
    userns: bool
    memory_cgroup: Path | None  # parent directory for per-attempt memory cgroups (v1)
    pids_cgroup: Path | None  # ... for pids cgroups (v1)
    kill_cgroup: Path | None  # parent for cgroup v2 directories that offer cgroup.kill

    def missing(self) -> list[str]:
        """What prevents the backend from running here, as short phrases."""
        out = ["bwrap"] if self.bwrap is None else []
        if not self.overlay:
            out.append("overlayfs (kernel module 'overlay')")
        if not self.root:
            out.append("root (needed to mount overlays and drop to the sandbox uid)")
        elif self.bwrap and not self.userns:
            out.append("unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
        return out


@functools.cache
def host_facts() -> HostFacts:
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    overlay = _has_overlay()
    userns = bool(root and bwrap and _probe_userns(bwrap))
    memory = _cgroup_parent("memory", "memory.limit_in_bytes") if root else None
    pids = _cgroup_parent("pids", "pids.max") if root else None
    kill = _cgroup_parent("", "cgroup.kill") if root else None
    # Our parent directories sit inside the caller's cgroups: leave none behind, or the caller's
    # cgroup could not be removed. (Cgroups.create recreates them when another process needs them.)
    atexit.register(_remove_if_empty, [p for p in (memory, pids, kill) if p is not None])
    return HostFacts(root=root, bwrap=bwrap,
                     mmdebstrap=shutil.which("mmdebstrap"), overlay=overlay, userns=userns,
                     memory_cgroup=memory, pids_cgroup=pids, kill_cgroup=kill)


def _has_overlay() -> bool:
    try:
        if "overlay" in Path("/proc/filesystems").read_text():
            return True
    except OSError:
        return False
    # Not loaded yet (it loads on first mount): ask modprobe whether the module exists.
    modprobe = shutil.which("modprobe")
    return bool(modprobe) and subprocess.run([modprobe, "-n", "overlay"], capture_output=True).returncode == 0


def _probe_userns(bwrap: str) -> bool:
    """Can the unprivileged sandbox uid create the namespaces we need? (~7 ms, once per process)"""
    argv = [bwrap, "--unshare-all", "--uid", "0", "--gid", "0", "--ro-bind", "/", "/", "true"]
    try:
        return subprocess.run(argv, capture_output=True, timeout=20, user=SANDBOX_UID, group=SANDBOX_GID,
                              extra_groups=[]).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _cgroup_parent(controller: str, probe: str) -> Path | None:
    """``<mount>/<this process's cgroup>/autoenvscaling`` for a v1 controller ('' = the v2 tree),
    created if we may; None when the controller is absent or read-only.

    Nesting under our own cgroup keeps sandboxes inside whatever limits the caller runs under."""
    mount = _cgroup_mount(controller)
    if mount is None:
        return None
    own = "/"
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (controller and controller in controllers.split(",")) or (not controller and controllers == ""):
            own = path
    parent = mount / own.lstrip("/") / "autoenvscaling"
    try:
        parent.mkdir(exist_ok=True)
        probe_dir = parent / f"probe-{os.getpid()}"
        probe_dir.mkdir(exist_ok=True)
        ok = (probe_dir / probe).exists()
        probe_dir.rmdir()
    except OSError:
        return None
    return parent if ok else None


def _remove_if_empty(paths: list[Path]) -> None:
    for path in paths:
        try:
            path.rmdir()
        except OSError:
            pass  # still in use by another process, or already gone


def _cgroup_mount(controller: str) -> Path | None:
    """Where a v1 controller's hierarchy (or, for '', the v2 tree) is mounted."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        fstype, _source, options = (post.split(" ", 2) + ["", ""])[:3]
        if controller and fstype == "cgroup" and controller in options.split(","):
            return Path(_unescape(pre.split()[4]))
        if not controller and fstype == "cgroup2":
            return Path(_unescape(pre.split()[4]))
    return None


def _unescape(path: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    return path.encode().decode("unicode_escape") if "\\" in path else path


# -- mounts --------------------------------------------------------------------------------------
_libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str, target: Path, fstype: str, flags: int, data: str) -> None:
    if _libc.mount(source.encode(), str(target).encode(), fstype.encode(), flags, data.encode()) != 0:
        err = ctypes.get_errno()
        raise SandboxError(f"mounting {fstype} on {target} failed: {os.strerror(err)}",
                           hint="the bwrap backend needs root and overlayfs on tmpfs/ext4/xfs")


# Attempt directories are searchable by every host uid (never listable): bwrap runs as the uid a
# command has inside, SANDBOX_UID + n, and must reach the merged root by path. Only world-readable
# files of a sandbox are visible to other host users who learn the path; nothing is writable to them.
RUN_DIR_MODE = 0o711


def mount_tmpfs(target: Path, *, size_mb: int, mode: int = RUN_DIR_MODE, gid: int = SANDBOX_GID) -> None:
    """A size-capped tmpfs: files written into it hit ENOSPC at the cap, never the host disk."""
    if size_mb < 1:
        raise SandboxError("a storage cap of 0 would mean an unlimited tmpfs")
    inodes = max(16384, size_mb * 256)
    _mount("tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NODEV,
           f"size={size_mb}m,nr_inodes={inodes},mode={mode:o},uid=0,gid={gid}")


def mount_overlay(target: Path, lower: Iterable[Path], upper: Path, work: Path) -> None:
    """Copy-on-write root: ``lower`` top first. Features that make an upper layer depend on the exact
    lower stack it was made on (redirects, metacopy, index) are off, so every layer stays a plain
    directory tree that can sit under any later stack."""
    lowers = [str(p) for p in lower]
    for path in [*lowers, str(upper), str(work)]:
        if any(c in path for c in ",:\\"):
            raise SandboxError(f"path unusable in an overlay mount: {path}",
                               hint="set AUTOENVSCALING_CACHE to a path without ',' ':' or '\\'")
    data = (f"lowerdir={':'.join(lowers)},upperdir={upper},workdir={work},"
            "redirect_dir=off,index=off,metacopy=off")
    if len(data) >= 4000:  # the kernel reads mount options from one page
        raise SandboxError(f"layer stack too deep to mount ({len(lowers)} layers)",
                           hint="merge RUN/COPY instructions in the Dockerfile, or use --backend docker")
    _mount("overlay", target, "overlay", 0, data)


def mount_pristine(target: Path, lower: Iterable[Path], top: Path) -> None:
    """A read-only overlay of ``lower`` alone (the prepared image as built, no attempt layer), with
    ``top``, a small layer of our own, above it: it holds the mount point the trusted helper binds
    the attempt's root at, and gives the kernel the second lower layer it wants without an upper."""
    lowers = [str(p) for p in (top, *lower)]
    if any(c in path for path in lowers for c in ",:\\"):
        raise SandboxError("path unusable in an overlay mount",
                           hint="set AUTOENVSCALING_CACHE to a path without ',' ':' or '\\'")
    _mount("overlay", target, "overlay", _MS_RDONLY,
           f"lowerdir={':'.join(lowers)},redirect_dir=off,index=off,metacopy=off")


def umount(target: Path) -> None:
    """Unmount, falling back to a lazy detach when something still holds it; missing is fine."""
    if _libc.umount2(str(target).encode(), 0) == 0:
        return
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOENT):  # not a mount point (any more)
        return
    if _libc.umount2(str(target).encode(), _MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
        raise SandboxError(f"cannot unmount {target}: {os.strerror(ctypes.get_errno())}")


def mounts_under(prefix: Path) -> list[Path]:
    """Mount points at or below ``prefix``, deepest first (the order to unmount them)."""
    prefix_s = str(prefix).rstrip("/") + "/"
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        target = _unescape(line.split()[4])
        if (target + "/").startswith(prefix_s):
            found.append(Path(target))
    return sorted(set(found), key=lambda p: len(p.parts), reverse=True)


# -- run directory and owners ---------------------------------------------------------------------
def run_dir() -> Path:
    """Where attempt mounts live. bwrap runs as the sandbox uid and must reach the merged root by
    path, so every ancestor needs search permission for it: not under ~root/.cache, but under /run
    (override: AUTOENVSCALING_RUN_DIR). Entries are named ``<pid>.<start time>.<n>`` of their owner."""
    base = Path(os.environ.get("AUTOENVSCALING_RUN_DIR") or "/run/autoenvscaling") / "bwrap"
    if not base.is_dir():
        base.mkdir(parents=True, exist_ok=True)
        for parent in (base.parent, base):
            os.chmod(parent, 0o711)
    st = base.lstat()
    if st.st_uid != 0 or not os.path.isdir(base) or base.is_symlink():
        raise SandboxError(f"{base} is not a root-owned directory", hint="remove it or set AUTOENVSCALING_RUN_DIR")
    return base


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@functools.cache
def owner_tag() -> str:
    """``<pid>.<start time>`` of this process: names of our mounts and cgroups start with it, so a
    later process can tell ours from those of a process that died without cleaning up."""
    return f"{os.getpid()}.{_start_time(os.getpid())}"


def owner_alive(name: str) -> bool:
    parts = name.split(".")
    if len(parts) < 3 or not parts[0].isdigit():
        return True  # not ours: leave it alone
    return _start_time(int(parts[0])) == parts[1]


# -- cgroups --------------------------------------------------------------------------------------
@dataclass
class Cgroups:
    """The cgroups of one attempt (or one build step): memory and pids limits (v1 here), and a v2
    directory for cgroup.kill. Only the controllers that exist are used; ``active`` says which."""

    name: str
    memory_mb: int
    pids: int
    facts: HostFacts
    dirs: list[Path] = field(default_factory=list)

    def create(self) -> None:
        for parent, settings in ((self.facts.memory_cgroup, self._memory_settings()),
                                 (self.facts.pids_cgroup, {"pids.max": str(self.pids)}),
                                 (self.facts.kill_cgroup, {})):
            if parent is None:
                continue
            path = parent / self.name
            for attempt in range(3):  # the parent may vanish under us (another process's exit)
                try:
                    path.mkdir(parents=True, exist_ok=True)
                    break
                except FileNotFoundError:
                    if attempt == 2:
                        raise
            self.dirs.append(path)
            for key, value in settings.items():
                if (path / key).exists():
                    (path / key).write_text(value)

    def _memory_settings(self) -> dict[str, str]:
        limit = str(self.memory_mb * 1024 * 1024)
        # memsw (memory+swap) must be >= the memory limit and set after it.
        return {"memory.limit_in_bytes": limit, "memory.memsw.limit_in_bytes": limit}

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids_in(self) -> set[int]:
        pids: set[int] = set()
        for d in self.dirs:
            try:
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return pids

    def kill(self, wait: float = 5.0) -> None:
        """SIGKILL every process in the attempt's cgroups, until none is left (or ``wait`` passes)."""
        deadline = time.monotonic() + wait
        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                try:
                    (d / "cgroup.kill").write_text("1")
                except OSError:
                    pass
        while True:
            pids = self.pids_in()
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill()
        for d in self.dirs:
            for _ in range(100):  # a killed process leaves its cgroup a moment after it dies
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.dirs.clear()


def cleanup_stale() -> list[str]:
    """Remove mounts, run directories and cgroups left by processes that died without closing their
    sandboxes (SIGKILL, OOM). Called when a backend starts; returns what it removed."""
    removed: list[str] = []
    facts = host_facts()
    if not facts.root:
        return removed
    try:
        base = run_dir()
    except SandboxError:
        return removed
    for entry in sorted(base.iterdir()):
        if owner_alive(entry.name):
            continue
        for mount in mounts_under(entry):
            try:
                umount(mount)
            except SandboxError:
                pass
        if not mounts_under(entry):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(str(entry))
    for parent in (facts.memory_cgroup, facts.pids_cgroup, facts.kill_cgroup):
        if parent is None:
            continue
        for entry in parent.iterdir():
            if entry.is_dir() and not owner_alive(entry.name):
                group = Cgroups(entry.name, 0, 0, facts, dirs=[entry])
                group.remove()
                removed.append(str(entry))
    return removed


# -- the contained-process launcher ------------------------------------------------------------------
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


_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCSIFFLAGS, _IFF_UP_LOOPBACK_RUNNING = 0x8914, 0x1 | 0x8 | 0x40


def _bring_up_loopback() -> None:
    """``ip link set lo up`` in the current network namespace, without needing ``ip``."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", _IFF_UP_LOOPBACK_RUNNING, b""))


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

        def holder() -> None:  # in the forked child, before exec
            os.setgroups([])
            os.setresgid(SANDBOX_GID, SANDBOX_GID, SANDBOX_GID)
            os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
            if _libc.unshare(flags) != 0:
                raise OSError(ctypes.get_errno(), "unshare(user, net)")
            if not network:
                _bring_up_loopback()  # a new user namespace's creator holds CAP_NET_ADMIN there

        try:
            proc = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, preexec_fn=holder, env=LAUNCH_ENV)
        except (OSError, subprocess.SubprocessError) as exc:
            raise SandboxError(f"cannot create the sandbox's user namespace: {exc}",
                               hint="the bwrap backend needs root and user namespaces (see autoenvscaling doctor)") from exc
        fds: list[int] = []
        try:
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{proc.pid}/{name}", "w") as fh:
                    fh.write(f"0 {SANDBOX_UID} {UID_RANGE}\n")
            fds.append(os.open(f"/proc/{proc.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC))
            if not network:
                fds.append(os.open(f"/proc/{proc.pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC))
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"cannot map the sandbox's id range: {exc}",
                               hint="the bwrap backend must run as root") from exc
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
        return cls(userns=fds[0], netns=fds[1] if len(fds) > 1 else None)

    def close(self) -> None:
        for fd in (self.userns, self.netns):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


@dataclass(frozen=True)
class Identity:
    """Who a command runs as inside: uid, gid, supplementary groups, home."""

    uid: int = 0
    gid: int = 0
    groups: tuple[int, ...] = ()
    home: str = "/root"


ROOT = Identity()


class Launcher:
    """How every command of one jail starts: the bwrap argv prefix, and what the forked child does
    before it execs bwrap. That step runs as host root in the child and is only syscalls on values
    computed here once: join the attempt's cgroups, set the rlimits and no_new_privs, enter the
    attempt's network namespace, drop to SANDBOX_UID, enter the attempt's user namespace and take
    the command's identity there. Doing it in the child (rather than through sh, prlimit, nsenter
    and setpriv) saves program starts per exec, about half of the launch cost on a loaded machine."""

    def __init__(self, root: Path, *, cgroups: Cgroups | None, limits: Limits, network: bool,
                 namespaces: Namespaces, facts: HostFacts | None = None,
                 binds: list[tuple[str, str]] | None = None, devices: list[str] | None = None) -> None:
        facts = facts or host_facts()
        assert facts.bwrap
        self.root = root
        self.procs_files = [p.encode() for p in (cgroups.procs_files if cgroups else [])]
        self.rlimits = limits.rlimits()
        self.namespaces = namespaces
        # No --unshare-user: the process is already in the attempt's user namespace (as root there,
        # bwrap keeps its capabilities; as another uid, bwrap nests a namespace of its own). No
        # --unshare-net: the attempt's network namespace (or, when granted, the host's) is shared.
        argv = [facts.bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--bind", str(root), "/", "--proc", "/proc",
                "--dev", "/dev", "--hostname", HOSTNAME]
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
        return [self.prefix[0], "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--die-with-parent", "--new-session", "--ro-bind", str(pristine), "/",
                "--dev", "/dev", "--bind", str(self.root), TRUSTED_TARGET, "--clearenv",
                "--setenv", "PATH", DEFAULT_PATH, "--chdir", "/", "--", *command]

    def in_child(self, identity: Identity = ROOT) -> Callable[[], None]:
        """What the forked child runs, as host root, right before exec."""
        pid_files, rlimits, ns = self.procs_files, self.rlimits, self.namespaces

        def setup() -> None:
            pid = str(os.getpid()).encode()
            for path in pid_files:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            for which, value in rlimits:
                resource.setrlimit(which, (value, value))
            if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
            if ns.netns is not None and _libc.setns(ns.netns, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns(net)")
            os.setgroups([])
            os.setresgid(SANDBOX_GID, SANDBOX_GID, SANDBOX_GID)
            os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
            # Now unprivileged on the host; the namespace is ours (its owner is SANDBOX_UID).
            if _libc.setns(ns.userns, _CLONE_NEWUSER) != 0:
                raise OSError(ctypes.get_errno(), "setns(user)")
            os.setgroups(list(identity.groups or (identity.gid,)))
            os.setresgid(identity.gid, identity.gid, identity.gid)
            os.setresuid(identity.uid, identity.uid, identity.uid)

        return setup


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
        self.limit, self.parts, self.size, self.truncated = limit, [], 0, False
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
                       in_child: Callable[[], None] | None = None) -> Outcome:
    """Run ``argv`` (bwrap, after ``in_child`` ran in the forked child), feeding ``stdin`` and
    capturing both streams up to ``limit`` bytes each. On timeout bwrap gets SIGKILL, so its pid
    namespace takes every process with it (setsid'd ones included), and ``kill`` (the attempt's
    cgroup kill) sweeps up whatever was still starting."""
    start = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=LAUNCH_ENV, close_fds=True, preexec_fn=in_child)
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
    except asyncio.CancelledError:
        _kill(proc, kill)
        raise
    if timed_out:
        _kill(proc, kill)
        try:
            await asyncio.wait_for(work, 10)
        except asyncio.TimeoutError:  # a pipe still held open: give up on the rest of the output
            work.cancel()
    code = proc.returncode
    return Outcome(exit_code=None if timed_out else code, stdout=out.data(), stderr=err.data(),
                   seconds=time.monotonic() - start, timed_out=timed_out,
                   truncated=out.truncated or err.truncated, tail=b"".join(tail)[-tail_bytes:] if tail_bytes else b"")


def _kill(proc: asyncio.subprocess.Process, kill: Callable[[], None]) -> None:
    try:
        proc.kill()
    except ProcessLookupError:
        pass
    kill()


# -- a mounted, contained root ------------------------------------------------------------------------
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
        self.storage_mb, self.upper, self.work, self.binds = storage_mb, upper, work, binds
        self.devices = devices
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

    async def run(self, argv: list[str], *, env: dict[str, str], cwd: str, identity: Identity = ROOT,
                  stdin: bytes | None = None, timeout: float = 60.0, limit: int = 1 << 16,
                  tail_bytes: int = 0, ro_binds: Iterable[tuple[str, str]] = ()) -> Outcome:
        launcher = self._ready()
        full = launcher.argv(argv, env=env, cwd=cwd, ro_binds=ro_binds)
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
                (top / mount_point.lstrip("/")).mkdir(parents=True)
            target.mkdir()
            mount_pristine(target, self.lower, top)
        return target

    def expose(self, source: Path) -> Path:
        """``source`` (a host directory anywhere, ~root/.cache included) bound read-only under the
        attempt's run directory, which the sandbox uid can reach by path: bwrap binds it from there."""
        self._ready()
        target = self.dir / "exposed" / hashlib.sha256(str(source).encode()).hexdigest()[:16]
        if not target.is_dir():
            target.mkdir(parents=True)
            _mount(str(source), target, "", _MS_BIND, "")
            _mount("", target, "", _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "")
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
        proc = await asyncio.create_subprocess_exec(
            *launcher.argv(argv, env=env, cwd=cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env=LAUNCH_ENV, close_fds=True, preexec_fn=launcher.in_child(identity))
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
        out = await self.run(["getent", database, key], env={"PATH": DEFAULT_PATH}, cwd="/", timeout=30)
        fields = out.stdout.decode(errors="replace").strip().split(":")
        return fields if out.exit_code == 0 and len(fields) >= 4 else None

    async def _groups(self, user: str, gid: int) -> tuple[int, ...]:
        """The user's supplementary groups (as login would set them), primary group first."""
        out = await self.run(["id", "-G", "--", user], env={"PATH": DEFAULT_PATH}, cwd="/", timeout=30)
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


class Service:
    """A long-lived process of a jail (see Jail.spawn): its output tail and exit status."""

    def __init__(self, name: str, proc: asyncio.subprocess.Process, log_bytes: int) -> None:
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
        reaped; after the jail closed that takes a moment. A pipe still held open is given up on."""
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), timeout)
            await asyncio.wait_for(self.proc.wait(), timeout)
        except asyncio.TimeoutError:
            self._reader.cancel()
