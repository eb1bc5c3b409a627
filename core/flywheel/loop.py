"""The flywheel loop: rounds of propose -> validate -> calibrate -> (train) -> pool review.

Every proposal is a unit of work with a stable key (round, slot) and a seed derived from the run's
seed, so a run is a pure function of its configuration: ``--resume`` after a SIGKILL recomputes only
unrecorded units and ends with the same admitted pool as an uninterrupted run.

A round's units go through two phases. Phase A (propose, then gates 1-7) depends on nothing but the
unit and the pool at the start of its batch, so it runs in parallel: each unit is a ``ProposeJob``
for the executor's workers. Phase B (the near-duplicate gate against exactly the tasks admitted
before the unit, then calibration, admission and the database record) runs here in slot order,
because admitting one task changes what the next is compared with; its solver rollouts are
``AttemptJob``s, seeded from the task and the rollout index, never from execution order. Workers
record nothing: the suite and run.sqlite are written here from results, keyed by unit, so a job
retried on a fresh worker is admitted once. After the round, the solver reruns the pool (tasks that
left the band leave it, and the next round gets one replacement slot for each); then the configured
trainer, if any, trains on the pool and the round's rollouts and returns the solver spec the next
round uses (recorded, so a resumed run uses it too). The review covers tasks admitted in earlier
rounds: this round's were just calibrated by the same solver.

Budgets (``FlywheelConfig.budgets``): every proposal runs under the proposal budget, cut down to what
is left of the round's and the run's; before each batch a spent round budget ends the round's
proposing (review and training still run) and a spent run budget ends the run after the round. The
reason is recorded in run.sqlite and the round's metrics; ``--resume`` with a larger budget goes on.
"""

from __future__ import annotations

import asyncio
import random
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel, ConfigDict, Field

from ..domains.base import DIFFICULTIES, Domain
from ..errors import AESError, ConfigError, UsageError
from ..executors.base import Executor, LocalExecutor
from ..executors.jobs import AgentSpec, AttemptJob, LLMSpec, SolverSpec, TaskRef, WorkerSetup
from ..gates.base import GateContext, GateResult, GateSettings, ValidationReport
from ..gates.validate import Validator, validate_task
from ..llm.budget import Budget
from ..proposers.base import Proposal, ProposalCost
from ..runtime.trial import TrialResult
from ..suite.store import SuiteStore
from ..tasks import Task
from ..trainers.base import Trainer, TrainerContext
from .assignments import Assignment, failure_of, from_summary, new_task, summary_of
from .calibration import Calibration, calibrate, rollout_seed, usable
from .jobs import ProposeJob, ProposeOutcome
from .pauses import Pauses, pauses
from .rundb import ReviewRecord, RolloutRow, RunDB, TrainingRecord, UnitRecord, UnitSlot
from .summary import RoundSummary, round_summary

if TYPE_CHECKING:
    from ..plugins.host import PluginHost
    from ..sandbox.base import SandboxBackend

# Writes the run's report from its folder, run database and suite, and returns its path
# (``autoenvscaling.report.html.write_report``: the report layer sits above the flywheel).
ReportWriter = Callable[[Path, RunDB, SuiteStore], Path]

RUN_DB = "run.sqlite"
ERRORS_LOG = "errors.log"
PHASE_B_GATES = ("near-duplicate", "calibration")


class Budgets(BaseModel):
    """What proposing may spend, per proposal, per round and per run (``llm.budget.Budget``). Not
    part of a run's identity: a run a budget stopped continues with ``--resume`` and a larger one."""

    model_config = ConfigDict(frozen=True)

    proposal: Budget = Field(default_factory=Budget)
    round: Budget = Field(default_factory=Budget)
    run: Budget = Field(default_factory=Budget)


class FlywheelConfig(BaseModel):
    """Everything that decides a run's results. A resumed run must use the same values.

    ``mix``: domain -> weight (empty: every installed domain equally). ``proposers``: kind ->
    weight. ``difficulty`` of fresh tasks: easy, medium, hard, or mixed (drawn per slot).
    ``batch``: units proposed and validated in parallel before their ordered admission.
    ``target``: for ``generate``, the number of admitted tasks wanted (split over the mix).
    ``trainer``: a registered trainer run after each round's review (None: no training);
    ``trainer_options``: what the trainer is configured with (``TrainerContext.options``).
    ``budgets``: see `Budgets`.
    """

    model_config = ConfigDict(frozen=True)

    seed: int = 0
    rounds: int = 2
    per_round: int = 2
    mix: dict[str, float] = Field(default_factory=dict)
    proposers: dict[str, float] = Field(default_factory=lambda: {"procedural": 1.0})
    difficulty: str = "easy"
    calibrate: bool = True
    review: bool = True
    batch: int = 4
    target: int | None = None
    settings: GateSettings = Field(default_factory=GateSettings)
    proposer_model: str | None = None
    solver_model: str | None = None
    trainer: str | None = None
    trainer_options: dict[str, Any] = Field(default_factory=dict)
    budgets: Budgets = Field(default_factory=Budgets)

    def identity(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude={"budgets"})
        if data["trainer"] is None:  # runs recorded before trainers existed resume unchanged
            del data["trainer"]
        if not data["trainer_options"]:
            del data["trainer_options"]
        if data["settings"].get("redteam_vouched") is True:  # runs recorded before vouching was a setting
            del data["settings"]["redteam_vouched"]
        return data


class Unit(UnitSlot):
    """A proposal slot and what its proposer is asked for."""

    assignment: Assignment


@dataclass
class Candidate:
    """A unit after phase A."""

    unit: Unit
    proposal: Proposal
    task: Task | None = None
    report: ValidationReport | None = None


class Progress:
    """What the loop reports as it goes; the CLI draws it with rich, tests ignore it."""

    def round_started(self, round: int, units: int | None) -> None: ...
    def unit_done(self, unit: Unit, outcome: str) -> None: ...
    def status(self, text: str) -> None: ...


def weighted(rng: random.Random, weights: dict[str, float]) -> str:
    names = sorted(k for k, w in weights.items() if w > 0)
    return rng.choices(names, weights=[weights[n] for n in names])[0]


def allocate(n: int, mix: dict[str, float]) -> dict[str, int]:
    """``n`` split over ``mix`` by largest remainder (ties to the first name), e.g. 5 over
    terminal=0.4, swe=0.2 -> terminal 3, swe 2."""
    names = sorted(k for k, w in mix.items() if w > 0)
    total = sum(mix[k] for k in names)
    exact = {k: n * mix[k] / total for k in names}
    counts = {k: int(exact[k]) for k in names}
    for k in sorted(names, key=lambda k: (-(exact[k] - counts[k]), k))[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


class Flywheel:
    """One run in ``out``: the suite (the admitted pool), run.sqlite and, with a report writer, the report.

    ``backend``: the sandbox backend whose name and policy the workers rebuild (this process starts
    no sandbox). ``solver``/``proposer_llm``: models as specs, built in the workers. Plugins reach
    the workers as importable modules (``WorkerSetup.of``). ``report_writer``: writes the report after
    the run (the CLI passes ``autoenvscaling.report.html.write_report``, which writes report.html);
    None: no report. ``serve``: maps a model spec to the one the workers decode with, called for each
    round's solver and proposer models (the CLI serves local models and trained checkpoints with
    llama.cpp, so the served weights follow the training); None: the workers decode them as given.
    The trainer always gets the solver as given."""

    def __init__(self, config: FlywheelConfig, out: str | Path, *, host: PluginHost, backend: SandboxBackend,
                 solver: SolverSpec | None = None, proposer_llm: LLMSpec | None = None,
                 executor: Executor | None = None, progress: Progress | None = None, resume: bool = False,
                 report_writer: ReportWriter | None = None,
                 serve: Callable[[LLMSpec], LLMSpec] | None = None) -> None:
        self.config = config
        self.serve = serve
        self.report_writer = report_writer
        self.out = Path(out)
        self.host = host
        self.initial_solver = solver if config.calibrate else None
        self.solver = self.initial_solver
        self.proposer_llm = self.initial_proposer = proposer_llm
        self.served_solver, self.served_proposer = self.solver, self.proposer_llm
        """What the workers decode with: ``solver`` and ``proposer_llm`` through ``serve``."""
        self.progress = progress or Progress()
        self._clock = time.monotonic()
        self.executor = executor or LocalExecutor(concurrency=2)
        installed = host.domains.names()
        mix = dict(config.mix) or {name: 1.0 for name in installed}
        unknown = sorted(set(mix) - set(installed))
        if unknown:
            raise UsageError(f"unknown domain(s) in the mix: {', '.join(unknown)}",
                             hint=f"installed domains: {', '.join(installed) or 'none'} (pip install autoenvscaling-<domain>)")
        if not mix:
            raise UsageError("no domains installed", hint="pip install autoenvscaling-terminal")
        if config.difficulty not in (*DIFFICULTIES, "mixed"):
            raise UsageError(f"unknown difficulty {config.difficulty!r}", hint=f"one of {', '.join(DIFFICULTIES)}, mixed")
        self.mix = mix
        self.domains: dict[str, Domain] = {name: host.domains.get(name)() for name in sorted(mix)}
        self.setup = WorkerSetup.of(host, backend, in_process=self.executor.in_process)
        self.validator = Validator(host=host, settings=config.settings)  # the gate list (and a misspelt skip)
        self.gates_a = [g for g in self.validator.gates if g.name not in PHASE_B_GATES]
        self.near_duplicate = [g for g in self.validator.gates if g.name == "near-duplicate"]
        for kind in sorted(k for k, w in config.proposers.items() if w > 0):
            if host.proposers.get(kind).needs_llm and proposer_llm is None:
                raise ConfigError(f"the {kind} proposer needs a model",
                                  hint="pass proposer_llm=LLMSpec(...) (CLI: --proposer-model/--proposer-base-url)")
        self.trainer: Trainer | None = host.trainers.get(config.trainer)() if config.trainer else None
        self.suite = SuiteStore(self.out, name=self.out.name)
        self.db = RunDB(self.out / RUN_DB)
        self.db.bind_config(config.identity(), resume=resume)
        self._tasks: dict[str, Task] = {}
        self.budget_stop: str | None = None
        """Why the run budget stopped the run (``round R: run budget spent: ...``), or None."""
        self.pause_stop: str | None = None
        """Why the run ended with every domain or proposer paused (pauses.py), or None."""
        self._announced: set[str] = set()

    def close(self) -> None:
        self.db.close()
        self.suite.close()

    # -- the two commands -------------------------------------------------------------------
    async def run(self) -> list[RoundSummary]:
        """The flywheel: ``config.rounds`` rounds, then the report (when there is a report writer)."""
        summaries = []
        for r in range(self.config.rounds):
            if r > 0 and self._budget(r, scopes=("run",)) is None:
                break
            self.solver = self._solver_for(r)
            self.proposer_llm = self._proposer_for(r)
            self._serve_models()
            size, parents = self._plan_round(r)
            self.progress.round_started(r, size)
            for start in range(0, size, self.config.batch):
                paused = self._pauses(r, start)
                units = [self._unit(r, s, parents, paused=paused)
                         for s in range(start, min(start + self.config.batch, size))]
                if any(u is None for u in units) or not await self._run_batch(r, [u for u in units if u is not None]):
                    break
            if self.config.review and self.solver is not None:
                await self._review(r)
            if self.trainer is not None and self.solver is not None:
                await self._train(r)
            summary = round_summary(self.db, r, paused=self._pauses(r + 1, 0).lines())
            self.db.set_metrics(r, summary.model_dump(mode="json"))
            self.host.announce_round_ended(summary)
            summaries.append(summary)
            if self.pause_stop is not None:
                break
        self.write_report()
        return summaries

    async def generate(self) -> RoundSummary:
        """Admit ``config.target`` tasks split over the mix (no solver), trying at most 3n + 4 proposals."""
        n = self.config.target
        if not n:
            raise UsageError("generate needs a target number of tasks", hint="pass -n N")
        quotas = allocate(n, self.mix)
        max_slots = 3 * n + 4
        self.progress.round_started(0, None)  # the number of proposals depends on how many pass
        start = 0
        while start < max_slots:
            # A batch's plan depends only on units before it, so a resumed run plans it identically.
            admitted: dict[str, int] = {d: 0 for d in quotas}
            for u in self.db.units(round=0):
                if u.slot < start and u.outcome == "admitted":
                    admitted[u.domain] += 1
            paused = self._pauses(0, start)
            open_domains = paused.open_domains(quotas, self.config.proposers)
            deficit = {d: quotas[d] - admitted[d] for d in quotas if d in open_domains}
            batch: list[Unit] = []
            while len(batch) < self.config.batch and start + len(batch) < max_slots and max(deficit.values(), default=0) > 0:
                domain = min(deficit, key=lambda d: (-deficit[d], d))
                deficit[domain] -= 1
                unit = self._unit(0, start + len(batch), parents=[], domain=domain, paused=paused)
                assert unit is not None  # the domain is open
                batch.append(unit)
            if not batch:
                if any(quotas[d] > admitted[d] for d in quotas) and paused:
                    self.pause_stop = "everything left to admit is paused: " + "; ".join(paused.lines())
                break
            if not await self._run_batch(0, batch):
                break
            start += len(batch)
        summary = round_summary(self.db, 0, paused=self._pauses(1, 0).lines())
        self.db.set_metrics(0, summary.model_dump(mode="json"))
        self.write_report()
        return summary

    def write_report(self) -> Path | None:
        """The report, written by the report writer given (None: there is none)."""
        return self.report_writer(self.out, self.db, self.suite) if self.report_writer is not None else None

    # -- planning ---------------------------------------------------------------------------
    def _plan_round(self, r: int) -> tuple[int, list[UnitRecord]]:
        """How many proposals round ``r`` makes, and the units whose tasks it varies."""
        replacements = sum(1 for x in self.db.reviews(round=r - 1) if x.verdict == "left") if r > 0 else 0
        parents = [u for u in self.db.units(round=r - 1) if self.db.rollouts(key=u.key, phase="calibration")] if r > 0 else []
        return self.config.per_round + replacements, parents

    def _pauses(self, r: int, s: int) -> Pauses:
        """What the units recorded before slot ``s`` of round ``r`` pause (never a later unit's
        record, so a resumed batch is planned as it was); a new pause is announced once."""
        found = pauses((u for u in self.db.units() if (u.round, u.slot) < (r, s)), mix=self.mix,
                       proposers=self.config.proposers)
        for line in found.lines():
            if line not in self._announced:
                self._announced.add(line)
                self.progress.status(f"paused {line}")
        return found

    def _unit(self, r: int, s: int, parents: list[UnitRecord], domain: str | None = None,
              paused: Pauses | None = None) -> Unit | None:
        """Slot ``s`` of round ``r``, planned from its seed alone; None when everything is paused."""
        paused = paused or Pauses()
        rng = random.Random(f"autoenvscaling-flywheel:{self.config.seed}:{r}:{s}")
        seed = rng.randrange(1, 2**31)
        open_domains = paused.open_domains({domain: 1.0} if domain else self.mix, self.config.proposers)
        kinds = {k: w for k, w in self.config.proposers.items() if any(paused.allows(d, k) for d in open_domains)}
        if not kinds:
            self.pause_stop = "everything is paused: " + "; ".join(paused.lines())
            return None
        kind = weighted(rng, kinds)
        parents = [p for p in parents if paused.allows(p.domain, kind)]
        if parents:
            parent = parents[s % len(parents)]
            rows = self.db.rollouts(key=parent.key, phase="calibration")
            parent_task = self.db.task(parent.key)
            assert parent_task is not None  # calibrated units always stored their task
            assignment = from_summary(parent_task, summary_of([x.reward for x in rows], [x.failure for x in rows]),
                                      domain=parent.domain, seed=seed, band=self.config.settings.calibration_band)
            domain = parent.domain
        else:
            domain = domain or weighted(rng, {d: w for d, w in open_domains.items() if paused.allows(d, kind)})
            families = self.domains[domain].families()
            if not families:
                raise UsageError(f"domain {domain!r} has no generator families", hint="remove it from --mix")
            family = families[rng.randrange(len(families))].name
            difficulty = rng.choice(DIFFICULTIES) if self.config.difficulty == "mixed" else self.config.difficulty
            assignment = new_task(self.domains[domain], family, seed=seed, difficulty=difficulty)
        return Unit(key=f"r{r:02d}-s{s:03d}", round=r, slot=s, seed=seed, domain=domain, proposer=kind,
                    assignment=assignment)

    # -- the pool -----------------------------------------------------------------------------
    def _pool_before(self, r: int, s: int) -> list[Task]:
        """Tasks admitted before unit (r, s) and still in the pool, from the run database (never from
        the suite's current contents, which may already hold this very unit after a crash)."""
        return [self._recorded_task(u.key) for u in self._pool_keys(r, s)]

    def _recorded_task(self, key: str) -> Task:
        """A unit's task as the run database holds it: the same whether or not a crash already took
        it out of the suite."""
        if key not in self._tasks:
            task = self.db.task(key)
            assert task is not None, f"unit {key} was admitted without its task"
            self._tasks[key] = task
        return self._tasks[key]

    # -- budgets ----------------------------------------------------------------------------
    def _budget(self, r: int, scopes: tuple[str, ...] = ("round", "run")) -> Budget | None:
        """The budget of a proposal of round ``r`` started now: the proposal budget cut down to what
        the round and the run have left; None, with the reason recorded, when one of them is spent."""
        budgets = self.config.budgets
        budget = budgets.proposal
        for scope in scopes:
            limit: Budget = getattr(budgets, scope)
            if not limit.limited:
                continue
            spent = self.db.spent(r if scope == "round" else None)
            what = limit.spent(**spent)
            if what is not None:
                reason = f"{scope} budget spent: {what}"
                self.db.set_budget_stop(r, reason)
                self.progress.status(reason)
                if scope == "run":
                    self.budget_stop = f"round {r}: {reason}"
                return None
            budget = budget.tighter(limit.left(**spent))
        self.db.set_budget_stop(r, None)  # a resumed run with a larger budget goes on
        return budget

    # -- phase A and B ----------------------------------------------------------------------
    async def _run_batch(self, r: int, units: list[Unit]) -> bool:
        """Phase A of ``units`` in parallel, then phase B in slot order; False (and nothing run) when
        a budget is spent."""
        todo = [u for u in units if not self.db.done(u.key)]
        if not todo:
            return True
        budget = self._budget(r)
        if budget is None:
            return False
        self._clock = time.monotonic()  # each unit's record counts the batch's seconds up to it
        # Proposers that check their work compare against the pool as it was when the batch began.
        pool = tuple(TaskRef.inline(t) for t in self._pool_before(todo[0].round, todo[0].slot))
        self.progress.status(f"proposing and validating {len(todo)} task(s)")
        by_key = {u.key: u for u in todo}
        done: dict[str, Candidate] = {}
        for unit in todo:  # phase A outcomes a killed run kept: not proposed and validated again
            kept = self.db.kept_outcome(unit.key)
            if kept is None:
                continue
            try:
                outcome = ProposeOutcome.load(*kept)
            except (ValueError, OSError, tarfile.TarError, AESError):  # unreadable (another version wrote it): redo
                continue
            done[unit.key] = Candidate(unit, outcome.proposal, outcome.task, outcome.report)
        jobs = [self._propose_job(u, pool, budget) for u in todo if u.key not in done]
        async for result in self.executor.map(jobs):
            unit = by_key[result.key]
            value = result.value
            if result.ok and isinstance(value, ProposeOutcome):
                self.db.keep_outcome(unit.key, *value.dump())
                done[unit.key] = Candidate(unit, value.proposal, value.task, value.report)
                continue
            # A bug (in a generator, a gate, ...) or a worker that kept dying is data for this unit, never
            # the end of the run; its traceback goes to errors.log beside the suite.
            with open(self.out / ERRORS_LOG, "a", encoding="utf-8") as log:
                log.write(f"--- {unit.key} ({unit.domain}, {unit.proposer})\n{result.details or result.error}\n")
            done[unit.key] = Candidate(unit, Proposal(task=None, kind=unit.proposer, infrastructure_failure=True,
                                                      error=f"crashed: {result.error} (traceback in {ERRORS_LOG})"))
        for unit in todo:  # phase B in slot order
            await self._phase_b(done[unit.key])
        return True

    def _serve_models(self) -> None:
        """The round's solver and proposer models through ``serve``, between rounds, when nothing
        else runs. Called in this thread on purpose: a server started from a pool thread would be
        killed when that thread ends (it dies with the thread that started it, PR_SET_PDEATHSIG)."""
        self.served_solver, self.served_proposer = self.solver, self.proposer_llm
        if self.serve is None:
            return
        if self.solver is not None:
            self.served_solver = self.solver.model_copy(update={"llm": self.serve(self.solver.llm)})
        if self.proposer_llm is not None:
            self.served_proposer = self.serve(self.proposer_llm)

    def _propose_job(self, unit: Unit, pool: tuple[TaskRef, ...], budget: Budget) -> ProposeJob:
        parent = unit.assignment.parent_task
        return ProposeJob(key=unit.key, setup=self.setup, proposer=unit.proposer, proposer_llm=self.served_proposer,
                          domain=unit.domain, seed=unit.seed, round=unit.round, slot=unit.slot,
                          assignment=unit.assignment.model_copy(update={"parent_task": None}),
                          parent=TaskRef.inline(parent) if parent is not None else None,
                          settings=self.config.settings, gates=tuple(g.name for g in self.gates_a), pool=pool,
                          budget=budget)

    async def _phase_b(self, cand: Candidate) -> None:
        unit, task = cand.unit, cand.task
        calibration: Calibration | None = None
        report = cand.report
        if task is not None and report is not None:
            if report.valid:
                self.progress.status(f"{unit.key}: near-duplicates and calibration")
                report, calibration = await self._gates_b(unit, task, report)
            self.host.announce_task_validated(report)
        outcome = outcome_of(cand.proposal, report)
        name = task.name if task is not None else None
        if outcome == "admitted":
            assert task is not None
            name = self.suite.add(task, report, key=unit.key).record.name
        proposal = cand.proposal
        record = UnitRecord(
            **unit.model_dump(include=set(UnitSlot.model_fields)),
            **proposal.model_dump(include=set(ProposalCost.model_fields)),
            model=proposal.model, direction=unit.assignment.direction, parent=unit.assignment.parent, task_name=name,
            digest=task.digest() if task is not None else None, outcome=outcome,
            reason=(report.reason if report is not None else proposal.error),
            seconds=proposal.seconds + (report.seconds if report else 0.0),
            report=report.to_json() if report is not None else None)
        rows = _rollout_rows(unit.key, "calibration", unit.round, unit.domain, name or "", calibration)
        now = time.monotonic()
        self.db.record_unit(record, task, rows, seconds=now - self._clock)
        self._clock = now
        self.progress.unit_done(unit, outcome)

    async def _gates_b(self, unit: Unit, task: Task,
                       report: ValidationReport) -> tuple[ValidationReport, Calibration | None]:
        """Near-duplicates against exactly the pool before this unit (here: text only), then
        calibration through the executor; the verdicts join the phase A report."""
        ctx = GateContext(backend=None, runner=None, settings=self.config.settings,
                          suite_tasks=self._pool_before(unit.round, unit.slot), backend_name=self.setup.backend)
        later = await validate_task(task, lambda _: ctx, gates=self.near_duplicate, label=unit.key)
        gates: list[GateResult] = list(later.gates)
        status: str = later.status
        reason, seconds = later.reason, later.seconds
        calibration = None
        if later.valid and self.config.calibrate:
            gate, calibration = await self._calibration_gate(task, salt="")
            gates.append(gate)
            seconds += gate.seconds
            if not gate.passed:
                status = {"fail": "invalid", "timeout": "timeout"}.get(gate.status, "error")
                reason = f"calibration: {gate.reason or gate.status}"
        return report.model_copy(update={
            "status": status, "reason": report.reason if status == "valid" else reason,
            "gates": [*report.gates, *gates], "seconds": report.seconds + seconds}), calibration

    async def _calibration_gate(self, task: Task, *, salt: str) -> tuple[GateResult, Calibration | None]:
        if "calibration" in self.config.settings.skip:
            return GateResult(name="calibration", status="skip", reason="skipped by settings"), None
        if self.solver is None:
            return GateResult(name="calibration", status="skip",
                              reason="no solver configured: calibration needs one (gate 9)"), None
        calibration = await calibrate(task, self.config.settings, lambda indices: self._rollouts(task, indices, salt),
                                      salt=salt)
        return calibration.gate, calibration

    async def _rollouts(self, task: Task, indices: range, salt: str) -> list[TrialResult]:
        """Solver rollouts of ``task`` as attempt jobs; rollout i samples from its own seed."""
        assert self.served_solver is not None
        ref = TaskRef.inline(task)
        agent = AgentSpec(name="solver", solver=self.served_solver)
        jobs = [AttemptJob(key=str(i), setup=self.setup, task=ref, agent=agent, seed=rollout_seed(task, i, salt))
                for i in indices]
        got: dict[int, TrialResult] = {}
        async for result in self.executor.map(jobs):
            value = result.value
            got[int(result.key)] = value if result.ok and isinstance(value, TrialResult) else TrialResult(
                task=task.name, agent="solver", status="error", error=f"rollout crashed: {result.error}")
        return [got[i] for i in indices]

    # -- pool review and training -----------------------------------------------------------
    def _pool_keys(self, r: int, s: int = -1) -> list[UnitRecord]:
        """Units admitted before unit (r, s) (default: before round ``r``) that are still in the pool."""
        left = {x.key for x in self.db.reviews() if x.round < r and x.verdict == "left"}
        return [u for u in self.db.units()
                if u.outcome == "admitted" and (u.round, u.slot) < (r, s) and u.key not in left]

    async def _review(self, r: int) -> None:
        pool = [u for u in self._pool_keys(r) if not self.db.reviewed(r, u.key)]
        if pool:
            self.progress.status(f"round {r}: the solver reruns {len(pool)} pool task(s)")
        await asyncio.gather(*(self._review_one(r, unit) for unit in pool))

    async def _review_one(self, r: int, unit: UnitRecord) -> None:
        assert unit.task_name is not None
        task = self._recorded_task(unit.key)
        gate, calibration = await self._calibration_gate(task, salt=f"review-{r}")
        verdict = "left" if gate.status == "fail" else "stays" if gate.status == "pass" else "unmeasured"
        if verdict == "left":
            self.suite.remove(unit.task_name)  # idempotent: False when a crash already removed it
        rows = _rollout_rows(unit.key, f"review-{r}", r, unit.domain, unit.task_name, calibration)
        self.db.record_review(ReviewRecord(round=r, key=unit.key, task_name=unit.task_name,
                                           mean=calibration.mean if calibration else None, verdict=verdict,
                                           reason=gate.reason), rows)

    def _solver_for(self, r: int) -> SolverSpec | None:
        """Round ``r``'s solver: the one the last recorded training returned, else the initial one."""
        if self.initial_solver is None:
            return None
        trained = [t for t in self.db.trainings() if t.round < r]
        return trained[-1].solver if trained else self.initial_solver

    def _proposer_for(self, r: int) -> LLMSpec | None:
        """Round ``r``'s proposer model: the last one a recorded training returned, else the initial one."""
        trained = [t.proposer for t in self.db.trainings() if t.round < r and t.proposer is not None]
        return trained[-1] if trained else self.initial_proposer

    async def _train(self, r: int) -> None:
        """The trainer on the pool after round ``r``'s review and the round's rollouts; its solver spec
        and metrics are recorded before the next round starts (a resumed run does not train again)."""
        assert self.trainer is not None and self.solver is not None
        if self.db.training(r) is not None:
            return
        self.progress.status(f"round {r}: training the solver ({self.config.trainer})")
        pool = [self._recorded_task(u.key) for u in self._pool_keys(r + 1)]
        setup = self.setup
        assert setup.backend is not None
        self.trainer.configure(TrainerContext(workdir=self.out / "training" / f"round-{r}", round=r,
                                              seed=self.config.seed, backend=setup.backend, policy=setup.policy,
                                              options=dict(self.config.trainer_options)), self.host)
        result = await self.trainer.train(pool, self.db.rollouts(round=r), self.solver)
        self.db.record_training(TrainingRecord(round=r, trainer=self.config.trainer or "", before=self.solver,
                                               solver=result.solver, metrics=result.metrics,
                                               history=result.history, proposer=result.proposer))


def outcome_of(proposal: Proposal, report: ValidationReport | None) -> str:
    """The metrics outcome of one proposal (see flywheel/metrics.py)."""
    if proposal.refused:
        return "refused"
    if proposal.infrastructure_failure:
        return "infrastructure"
    if proposal.task is None or report is None:
        return "failed_validation"  # the model produced nothing usable: its own, scored failure
    if report.valid:
        return "admitted"
    failing = next((g for g in report.gates if not g.passed), None)
    if failing is None:
        return "failed_validation"  # e.g. the task could not be read
    if failing.name == "calibration":
        return "failed_calibration" if failing.status == "fail" else "infrastructure"
    return "infrastructure" if failing.status == "error" else "failed_validation"


def _rollout_rows(key: str, phase: str, round: int, domain: str, task_name: str,
                  calibration: Calibration | None) -> list[RolloutRow]:
    if calibration is None:
        return []
    return [RolloutRow(key=key, phase=phase, idx=i, round=round, domain=domain, task_name=task_name,
                       reward=r.reward if usable(r) else None, status=r.status,
                       stop_reason=r.trajectory.stop_reason if r.trajectory else None,
                       failure=failure_of(r) if usable(r) else None, seconds=r.seconds)
            for i, r in enumerate(calibration.results)]
