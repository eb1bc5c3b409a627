"""The numbers the flywheel reports, defined as in the paper so they compare with it
(docs/architecture.md, Metrics).

- valid-environment rate = accepted / scored, with a 95% Wilson interval. "Accepted" means the
  proposal passed the validation gates (1-8): a well-formed environment. Calibration (gate 9) says
  whether the environment suits the current solver, not whether it is valid, so a task that fails
  only calibration still counts as valid here (its proposer reward is -0.25, not -1). Infrastructure
  failures and provider refusals are excluded from "scored"; a model's own malformed or rejected
  attempts stay in it.
- cost per valid environment: everything a proposer model cost (every call, whatever its outcome)
  divided by its valid environments.
- useful-group rate: the fraction of rollout groups whose rewards are not all equal, i.e. the groups
  GRPO can learn from (a group of identical rewards has zero advantage everywhere).
- solver pass rate per round and domain: the mean rollout reward (rewards are fractions of tests
  passed, so the mean is the pass rate with partial credit), plus the fraction fully solved.
- proposer reward: +1 admitted, -0.25 failed calibration, -1 failed validation; none for proposals
  that were never scored.

Everything here is a pure function of records, so the report and the benchmarks recompute the same
figures from the run database.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Hashable, Iterable, Literal, Sequence, TypeVar

from pydantic import BaseModel, ConfigDict

Z_95 = 1.959963984540054  # the 97.5th percentile of the standard normal

Outcome = Literal["admitted", "failed_calibration", "failed_validation", "refused", "infrastructure"]
#: outcomes that count as "scored" (the rest are the provider's or our machinery's fault)
SCORED: frozenset[str] = frozenset({"admitted", "failed_calibration", "failed_validation"})
#: scored outcomes whose environment is valid (passed gates 1-8)
VALID: frozenset[str] = frozenset({"admitted", "failed_calibration"})
PROPOSER_REWARD: dict[str, float] = {"admitted": 1.0, "failed_calibration": -0.25, "failed_validation": -1.0}

K = TypeVar("K", bound=Hashable)


class ProposalOutcome(BaseModel):
    """One proposal as the metrics see it."""

    model_config = ConfigDict(frozen=True)

    proposer: str
    model: str | None = None  # None for procedural proposers
    outcome: Outcome
    round: int = 0
    domain: str = ""
    cost_usd: float | None = 0.0  # None: the model has no known price
    tokens_in: int = 0
    tokens_out: int = 0

    @property
    def scored(self) -> bool:
        return self.outcome in SCORED

    @property
    def valid(self) -> bool:
        return self.outcome in VALID

    @property
    def model_key(self) -> str:
        return self.model or self.proposer


class RolloutRecord(BaseModel):
    """One solver attempt at a task."""

    model_config = ConfigDict(frozen=True)

    task: str
    reward: float
    round: int = 0
    domain: str = ""


class Rate(BaseModel):
    """``successes`` out of ``n`` with its 95% Wilson interval; ``value`` is None when n == 0."""

    model_config = ConfigDict(frozen=True)

    successes: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    def __str__(self) -> str:
        if self.value is None:
            return "n/a (0 scored)"
        return f"{self.value:.1%} [{self.low:.1%}, {self.high:.1%}] ({self.successes}/{self.n})"


class CostSummary(BaseModel):
    """What one proposer model cost. ``per_valid_usd`` is None when nothing was valid or when no
    call had a price; ``unpriced`` counts proposals whose cost is unknown (then the total is a
    lower bound and so is the per-valid figure)."""

    model_config = ConfigDict(frozen=True)

    model: str
    total_usd: float
    valid: int
    proposals: int
    unpriced: int
    per_valid_usd: float | None


class PassRate(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    mean_reward: float
    solved: float  # fraction of rollouts with reward 1


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion: unlike the normal approximation it stays
    inside [0, 1] and is sensible at 0/n and n/n, which small flywheel rounds hit all the time."""
    if n <= 0:
        raise ValueError("the Wilson interval needs n > 0")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within [0, {n}], got {successes}")
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # Clamp rounding noise at the ends (0/n gives a low of -1e-17 otherwise).
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(successes: int, n: int) -> Rate:
    if n == 0:
        return Rate(successes=0, n=0, value=None, low=None, high=None)
    low, high = wilson_interval(successes, n)
    return Rate(successes=successes, n=n, value=successes / n, low=low, high=high)


def valid_environment_rate(outcomes: Iterable[ProposalOutcome]) -> Rate:
    scored = [o for o in outcomes if o.scored]
    return rate(sum(o.valid for o in scored), len(scored))


def admission_rate(outcomes: Iterable[ProposalOutcome]) -> Rate:
    """Admitted (every gate including calibration passed) / scored."""
    scored = [o for o in outcomes if o.scored]
    return rate(sum(o.outcome == "admitted" for o in scored), len(scored))


def group_by(items: Iterable[ProposalOutcome], key: Callable[[ProposalOutcome], K]) -> dict[K, list[ProposalOutcome]]:
    groups: dict[K, list[ProposalOutcome]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return dict(groups)


def valid_environment_rates(outcomes: Iterable[ProposalOutcome],
                            key: Callable[[ProposalOutcome], K]) -> dict[K, Rate]:
    """The valid-environment rate per group, e.g. ``key=lambda o: (o.proposer, o.round)``."""
    return {k: valid_environment_rate(v) for k, v in sorted(group_by(outcomes, key).items(), key=lambda kv: str(kv[0]))}


def cost_per_valid_environment(outcomes: Iterable[ProposalOutcome]) -> dict[str, CostSummary]:
    """USD per valid environment for each proposer model (procedural proposers appear under their
    proposer name at zero cost)."""
    out: dict[str, CostSummary] = {}
    for model, items in sorted(group_by(outcomes, lambda o: o.model_key).items()):
        priced = [o.cost_usd for o in items if o.cost_usd is not None]
        total = float(sum(priced))
        valid = sum(o.valid for o in items if o.scored)
        unpriced = len(items) - len(priced)
        per_valid = total / valid if valid and priced else None
        out[model] = CostSummary(model=model, total_usd=total, valid=valid, proposals=len(items),
                                 unpriced=unpriced, per_valid_usd=per_valid)
    return out


def useful_group_rate(groups: Iterable[Sequence[float]]) -> Rate:
    """Fraction of non-empty rollout groups whose rewards are not all equal. A group of one reward
    has no spread, so it counts as not useful."""
    sizes = [list(g) for g in groups if len(g) > 0]
    useful = sum(1 for g in sizes if max(g) != min(g))
    return rate(useful, len(sizes))


def solver_pass_rates(rollouts: Iterable[RolloutRecord]) -> dict[tuple[int, str], PassRate]:
    """Mean reward and fully-solved fraction per (round, domain)."""
    groups: dict[tuple[int, str], list[float]] = defaultdict(list)
    for r in rollouts:
        groups[(r.round, r.domain)].append(r.reward)
    return {k: PassRate(n=len(v), mean_reward=sum(v) / len(v), solved=sum(x >= 1.0 for x in v) / len(v))
            for k, v in sorted(groups.items())}


def proposer_reward(outcome: str) -> float | None:
    """+1 admitted, -0.25 failed calibration, -1 failed validation, None when not scored."""
    return PROPOSER_REWARD.get(outcome)
