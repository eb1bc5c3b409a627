"""A pool of worker processes on this machine, each running one job at a time.

Jobs wait in one queue; ``size`` slots each own a worker process, start it on demand, hand it the
next job over a pipe and wait until the pipe has the result or the process is gone (both are file
descriptors the event loop watches). A worker that died is replaced, and its job goes back to the
queue until it has been retried ``max_retries`` times.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from multiprocessing.connection import Connection

from .jobs import Job, JobResult


class WorkerDied(Exception):
    def __init__(self, exitcode: int | None) -> None:
        super().__init__(exitcode)
        self.exitcode = exitcode

    def describe(self) -> str:
        code = self.exitcode
        if code is not None and code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with status {code}"


class _Worker:
    """One worker: a fresh interpreter running ``python -m autoenvscaling.executors.worker`` (spawn
    semantics, and it never re-runs the caller's main module, so scripts need no main guard), talking
    over a socket pair. The child's end closes when it dies, so the driver sees EOF on its end."""

    def __init__(self) -> None:
        import json
        import socket
        import subprocess
        import sys

        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autoenvscaling.executors.worker", str(theirs.fileno()), json.dumps(sys.path)],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=2)  # stdout stays clean for --json
        theirs.close()
        self._socket = ours
        self.conn = Connection(ours.detach())

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    async def run(self, job: Job, time_limit: float | None = None) -> JobResult | None:
        """``job``'s result; None when it ran past ``time_limit`` (the worker is then killed)."""
        loop = asyncio.get_running_loop()
        try:
            self.conn.send(job)
        except OSError:
            raise WorkerDied(self._exitcode()) from None
        ready: asyncio.Future[None] = loop.create_future()
        fd = self.conn.fileno()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(fd, wake)
        try:
            await asyncio.wait_for(ready, time_limit)
        except TimeoutError:
            self.kill()
            return None
        finally:
            loop.remove_reader(fd)
        try:
            result: JobResult = self.conn.recv()
            return result
        except (EOFError, OSError):
            raise WorkerDied(self._exitcode()) from None

    def _exitcode(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except Exception:
            return None

    def kill(self) -> None:
        """SIGKILL (its bubblewrap sandboxes die with it; containers are swept as stale later)."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=10)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        try:
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait(timeout=5)
        self.conn.close()


class WorkerPool:
    def __init__(self, size: int, *, max_retries: int = 2) -> None:
        self.size = size
        self.max_retries = max_retries
        self._queue: asyncio.Queue[tuple[Job, asyncio.Future[JobResult | None], int, float | None]] = asyncio.Queue()
        self._workers: list[_Worker | None] = [None] * size
        self._slots: list[asyncio.Task[None]] = []

    def pids(self) -> list[int]:
        """The running workers' process ids (tests kill them)."""
        return [w.pid for w in self._workers if w is not None]

    async def submit(self, job: Job, *, time_limit: float | None = None) -> JobResult | None:
        """``job``'s result; None when it ran past ``time_limit`` seconds (its worker killed, the job
        not retried: a hang would hang again)."""
        if not self._slots:
            self._slots = [asyncio.ensure_future(self._slot(i)) for i in range(self.size)]
        fut: asyncio.Future[JobResult | None] = asyncio.get_running_loop().create_future()
        await self._queue.put((job, fut, 0, time_limit))
        return await fut

    async def _slot(self, i: int) -> None:
        while True:
            job, fut, retries, time_limit = await self._queue.get()
            if fut.done():  # its caller went away
                continue
            worker = self._workers[i]
            if worker is None or not worker.alive():
                worker = await asyncio.to_thread(_Worker)
                self._workers[i] = worker
            try:
                result = await worker.run(job, time_limit)
            except WorkerDied as died:
                self._workers[i] = None
                if retries < self.max_retries:
                    await self._queue.put((job, fut, retries + 1, time_limit))
                elif not fut.done():
                    fut.set_result(JobResult(key=job.key, retries=retries,
                                             error=f"worker process {died.describe()} ({retries + 1} attempt(s))"))
                continue
            if result is None:  # past its time limit: the worker was killed
                self._workers[i] = None
                if not fut.done():
                    fut.set_result(None)
                continue
            if not fut.done():
                fut.set_result(result.model_copy(update={"retries": retries}) if retries else result)

    async def aclose(self) -> None:
        for slot in self._slots:
            slot.cancel()
        await asyncio.gather(*self._slots, return_exceptions=True)
        self._slots = []
        workers = [w for w in self._workers if w is not None]
        self._workers = [None] * self.size
        await asyncio.gather(*(asyncio.to_thread(w.stop) for w in workers))
