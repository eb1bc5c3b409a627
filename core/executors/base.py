"""Executors run many independent jobs (validations, attempts, proposals) in parallel.

A job is plain data (``jobs.Job``: a key, a worker setup and ``run``); a worker turns it into a
``JobResult`` with ``run_job``. Executors know no kind of job: each lives next to what it runs.
``map`` yields results in completion order, each with its job's key; a job that raises becomes an
error result, never the end of the batch. Executors take concurrent ``map`` calls (the flywheel
calibrates several pool tasks at once), all sharing the executor's workers.

The local executor runs jobs in ``concurrency`` worker processes (spawned, each with its own plugin
host, kept alive across jobs and batches). A worker that dies mid-job (SIGKILL, out of memory) is
replaced and its job started again on the new one, up to ``max_retries`` times; then the job's
result is an error naming the signal. Nothing is recorded by workers: the driver admits from
results, keyed by job, so a retried job cannot be admitted twice. ``in_process=True`` runs the same
jobs in this event loop instead (tests, notebooks, in-process plugin objects).
"""

from __future__ import annotations

import abc
import asyncio
import os
from typing import TYPE_CHECKING, AsyncIterator, ClassVar, Iterable

from ..errors import UsageError
from .jobs import Job, JobResult

if TYPE_CHECKING:
    from .pool import WorkerPool
    from .worker import WorkerContext

__all__ = ["Executor", "Job", "JobResult", "LocalExecutor"]


DEFAULT_JOB_TIME_LIMIT = 4 * 3600.0
JOB_TIME_LIMIT_ENV = "AUTOENVSCALING_JOB_TIME_LIMIT"


def job_time_limit_from_env() -> float | None:
    """``$AUTOENVSCALING_JOB_TIME_LIMIT`` seconds (0: none), else the default (4 hours)."""
    raw = os.environ.get(JOB_TIME_LIMIT_ENV, "").strip()
    if not raw:
        return DEFAULT_JOB_TIME_LIMIT
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{JOB_TIME_LIMIT_ENV}={raw!r} is not a number of seconds",
                         hint=f"e.g. {JOB_TIME_LIMIT_ENV}=7200, or 0 for no limit") from None
    return value if value > 0 else None


class Executor(abc.ABC):
    """Runs job specs somewhere. ``address``: where the workers are (a cluster), when that applies.
    ``job_time_limit``: seconds one job may run before its worker is killed and its result is an
    error (a plugin hook, gate or proposer that hangs must not hold a run forever; every sandbox
    command has its own, shorter limit); None: no limit."""

    name: ClassVar[str]
    in_process: bool = False
    """True when jobs run in this process (they may then use the driver's own plugin objects)."""

    def __init__(self, *, concurrency: int = 2, address: str | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.address = address
        self.job_time_limit: float | None = job_time_limit_from_env()

    def over_time(self, job: Job) -> JobResult:
        """The error result of ``job`` stopped at the time limit."""
        return JobResult(key=job.key, error=f"the job ran past the executor's time limit of {self.job_time_limit:g} s "
                                            f"and was stopped (a plugin hook, gate or proposer that hangs?); "
                                            f"{JOB_TIME_LIMIT_ENV} sets the limit")

    @abc.abstractmethod
    async def submit(self, job: Job) -> JobResult:
        """Run one job; never raises for the job's own failure (that is an error result)."""

    async def map(self, jobs: Iterable[Job]) -> AsyncIterator[JobResult]:
        """Run ``jobs``; yield each result as it completes."""
        tasks = [asyncio.ensure_future(self.submit(job)) for job in jobs]
        try:
            for fut in asyncio.as_completed(tasks):
                yield await fut
        finally:
            for t in tasks:
                t.cancel()

    async def aclose(self) -> None:
        """Release workers."""

    async def __aenter__(self) -> "Executor":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class LocalExecutor(Executor):
    """``concurrency`` worker processes on this machine (``in_process``: this event loop)."""

    name = "local"

    def __init__(self, *, concurrency: int = 2, address: str | None = None, in_process: bool = False,
                 max_retries: int = 2) -> None:
        if address:
            raise UsageError(f"the local executor takes no address (got {address!r})",
                             hint="use --executor ray --ray-address ADDR for a cluster")
        super().__init__(concurrency=concurrency)
        self.in_process = in_process
        self.max_retries = max_retries
        self._pool: WorkerPool | None = None
        self._context: WorkerContext | None = None
        self._limit: asyncio.Semaphore | None = None

    async def submit(self, job: Job) -> JobResult:
        if self.in_process:
            from .worker import WorkerContext, run_job

            if self._context is None:
                self._context = WorkerContext()
                self._limit = asyncio.Semaphore(self.concurrency)
            assert self._limit is not None
            async with self._limit:
                # Only a hang that awaits can be stopped here; worker processes are killed instead.
                try:
                    return await asyncio.wait_for(run_job(job, self._context), self.job_time_limit)
                except TimeoutError:
                    return self.over_time(job)
        if self._pool is None:
            from .pool import WorkerPool

            self._pool = WorkerPool(self.concurrency, max_retries=self.max_retries)
        result = await self._pool.submit(job, time_limit=self.job_time_limit)
        return self.over_time(job) if result is None else result

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
        if self._context is not None:
            await self._context.aclose()
            self._context = None

