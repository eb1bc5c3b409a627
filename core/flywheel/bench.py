"""Benchmarks of the flywheel's parts: ``bench proposers`` and ``bench calibration``.

``bench proposers``: the proposer kinds on the same assignments, per model.

Each model answers the same N assignments once per proposer kind (the paper's four arms:
procedural, prompt, prompt + feedback, agentic; procedural uses no model and runs once); every
proposal goes through the admission gates 1-8 (calibration needs a solver and is not part of
validity). The figures are the paper's: valid-environment rate with its Wilson interval, tokens and
USD per valid environment, and, given a solver, the useful-group rate of the admitted tasks (a group
of solver rollouts whose rewards are not all equal teaches GRPO something), and the time each arm took.

``bench calibration``: the useful-group rate of a calibrated pool against an uncalibrated pool of
the same size, both formed from one stream of solver rollouts (see ``bench_calibration``).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict

from ..gates.validate import Validator
from ..llm.budget import Budget, MeteredLLM
from . import metrics as m
from .assignments import Assignment, new_task
from .loop import outcome_of

DEFAULT_KINDS = ("prompt", "prompt-feedback", "agentic")
PROCEDURAL = "procedural"


class BenchRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    proposer: str
    rate: m.Rate
    cost: m.CostSummary
    outcomes: dict[str, int]
    domain: str = ""
    seconds: float = 0.0
    tokens: int = 0
    """Tokens in and out over every proposal of the row."""
    useful: m.Rate | None = None
    """Admitted tasks whose solver group was useful (rewards not all equal); None without a solver."""
    budget_stops: int = 0
    """Proposals the proposal budget ended."""

    @property
    def tokens_per_valid(self) -> float | None:
        valid = self.outcomes.get("admitted", 0)
        return self.tokens / valid if valid else None


def bench_assignments(domain: Any, n: int, seed: int) -> list[Assignment]:
    """N fresh assignments over the domain's families, the same for every model and kind."""
    rng = random.Random(f"autoenvscaling-bench:{seed}")
    families = domain.families()
    return [new_task(domain, families[i % len(families)].name, seed=rng.randrange(1, 2**31),
                     difficulty=("easy", "medium", "hard")[i % 3]) for i in range(n)]


class BenchRecord(BaseModel):
    """One proposal of ``bench proposers``, a line of its record file: what a rerun skips and what
    the table is counted from."""

    domain: str
    model: str
    proposer: str
    seed: int
    budget: str
    index: int
    """The assignment's place in ``bench_assignments(domain, n, seed)``."""
    outcome: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    useful: bool | None = None
    budget_stop: bool = False
    seconds: float = 0.0

    @property
    def key(self) -> tuple[str, str, str, int, str, int]:
        return self.domain, self.model, self.proposer, self.seed, self.budget, self.index


def read_records(path: Path) -> list[BenchRecord]:
    """The records of a ``--record`` file; a line cut short by a kill is dropped (it is rerun)."""
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(BenchRecord.model_validate_json(line))
        except ValueError:
            continue
    return records


def _append(path: Path, line: str) -> None:
    """Append a line, starting a new one if a kill left the last line unfinished."""
    with path.open("a+b") as out:
        if out.tell():
            out.seek(-1, 2)
            if out.read(1) != b"\n":
                line = "\n" + line
        out.write(line.encode() + b"\n")


def row_of(records: Sequence[BenchRecord], *, solver: bool) -> BenchRow:
    """One arm's row from its proposals' records."""
    first = records[0]
    outcomes = [m.ProposalOutcome(proposer=r.proposer, model=r.model, outcome=r.outcome,  # type: ignore[arg-type]
                                  cost_usd=r.cost_usd, tokens_in=r.tokens_in, tokens_out=r.tokens_out)
                for r in records]
    groups = [r.useful for r in records if r.useful is not None]
    counts = {o: sum(1 for x in outcomes if x.outcome == o) for o in
              ("admitted", "failed_validation", "refused", "infrastructure")}
    return BenchRow(model=first.model, proposer=first.proposer, rate=m.valid_environment_rate(outcomes),
                    cost=m.cost_per_valid_environment(outcomes)[first.model], outcomes=counts, domain=first.domain,
                    seconds=round(sum(r.seconds for r in records), 1),
                    tokens=sum(o.tokens_in + o.tokens_out for o in outcomes),
                    useful=m.rate(sum(groups), len(groups)) if solver else None,
                    budget_stops=sum(r.budget_stop for r in records))


async def bench_proposers(*, host: Any, backend: Any, domain: Any, models: dict[str, Any], n: int, seed: int = 0,
                          kinds: tuple[str, ...] = DEFAULT_KINDS,
                          progress: Callable[[str, str, str], None] | None = None,
                          solver: Any | None = None, budget: Budget | None = None,
                          record: Path | None = None) -> list[BenchRow]:
    """Run every (model, kind) on the same assignments; ``models`` maps a name to its LLMBackend
    (the procedural kind runs once, as model "-"). ``progress(model, kind, outcome)`` is called
    after each proposal. ``solver``: an Agent whose calibration rollouts on each admitted task give
    the useful-group rate. ``budget``: what each proposal's model calls may spend (the same for
    every arm). ``record``: a JSON-lines file that gets each proposal as it ends; a rerun with the
    same file skips the proposals it holds (same domain, model, arm, seed, budget and assignment),
    so a killed bench loses at most the proposal in flight."""
    validator = Validator(host=host, backend=backend)
    gates = [g for g in validator.gates if not g.needs_solver]

    async def check(task: Any) -> Any:
        from ..gates.validate import validate_task

        return await validate_task(task, validator.context, gates=gates)

    async def useful(task: Any) -> bool:
        from ..gates.base import GateContext, GateSettings
        from ..runtime.trial import TrialRunner
        from .calibration import CalibrationGate

        ctx = GateContext(backend=backend, runner=TrialRunner(backend), settings=GateSettings(), solver=solver)
        return len(set((await CalibrationGate().measure(task, ctx)).rewards)) > 1

    budget = budget or Budget()
    done = {r.key: r for r in read_records(record)} if record is not None else {}
    assignments = bench_assignments(domain, n, seed)
    arms = [(PROCEDURAL, "-", None)] if PROCEDURAL in kinds else []
    arms += [(kind, name, llm) for name, llm in models.items() for kind in kinds if kind != PROCEDURAL]
    rows = []
    for kind, model_name, llm in arms:
        records = []
        for index, assignment in enumerate(assignments):
            key = (domain.name, model_name, kind, seed, budget.describe(), index)
            if key in done:
                records.append(done[key])
                if progress is not None:
                    progress(model_name, kind, done[key].outcome)
                continue
            started = time.monotonic()
            meter = MeteredLLM(llm, budget) if llm is not None else None
            proposer = host.proposers.get(kind)(llm=meter, checker=check, backend=backend)
            proposal = await proposer.propose(assignment, domain=domain, seed=assignment.seed)
            report = proposal.report
            if proposal.task is not None and report is None:
                report = await check(proposal.task)
            outcome = outcome_of(proposal, report)
            group = None
            if solver is not None and outcome == "admitted" and proposal.task is not None:
                group = await useful(proposal.task)
            one = BenchRecord(domain=domain.name, model=model_name, proposer=kind, seed=seed, budget=budget.describe(),
                              index=index, outcome=outcome, tokens_in=proposal.tokens_in,
                              tokens_out=proposal.tokens_out, cost_usd=proposal.cost_usd, useful=group,
                              budget_stop=meter is not None and meter.stopped is not None,
                              seconds=round(time.monotonic() - started, 1))
            if record is not None:
                _append(record, one.model_dump_json())
            records.append(one)
            if progress is not None:
                progress(model_name, kind, outcome)
        rows.append(row_of(records, solver=solver is not None))
    return rows


# ``bench calibration``: does calibration pay? ---------------------------------------------------

HISTOGRAM_BINS = ("0", "(0, .25)", "[.25, .5)", "[.5, .75]", "(.75, 1)", "1")


def histogram_bin(mean: float) -> str:
    """The pass-rate bin of one task's mean reward (the band's edges sit on bin edges)."""
    if mean <= 0:
        return "0"
    if mean >= 1:
        return "1"
    if mean < 0.25:
        return "(0, .25)"
    if mean < 0.5:
        return "[.25, .5)"
    return "[.5, .75]" if mean <= 0.75 else "(.75, 1)"


class CandidateGroup(BaseModel):
    """One candidate task, its group of solver rollouts, and the calibration rule's verdict on them
    ("pass": in the band with a spread; "error": fewer than two rollouts measured the task)."""

    model_config = ConfigDict(frozen=True)

    index: int
    task: str
    family: str
    rewards: list[float]
    excluded: int
    verdict: str
    reason: str
    seconds: float
    commands: list[list[str]] = []  # what each rollout ran: the evidence behind its reward

    @property
    def mean(self) -> float | None:
        return sum(self.rewards) / len(self.rewards) if self.rewards else None


class PoolResult(BaseModel):
    """A pool of tasks and how useful their rollout groups are. ``fresh``: the useful-group rate of
    a second, independent group per task (new seeds), when asked for: the pool's own groups decided
    the calibrated pool's membership, a fresh group shows whether the choice holds up."""

    model_config = ConfigDict(frozen=True)

    tasks: list[str]
    useful: m.Rate
    mean_reward: float | None
    fresh: m.Rate | None = None


class CalibrationBenchResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    pool_size: int
    group: int
    band: tuple[float, float]
    candidates: list[CandidateGroup]
    skipped: list[str]  # candidates that never got a group: generator errors, invalid or unbuildable tasks
    uncalibrated: PoolResult
    calibrated: PoolResult
    every_group: m.Rate
    histogram: dict[str, int]
    stopped: str  # "filled" (both pools full), "candidates" (none left) or "time" (the budget ran out)
    seconds: float


def candidate_stream(domain: Any, n: int, seed: int, families: Sequence[str] | None = None) -> list[tuple[str, int]]:
    """``n`` (family, seed) pairs cycling over ``families`` (default: all of the domain's): a
    benchmark's candidates."""
    from ..errors import UsageError

    rng = random.Random(f"autoenvscaling-calibration-bench:{seed}")
    known = [f.name for f in domain.families()]
    unknown = [f for f in families or () if f not in known]
    if unknown:
        raise UsageError(f"domain {domain.name} has no family {', '.join(unknown)}", hint=f"families: {', '.join(known)}")
    families = list(families or known)
    return [(families[i % len(families)], rng.randrange(1, 2**31)) for i in range(n)]


async def bench_calibration(*, domain: Any, backend: Any, solver: Any, pool_size: int, group: int = 4,
                            candidates: int = 40, difficulty: str = "easy", seed: int = 0,
                            families: Sequence[str] | None = None, band: tuple[float, float] = (0.25, 0.75),
                            validate: list[Any] | None = None,
                            deadline: float | None = None, fresh: bool = False,
                            progress: Callable[[CandidateGroup], None] | None = None) -> CalibrationBenchResult:
    """Roll the solver out ``group`` times on each candidate task (a stream over the domain's families)
    and form, from those same rollouts, the uncalibrated pool (the first ``pool_size`` candidates
    with a measured group) and the calibrated pool (the first ``pool_size`` that the calibration rule
    passes). Stops when both pools are full, the candidates run out, or at ``deadline``
    (time.monotonic()); a candidate already started is finished. ``validate``: gates a candidate must
    pass first (none: the domain's generators are trusted and only the build runs)."""
    from ..gates.base import GateContext, GateSettings
    from ..runtime.trial import TrialRunner
    from .calibration import CalibrationGate

    start = time.monotonic()
    # Fixed-size groups (no expansion near the band's edges): both pools' groups are then alike.
    settings = GateSettings(calibration_band=band, calibration_rollouts=group, calibration_expand_to=group)
    runner = TrialRunner(backend)
    gate = CalibrationGate()
    measured: list[CandidateGroup] = []
    skipped: list[str] = []
    contexts: dict[str, tuple[Any, Any]] = {}
    stopped = "candidates"
    for index, (family, task_seed) in enumerate(candidate_stream(domain, candidates, seed, families)):
        uncalibrated = [c for c in measured if c.verdict != "error"][:pool_size]
        calibrated = [c for c in measured if c.verdict == "pass"][:pool_size]
        if len(uncalibrated) >= pool_size and len(calibrated) >= pool_size:
            stopped = "filled"
            break
        if deadline is not None and time.monotonic() >= deadline:
            stopped = "time"
            break
        began = time.monotonic()
        try:
            task = domain.generate(family, seed=task_seed, difficulty=difficulty)
        except Exception as exc:  # a generator bug costs one candidate, not the measurement
            skipped.append(f"{family} seed {task_seed}: generator failed: {type(exc).__name__}: {exc}")
            continue
        ctx = GateContext(backend=backend, runner=runner, settings=settings, solver=solver)
        why_not = await _admit(task, ctx, validate)
        if why_not is not None:
            skipped.append(f"{task.name}: {why_not}")
            continue
        cal = await gate.measure(task, ctx)
        contexts[task.name] = (task, ctx)
        candidate = CandidateGroup(index=index, task=task.name, family=family, rewards=cal.rewards,
                                   excluded=cal.excluded, verdict=cal.gate.status, reason=cal.gate.reason,
                                   seconds=time.monotonic() - began,
                                   commands=[[a.command for a in r.trajectory.actions] if r.trajectory else []
                                             for r in cal.results])
        measured.append(candidate)
        if progress is not None:
            progress(candidate)
    groups = [c for c in measured if c.verdict != "error"]

    async def pool(members: list[CandidateGroup]) -> PoolResult:
        fresh_rate = None
        if fresh:
            fresh_groups = [(await gate.measure(*contexts[c.task], salt="fresh")).rewards for c in members]
            fresh_rate = m.useful_group_rate(fresh_groups)
        rewards = [r for c in members for r in c.rewards]
        return PoolResult(tasks=[c.task for c in members], useful=m.useful_group_rate(c.rewards for c in members),
                          mean_reward=sum(rewards) / len(rewards) if rewards else None, fresh=fresh_rate)

    histogram = dict.fromkeys(HISTOGRAM_BINS, 0)
    for c in groups:
        histogram[histogram_bin(c.mean or 0.0)] += 1
    return CalibrationBenchResult(
        pool_size=pool_size, group=group, band=band, candidates=measured, skipped=skipped,
        uncalibrated=await pool(groups[:pool_size]),
        calibrated=await pool([c for c in groups if c.verdict == "pass"][:pool_size]),
        every_group=m.useful_group_rate(c.rewards for c in groups), histogram=histogram, stopped=stopped,
        seconds=time.monotonic() - start)


async def _admit(task: Any, ctx: Any, gates: list[Any] | None) -> str | None:
    """None when the candidate may be rolled out (and its environment is built), else why not."""
    from ..errors import AESError
    from ..gates.validate import validate_task

    if gates:
        report = await validate_task(task, lambda _: ctx, gates=gates)
        return None if report.valid else f"not valid ({report.reason})"
    try:
        await ctx.prepared_environment(task)
    except AESError as exc:
        return f"environment did not build: {exc.message}"
    return None
