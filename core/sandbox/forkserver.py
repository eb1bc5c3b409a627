"""What a contained process does between fork and exec, as data, and the small process that forks
them (``python3 -I -S forkserver.py FD``; spawner.py starts and talks to it).

Why a server: fork copies the page tables of the process that forks, and so costs in proportion to
its memory. A test worker or a flywheel with torch loaded holds hundreds of megabytes; every sandbox
command then spent 10-35 ms of kernel time in fork, and as much again in the child unmapping the
copy at exec, against under 2 ms from a small process. The server is that small process: it
imports nothing but the standard library, and forks and execs each launch for the process that
asked.

A launch's setup is a list of steps (``apply``), each a JSON list; the namespace file descriptors it
joins travel with the request (SCM_RIGHTS) and are named by index:

    ["clean"]                        every signal to its default action, none blocked, umask 022
    ["cgroup", path]                 write our pid to a cgroup's cgroup.procs
    ["rlimit", which, soft, hard]
    ["no_new_privs"]
    ["setns", index, nstype]         join the namespace of passed descriptor ``index``
    ["ids", uid, gid, [groups]]      setgroups, setresgid, setresuid
    ["unshare", flags]
    ["loopback"]                     bring up ``lo`` in the current network namespace

This module imports only the standard library: the server runs it as a script, without the package.

Protocol (a SOCK_SEQPACKET socket pair, one JSON object per message):
- ``{"op": "spawn", "argv": [...], "env": {...}, "steps": [...], "stdio": [i, j, k]}`` with
  descriptors attached: ``stdio`` names, for the child's stdin, stdout and stderr, the index of an
  attached descriptor (None: /dev/null). The answer is ``{"pid": P}`` once the child has exec'd, or
  ``{"error": "..."}`` when a step or the exec failed (the child is reaped). One request at a time.
- ``{"op": "kill", "pid": P, "signal": S}``: sent to a child that has not been reaped (so never to a
  reused pid); no answer.
- ``{"exited": P, "code": C}``: a child ended (C as subprocess gives it: negative for a signal).
When the socket closes (the process that started the server is gone), every child still running
gets SIGKILL and the server exits; a child whose server dies gets SIGKILL from the kernel.
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import socket
import struct
import sys

CONTAINER_UMASK = 0o022
_SIG_DFL = 0
_CATCHABLE = tuple(range(1, signal.NSIG))  # SIGKILL and SIGSTOP refuse a change: nothing to do
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_PDEATHSIG = 1
_SIOCSIFFLAGS, _IFF_UP_LOOPBACK_RUNNING = 0x8914, 0x1 | 0x8 | 0x40
MAX_FDS = 8
MAX_MESSAGE = 1 << 17  # larger requests (a huge command line) fork in the caller instead

_libc = ctypes.CDLL(None, use_errno=True)
_libc.signal.argtypes, _libc.signal.restype = (ctypes.c_int, ctypes.c_void_p), ctypes.c_void_p


def clean_process_state() -> None:
    """In a forked child before exec: every signal to its default action, none blocked, and the
    container umask. Through libc, not ``signal.signal``: a child forked from a worker thread is
    not Python's main thread. Dispositions matter because an ignored signal stays ignored across
    exec (a program's Ctrl-C test would hang in the sandbox and pass in a container)."""
    for signum in _CATCHABLE:
        _libc.signal(signum, _SIG_DFL)  # EINVAL for SIGKILL, SIGSTOP and unused numbers: nothing to do
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    os.umask(CONTAINER_UMASK)


def bring_up_loopback() -> None:
    """``ip link set lo up`` in the current network namespace, without needing ``ip``."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", _IFF_UP_LOOPBACK_RUNNING, b""))


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), what)


def apply(steps: list, fds: list[int]) -> None:
    """Run ``steps`` (see the module docstring) in this process; ``fds``: the descriptors they name."""
    for step in steps:
        kind = step[0]
        if kind == "clean":
            clean_process_state()
        elif kind == "cgroup":
            fd = os.open(step[1], os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        elif kind == "rlimit":
            resource.setrlimit(step[1], (step[2], step[3]))
        elif kind == "no_new_privs":
            _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        elif kind == "setns":
            _check(_libc.setns(fds[step[1]], step[2]), f"setns({step[2]:#x})")
        elif kind == "ids":
            os.setgroups(list(step[3]))
            os.setresgid(step[2], step[2], step[2])
            os.setresuid(step[1], step[1], step[1])
        elif kind == "unshare":
            _check(_libc.unshare(step[1]), f"unshare({step[1]:#x})")
        elif kind == "loopback":
            bring_up_loopback()
        else:
            raise ValueError(f"unknown launch step {kind!r}")


# -- the server --------------------------------------------------------------------------------------
def _send(sock: socket.socket, message: dict) -> None:
    sock.sendmsg([json.dumps(message).encode()])


def _child(request: dict, fds: list[int], errors: int, server: int) -> None:
    """In the forked child: the standard streams, the steps, exec. Never returns."""
    try:
        stdio = request.get("stdio") or [None, None, None]
        for target, index in enumerate(stdio):
            if index is None:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(null, target)
                os.close(null)
            else:
                os.dup2(fds[index], target)
        apply(request["steps"], fds)
        # It dies with the server (the server's one thread: a parent that lives as long as it does).
        # Set last: a change of ids clears it. A server already gone by now is caught by the check.
        _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
        if os.getppid() != server:
            os._exit(127)
        argv = request["argv"]
        os.execve(argv[0], argv, request["env"])
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the caller
        try:
            os.write(errors, f"{type(exc).__name__}: {exc}".encode()[:4000])
        finally:
            os._exit(127)
    os._exit(127)  # not reached: execve returned without raising


def _spawn(request: dict, fds: list[int]) -> dict:
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    server = os.getpid()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        return {"error": f"fork failed: {exc}"}
    if pid == 0:
        os.close(read_end)
        _child(request, fds, write_end, server)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 4096):  # EOF at exec (the pipe is close-on-exec) or at exit
        chunks.append(chunk)
    os.close(read_end)
    if chunks:
        os.waitpid(pid, 0)
        return {"error": b"".join(chunks).decode("utf-8", "replace")}
    return {"pid": pid}


def serve(sock: socket.socket) -> None:
    children: set[int] = set()
    signal.pthread_sigmask(signal.SIG_SETMASK, ())  # whatever the thread that started it blocked
    wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C at the terminal is the caller's to handle
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    poller.register(wake_read, select.POLLIN)

    def reap() -> None:
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            children.discard(pid)
            _send(sock, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    while True:
        try:
            events = poller.poll()
        except InterruptedError:
            continue
        for fd, _ in events:
            if fd == wake_read:
                while True:
                    try:
                        if not os.read(wake_read, 512):
                            break
                    except BlockingIOError:
                        break
                reap()
                continue
            fds = array.array("i")
            data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * fds.itemsize),
                                                 socket.MSG_CMSG_CLOEXEC)
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            if not data:  # the caller is gone: so are its sandboxes
                for pid in children:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                return
            request = json.loads(data)
            try:
                if request["op"] == "spawn":
                    answer = _spawn(request, list(fds))
                    if "pid" in answer:
                        children.add(answer["pid"])
                    _send(sock, answer)
                elif request["op"] == "kill" and request["pid"] in children:
                    try:
                        os.kill(request["pid"], request["signal"])
                    except ProcessLookupError:
                        pass
            finally:
                for fd in fds:
                    os.close(fd)
        reap()


if __name__ == "__main__":
    os.chdir("/")  # pin no directory of the caller's
    os.set_inheritable(int(sys.argv[1]), False)
    serve(socket.socket(fileno=int(sys.argv[1])))
