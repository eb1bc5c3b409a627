"""Phase A of a flywheel unit as a job for the executors: propose for an assignment, name the task,
run the phase A gates on it (``loop.py`` admits from the outcomes, in slot order)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..executors.jobs import Job, LLMSpec, TaskRef
from ..gates.base import GateSettings, ValidationReport
from ..gates.validate import Validator, validate_task
from ..llm.budget import Budget, MeteredLLM
from ..proposers.base import Proposal
from ..tasks import Task, qualified_name
from ..tasks.harbor import task_from_blob, task_to_blob
from .assignments import Assignment

if TYPE_CHECKING:
    from ..executors.worker import WorkerContext


class ProposeOutcome(BaseModel):
    """Phase A's result: the proposal, the task as named for the suite, and its phase A report."""

    model_config = ConfigDict(frozen=True)

    proposal: Proposal
    task: Task | None = None
    report: ValidationReport | None = None

    def dump(self) -> tuple[str, bytes | None, bytes | None]:
        """The outcome as run.sqlite keeps it until its unit is recorded: JSON, and the proposal's
        task and the named task as directory tars (their bytes exactly, as the suite will write them)."""
        data = {"proposal": self.proposal.model_dump(mode="json", exclude={"task"}),
                "report": self.report.model_dump(mode="json") if self.report is not None else None}
        proposed = self.proposal.task
        return (json.dumps(data), task_to_blob(proposed) if proposed is not None else None,
                task_to_blob(self.task) if self.task is not None else None)

    @classmethod
    def load(cls, outcome: str, proposed: bytes | None, task: bytes | None) -> ProposeOutcome:
        """The outcome ``dump`` kept."""
        data = json.loads(outcome)
        proposal = Proposal.model_validate({**data["proposal"],
                                            "task": task_from_blob(proposed) if proposed is not None else None})
        report = ValidationReport.model_validate(data["report"]) if data["report"] is not None else None
        return cls(proposal=proposal, task=task_from_blob(task) if task is not None else None, report=report)


class ProposeJob(Job):
    """One flywheel unit's phase A: propose for ``assignment``, name the task, run ``gates`` on it.
    ``pool``: the admitted tasks as the batch began (near-duplicates for proposers that check).
    ``parent``: the assignment's parent task (the assignment travels without it). ``budget``: what
    the proposal's model calls may spend (a metered model counts them, retries and timeouts too)."""

    kind: Literal["propose"] = "propose"
    proposer: str
    proposer_llm: LLMSpec | None = None
    domain: str
    seed: int
    round: int
    slot: int
    assignment: Assignment
    parent: TaskRef | None = None
    settings: GateSettings = Field(default_factory=GateSettings)
    gates: tuple[str, ...] = ()
    pool: tuple[TaskRef, ...] = ()
    budget: Budget = Field(default_factory=Budget)

    async def run(self, context: WorkerContext) -> ProposeOutcome:
        host = context.host(self.setup)
        checker_validator = Validator.in_worker(context, self.setup, self.settings, suite=[r.load() for r in self.pool])
        check_gates = [g for g in checker_validator.gates if not g.needs_solver]

        async def check(task: Task) -> ValidationReport:
            # Gates 1-8 for proposers that revise, run here in the worker, outside the proposer's sandbox.
            return await validate_task(task, checker_validator.context, gates=check_gates)

        cls = host.proposers.get(self.proposer)
        llm = context.llm(self.setup, self.proposer_llm) if cls.needs_llm and self.proposer_llm is not None else None
        meter = MeteredLLM(llm, self.budget) if llm is not None else None
        proposer = cls(llm=meter, checker=check, backend=context.backend(self.setup))
        domain = host.domains.get(self.domain)()
        assignment = self.assignment
        if self.parent is not None:
            assignment = assignment.model_copy(update={"parent_task": self.parent.load()})
        proposal = await proposer.propose(assignment, domain=domain, seed=self.seed)
        if meter is not None:
            proposal = proposal.model_copy(update={"retries": meter.usage.retries, "timeouts": meter.usage.timeouts,
                                                   "budget_stop": meter.stopped})
        if proposal.task is None:
            return ProposeOutcome(proposal=proposal)
        family = proposal.task.provenance.family or self.proposer
        task = proposal.task.renamed(qualified_name(f"{self.domain}-{family}-r{self.round}-s{self.slot}")).with_provenance(
            round=self.round, domain=self.domain)
        gates = [g for g in checker_validator.gates if g.name in self.gates]
        report = await validate_task(task, checker_validator.context, gates=gates, label=self.key)
        return ProposeOutcome(proposal=proposal, task=task, report=report)
