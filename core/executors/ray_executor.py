"""Running job specs as Ray tasks, on a cluster (``address``) or a local Ray instance.

Each job is one ``ray.remote`` task; its worker builds what the job names (plugin host, sandbox
backend, models) and keeps it for the next job it gets in the same Ray worker process. Sandboxes are
therefore created on the Ray workers, which need the sandbox's prerequisites (docs/scaling.md). A
worker that dies mid-job is Ray's to retry (``max_retries`` task retries on worker death); after
that the job's result is an error naming the failure. Results come back to the driver as they
complete, and the driver alone writes the suite and run.sqlite, keyed by job, so a retried job is
admitted once. Ray is imported only here, and only when the first job is submitted.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, ClassVar

from ..errors import MissingPrerequisite
from ..plugins.prerequisites import Prerequisite, PrerequisiteStatus
from .base import Executor
from .jobs import Job, JobResult

if TYPE_CHECKING:
    from .worker import WorkerContext

# Passed to the Ray workers of a local instance we start, so caches and plugin choices match the driver's.
_FORWARDED_ENV = ("AUTOENVSCALING_", "OMP_NUM_THREADS", "DOCKER_HOST", "OPENAI_API_KEY")


class RayExecutor(Executor):
    """Jobs as Ray tasks; ``concurrency`` bounds the jobs in flight from this driver."""

    name = "ray"

    def __init__(self, *, concurrency: int = 2, address: str | None = None, max_retries: int = 2) -> None:
        super().__init__(concurrency=concurrency, address=address)
        self.max_retries = max_retries
        self._started = False  # whether this executor started Ray (and so shuts it down)
        self._remote: object = None
        self._limit: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def _slots(self) -> asyncio.Semaphore:
        """The in-flight bound, one per event loop (an executor may outlive an ``asyncio.run``)."""
        loop = asyncio.get_running_loop()
        if self._limit is None or self._limit[0] is not loop:
            self._limit = (loop, asyncio.Semaphore(self.concurrency))
        return self._limit[1]

    def _ensure(self) -> object:
        if self._remote is not None:
            return self._remote
        try:
            import ray
        except ImportError:
            raise MissingPrerequisite("the ray executor needs Ray, which is not installed",
                                      hint="pip install 'autoenvscaling[ray]'") from None
        if not ray.is_initialized():
            env = {k: v for k, v in os.environ.items() if k.startswith(_FORWARDED_ENV)}
            if self.address:
                ray.init(address=self.address, runtime_env={"env_vars": env}, log_to_driver=False)
            else:  # a local instance: its workers import what this process can (as local worker processes do)
                env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
                ray.init(num_cpus=self.concurrency, include_dashboard=False, runtime_env={"env_vars": env},
                         log_to_driver=False)
            self._started = True
        self._remote = ray.remote(max_retries=self.max_retries, num_cpus=1)(_run_on_worker)
        return self._remote

    async def submit(self, job: Job) -> JobResult:
        remote = self._ensure()
        async with self._slots():
            ref = remote.remote(job)  # type: ignore[attr-defined]
            try:
                return await asyncio.wait_for(asyncio.wrap_future(ref.future()), self.job_time_limit)
            except TimeoutError:
                import ray

                ray.cancel(ref, force=True)  # kills the worker process running it
                return self.over_time(job)
            except asyncio.CancelledError:
                import ray

                ray.cancel(ref, force=True)
                raise
            except Exception as exc:  # ray.exceptions.RayError: the worker died more often than retried, ...
                line = f"{type(exc).__name__}: {exc}".splitlines()[0]
                return JobResult(key=job.key, error=f"ray task failed after {self.max_retries} retries: {line}",
                                 retries=self.max_retries)

    async def aclose(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
            self._started = False
        self._remote = None


_context: WorkerContext | None = None
_loop: asyncio.AbstractEventLoop | None = None


def _run_on_worker(job: Job) -> JobResult:
    """The Ray task: one job, with the caches of this Ray worker process (and its own event loop,
    kept across jobs, since cached backends belong to the loop that made them)."""
    global _context, _loop
    from .worker import WorkerContext, run_job

    if _context is None or _loop is None:
        _context, _loop = WorkerContext(), asyncio.new_event_loop()
    return _loop.run_until_complete(run_job(job, _context))


class RayPrerequisite(Prerequisite):
    """Ray is installed (the ray executor imports it when the first job is submitted)."""

    needed_for: ClassVar[str] = "the ray executor (--executor ray)"

    def check(self) -> PrerequisiteStatus:
        import importlib.util
        from importlib import metadata

        if importlib.util.find_spec("ray") is None:
            return PrerequisiteStatus(ok=False, detail="ray is not installed", hint="pip install 'autoenvscaling[ray]'")
        try:
            version = metadata.version("ray")
        except metadata.PackageNotFoundError:
            version = "unknown version"
        address = os.environ.get("RAY_ADDRESS")
        where = f"; RAY_ADDRESS={address}" if address else "; a local instance starts on first use (or --ray-address)"
        return PrerequisiteStatus(ok=True, detail=f"ray {version}{where}")
