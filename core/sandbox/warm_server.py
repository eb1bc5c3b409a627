"""A warm verifier interpreter: the server side of warm.py, run by the image's own Python inside a
bwrap jail whose root is the prepared image, read-only (standard library only; Python 3.8 or later).

It imports the modules named on its command line once (``torch``), makes itself non-dumpable (no
process of its uid can trace it or read its memory), says ``ready`` and then serves one request at a
time, each a JSON line on stdin: ``{"argv": [script, *args], "env": {...}, "cwd": "/tmp"}``. For each it
forks a child that becomes ``python -I script args`` (a new session, the request's environment, its
output in OUT/stdout and OUT/stderr) and waits for it. Then it kills every other process of the
jail's pid namespace, whatever the request started and however it hid (``kill(-1)``: the jail runs
as one uid without capabilities, so nothing there can outrank this process), and only when none is
left answers ``{"exit": N, "clean": true}``. The host empties the writable folders before the next
request, so nothing of one request reaches the next: not a process, not a file, not a module (the
root is read-only, and an import after the fork reads the image as built).
"""

import json
import os
import runpy
import signal
import sys
import time

OUT = "/run/autoenvscaling-warm/out"
SWEEP_SECONDS = 30.0
PR_SET_DUMPABLE = 4


def main():
    # --weaken=sweep,dumpable: for the tests' positive controls only (warm.py's ``weaken``)
    weaken = set()
    preload = []
    for arg in sys.argv[1:]:
        if arg.startswith("--weaken="):
            weaken.update(w for w in arg[len("--weaken="):].split(",") if w)
        else:
            preload.append(arg)
    protocol_in = os.fdopen(os.dup(0), "rb", buffering=0)
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)  # nothing a request prints can reach the protocol
    os.close(null)
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if "dumpable" not in weaken and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit("cannot make the warm interpreter non-dumpable")
    for name in preload:
        __import__(name)
    keep = frozenset(sys.modules)
    _say(protocol_out, {"ready": True, "pid": os.getpid(), "modules": len(keep)})
    for line in iter(protocol_in.readline, b""):
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request, protocol_in, protocol_out)
        code = _wait(pid)
        clean = _sweep() if "sweep" not in weaken else True
        _say(protocol_out, {"exit": code, "clean": clean})


def _say(out, message):
    out.write((json.dumps(message) + "\n").encode())


def _wait(pid):
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        if os.WIFEXITED(status):
            return os.WEXITSTATUS(status)
        return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else 1


def _others():
    """Live processes of this pid namespace other than its init (1) and this one (zombies are dead)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, me):
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2:][:1] != b"Z":
            found.append(int(entry))
    return found


def _sweep():
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        try:
            os.kill(-1, signal.SIGKILL)  # every process this one may signal but itself and init
        except ProcessLookupError:
            pass
        while True:  # reap our own children (the request's child, reparented ones go to init)
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not _others():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)


def _child(request, protocol_in, protocol_out):
    code = 1
    try:
        os.setsid()
        protocol_in.close()
        protocol_out.close()
        for fd, name in ((1, "stdout"), (2, "stderr")):
            target = os.open(os.path.join(OUT, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            os.dup2(target, fd)
            os.close(target)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request.get("cwd") or "/tmp")
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        import tempfile

        tempfile.tempdir = None  # from the request's TMPDIR, not the server's
        sys.argv = list(request["argv"])
        runpy.run_path(sys.argv[0], run_name="__main__")
        code = 0
    except SystemExit as exc:  # as the interpreter ends on one: a number, nothing (0), or a message (1)
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - the traceback is the request's output, as python would print it
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


if __name__ == "__main__":
    main()
