"""Gate 9, calibration: is the task in the current solver's learning band?

The solver attempts the task a few times (TrialRunner, a fresh sandbox each). The task passes when
the mean reward lies in the band (default [0.25, 0.75]) and the rewards are not all equal: a group
of equal rewards gives GRPO no advantage to learn from. Four rollouts first; when their mean is
within ``calibration_margin`` of a band edge, four more, since a verdict that close to an edge on
four samples is mostly noise. Rollouts whose infrastructure failed (the sandbox, or the solver's
model endpoint) say nothing about the task and are left out. Every reward is kept as evidence.

Each rollout samples from its own seed, derived from the task's digest and the rollout's index, so
a rerun (a resumed flywheel) repeats the same rollouts.
"""

from __future__ import annotations

import asyncio
import hashlib
import statistics
import time
from typing import Awaitable, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..agents.base import Agent
from ..gates.base import Evidence, Gate, GateContext, GateResult, GateSettings
from ..runtime.trial import TrialResult
from ..tasks import Task


class Calibration(BaseModel):
    """The rollouts of one calibration and what they say."""

    model_config = ConfigDict(frozen=True)

    results: list[TrialResult] = Field(default_factory=list)
    rewards: list[float] = Field(default_factory=list)
    excluded: int = 0
    gate: GateResult

    @property
    def mean(self) -> float | None:
        return statistics.fmean(self.rewards) if self.rewards else None


def rollout_seed(task: Task, index: int, salt: str = "") -> int:
    digest = hashlib.sha256(f"{task.digest()}:{salt}:{index}".encode()).hexdigest()
    return int(digest[:8], 16)


def in_band(rewards: list[float], band: tuple[float, float]) -> tuple[Literal["pass", "fail", "error"], str]:
    """The gate's rule on one group of rewards: ("pass" | "fail" | "error", why). Pass means the mean
    lies in ``band`` (edges included) and the rewards are not all equal. The flywheel and the
    calibration benchmark judge with this one function, so they cannot drift apart."""
    low, high = band
    if len(rewards) < 2:
        return "error", f"only {len(rewards)} solver rollout(s) produced a reward"
    mean = statistics.fmean(rewards)
    where = f"mean reward {mean:.2f} over {len(rewards)} rollouts"
    if mean < low:
        return "fail", f"{where} is below the band [{low:g}, {high:g}]: too hard for the solver"
    if mean > high:
        return "fail", f"{where} is above the band [{low:g}, {high:g}]: too easy for the solver"
    if statistics.pvariance(rewards) == 0:
        return "fail", f"{where}, but every rollout scored the same: no learning signal"
    return "pass", f"{where}, inside [{low:g}, {high:g}]"


def usable(result: TrialResult) -> bool:
    """Whether a rollout measured the task (rather than a broken sandbox or model endpoint)."""
    if result.status == "error":
        return False
    trajectory = result.trajectory
    return trajectory is None or trajectory.stop_reason != "infrastructure"


class CalibrationGate(Gate):
    """Mean solver reward inside the band, with non-zero variance (gate 9 in docs/architecture.md, Admission gates)."""

    name = "calibration"
    order = 90
    needs_sandbox = True
    needs_solver = True

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        calibration = await self.measure(task, ctx)
        ctx.calibration = calibration  # for the flywheel's assignments
        return calibration.gate

    async def measure(self, task: Task, ctx: GateContext, *, salt: str = "") -> Calibration:
        """Run the rollouts here, through ``ctx.runner``, and judge them. (The flywheel sends its
        rollouts to the executor's workers and judges them with ``calibrate`` directly.)"""
        if ctx.solver is None:
            return Calibration(gate=self.result("skip", "no solver configured: calibration needs one (gate 9)"))
        solver = ctx.solver
        return await calibrate(task, ctx.settings, lambda indices: self._rollouts(task, ctx, solver, indices, salt),
                               salt=salt)

    async def _rollouts(self, task: Task, ctx: GateContext, solver: Agent, indices: range,
                        salt: str) -> list[TrialResult]:
        prepared = ctx.prepared  # the build gate's environment, when it ran
        runner = ctx.require_runner()
        limit = asyncio.Semaphore(getattr(solver, "rollout_concurrency", None) or len(indices) or 1)

        async def one(i: int) -> TrialResult:
            async with limit:
                return await runner.run(task, solver.seeded(rollout_seed(task, i, salt)), prepared=prepared)

        return list(await asyncio.gather(*(one(i) for i in indices)))


Rollouts = Callable[[range], Awaitable[list[TrialResult]]]
"""Runs the solver rollouts with these indices (seeds from ``rollout_seed``) and returns their results in order."""


async def calibrate(task: Task, settings: GateSettings, rollouts: Rollouts, *, salt: str = "") -> Calibration:
    """Gate 9's verdict on ``task`` from the rollouts ``rollouts`` runs: four (``calibration_rollouts``),
    four more near a band edge. ``salt`` draws fresh rollouts (the pool review uses one per round)."""
    start = time.monotonic()
    low, high = settings.calibration_band
    results = await rollouts(range(settings.calibration_rollouts))
    rewards = [r.reward for r in results if usable(r)]
    if rewards and settings.calibration_expand_to > len(results):
        mean = statistics.fmean(rewards)
        if min(abs(mean - low), abs(mean - high)) < settings.calibration_margin:
            results += await rollouts(range(len(results), settings.calibration_expand_to))
            rewards = [r.reward for r in results if usable(r)]
    excluded = len(results) - len(rewards)
    evidence = [Evidence(command=f"solver rollout {i} (seed {rollout_seed(task, i, salt)})",
                         output_tail=(r.error or "")[-300:],
                         values={"reward": r.reward if usable(r) else None, "status": r.status,
                                 "stop_reason": r.trajectory.stop_reason if r.trajectory else None})
                for i, r in enumerate(results)]
    summary = {"rewards": rewards, "band": [low, high], "rollouts": len(results), "excluded": excluded}
    if len(rewards) >= 2:
        summary |= {"mean": statistics.fmean(rewards), "variance": statistics.pvariance(rewards)}
    status, reason = in_band(rewards, (low, high))
    if status == "error":
        reason = f"only {len(rewards)} of {len(results)} solver rollouts produced a reward"
    gate = GateResult(name=CalibrationGate.name, status=status, reason=reason, seconds=time.monotonic() - start,
                      evidence=[Evidence(values=summary), *evidence])
    return Calibration(results=results, rewards=rewards, excluded=excluded, gate=gate)
