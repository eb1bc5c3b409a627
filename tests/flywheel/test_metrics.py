"""The flywheel metrics against hand-computed values (docs/architecture.md, Metrics)."""

from __future__ import annotations

import math

import pytest

from autoenvscaling.flywheel.metrics import (
    ProposalOutcome,
    RolloutRecord,
    admission_rate,
    cost_per_valid_environment,
    proposer_reward,
    solver_pass_rates,
    useful_group_rate,
    valid_environment_rate,
    valid_environment_rates,
    wilson_interval,
)


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Reference values of the Wilson score interval (z = 1.96), e.g. statsmodels' proportion_confint.
    (5, 10, 0.236593, 0.763407),
    (0, 10, 0.0, 0.277533),
    (10, 10, 0.722467, 1.0),
    (81, 263, 0.255289, 0.366210),
    (1, 1, 0.206549, 1.0),
])
def test_wilson_interval_known_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-6) and hi == pytest.approx(high, abs=1e-6)


def test_wilson_interval_by_hand() -> None:
    # 3 of 4 by the formula: centre (p + z^2/2n)/(1 + z^2/n), half z*sqrt(p(1-p)/n + z^2/4n^2)/(1 + z^2/n)
    z, n, p = 1.959963984540054, 4, 0.75
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    assert wilson_interval(3, 4) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(3, 4) == pytest.approx((0.300642, 0.954413), abs=1e-6)
    with pytest.raises(ValueError):
        wilson_interval(0, 0)
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def _o(outcome: str, proposer: str = "prompt", model: str | None = "m", cost: float | None = 0.0,
       rnd: int = 0) -> ProposalOutcome:
    return ProposalOutcome(proposer=proposer, model=model, outcome=outcome, cost_usd=cost, round=rnd)  # type: ignore[arg-type]


def test_valid_environment_rate_excludes_refusals_and_infrastructure() -> None:
    outcomes = [_o("admitted"), _o("failed_calibration"), _o("failed_validation"), _o("failed_validation"),
                _o("refused"), _o("infrastructure"), _o("infrastructure")]
    r = valid_environment_rate(outcomes)
    # scored = 4 (2 valid: admitted + failed calibration), refusals and infrastructure left out
    assert (r.successes, r.n, r.value) == (2, 4, 0.5)
    assert (r.low, r.high) == pytest.approx(wilson_interval(2, 4))
    a = admission_rate(outcomes)
    assert (a.successes, a.n) == (1, 4)
    empty = valid_environment_rate([_o("refused")])
    assert empty.n == 0 and empty.value is None and "n/a" in str(empty)


def test_rates_grouped_by_proposer_and_round() -> None:
    outcomes = [_o("admitted", "prompt", rnd=0), _o("failed_validation", "prompt", rnd=0),
                _o("admitted", "agentic", rnd=0), _o("admitted", "agentic", rnd=1)]
    rates = valid_environment_rates(outcomes, key=lambda o: (o.proposer, o.round))
    assert {k: (v.successes, v.n) for k, v in rates.items()} == {
        ("prompt", 0): (1, 2), ("agentic", 0): (1, 1), ("agentic", 1): (1, 1)}


def test_cost_per_valid_environment_per_model() -> None:
    outcomes = [
        ProposalOutcome(proposer="prompt", model="a", outcome="admitted", cost_usd=0.10),
        ProposalOutcome(proposer="prompt", model="a", outcome="failed_validation", cost_usd=0.20),
        ProposalOutcome(proposer="prompt", model="a", outcome="refused", cost_usd=0.05),  # paid for, not scored
        ProposalOutcome(proposer="agentic", model="a", outcome="failed_calibration", cost_usd=0.25),
        ProposalOutcome(proposer="prompt", model="b", outcome="failed_validation", cost_usd=0.30),
        ProposalOutcome(proposer="prompt", model="c", outcome="admitted", cost_usd=None),
        ProposalOutcome(proposer="procedural", model=None, outcome="admitted", cost_usd=0.0),
    ]
    costs = cost_per_valid_environment(outcomes)
    assert costs["a"].total_usd == pytest.approx(0.60) and costs["a"].valid == 2
    assert costs["a"].per_valid_usd == pytest.approx(0.30)
    assert costs["b"].valid == 0 and costs["b"].per_valid_usd is None
    assert costs["c"].unpriced == 1 and costs["c"].per_valid_usd is None  # unknown price is never guessed
    assert costs["procedural"].per_valid_usd == 0.0


def test_useful_group_rate() -> None:
    groups = [[1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.5, 0.5], [0.25, 0.75, 0.5, 0.5], [1.0], []]
    r = useful_group_rate(groups)
    # five non-empty groups, two with spread; a single reward has none
    assert (r.successes, r.n) == (2, 5) and r.value == pytest.approx(0.4)


def test_solver_pass_rates_per_round_and_domain() -> None:
    rollouts = [RolloutRecord(task="t1", reward=r, round=0, domain="terminal") for r in (1.0, 0.5, 0.0, 1.0)]
    rollouts += [RolloutRecord(task="t2", reward=0.0, round=1, domain="terminal"),
                 RolloutRecord(task="t3", reward=1.0, round=0, domain="swe")]
    rates = solver_pass_rates(rollouts)
    assert rates[(0, "terminal")].mean_reward == pytest.approx(0.625) and rates[(0, "terminal")].solved == 0.5
    assert rates[(1, "terminal")].n == 1 and rates[(1, "terminal")].mean_reward == 0.0
    assert rates[(0, "swe")].solved == 1.0


def test_proposer_reward() -> None:
    assert proposer_reward("admitted") == 1.0
    assert proposer_reward("failed_calibration") == -0.25
    assert proposer_reward("failed_validation") == -1.0
    assert proposer_reward("refused") is None and proposer_reward("infrastructure") is None
