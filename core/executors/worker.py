"""Running one job in a worker process: ``run_job(spec, context) -> JobResult``.

A ``WorkerContext`` lives as long as its worker process and caches what is costly to build: the
plugin host, sandbox backends (their layer caches), trial runners (the offline verifier runtime),
and models (a local solver loads once per worker). Everything else is rebuilt per job from the
spec. A job that raises becomes an error result here, so only a dead worker loses a job.
"""

from __future__ import annotations

import asyncio
import traceback
from typing import TYPE_CHECKING

from .jobs import AttemptJob, JobResult, JobSpec, LLMSpec, ProposeJob, ProposeOutcome, SolverSpec, ValidateJob, WorkerSetup

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from ..agents.base import Agent
    from ..gates.base import ValidationReport
    from ..gates.validate import Validator
    from ..llm.base import LLMBackend
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialResult, TrialRunner
    from ..sandbox.base import SandboxBackend
    from ..tasks import Task


class WorkerContext:
    """Per-worker caches, keyed by the specs that built each thing."""

    def __init__(self) -> None:
        self._hosts: dict[str, PluginHost] = {}
        self._backends: dict[str, SandboxBackend] = {}
        self._runners: dict[str, TrialRunner] = {}
        self._llms: dict[str, LLMBackend] = {}

    def host(self, setup: WorkerSetup) -> PluginHost:
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
        key = setup.model_dump_json(include={"backend", "policy", "cache_dir"})
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
        key = setup.model_dump_json(include={"backend", "policy", "cache_dir"})
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

    def validator(self, setup: WorkerSetup, job: ValidateJob | ProposeJob, *, suite: list[Task],
                  held_out: tuple[str, ...] = (), solver: SolverSpec | None = None,
                  backend_name: str | None = None) -> Validator:
        from ..gates.validate import Validator
        from ..sandbox.select import BackendCatalog

        host = self.host(setup)
        return Validator(host=host, backend=self.backend(setup), settings=job.settings, suite_tasks=suite,
                         held_out=list(held_out), solver=self.solver(setup, solver) if solver is not None else None,
                         runner=self.runner(setup), backend_name=backend_name or setup.backend,
                         catalog=BackendCatalog(host, setup.policy))

    async def aclose(self) -> None:
        for llm in self._llms.values():
            await llm.aclose()
        for backend in self._backends.values():
            await backend.aclose()


async def run_job(spec: JobSpec, context: WorkerContext) -> JobResult:
    """Run ``spec``; any exception becomes an error result with a one-line error."""
    try:
        if isinstance(spec, ValidateJob):
            value: ValidationReport | TrialResult | ProposeOutcome = await _validate(spec, context)
        elif isinstance(spec, AttemptJob):
            value = await _attempt(spec, context)
        else:
            value = await _propose(spec, context)
        return JobResult(key=spec.key, value=value)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        from ..errors import AESError

        text = (exc.message + (f" ({exc.hint})" if exc.hint else "") if isinstance(exc, AESError)
                else f"{type(exc).__name__}: {exc}")
        line = (text.splitlines() or [type(exc).__name__])[0]
        return JobResult(key=spec.key, error=line, details=traceback.format_exc())


async def _validate(job: ValidateJob, context: WorkerContext) -> ValidationReport:
    from ..gates.validate import validate_task

    validator = context.validator(job.setup, job, suite=[r.load() for r in job.suite], held_out=job.held_out,
                                  solver=job.solver, backend_name=job.backend_name)
    gates = [g for g in validator.gates if job.gates is None or g.name in job.gates]
    target = job.task.path if job.task.blob is None and job.task.path is not None else job.task.load()
    return await validate_task(target, validator.context, gates=gates, label=job.label)


async def _attempt(job: AttemptJob, context: WorkerContext) -> TrialResult:
    runner = context.runner(job.setup)
    if runner is None:
        from ..errors import UsageError

        raise UsageError("an attempt needs a sandbox backend", hint="give the job's WorkerSetup a backend name")
    agent = _agent(job, context)
    if job.seed is not None:
        agent = agent.seeded(job.seed)
    return await runner.run(job.task.load(), agent)


def _agent(job: AttemptJob, context: WorkerContext) -> Agent:
    if job.agent.name == "solver":
        if job.agent.solver is None:
            from ..errors import UsageError

            raise UsageError("the solver agent needs a SolverSpec", hint="AgentSpec(name='solver', solver=SolverSpec(...))")
        return context.solver(job.setup, job.agent.solver)
    host = context.host(job.setup)
    return (host.cheats if job.agent.cheat else host.agents).get(job.agent.name)()


async def _propose(job: ProposeJob, context: WorkerContext) -> ProposeOutcome:
    from ..gates.validate import validate_task

    host = context.host(job.setup)
    pool = [r.load() for r in job.pool]
    checker_validator = context.validator(job.setup, job, suite=pool)
    check_gates = [g for g in checker_validator.gates if not g.needs_solver]

    async def check(task: Task) -> ValidationReport:
        # Gates 1-8 for proposers that revise, run here in the worker, outside the proposer's sandbox.
        return await validate_task(task, checker_validator.context, gates=check_gates)

    cls = host.proposers.get(job.proposer)
    llm = context.llm(job.setup, job.proposer_llm) if cls.needs_llm and job.proposer_llm is not None else None
    proposer = cls(llm=llm, checker=check, backend=context.backend(job.setup))
    domain = host.domains.get(job.domain)()
    assignment = job.assignment
    if job.parent is not None:
        assignment = assignment.model_copy(update={"parent_task": job.parent.load()})
    proposal = await proposer.propose(assignment, domain=domain, seed=job.seed)
    if proposal.task is None:
        return ProposeOutcome(proposal=proposal)
    from ..tasks import qualified_name

    family = proposal.task.provenance.family or job.proposer
    task = proposal.task.renamed(qualified_name(f"{job.domain}-{family}-r{job.round}-s{job.slot}")).with_provenance(
        round=job.round, domain=job.domain)
    gates = [g for g in checker_validator.gates if g.name in job.gates]
    report = await validate_task(task, checker_validator.context, gates=gates, label=job.key)
    return ProposeOutcome(proposal=proposal, task=task, report=report)


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
