"""The validation pipeline: run the admission gates over tasks and produce one report per task.

A task is read (a malformed one is reported "invalid", never raised), then the gates registered with
the plugin host run cheapest first (``Gate.order``). The first gate that does not pass decides the
verdict: "invalid" for a fail, "timeout", or "error" for infrastructure trouble (an exception in a
gate, a sandbox that would not start). Gates named in ``settings.skip`` are reported as skipped.
Every report is announced through the ``autoenvscaling_task_validated`` hook. ``validate_many`` runs
a batch through an executor, one ``ValidateJob`` per task; one bad task never stops the batch.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Callable, Iterable, Literal

from pydantic import Field

from ..errors import AESError, TaskFormatError, UsageError
from ..executors.base import Executor, LocalExecutor
from ..executors.jobs import Job, SolverSpec, TaskRef, WorkerSetup
from ..runtime.phases import collecting
from ..sandbox.select import BackendCatalog, plugin_host
from ..tasks import Task
from ..tasks.harbor import is_task_dir, read_task
from .base import Evidence, Gate, GateContext, GateResult, GateSettings, ValidationReport, Verdict

if TYPE_CHECKING:
    from ..executors.worker import WorkerContext
    from ..plugins.host import PluginHost

ContextFactory = Callable[[Task], GateContext]
# Verdict for the first gate status that is not a pass.
_VERDICT: dict[str, Verdict] = {"fail": "invalid", "timeout": "timeout", "error": "error"}


def load_gates(host: PluginHost) -> list[Gate]:
    """The registered gates, instantiated and in order (skipped ones included: they are reported)."""
    gates = [host.gates.get(name)() for name in host.gates.names()]
    return sorted(gates, key=lambda g: (g.order, g.name))


def needs_sandbox(gates: Iterable[Gate], settings: GateSettings, *, solver: Any = None, task: Task | None = None,
                  every_task: bool = False) -> bool:
    """Whether any gate that will run needs a sandbox (calibration runs only with a solver): for
    ``task``, only the gates that judge it; with ``every_task``, only the gates that judge every task
    (a domain's gates judge only that domain's tasks)."""
    return any(g.needs_sandbox and g.name not in settings.skip and (solver is not None or not g.needs_solver)
               and (task is None or g.applies_to(task)) and (not every_task or g.domain is None)
               for g in gates)


async def run_gate(gate: Gate, task: Task, ctx: GateContext) -> GateResult:
    """One gate, with its seconds measured and any exception turned into an "error" result."""
    start = time.monotonic()
    phases: dict[str, float] = {}
    try:
        with collecting() as phases:
            result = await gate.check(task, ctx)
    except asyncio.CancelledError:
        raise
    except asyncio.TimeoutError:
        result = gate.result("timeout", f"{gate.name} timed out")
    except AESError as exc:
        result = gate.result("error", exc.message + (f" ({exc.hint})" if exc.hint else ""))
    except Exception as exc:  # a bug in a gate or backend: keep the traceback in the evidence
        line = f"{type(exc).__name__}: {exc}".splitlines()[0]
        result = gate.result("error", line, evidence=[Evidence(command=gate.name, output_tail=traceback.format_exc()[-2000:])])
    if not isinstance(result, GateResult):  # a plugin's gate that answered something else
        result = gate.result("error", f"{gate.name} returned {type(result).__name__}, not a GateResult")
    if not result.seconds:
        result = result.model_copy(update={"seconds": time.monotonic() - start})
    if phases and not result.phases:
        result = result.model_copy(update={"phases": {k: round(v, 4) for k, v in phases.items()}})
    return result


async def validate_task(task_or_path: Task | str | os.PathLike[str], ctx_factory: ContextFactory, *,
                        gates: list[Gate] | None = None, host: Any = None, label: str | None = None) -> ValidationReport:
    """Validate one task with a fresh context from ``ctx_factory`` and ``gates`` (default: every gate
    registered with ``host``). ``label`` is the report's ``task`` field (default: the path given, or
    the task's name). The report is announced on ``host`` when one is given."""
    start = time.monotonic()
    if gates is None:
        host = plugin_host(host)
        gates = load_gates(host)
    task: Task | None
    if isinstance(task_or_path, Task):
        task = task_or_path
        label = label or task.source or task.name
    else:
        label = label or str(task_or_path)
        try:
            task = read_task(task_or_path)
        except TaskFormatError as exc:  # a broken task is a rejected task, never a crash
            task = None
            report = ValidationReport(task=label, name=Path(task_or_path).name, status="invalid",
                                      reason=exc.message, seconds=time.monotonic() - start)
    if task is not None:
        status, reason, results = await _run_gates(task, ctx_factory(task), gates)
        report = ValidationReport(task=label, name=task.name, status=status, reason=reason.splitlines()[0],
                                  gates=results, seconds=time.monotonic() - start, digest=task.digest())
    if host is not None:
        host.announce_task_validated(report)
    return report


async def _run_gates(task: Task, ctx: GateContext, gates: list[Gate]) -> tuple[Verdict, str, list[GateResult]]:
    """Gates in order until the first that does not pass: (verdict, one-line reason, results)."""
    results: list[GateResult] = []
    for gate in gates:
        if gate.name in ctx.settings.skip:
            results.append(gate.result("skip", "skipped by settings"))
            continue
        if not gate.applies_to(task):  # another domain's own gate
            results.append(gate.result("skip", f"a gate of domain {gate.domain}; this task's domain is "
                                               f"{task.provenance.domain or 'not set'}"))
            continue
        result = await run_gate(gate, task, ctx)
        results.append(result)
        if not result.passed:
            return _VERDICT.get(result.status, "error"), f"{gate.name}: {result.reason or result.status}", results
    return "valid", "all gates passed", results


class Validator:
    """Everything a batch shares: the gates, the backend, one trial runner (the offline verifier
    runtime is built once), the suite and the held-out set. ``context(task)`` is the ctx factory."""

    def __init__(self, *, host: Any, backend: Any = None, settings: GateSettings | None = None,
                 suite_tasks: list[Task] | None = None, held_out: list[str] | None = None,
                 solver: Any = None, runner: Any = None, backend_name: str | None = None,
                 catalog: BackendCatalog | None = None) -> None:
        self.host = host
        self.backend_name = backend_name  # which backend lint judges for when none is attached
        # What each registered backend honours here, for lint's requirement checks (built on first use).
        self.catalog = catalog or BackendCatalog(host)
        self.settings = settings or GateSettings()
        unknown = sorted(set(self.settings.skip) - set(host.gates.names()))
        if unknown:
            raise UsageError(f"unknown gate(s) to skip: {', '.join(unknown)}",
                             hint=f"gates: {', '.join(host.gates.names())}")
        self.gates = load_gates(host)
        self.suite_tasks = suite_tasks or []
        self.held_out = held_out or []
        self.solver = solver
        self.backend: Any = None
        self.runner: Any = None
        if backend is not None:
            self.use_backend(backend, runner=runner)

    @property
    def needs_sandbox(self) -> bool:
        return needs_sandbox(self.gates, self.settings, solver=self.solver)

    def needs_sandbox_for(self, items: Iterable[Task | str | os.PathLike[str]]) -> bool:
        """Whether validating ``items`` needs a sandbox: a gate that judges every task needs one, or
        a domain's gate that needs one judges one of them (an unreadable task needs none: lint
        reports it)."""
        if needs_sandbox(self.gates, self.settings, solver=self.solver, every_task=True):
            return True
        own = [g for g in self.gates if g.domain is not None]
        if not needs_sandbox(own, self.settings, solver=self.solver):
            return False
        for item in items:
            try:
                task = item if isinstance(item, Task) else read_task(item)
            except (AESError, OSError, ValueError):
                continue
            if needs_sandbox(own, self.settings, solver=self.solver, task=task):
                return True
        return False

    def use_backend(self, backend: Any, *, runner: Any = None) -> None:
        """Attach the sandbox backend (and a trial runner over it, unless one is given)."""
        if runner is None and self.needs_sandbox:
            from ..runtime.trial import TrialRunner

            runner = TrialRunner(backend, host=self.host)
        self.backend, self.runner = backend, runner
        self.catalog.attach(backend)

    def context(self, task: Task) -> GateContext:
        if self.backend is None and needs_sandbox(self.gates, self.settings, solver=self.solver, task=task):
            raise UsageError("the build/oracle/null/reset/flaky gates need a sandbox backend",
                             hint="pass backend=make_backend('bwrap'), or skip those gates")
        return GateContext(backend=self.backend, runner=self.runner, settings=self.settings,
                           suite_tasks=self.suite_tasks, held_out=self.held_out, solver=self.solver,
                           backend_name=self.backend_name, catalog=self.catalog, host=self.host)

    async def validate(self, task_or_path: Task | str | os.PathLike[str], label: str | None = None) -> ValidationReport:
        return await validate_task(task_or_path, self.context, gates=self.gates, host=self.host, label=label)

    @classmethod
    def in_worker(cls, context: WorkerContext, setup: WorkerSetup, settings: GateSettings, *, suite: list[Task],
                  held_out: tuple[str, ...] = (), solver: SolverSpec | None = None,
                  backend_name: str | None = None) -> "Validator":
        """The validator a job builds in a worker, from the worker's cached host, backend, trial runner
        and models."""
        host = context.host(setup)
        return cls(host=host, backend=context.backend(setup), settings=settings, suite_tasks=suite,
                   held_out=list(held_out), solver=context.solver(setup, solver) if solver is not None else None,
                   runner=context.runner(setup), backend_name=backend_name or setup.backend,
                   catalog=BackendCatalog(host, setup.policy))


class ValidateJob(Job):
    """Admission gates over one task, in a worker. ``gates``: the names to run (None: every registered
    gate)."""

    kind: Literal["validate"] = "validate"
    task: TaskRef
    label: str
    settings: GateSettings = Field(default_factory=GateSettings)
    gates: tuple[str, ...] | None = None
    suite: tuple[TaskRef, ...] = ()
    held_out: tuple[str, ...] = ()
    solver: SolverSpec | None = None
    backend_name: str | None = None  # the backend lint judges for when the job starts none

    async def run(self, context: WorkerContext) -> ValidationReport:
        validator = Validator.in_worker(context, self.setup, self.settings, suite=[r.load() for r in self.suite],
                                        held_out=self.held_out, solver=self.solver, backend_name=self.backend_name)
        gates = [g for g in validator.gates if self.gates is None or g.name in self.gates]
        target = self.task.path if self.task.blob is None and self.task.path is not None else self.task.load()
        return await validate_task(target, validator.context, gates=gates, label=self.label)


async def validate_many(paths_or_tasks: Iterable[Task | str | os.PathLike[str]], *, backend: Any = None,
                        settings: GateSettings | None = None, executor: Executor | None = None,
                        progress: Callable[[ValidationReport], None] | None = None, host: Any = None,
                        suite_tasks: list[Task] | None = None, held_out: list[str] | None = None,
                        validator: Validator | None = None) -> AsyncIterator[ValidationReport]:
    """Validate a batch concurrently; yield reports as they finish (each with its input's label).

    Each task becomes a ``ValidateJob`` (paths travel as absolute paths, in-memory tasks inline)
    that the executor's workers run with the validator's plugins, settings and backend by name;
    every report is announced here, on the driver. A job that crashes (a bug, a dead worker) still
    yields a report, status "error", so a batch always completes."""
    if validator is None:
        validator = Validator(host=plugin_host(host), backend=backend, settings=settings, suite_tasks=suite_tasks,
                              held_out=held_out)
    if validator.backend is None and needs_sandbox(validator.gates, validator.settings, every_task=True):
        # Every task would fail the same way: that is a usage error, not a batch of reports. (A
        # domain's sandbox gate fails only that domain's tasks: each one's report says so.)
        raise UsageError("the build/oracle/null/reset/flaky gates need a sandbox backend",
                         hint="pass backend=make_backend('bwrap'), or skip those gates")
    if validator.solver is not None:
        raise UsageError("validate_many runs gates 1-8 in worker processes and takes no live solver",
                         hint="calibrate through the flywheel (it sends solver rollouts as jobs)")
    own = executor is None  # an executor made here is closed here; one passed in is the caller's
    executor = executor or LocalExecutor(concurrency=2)
    setup = WorkerSetup.of(validator.host, validator.backend, in_process=executor.in_process)
    if validator.backend is None:  # lint judges requirements under the command line's policy
        setup = setup.model_copy(update={"policy": validator.catalog.policy})
    suite = tuple(TaskRef.inline(t) for t in validator.suite_tasks)
    items = list(paths_or_tasks)
    labels = [item.source or item.name if isinstance(item, Task) else str(item) for item in items]
    jobs = [ValidateJob(key=str(i), setup=setup, task=TaskRef.inline(item) if isinstance(item, Task) else TaskRef.at(item),
                        label=labels[i], settings=validator.settings, gates=tuple(g.name for g in validator.gates),
                        suite=suite, held_out=tuple(validator.held_out), backend_name=validator.backend_name)
            for i, item in enumerate(items)]
    try:
        async for job_result in executor.map(jobs):
            if job_result.ok and isinstance(job_result.value, ValidationReport):
                report = job_result.value
            else:
                i = int(job_result.key)
                item = items[i]
                name = item.name if isinstance(item, Task) else Path(item).name
                report = ValidationReport(task=labels[i], name=name, status="error",
                                          reason=f"validation crashed: {job_result.error}")
            validator.host.announce_task_validated(report)
            if progress is not None:
                progress(report)
            yield report
    finally:
        if own:
            await executor.aclose()


def discover_tasks(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Task directories named by ``paths``: a task directory itself, or a folder whose subdirectories
    are tasks (a suite). A directory that looks like a broken task (instruction.md, tests/ or
    environment/ but no task.toml) is kept, so validation reports what is wrong with it."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        if not path.is_dir():
            raise UsageError(f"{path}: not a directory", hint="pass task directories or folders of them")
        if is_task_dir(path) or _looks_like_task(path):
            found.append(path)
            continue
        children = [c for c in sorted(path.iterdir()) if c.is_dir() and (is_task_dir(c) or _looks_like_task(c))]
        if not children:
            raise UsageError(f"{path}: no task directories here", hint="a Harbor task directory has task.toml at its top")
        found += children
    unique: dict[Path, Path] = {}
    for path in found:  # the same task named twice is validated once, at its first position
        unique.setdefault(path.resolve(), path)
    return list(unique.values())


def _looks_like_task(path: Path) -> bool:
    return (path / "instruction.md").is_file() or (path / "tests").is_dir() or (path / "environment").is_dir()
