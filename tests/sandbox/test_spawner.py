"""The fork server that starts the bwrap backend's processes (core/sandbox/spawner.py and
forkserver.py): launches run their setup steps there and report how they ended; a failed step or
exec is an error with its cause; a kill reaches the right process; a server that dies is replaced,
a forked copy of this process gets its own, and a request too large for its messages forks here."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from autoenvscaling.sandbox import spawner
from autoenvscaling.sandbox.launcher import close_pipes
from autoenvscaling.sandbox.spawner import ChildSetup, launch, launch_sync

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the launch steps change ids: root only")

SH = "/bin/sh"
ENV = {"PATH": "/usr/bin:/bin"}
CLEAN = ChildSetup(steps=(("clean",),))


async def _run(argv: list[str], setup: ChildSetup = CLEAN, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
    proc = await launch(argv, env=ENV, setup=setup, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    if stdin is not None:
        proc.stdin.write(stdin)
        await proc.stdin.drain()
        proc.stdin.close()
    out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    code = await proc.wait()
    close_pipes(proc)
    return code, out, err


def test_a_launch_runs_its_steps_in_a_process_the_server_forked():
    """Ids, umask and signals as the steps set them, stdin and both output streams, the exit code;
    the launched process's parent is the server. Positive control: with the server off, this
    process forks it, and the same steps give the same result."""
    setup = ChildSetup(steps=(("clean",), ("ids", 4242, 4343, (4343, 4444))))
    script = "echo $PPID; id -u; id -g; id -G; umask; grep SigBlk /proc/self/status; cat; echo err >&2; exit 3"
    code, out, err = asyncio.run(_run([SH, "-c", script], setup, stdin=b"from stdin\n"))
    server = spawner.server()
    parent, *lines = out.decode().split("\n")
    assert server is not None and int(parent) == server.proc.pid != os.getpid()
    assert (code, err) == (3, b"err\n")
    assert lines == ["4242", "4343", "4343 4444", "0022", "SigBlk:\t0000000000000000", "from stdin", ""]
    os.environ["AUTOENVSCALING_FORKSERVER"] = "0"
    try:
        here = asyncio.run(_run([SH, "-c", script], setup, stdin=b"from stdin\n"))
    finally:
        del os.environ["AUTOENVSCALING_FORKSERVER"]
    assert here[1].decode().split("\n") == [str(os.getpid()), *lines] and (here[0], here[2]) == (code, err)


def test_a_failed_step_or_exec_is_an_error_with_its_cause():
    with pytest.raises(subprocess.SubprocessError, match="cannot start no-such-program: FileNotFoundError"):
        asyncio.run(_run(["/nonexistent/no-such-program"]))
    with pytest.raises(subprocess.SubprocessError, match=r"FileNotFoundError: .*/nonexistent/cgroup.procs"):
        asyncio.run(_run([SH, "-c", "true"], ChildSetup(steps=(("cgroup", "/nonexistent/cgroup.procs"),))))
    with pytest.raises(subprocess.SubprocessError, match="unknown launch step 'format-disk'"):
        asyncio.run(_run([SH, "-c", "true"], ChildSetup(steps=(("format-disk",),))))
    assert asyncio.run(_run([SH, "-c", "exit 0"]))[0] == 0  # the server still serves


def test_kill_ends_the_process_and_its_exit_says_so():
    async def go() -> tuple[int | None, int]:
        proc = await launch([SH, "-c", "echo started; exec sleep 600"], env=ENV, setup=CLEAN)
        assert await proc.stdout.readline() == b"started\n"
        before = proc.returncode
        proc.kill()
        code = await proc.wait()
        with pytest.raises(ProcessLookupError):
            proc.kill()  # reaped: never a signal to a pid the kernel may have given to another process
        proc.close_pipes()
        return before, code

    assert asyncio.run(go()) == (None, -signal.SIGKILL)


def test_a_dead_server_is_replaced_and_what_it_ran_ends_killed():
    async def go() -> tuple[int, int, int]:
        proc = await launch([SH, "-c", "echo up; exec sleep 600"], env=ENV, setup=CLEAN)
        await proc.stdout.readline()
        first = spawner.server()
        assert first is not None
        first.proc.kill()
        code = await proc.wait()
        proc.close_pipes()
        again = await launch([SH, "-c", "exit 7"], env=ENV, setup=CLEAN)
        second = spawner.server()
        assert second is not None and second is not first and second.proc.pid != first.proc.pid
        code2 = await again.wait()
        again.close_pipes()
        return code, code2, _gone(proc.pid)

    code, code2, gone = asyncio.run(go())
    assert code == -signal.SIGKILL and code2 == 7 and gone


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as fh:  # a zombie of the dead server, reaped by init in a moment
        return fh.read().split(") ", 1)[1].startswith("Z")


def test_a_forked_copy_of_this_process_starts_its_own_server():
    pid, stdin, wait = launch_sync(["/bin/cat"], env=ENV, setup=CLEAN)
    stdin.close()
    assert wait() == 0
    ours = spawner.server()
    assert ours is not None
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked copy reports through the pipe
        try:
            _, child_stdin, child_wait = launch_sync(["/bin/cat"], env=ENV, setup=CLEAN)
            child_stdin.close()
            theirs = spawner.server()
            os.write(write_end, f"{child_wait()} {theirs.proc.pid if theirs else 0}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 100).decode().split()
    os.close(read_end)
    os.waitpid(child, 0)
    assert answer[0] == "0" and int(answer[1]) not in (0, ours.proc.pid)
    assert spawner.server() is ours and ours.alive  # the parent's server served on


def test_a_request_too_large_for_the_server_forks_here():
    big = ["x" * 40000] * 3  # the server's messages carry at most half of MAX_MESSAGE
    code, out, _ = asyncio.run(_run([SH, "-c", 'echo $PPID; printf %s "$@" | wc -c', "sh", *big]))
    assert (code, out.split()) == (0, [str(os.getpid()).encode(), b"120000"])


def test_the_server_imports_only_the_standard_library():
    """It runs as ``python -I -S forkserver.py``: nothing of the package, nothing from site-packages."""
    probe = ("import runpy, sys; runpy.run_path(sys.argv[1], run_name='probe')\n"
             "for m in sys.modules.values(): print(m.__name__, getattr(m, '__file__', None) or 'built-in')")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe, spawner.SERVER], capture_output=True, text=True,
                         check=True).stdout
    modules = dict(line.split(" ", 1) for line in out.splitlines())
    assert "socket" in modules and "json" in modules
    assert not [m for m, f in modules.items() if m.startswith("autoenvscaling") or "-packages" in f], modules


def test_a_restart_ends_the_old_server_and_every_exit_reaches_its_process():
    """A restart ends the connection with a shutdown, and the thread reading it closes it. Closed
    under that thread's recv instead, the old server never saw the end (the recv held the socket
    open), and the descriptor's number went to the next server's socket, where a stale reader took
    (and dropped) exit statuses meant for the new server's processes: their waits never ended."""
    async def batch() -> list[int]:
        codes = []
        for i in range(20):
            proc = await launch([SH, "-c", f"exit {i % 3}"], env=ENV, setup=CLEAN, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
            codes.append(await asyncio.wait_for(proc.wait(), 120))  # a lost status would wait forever
        return codes

    for _ in range(3):
        assert asyncio.run(batch()) == [i % 3 for i in range(20)]
        old = spawner.server()
        assert old is not None
        spawner.restart()
        assert old.proc.poll() is not None and not old.alive  # it saw the end and exited; its reader too
