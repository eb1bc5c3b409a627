"""Starting the bwrap backend's contained processes through a small fork server (forkserver.py).

``ChildSetup`` is what a launched process does between fork and exec (the steps of forkserver.py,
with the namespace descriptors they join). ``launch`` starts ``argv`` with it and gives an object
that behaves like ``asyncio.subprocess.Process`` where the launcher uses one (pid, stdin, stdout,
stderr, returncode, wait, kill). The fork happens in the server, a process of a few megabytes
started once per process that launches (again after a fork of that process), so a launch costs the
same whatever this process holds in memory. Where the server cannot be used (it failed to start,
or a request is larger than its messages allow) the process forks here, with the same steps run as
a ``preexec_fn``. ``AUTOENVSCALING_FORKSERVER=0`` always forks here.
"""

from __future__ import annotations

import array
import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import forkserver

SERVER = str(Path(forkserver.__file__).resolve())
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT


@dataclass(frozen=True)
class ChildSetup:
    """The steps a launched process runs as host root before it execs (forkserver.py's list), and
    the descriptors its ``setns`` steps name by index. Called, it runs them here (a preexec_fn)."""

    steps: tuple[tuple[Any, ...], ...]
    fds: tuple[int, ...] = field(default=())

    def __call__(self) -> None:
        forkserver.apply([list(s) for s in self.steps], list(self.fds))


class TooLarge(Exception):
    """A request the server's messages cannot carry: fork here instead."""


class ServerGone(OSError):
    """The server exited before it answered: a new one takes the request."""


class ForkServer:
    """One server process and the connection to it; thread-safe. Answers come back in the order the
    requests went (one at a time, under a lock); a reader thread also collects exit statuses."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen([sys.executable, "-I", "-S", SERVER, str(theirs.fileno())],
                                         pass_fds=(theirs.fileno(),), stdin=DEVNULL, stdout=DEVNULL, stderr=None)
        finally:
            theirs.close()
        self.sock = ours
        self.owner = os.getpid()
        self.lock = threading.Lock()
        self.answers: queue.Queue[tuple[dict, concurrent.futures.Future[int] | None]] = queue.Queue()
        self.running: dict[int, concurrent.futures.Future[int]] = {}
        self.alive = True
        self.reader = threading.Thread(target=self._read, name="aes-forkserver", daemon=True)
        self.reader.start()
        atexit.register(self.stop)

    def stop(self) -> None:
        """End the connection: the server kills what it still runs and exits; wait for that. (A
        shutdown, not a close: the reader thread sees the end and closes the socket itself.)"""
        if self.owner != os.getpid():
            return
        atexit.unregister(self.stop)
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.reader.join(timeout=5)

    def _read(self) -> None:
        try:
            while True:
                data = self.sock.recv(forkserver.MAX_MESSAGE)
                if not data:
                    break
                message = json.loads(data)
                if "exited" in message:
                    done = self.running.pop(message["exited"], None)
                    if done is not None:
                        done.set_result(message["code"])
                    continue
                future: concurrent.futures.Future[int] | None = None
                if "pid" in message:
                    future = self.running[message["pid"]] = concurrent.futures.Future()
                self.answers.put((message, future))
        except OSError:
            pass
        self.alive = False
        self.sock.close()  # only here: closed under a recv in progress, its number could go to another socket
        for done in self.running.values():  # the server died, and the kernel killed its children (PDEATHSIG)
            done.set_result(-signal.SIGKILL)
        self.running.clear()
        self.answers.put(({"error": "the fork server exited", "gone": True}, None))

    def spawn(self, argv: list[str], env: dict[str, str], setup: ChildSetup,
              stdio: tuple[int | None, int | None, int | None]) -> tuple[int, concurrent.futures.Future[int]]:
        """Fork and exec ``argv`` in the server: its pid and a future of its exit code."""
        fds = [*setup.fds, *(fd for fd in stdio if fd is not None)]
        slots, k = [], len(setup.fds)
        for fd in stdio:
            slots.append(None if fd is None else k)
            k += fd is not None
        data = json.dumps({"op": "spawn", "argv": argv, "env": env, "steps": [list(s) for s in setup.steps],
                           "stdio": slots}).encode()
        if len(data) > forkserver.MAX_MESSAGE // 2 or len(fds) > forkserver.MAX_FDS:
            raise TooLarge
        with self.lock:
            try:
                if not self.alive:
                    raise ServerGone("the fork server exited")
                self.sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            except OSError as exc:
                raise ServerGone(f"the fork server exited: {exc}") from exc
            answer, future = self.answers.get()
        if answer.get("gone"):
            raise ServerGone(answer["error"])
        if "error" in answer or future is None:
            raise subprocess.SubprocessError(f"cannot start {Path(argv[0]).name}: {answer.get('error')}")
        return answer["pid"], future

    def kill(self, pid: int, signum: int = signal.SIGKILL) -> None:
        with self.lock, contextlib.suppress(OSError):  # a server that is gone took its children with it
            if self.alive:
                self.sock.sendmsg([json.dumps({"op": "kill", "pid": pid, "signal": int(signum)}).encode()])


_server: ForkServer | None = None
_server_lock = threading.Lock()
_failed = False


def server() -> ForkServer | None:
    """This process's fork server, started on first use (None: disabled, or it cannot start)."""
    global _server, _failed
    if os.environ.get("AUTOENVSCALING_FORKSERVER", "1") == "0":
        return None
    with _server_lock:
        if _server is not None and _server.owner != os.getpid():
            _server.sock.close()  # this process's copy of its parent's connection
            _server = None
        if _server is not None and not _server.alive:
            _server = None  # it died: a new one
        if _server is None and not _failed:
            try:
                _server = ForkServer()
            except OSError:
                _failed = True
        return _server


def restart() -> None:
    """Stop this process's fork server (a command it started that still runs is killed): the next
    launch starts a new one, in the state this process is in then."""
    global _server
    with _server_lock:
        if _server is not None:
            _server.stop()
        _server = None


class LaunchedProcess:
    """A process the fork server started, with asyncio streams on the pipes to it."""

    def __init__(self, pid: int, exited: concurrent.futures.Future[int], server: ForkServer) -> None:
        self.pid, self._exited, self._server = pid, exited, server
        self.stdin: asyncio.StreamWriter | None = None
        self.stdout: asyncio.StreamReader | None = None
        self.stderr: asyncio.StreamReader | None = None
        self._transports: list[asyncio.BaseTransport] = []

    @property
    def returncode(self) -> int | None:
        return self._exited.result() if self._exited.done() else None

    async def wait(self) -> int:
        return await asyncio.wrap_future(self._exited)

    def kill(self) -> None:
        if self._exited.done():
            raise ProcessLookupError(self.pid)
        self._server.kill(self.pid)

    def close_pipes(self) -> None:
        for transport in self._transports:
            transport.close()


async def launch(argv: list[str], *, env: dict[str, str], setup: ChildSetup, stdin: int = DEVNULL,
                 stdout: int = PIPE, stderr: int = PIPE) -> Any:
    """Start ``argv`` after ``setup``: a LaunchedProcess, or (where the server cannot take it) an
    ``asyncio.subprocess.Process`` forked here. ``stdin``: PIPE or DEVNULL; ``stdout``: PIPE or
    DEVNULL; ``stderr``: PIPE, DEVNULL or STDOUT."""
    for _ in range(2):  # a server that died before it answered is replaced once
        fork_server = server()
        if fork_server is None:
            break
        try:
            return await _launch(fork_server, argv, env, setup, stdin, stdout, stderr)
        except TooLarge:
            break
        except ServerGone:
            continue
    return await asyncio.create_subprocess_exec(*argv, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                                                close_fds=True, preexec_fn=setup)


async def _launch(fork_server: ForkServer, argv: list[str], env: dict[str, str], setup: ChildSetup,
                  stdin: int, stdout: int, stderr: int) -> LaunchedProcess:
    loop = asyncio.get_running_loop()
    ours: dict[str, int] = {}
    theirs: list[int | None] = [None, None, None]
    try:
        if stdin == PIPE:
            theirs[0], ours["stdin"] = os.pipe2(os.O_CLOEXEC)
        if stdout == PIPE:
            ours["stdout"], theirs[1] = os.pipe2(os.O_CLOEXEC)
        if stderr == PIPE:
            ours["stderr"], theirs[2] = os.pipe2(os.O_CLOEXEC)
        elif stderr == STDOUT:
            theirs[2] = theirs[1]
        pid, exited = fork_server.spawn(argv, env, setup, (theirs[0], theirs[1], theirs[2]))
    except BaseException:
        for fd in ours.values():
            os.close(fd)
        raise
    finally:
        for fd in {fd for fd in theirs if fd is not None}:
            os.close(fd)
    proc = LaunchedProcess(pid, exited, fork_server)
    for name in ("stdout", "stderr"):
        if name in ours:
            reader = asyncio.StreamReader(loop=loop)
            protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
            read_transport, _ = await loop.connect_read_pipe(functools.partial(_same, protocol),
                                                             os.fdopen(ours[name], "rb", buffering=0))
            proc._transports.append(read_transport)
            setattr(proc, name, reader)
    if "stdin" in ours:
        write_transport, flow = await loop.connect_write_pipe(lambda: asyncio.streams.FlowControlMixin(loop=loop),
                                                              os.fdopen(ours["stdin"], "wb", buffering=0))
        proc._transports.append(write_transport)
        proc.stdin = asyncio.StreamWriter(write_transport, flow, None, loop)
    return proc


def _same(protocol: asyncio.Protocol) -> asyncio.Protocol:
    return protocol


def launch_sync(argv: list[str], *, env: dict[str, str], setup: ChildSetup) -> tuple[int, Any, Any]:
    """Start ``argv`` after ``setup`` with a pipe on its stdin and nothing else: (pid, the stdin
    pipe's binary file, a ``wait()`` callable giving the exit code)."""
    for _ in range(2):  # a server that died before it answered is replaced once
        fork_server = server()
        if fork_server is None:
            break
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        try:
            pid, exited = fork_server.spawn(argv, env, setup, (read_end, None, None))
        except (TooLarge, ServerGone) as exc:
            os.close(write_end)
            if isinstance(exc, TooLarge):
                break
            continue
        except BaseException:
            os.close(write_end)
            raise
        else:
            return pid, os.fdopen(write_end, "wb", buffering=0), exited.result
        finally:
            os.close(read_end)
    proc = subprocess.Popen(argv, stdin=PIPE, stdout=DEVNULL, stderr=DEVNULL, env=env, preexec_fn=setup)
    return proc.pid, proc.stdin, proc.wait
