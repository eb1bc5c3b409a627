"""Executors run many independent jobs (validations, attempts) in parallel.

A job is an async callable with its arguments; results come back in completion order with the job's
key, and a job that raises becomes an error result, never the end of the batch. The local executor
uses an asyncio semaphore in this process; a Ray executor (its own plugin) ships jobs to a cluster.
"""

from __future__ import annotations

import abc
import asyncio
import traceback
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable, ClassVar, Hashable, Iterable


@dataclass(frozen=True)
class Job:
    key: Hashable
    fn: Callable[..., Awaitable[Any]]
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class JobResult:
    key: Hashable
    value: Any = None
    error: str | None = None  # one line; the traceback is in ``details``
    details: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Executor(abc.ABC):
    name: ClassVar[str]

    def __init__(self, *, concurrency: int = 2) -> None:
        self.concurrency = max(1, concurrency)

    @abc.abstractmethod
    def map(self, jobs: Iterable[Job]) -> AsyncIterator[JobResult]:
        """Run ``jobs``; yield each result as it completes."""

    async def aclose(self) -> None:
        """Release workers."""


class LocalExecutor(Executor):
    """Runs jobs concurrently in this event loop, at most ``concurrency`` at a time."""

    name = "local"

    async def map(self, jobs: Iterable[Job]) -> AsyncIterator[JobResult]:  # type: ignore[override]
        sem = asyncio.Semaphore(self.concurrency)

        async def one(job: Job) -> JobResult:
            async with sem:
                try:
                    return JobResult(job.key, await job.fn(*job.args, **dict(job.kwargs)))
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    line = f"{type(exc).__name__}: {exc}".splitlines()[0]
                    return JobResult(job.key, error=line, details=traceback.format_exc())

        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            for fut in asyncio.as_completed(tasks):
                yield await fut
        finally:
            for t in tasks:
                t.cancel()
