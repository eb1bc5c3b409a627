"""Host-side isolation primitives for the bwrap backend: what this machine offers, the ids sandboxes
run as, mounts, the run directory and its owners, and cgroups. The contained-process launcher is in
launcher.py, the mounted root that runs commands (``Jail``) in jail.py.

Identity. Every attempt (and every build step) gets its own user namespace that maps a whole range
of host ids, ``SANDBOX_UID + n`` for n in [0, UID_RANGE), to ``n`` inside, as rootless container
engines map subordinate ids. Host root writes that map (only root may map a range), so files inside
can belong to other users and groups (dpkg chgrp's to ``adm`` or ``utmp``), ``USER app`` really is
an unprivileged uid with file permissions that hold, and all of it stays unprivileged on the host:
no host uid below SANDBOX_UID is mapped, so nothing inside is ever host root (docs/sandboxes.md,
facts about our machines: bwrap started by host root would give the sandbox host-root rights on
bound files).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import functools
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..errors import SandboxError

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
    userns_error: str  # bwrap's last line when the user-namespace probe failed
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
            said = f"; bwrap said: {self.userns_error}" if self.userns_error else ""
            out.append(f"unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1{said})")
        return out


@functools.cache
def host_facts() -> HostFacts:
    root = os.geteuid() == 0
    bwrap = shutil.which("bwrap")
    overlay = _has_overlay()
    userns_error = _probe_userns(bwrap) if root and bwrap else "not probed"
    userns = bool(root and bwrap) and userns_error == ""
    memory = _cgroup_parent("memory", "memory.limit_in_bytes") if root else None
    pids = _cgroup_parent("pids", "pids.max") if root else None
    kill = _cgroup_parent("", "cgroup.kill") if root else None
    # Our parent directories sit inside the caller's cgroups: leave none behind, or the caller's
    # cgroup could not be removed. (Cgroups.create recreates them when another process needs them.)
    atexit.register(_remove_if_empty, [p for p in (memory, pids, kill) if p is not None])
    return HostFacts(root=root, bwrap=bwrap, mmdebstrap=shutil.which("mmdebstrap"), overlay=overlay, userns=userns,
                     userns_error="" if userns else userns_error, memory_cgroup=memory, pids_cgroup=pids, kill_cgroup=kill)


def _has_overlay() -> bool:
    try:
        if "overlay" in Path("/proc/filesystems").read_text():
            return True
    except OSError:
        return False
    # Not loaded yet (it loads on first mount): ask modprobe whether the module exists.
    modprobe = shutil.which("modprobe")
    return modprobe is not None and subprocess.run([modprobe, "-n", "overlay"], capture_output=True).returncode == 0


def _probe_userns(bwrap: str, tries: int = 3) -> str:
    """Can the unprivileged sandbox uid create the namespaces we need? "" when it can, else bwrap's
    last line (~7 ms, once per process). A failure is tried again twice, 0.2 s apart: on a machine
    busy with sandboxes one probe can fail for a moment, and a wrong "no" stops a whole run."""
    argv = [bwrap, "--unshare-all", "--uid", "0", "--gid", "0", "--ro-bind", "/", "/", "true"]
    why = ""
    for attempt in range(max(1, tries)):
        if attempt:
            time.sleep(0.2)
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, user=SANDBOX_UID, group=SANDBOX_GID,
                                  extra_groups=[])
        except (OSError, subprocess.TimeoutExpired) as exc:
            why = f"{type(exc).__name__}: {exc}"
            continue
        if done.returncode == 0:
            return ""
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        why = lines[-1][:200] if lines else f"exit status {done.returncode}"
    return why


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
    for _ in range(5):
        try:
            parent.mkdir(exist_ok=True)
            probe_dir = parent / f"probe-{os.getpid()}"
            probe_dir.mkdir(exist_ok=True)
            ok = (probe_dir / probe).exists()
            probe_dir.rmdir()
        except FileNotFoundError:  # another process, exiting, removed the empty parent meanwhile
            continue
        except OSError:
            return None
        return parent if ok else None
    return None


def _remove_if_empty(paths: list[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):  # still in use by another process, or already gone
            path.rmdir()


def _cgroup_mount(controller: str) -> Path | None:
    """Where a v1 controller's hierarchy (or, for '', the v2 tree) is mounted."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        fstype, _source, options = (post.split(" ", 2) + ["", ""])[:3]
        if fstype == ("cgroup" if controller else "cgroup2") and (not controller or controller in options.split(",")):
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


def bind_readonly(source: Path, target: Path) -> None:
    """Bind ``source`` at ``target`` read-only, nosuid and nodev."""
    _mount(str(source), target, "", _MS_BIND, "")
    _mount("", target, "", _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "")


def umount(target: Path) -> None:
    """Unmount, falling back to a lazy detach when something still holds it; missing is fine."""
    if _libc.umount2(str(target).encode(), 0) == 0 or ctypes.get_errno() in (errno.EINVAL, errno.ENOENT):
        return  # unmounted, or not a mount point (any more)
    if _libc.umount2(str(target).encode(), _MNT_DETACH) != 0 and ctypes.get_errno() not in (errno.EINVAL, errno.ENOENT):
        raise SandboxError(f"cannot unmount {target}: {os.strerror(ctypes.get_errno())}")


def mounts_under(prefix: Path) -> list[Path]:
    """Mount points at or below ``prefix``, deepest first (the order to unmount them)."""
    prefix_s = str(prefix).rstrip("/") + "/"
    targets = (_unescape(line.split()[4]) for line in Path("/proc/self/mountinfo").read_text().splitlines())
    found = {Path(target) for target in targets if (target + "/").startswith(prefix_s)}
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


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
        limit = str(self.memory_mb * 1024 * 1024)
        # memsw (memory+swap) must be >= the memory limit and set after it.
        memory = {"memory.limit_in_bytes": limit, "memory.memsw.limit_in_bytes": limit}
        for parent, settings in ((self.facts.memory_cgroup, memory),
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

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids_in(self) -> set[int]:
        pids: set[int] = set()
        for d in self.dirs:
            with contextlib.suppress(OSError):
                pids.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return pids

    def kill(self, wait: float = 5.0) -> None:
        """SIGKILL every process in the attempt's cgroups, until none is left (or ``wait`` passes)."""
        deadline = time.monotonic() + wait
        for d in self.dirs:
            if (d / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (d / "cgroup.kill").write_text("1")
        while True:
            pids = self.pids_in()
            if not pids or time.monotonic() > deadline:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
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
            with contextlib.suppress(SandboxError):
                umount(mount)
        if not mounts_under(entry):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(str(entry))
    for parent in (facts.memory_cgroup, facts.pids_cgroup, facts.kill_cgroup):
        if parent is None:
            continue
        try:
            entries = list(parent.iterdir())
        except FileNotFoundError:  # removed, empty, by another process's exit: nothing stale in it
            continue
        for entry in entries:
            if entry.is_dir() and not owner_alive(entry.name):
                Cgroups(entry.name, 0, 0, facts, dirs=[entry]).remove()
                removed.append(str(entry))
    return removed
