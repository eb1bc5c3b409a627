"""Running one job in a worker process: ``run_job(spec, context) -> JobResult``.

A ``WorkerContext`` lives as long as its worker process and caches what is costly to build: the
plugin host, sandbox backends (their layer caches), trial runners (the offline verifier runtime),
and models (a local solver loads once per worker). Everything else is rebuilt per job from the
spec, by the job's own ``run`` (``jobs.Job``): the worker knows no kind of job. A job that raises
becomes an error result here, so only a dead worker loses a job.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import TYPE_CHECKING

from .jobs import Job, JobResult, LLMSpec, SolverSpec, WorkerSetup

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ..agents.base import Agent
    from ..llm.base import LLMBackend
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialRunner
    from ..sandbox.base import SandboxBackend


class WorkerContext:
    """Per-worker caches, keyed by the specs that built each thing."""

    def __init__(self) -> None:
        self._hosts: dict[str, PluginHost] = {}
        self._backends: dict[str, SandboxBackend] = {}
        self._runners: dict[str, TrialRunner] = {}
        self._llms: dict[str, LLMBackend] = {}

    def host(self, setup: WorkerSetup) -> PluginHost:
        if setup.host_key is not None:
            from .jobs import in_process_host

            return in_process_host(setup)
        key = setup.model_dump_json(include={"plugins", "strict"})
        if key not in self._hosts:
            from ..plugins.host import PluginHost

            host = PluginHost(strict=setup.strict)
            host.load_builtins()
            for ref, module in setup.load_plugins():
                host.register(module, name=ref.name, distribution=ref.distribution)
            host.check()
            self._hosts[key] = host
        return self._hosts[key]

    def backend(self, setup: WorkerSetup) -> SandboxBackend | None:
        if setup.backend is None:
            return None
        key = setup.model_dump_json(include={"backend", "policy", "cache_dir", "host_key"})
        if key not in self._backends:
            from pathlib import Path

            from ..sandbox.select import make_backend

            self._backends[key] = make_backend(setup.backend, self.host(setup), setup.policy,
                                               cache_dir=Path(setup.cache_dir) if setup.cache_dir else None)
        return self._backends[key]

    def runner(self, setup: WorkerSetup) -> TrialRunner | None:
        backend = self.backend(setup)
        if backend is None:
            return None
        key = setup.model_dump_json(include={"backend", "policy", "cache_dir", "host_key"})
        if key not in self._runners:
            from ..runtime.trial import TrialRunner

            self._runners[key] = TrialRunner(backend, host=self.host(setup))
        return self._runners[key]

    def llm(self, setup: WorkerSetup, spec: LLMSpec) -> LLMBackend:
        """One backend per model spec: a proposer and a solver on the same model share it."""
        key = spec.model_dump_json()
        if key not in self._llms:
            self._llms[key] = spec.build(self.host(setup))
        return self._llms[key]

    def solver(self, setup: WorkerSetup, spec: SolverSpec) -> Agent:
        return spec.build(self.host(setup), self.llm(setup, spec.llm))

    async def aclose(self) -> None:
        for llm in self._llms.values():
            await llm.aclose()
        for backend in self._backends.values():
            await backend.aclose()


async def run_job(spec: Job, context: WorkerContext) -> JobResult:
    """Run ``spec``; any exception becomes an error result with a one-line error."""
    try:
        return JobResult(key=spec.key, value=await spec.run(context))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        from ..errors import AESError

        text = (exc.message + (f" ({exc.hint})" if exc.hint else "") if isinstance(exc, AESError)
                else f"{type(exc).__name__}: {exc}")
        line = (text.splitlines() or [type(exc).__name__])[0]
        return JobResult(key=spec.key, error=line, details=traceback.format_exc())


def serve(conn: Connection) -> None:
    """A local worker process's main loop: jobs in, results out, until the pipe closes or None comes."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    loop = asyncio.new_event_loop()
    context = WorkerContext()
    try:
        while True:
            try:
                spec = conn.recv()
            except EOFError:
                break
            if spec is None:
                break
            conn.send(loop.run_until_complete(run_job(spec, context)))
    finally:
        loop.run_until_complete(context.aclose())
        loop.close()


def main(argv: list[str]) -> None:
    """Entry of a local worker process: ``python -m autoenvscaling.executors.worker FD SYS_PATH_JSON``."""
    import json
    import sys
    from multiprocessing.connection import Connection

    sys.path[:] = json.loads(argv[1])  # the driver's import path, as multiprocessing's spawn passes it
    _die_with_parent()
    serve(Connection(int(argv[0])))


def _die_with_parent() -> None:
    """A driver killed with SIGKILL takes its workers along (and their sandboxes, which die with them),
    so no orphaned job keeps running after a crash that ``--resume`` will redo."""
    import ctypes
    import os
    import signal

    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the worker still ends at EOF on its socket
        return
    if os.getppid() != parent:  # the driver died before prctl took effect
        os._exit(1)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
