"""Per-round figures of a run, derived from the run database with the metrics module.

Everything is recomputed from recorded rows, so a resumed run, the report and ``bench`` all agree.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict

from . import metrics as m
from .rundb import RolloutRow, RunDB, UnitRecord


class RoundSummary(BaseModel):
    """What the ``autoenvscaling_round_ended`` hook receives."""

    model_config = ConfigDict(frozen=True)

    round: int
    proposals: int
    admitted: int
    left_pool: int
    pool_size: int
    valid_rate: m.Rate
    metrics: dict[str, Any]


def outcomes(units: list[UnitRecord]) -> list[m.ProposalOutcome]:
    return [m.ProposalOutcome(proposer=u.proposer, model=u.model, outcome=u.outcome, round=u.round,  # type: ignore[arg-type]
                              domain=u.domain, cost_usd=u.cost_usd, tokens_in=u.tokens_in, tokens_out=u.tokens_out)
            for u in units]


def rollout_groups(rows: list[RolloutRow]) -> list[list[float]]:
    """Rewards grouped per (task, phase): one group per calibration or review of a task."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r.reward is not None:
            groups[(r.key, r.phase)].append(r.reward)
    return [groups[k] for k in sorted(groups)]


def pool_size_after(db: RunDB, round: int) -> int:
    admitted = {u.key for u in db.units() if u.round <= round and u.outcome == "admitted"}
    left = {r.key for r in db.reviews() if r.round <= round and r.verdict == "left"}
    return len(admitted - left)


def round_summary(db: RunDB, round: int, paused: list[str] | None = None) -> RoundSummary:
    """Round ``round``'s figures; ``paused``: the pauses in force when it ended (pauses.py), one line each."""
    units = db.units(round=round)
    outs = outcomes(units)
    rollouts = db.rollouts(round=round)
    left = sum(1 for r in db.reviews(round=round) if r.verdict == "left")
    by_proposer = m.valid_environment_rates(outs, key=lambda o: o.proposer)
    rewards: dict[str, list[float]] = defaultdict(list)
    for o in outs:
        reward = m.proposer_reward(o.outcome)
        if reward is not None:
            rewards[o.proposer].append(reward)
    data: dict[str, Any] = {
        "valid_rate": m.valid_environment_rate(outs).model_dump(),
        "admission_rate": m.admission_rate(outs).model_dump(),
        "valid_rate_by_proposer": {k: v.model_dump() for k, v in by_proposer.items()},
        "cost_by_model": {k: v.model_dump() for k, v in m.cost_per_valid_environment(outs).items()},
        "useful_group_rate": m.useful_group_rate(rollout_groups(rollouts)).model_dump(),
        "pass_rate_by_domain": {domain: v.model_dump() for (_, domain), v in m.solver_pass_rates(
            m.RolloutRecord(task=r.task_name, reward=r.reward, round=r.round, domain=r.domain)
            for r in rollouts if r.reward is not None).items()},
        "proposer_reward": {k: statistics.fmean(v) for k, v in sorted(rewards.items())},
        "outcomes": {o: sum(1 for x in outs if x.outcome == o) for o in
                     ("admitted", "failed_calibration", "failed_validation", "refused", "infrastructure")},
        "domains": {d: sum(1 for u in units if u.domain == d) for d in sorted({u.domain for u in units})},
        "llm_retries": sum(u.retries for u in units),
        "llm_timeouts": sum(u.timeouts for u in units),
        "budget_stops": sum(u.budget_stop is not None for u in units),
    }
    if paused:
        data["paused"] = list(paused)
    stop = db.budget_stop(round)
    if stop is not None:
        data["budget_stop"] = stop
    training = db.training(round)
    if training is not None:
        data["training"] = {"trainer": training.trainer, "solver_model": training.solver.model,
                            "metrics": training.metrics}
    return RoundSummary(round=round, proposals=len(units), admitted=data["outcomes"]["admitted"], left_pool=left,
                        pool_size=pool_size_after(db, round), valid_rate=m.valid_environment_rate(outs), metrics=data)
