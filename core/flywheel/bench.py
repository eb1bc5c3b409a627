"""``bench proposers``: the proposer kinds on the same assignments, per model.

Each model answers the same N assignments once per proposer kind (prompt, prompt + feedback,
agentic); every proposal goes through the admission gates 1-8 (calibration needs a solver and is
not part of validity). The figures are the paper's: valid-environment rate with its Wilson interval
and USD per valid environment.
"""

from __future__ import annotations

import random
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from ..gates.validate import Validator
from . import metrics as m
from .assignments import Assignment, new_task
from .loop import outcome_of

DEFAULT_KINDS = ("prompt", "prompt-feedback", "agentic")


class BenchRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    proposer: str
    rate: m.Rate
    cost: m.CostSummary
    outcomes: dict[str, int]


def bench_assignments(domain: Any, n: int, seed: int) -> list[Assignment]:
    """N fresh assignments over the domain's families, the same for every model and kind."""
    rng = random.Random(f"autoenvscaling-bench:{seed}")
    families = domain.families()
    return [new_task(domain, families[i % len(families)].name, seed=rng.randrange(1, 2**31),
                     difficulty=("easy", "medium", "hard")[i % 3]) for i in range(n)]


async def bench_proposers(*, host: Any, backend: Any, domain: Any, models: dict[str, Any], n: int, seed: int = 0,
                          kinds: tuple[str, ...] = DEFAULT_KINDS,
                          progress: Callable[[str, str, str], None] | None = None) -> list[BenchRow]:
    """Run every (model, kind) on the same assignments; ``models`` maps a name to its LLMBackend.
    ``progress(model, kind, outcome)`` is called after each proposal."""
    validator = Validator(host=host, backend=backend)
    gates = [g for g in validator.gates if g.name != "calibration"]

    async def check(task: Any) -> Any:
        from ..gates.validate import validate_task

        return await validate_task(task, validator.context, gates=gates)

    assignments = bench_assignments(domain, n, seed)
    rows = []
    for model_name, llm in models.items():
        for kind in kinds:
            cls = host.proposers.get(kind)
            proposer = cls(llm=llm, checker=check, backend=backend)
            outcomes = []
            for assignment in assignments:
                proposal = await proposer.propose(assignment, domain=domain, seed=assignment.seed)
                report = proposal.report
                if proposal.task is not None and report is None:
                    report = await check(proposal.task)
                outcome = outcome_of(proposal, report)
                outcomes.append(m.ProposalOutcome(proposer=kind, model=model_name, outcome=outcome,  # type: ignore[arg-type]
                                                  cost_usd=proposal.cost_usd, tokens_in=proposal.tokens_in,
                                                  tokens_out=proposal.tokens_out))
                if progress is not None:
                    progress(model_name, kind, outcome)
            cost = m.cost_per_valid_environment(outcomes)[model_name]
            counts = {o: sum(1 for x in outcomes if x.outcome == o) for o in
                      ("admitted", "failed_validation", "refused", "infrastructure")}
            rows.append(BenchRow(model=model_name, proposer=kind, rate=m.valid_environment_rate(outcomes), cost=cost,
                                 outcomes=counts))
    return rows
