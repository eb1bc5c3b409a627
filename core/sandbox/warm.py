"""Warm verifier interpreters for the bwrap backend: an interpreter that imported a verifier's heavy
modules once (torch) serves many verifications, each in a child forked from it.

A verifier runtime offers a ``WarmCommand`` for a task whose tests/test.sh would only run the
runtime's Python program (``VerifierRuntime.warm``). The trial then runs that program in a
``WarmServer`` instead of running test.sh in the attempt's sandbox:

- the server is warm_server.py, run by the image's own ``python3`` in a jail of its own: the
  prepared image as its root, read-only (every program and module as built: nothing a request
  writes is imported by the next), less the top layers that hold nothing but the command's
  ``task_paths`` (split_layers: the tasks one Dockerfile builds share a server, and each request
  gets those folders as its own task's image has them); its own user, network (loopback only),
  pid, ipc and mount namespaces, cgroups and rlimits, as an attempt's; a uid that is not root and
  has no capability;
- writable: /logs/verifier, /tmp, /dev/shm and its output folder, host folders this module empties
  before every request; read-only: /dev, /tests (the task's tests, written here per request), the
  attempt's files the command asks for (``inputs``, read from the attempt after its verifier view
  was applied, under WARM_INPUTS) and the verifier runtimes, bound where test.sh would see them;
- per request the server forks a child that runs the program (``python -I script args``) with the
  environment test.sh would get (HOME is /tmp: the root is read-only), waits for it, then kills
  every other process in its pid namespace and answers only when none is left; the server itself
  is non-dumpable, so no process of a request can trace it or read its memory;
- the attempt's sandbox never sees the server, and the server never sees the attempt: it gets
  copies of the named files and of the tests, nothing else.

A server that dies, answers nonsense or cannot sweep is closed and the verification runs cold
(test.sh in the attempt, as without a warm command): a request can make its own verification
slower, never different. A request that times out ends the server with it and is reported as the
verifier's timeout. ``AUTOENVSCALING_WARM_VERIFIER=0`` switches warm verification off.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import shutil
import stat
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from ..errors import SandboxError
from . import spawner
from .base import WarmCommand
from .isolation import SANDBOX_GID, SANDBOX_UID, mount_pristine, umount
from .jail import Jail, _open_dirs
from .launcher import _NAMESPACES, LAUNCH_ENV, Identity, Limits

WARM_ROOT = "/run/autoenvscaling-warm"
WARM_INPUTS = f"{WARM_ROOT}/in"  # the attempt's files a command asked for, at WARM_INPUTS + their path
WARM_UID = 64000  # the server's uid inside its jail's user namespace: not root, no capabilities
START_TIMEOUT = 300.0  # seconds for the server's imports (torch on a loaded machine)
OUTPUT_LIMIT = 1 << 20  # bytes of a request's stdout and stderr kept (the tail)
LOG_FILE_LIMIT = 8 << 20  # bytes of one /logs/verifier file brought back
SWITCH = "AUTOENVSCALING_WARM_VERIFIER"
#: protections ``WarmServer(weaken=...)`` switches off, for the tests' positive controls only: the sweep
#: of a request's processes, the server's non-dumpable flag, the read-only root and /dev (the jail's
#: writable overlay instead, and bwrap's /dev as it makes it), the emptying of the writable folders
#: between requests
WEAKEN = ("sweep", "dumpable", "readonly", "reset")
_SERVER_SCRIPT = Path(__file__).with_name("warm_server.py")
_log = logging.getLogger(__name__)
# folder in the server's jail -> (host folder name, writable by the server)
_FOLDERS = {"/logs/verifier": ("logs", True), "/tmp": ("tmp", True), "/dev/shm": ("shm", True),
            f"{WARM_ROOT}/out": ("out", True), "/tests": ("tests", False), WARM_INPUTS: ("in", False),
            f"{WARM_ROOT}/server": ("server", False)}


def enabled() -> bool:
    """Whether warm verification is on (``AUTOENVSCALING_WARM_VERIFIER``, default on)."""
    return os.environ.get(SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class WarmOutcome:
    """One warm request: what test.sh's exec would have given, and the files of /logs/verifier."""

    exit_code: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    seconds: float = 0.0
    timed_out: bool = False
    logs: dict[str, bytes] = field(default_factory=dict)


class WarmServer:
    """One warm interpreter in its own jail (see the module docstring); one request at a time."""

    def __init__(self, lower: list[Path], command: WarmCommand, *, env: Mapping[str, str], mounts: Mapping[str, Path],
                 memory_mb: int, pids: int, limits: Limits, storage_mb: int, weaken: frozenset[str] = frozenset()) -> None:
        unknown = sorted(weaken - set(WEAKEN))
        if unknown:
            raise ValueError(f"unknown protection {unknown[0]!r} (known: {', '.join(WEAKEN)})")
        self.command, self.env, self.mounts, self.weaken = command, dict(env), dict(mounts), weaken
        self.jail = Jail(lower, memory_mb=memory_mb, pids=pids, limits=limits, network=False, storage_mb=storage_mb)
        self.pid: int | None = None
        self._stdin = self._stdout = -1
        self._buffer = b""
        self.requests = 0
        self.closed = False
        self._finalizer = weakref.finalize(self, _close_jail, self.jail)

    @property
    def work(self) -> Path:
        return self.jail.dir / "warm"

    def start(self) -> None:
        """Open the jail, start the server and wait for its imports (raises SandboxError)."""
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        jail = self.jail
        jail.open()
        top, root = jail.dir / "warm-top", jail.dir / "warm-root"
        for inside in [*_FOLDERS, *self.mounts, *self.command.task_paths, "/dev", "/proc"]:
            _open_dirs(top / inside.lstrip("/"))
        _open_dirs(root)
        mount_pristine(root, jail.lower, top)
        uid, gid = SANDBOX_UID + WARM_UID, SANDBOX_GID + WARM_UID
        for name, writable in [*_FOLDERS.values(), *((f"task{k}", False) for k in range(len(self.command.task_paths)))]:
            path = self.work / name
            _open_dirs(path)
            if writable:
                os.chown(path, uid, gid)
                os.chmod(path, 0o700)
        shutil.copyfile(_SERVER_SCRIPT, self.work / "server" / _SERVER_SCRIPT.name)
        os.chmod(self.work / "server" / _SERVER_SCRIPT.name, 0o644)
        launcher = jail._ready()
        if "readonly" in self.weaken:  # the control: the jail's copy-on-write root, shared by every request
            for inside in [*_FOLDERS, *self.mounts]:
                _open_dirs(jail.root / inside.lstrip("/"))
            root = jail.root
        argv = [jail.facts.bwrap or "bwrap", *_NAMESPACES, "--ro-bind" if root != jail.root else "--bind", str(root),
                "/", "--proc", "/proc", "--dev", "/dev"]
        for inside, (name, writable) in _FOLDERS.items():
            argv += ["--bind" if writable else "--ro-bind", str(self.work / name), inside]
        for k, inside in enumerate(self.command.task_paths):
            argv += ["--ro-bind", str(self.work / f"task{k}"), inside]
        for inside, local in sorted(self.mounts.items()):
            argv += ["--ro-bind", str(jail.expose(Path(local))), inside]
        if "readonly" not in self.weaken:
            argv += ["--remount-ro", "/dev"]  # bwrap's /dev is a tmpfs its uid owns: nothing may be left there
        argv.append("--clearenv")
        for key, value in self.env.items():
            argv += ["--setenv", key, value]
        argv += ["--chdir", "/tmp", "--", self.command.python, "-I", f"{WARM_ROOT}/server/{_SERVER_SCRIPT.name}",
                 *self.command.preload]
        weakened = sorted(self.weaken & {"sweep", "dumpable"})
        if weakened:
            argv.append("--weaken=" + ",".join(weakened))
        identity = Identity(uid=WARM_UID, gid=WARM_UID, groups=(WARM_UID,), home="/tmp")
        log = os.open(self.work / "server.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            self.pid, self._stdin, self._stdout = _spawn(argv, launcher.in_child(identity), log)
        finally:
            os.close(log)
        ready = self._reply(START_TIMEOUT)
        if not ready or not ready.get("ready"):
            said = (self.work / "server.log").read_bytes()[-2000:].decode("utf-8", "replace").strip()
            raise SandboxError(f"the warm verifier did not start: {said.splitlines()[-1] if said else 'no output'}",
                               hint=f"{SWITCH}=0 verifies every attempt cold")

    def run(self, *, tests: Mapping[str, tuple[bytes, bool]], inputs: Mapping[str, bytes | None],
            env: Mapping[str, str], timeout: float, image: list[Path] | None = None) -> WarmOutcome | None:
        """One verification; None when the server failed (closed: verify cold instead). ``image``: the
        task's layers, whose ``task_paths`` the request gets (default: this server's own)."""
        start = time.monotonic()
        self.requests += 1
        try:
            if "reset" not in self.weaken:
                self._reset()
            self._task_folders(image or self.jail.lower)
            _write_tree(self.work / "tests", {p: (d, x) for p, (d, x) in tests.items()})
            _write_tree(self.work / "in", {p.lstrip("/"): (d, False) for p, d in inputs.items() if d is not None})
            request = {"argv": [self.command.script, *self.command.args], "env": dict(env), "cwd": "/tmp"}
            _write_all(self._stdin, (json.dumps(request) + "\n").encode())
        except OSError:
            self.close()
            return None
        answer = self._reply(timeout)
        seconds = time.monotonic() - start
        if answer == {}:  # the deadline passed: the request and the server end together
            stdout, stderr = self._outputs()
            outcome = WarmOutcome(exit_code=None, stdout=stdout, stderr=stderr, timed_out=True, seconds=seconds)
            self.close()
            return outcome
        if not answer or not isinstance(answer.get("exit"), int) or answer.get("clean") is not True:
            self.close()
            return None
        stdout, stderr = self._outputs()
        return WarmOutcome(exit_code=answer["exit"], stdout=stdout, stderr=stderr, seconds=seconds,
                           logs=_read_flat(self.work / "logs"))

    def _task_folders(self, image: list[Path]) -> None:
        """Each of ``task_paths`` as ``image`` has it, copied into its folder (read-only inside)."""
        if not self.command.task_paths:
            return
        view, top = self.jail.dir / "task-view", self.jail.dir / "task-view-top"
        for folder in (view, top):
            _open_dirs(folder)
        mount_pristine(view, image, top)
        try:
            for k, inside in enumerate(self.command.task_paths):
                target = self.work / f"task{k}"
                _empty(target)
                source = _real_dir(view, inside)
                if source is not None:
                    shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True, copy_function=_copy_file)
        finally:
            umount(view)

    def _outputs(self) -> tuple[bytes, bytes]:
        """The request's stdout and stderr (their tails)."""
        return _tail(self.work / "out" / "stdout", OUTPUT_LIMIT), _tail(self.work / "out" / "stderr", OUTPUT_LIMIT)

    def _reset(self) -> None:
        """Empty every folder the server sees (no process of an earlier request is left to race this)."""
        for name, _ in _FOLDERS.values():
            if name != "server":
                _empty(self.work / name)

    def _reply(self, timeout: float) -> dict[str, Any] | None:
        """The server's next line: a dict; {} when ``timeout`` passed first; None when it ended or
        said something that is not one JSON object."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return {}
            ready, _, _ = select.select([self._stdout], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self._stdout, 65536)
            if not chunk:
                return None
            self._buffer += chunk
            if len(self._buffer) > 1 << 16:
                return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            return None
        return message if isinstance(message, dict) and message else None

    def close(self) -> None:
        """Kill the server and whatever it runs, unmount and remove its jail (idempotent)."""
        if self.closed:
            return
        self.closed = True
        for fd in (self._stdin, self._stdout):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._stdin = self._stdout = -1
        self._finalizer()


def split_layers(lower: list[Path], task_paths: tuple[str, ...]) -> tuple[list[Path], list[Path]]:
    """``lower`` (top first) as (the layers a warm interpreter's root is made of, the top layers left
    out of it): a top layer is left out when everything in it lies in ``task_paths``."""
    wanted = [PurePosixPath(p) for p in task_paths]
    k = 0
    while task_paths and k < len(lower) - 1 and _only_under(lower[k], PurePosixPath("/"), wanted):
        k += 1
    return lower[k:], lower[:k]


def _only_under(folder: Path, inside: PurePosixPath, wanted: list[PurePosixPath]) -> bool:
    for entry in os.scandir(folder):
        path = inside / entry.name
        if path in wanted:
            continue
        if not any(path in w.parents for w in wanted) or not entry.is_dir(follow_symlinks=False):
            return False
        if not _only_under(Path(entry.path), path, wanted):
            return False
    return True


def _real_dir(root: Path, inside: str) -> Path | None:
    """``root`` + ``inside`` when every component of the way is a directory, not a link (a link in
    an image could lead this host-side copy out of the image), else None."""
    path = root
    for part in PurePosixPath(inside).parts[1:]:
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        except OSError:
            return None
    return path


def _empty(folder: Path) -> None:
    """Remove what ``folder`` holds (never following a link out of it)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def _copy_file(source: str, target: str) -> None:
    """Regular files only (a FIFO would block the copy; a device is no task's file)."""
    if stat.S_ISREG(os.lstat(source).st_mode):
        shutil.copy2(source, target)


def _close_jail(jail: Jail) -> None:
    jail.close()


def _spawn(argv: list[str], setup: spawner.ChildSetup, log: int) -> tuple[int, int, int]:
    """Start ``argv`` with pipes on its stdin and stdout and ``log`` as its stderr: (pid, the stdin
    pipe's write end, the stdout pipe's read end)."""
    in_read, in_write = os.pipe2(os.O_CLOEXEC)
    out_read, out_write = os.pipe2(os.O_CLOEXEC)
    try:
        fork_server = spawner.server()
        pid: int | None = None
        if fork_server is not None:
            with contextlib.suppress(spawner.TooLarge, spawner.ServerGone):
                pid, _ = fork_server.spawn(argv, LAUNCH_ENV, setup, (in_read, out_write, log))
        if pid is None:
            proc = subprocess.Popen(argv, stdin=in_read, stdout=out_write, stderr=log, env=LAUNCH_ENV, preexec_fn=setup)
            pid = proc.pid
            threading.Thread(target=proc.wait, daemon=True).start()  # reaped here, whenever it ends
    except BaseException:
        for fd in (in_write, out_read):
            os.close(fd)
        raise
    finally:
        for fd in (in_read, out_write):
            os.close(fd)
    return pid, in_write, out_read


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_tree(folder: Path, files: Mapping[str, tuple[bytes, bool]]) -> None:
    """Files (relative paths) under ``folder``, world-readable; folders 755."""
    for rel, (data, executable) in files.items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            continue
        target = folder.joinpath(*parts)
        _open_dirs(target.parent)
        target.write_bytes(data)
        os.chmod(target, 0o755 if executable else 0o644)


def _tail(path: Path, limit: int) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        if not os.path.isfile(f"/proc/self/fd/{fd}"):
            return b""
        size = os.fstat(fd).st_size
        f.seek(max(0, size - limit))
        return f.read(limit)


def _read_flat(folder: Path) -> dict[str, bytes]:
    """The regular files directly in ``folder`` (never through a symlink), each up to LOG_FILE_LIMIT."""
    out: dict[str, bytes] = {}
    for entry in os.scandir(folder):
        if entry.is_file(follow_symlinks=False):
            try:
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as f:
                out[entry.name] = f.read(LOG_FILE_LIMIT)
    return out


class WarmPool:
    """The warm servers of one backend, idle ones kept per key (image, runtimes, environment,
    limits, command) for the next verification of the same key: the attempts of one task (an
    admission's oracle runs, a training group's rollouts). At most ``limit`` at once: a new key
    takes the place of the idle server used longest ago; with every server busy, the verification
    runs cold. A key whose server could not start (the image lacks a module to preload, say) is not
    tried again: its verifications run cold without paying for another failed start."""

    BROKEN_KEPT = 256  # keys remembered as unable to start, oldest forgotten first

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit or max(2, os.cpu_count() or 2)
        self._idle: dict[tuple, list[WarmServer]] = {}
        self._used: dict[int, float] = {}  # id(server) -> when it was last given back
        self._count = 0
        self._lock = threading.Lock()
        self.started = 0  # servers started, for tests and benchmarks
        self.served = 0  # requests answered warm
        self.failed = 0  # servers that did not start (their verifications ran cold)
        self.last_failure = ""
        self._broken: dict[tuple, str] = {}  # key -> why its server did not start

    def _take(self, key: tuple) -> WarmServer | None | bool:
        """An idle server for ``key``, True when a new one may start, False when every one is busy."""
        evicted: WarmServer | None = None
        with self._lock:
            idle = self._idle.get(key) or []
            while idle:
                server = idle.pop()
                if not server.closed:
                    return server
                self._count -= 1
            if self._count >= self.limit:
                others = [(self._used.get(id(s), 0.0), k, s) for k, group in self._idle.items() for s in group]
                if not others:
                    return False
                _, old_key, evicted = min(others, key=lambda item: item[0])
                self._idle[old_key].remove(evicted)
                self._used.pop(id(evicted), None)
                self._count -= 1
            self._count += 1
        if evicted is not None:
            evicted.close()
        return True

    def _give_back(self, key: tuple, server: WarmServer) -> None:
        with self._lock:
            if server.closed:
                self._count -= 1
                self._used.pop(id(server), None)
            else:
                self._idle.setdefault(key, []).append(server)
                self._used[id(server)] = time.monotonic()

    def run(self, key: tuple, make: Any, *, tests: Mapping[str, tuple[bytes, bool]],
            inputs: Mapping[str, bytes | None], env: Mapping[str, str], timeout: float,
            image: list[Path] | None = None) -> WarmOutcome | None:
        """One verification on a server for ``key`` (``make()`` builds a new one); blocking: call it
        in a thread. None: run it cold (the pool is full, or the server failed or cannot start)."""
        with self._lock:
            if key in self._broken:
                return None
        got = self._take(key)
        if got is False:
            return None
        server: WarmServer
        if got is True:
            server = make()
            try:
                server.start()
            except (SandboxError, OSError) as exc:
                with self._lock:
                    self._count -= 1
                    self.failed += 1
                    self.last_failure = str(exc)
                    self._broken[key] = str(exc)
                    while len(self._broken) > self.BROKEN_KEPT:
                        del self._broken[next(iter(self._broken))]
                _log.warning("warm verifier unavailable, verifying cold: %s", exc)
                return None
            with self._lock:
                self.started += 1
        else:
            assert isinstance(got, WarmServer)
            server = got
        try:
            outcome = server.run(tests=tests, inputs=inputs, env=env, timeout=timeout, image=image)
        finally:
            self._give_back(key, server)
        if outcome is not None:
            with self._lock:
                self.served += 1
        return outcome

    def close(self) -> None:
        with self._lock:
            servers = [s for group in self._idle.values() for s in group]
            self._idle.clear()
            self._count -= len(servers)
        for server in servers:
            server.close()
