"""Gates 2-6: the ones that build the environment and run attempts in sandboxes.

Build (the environment builds within its timeout), oracle (the reference solution scores 1 on every
reward key and every step), null (doing nothing scores below ``null_max``), reset (the oracle scores 1
again on a fresh sandbox: attempts must not depend on each other) and flakiness (the oracle keeps
scoring 1). Later gates reuse earlier work kept on the context: the prepared environment
(``ctx.prepared``), the oracle runs (``ctx.oracle_runs``), which count towards the flakiness runs,
and the null runs (``ctx.null_runs``), which a domain's own gates reuse.

When the oracle falls short, the reason gives the cause, not only the score (runtime/trial.py's
``trial_cause``: a failed solve.sh with its last error line, else the verifier's first real error):
``the oracle scored 0: python: command not found``. The evidence keeps the output tails it came from.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..agents.base import Agent
from ..agents.builtin import NopAgent, OracleAgent
from ..errors import BuildError, BuildTimeout
from ..runtime.phases import timed
from ..runtime.trial import NO_SOLUTION, OUTPUT_TAIL, TrialResult, trial_cause
from ..sandbox.base import EnvironmentDetails
from ..tasks import Task
from .base import Evidence, Gate, GateContext, GateResult

#: the key the prepared environment once had in ``GateContext.scratch``; kept for plugins that import
#: it. The core keeps nothing there now: use ``await ctx.prepared_environment(task)``.
PREPARED = "prepared"
BUILD_GRACE_SEC = 10.0
EVIDENCE_AGENT_CHARS = 1000  # of a failed solution's output, kept before the verifier's in the evidence


class BuildGate(Gate):
    """The task's environment builds (or comes from the cache) within its build timeout."""

    name = "build"
    order = 20
    needs_sandbox = True

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        limit = task.config.environment.build_timeout_sec
        backend = ctx.require_backend()
        command = f"{backend.name} prepare (build timeout {limit:g}s)"
        timed_out = Evidence(command=command, values={"build_timeout_sec": limit})
        try:
            # Backends enforce the build timeout themselves (and stop the build cleanly); the grace
            # period only catches a backend that does not.
            with timed("prepare"):
                prepared = await asyncio.wait_for(backend.prepare(task), timeout=limit + BUILD_GRACE_SEC)
        except asyncio.TimeoutError:
            return self.result("timeout", f"the environment did not build within {limit:g}s", evidence=[timed_out])
        except BuildError as exc:
            # str(exc) keeps every line (the build's output tail); exc.message is only the first.
            tail = str(exc)[-2000:] + (f"\nhint: {exc.hint}" if exc.hint else "")
            if isinstance(exc, BuildTimeout):
                return self.result("timeout", f"the environment did not build within {limit:g}s",
                                   evidence=[timed_out.model_copy(update={"output_tail": tail})])
            return self.result("fail", f"build failed: {exc.message}",
                               evidence=[Evidence(command=command, output_tail=tail)])
        ctx.prepared = prepared
        evidence = Evidence(command=command, output_tail=prepared.details.build_log[-2000:],
                            values={"build_seconds": round(prepared.build_seconds, 3), "cached": prepared.cached,
                                    "ref": prepared.ref, **_mapping(prepared.details)})
        return self.result("pass", evidence=[evidence])


def _mapping(details: EnvironmentDetails) -> dict[str, Any]:
    """What the build substituted: the base image mapping and the builder's notes, when any."""
    found = (("base_mapping", details.base_mapping), ("base_mappings", details.base_mappings),
             ("notes", list(details.notes)))
    return {key: value for key, value in found if value}


def trial_evidence(result: TrialResult, command: str) -> Evidence:
    """What one attempt showed: the rewards, the cause of a shortfall, and the verifier's output tail
    (with the solution's, when it failed), so the one-line reason can be checked against the output."""
    step = result.steps[-1] if result.steps else None
    tail = step.verifier.output_tail if step else ""
    if step and step.trajectory.actions and step.trajectory.actions[-1].exit_code not in (0, None):
        action = step.trajectory.actions[-1]
        tail = f"[agent exit {action.exit_code}] {action.output[-EVIDENCE_AGENT_CHARS:]}\n{tail}"
    values: dict[str, Any] = {"reward": result.reward, "rewards": result.rewards, "status": result.status,
                              "seconds": round(result.seconds, 3)}
    extra = (("error", result.error), ("cause", trial_cause(result)), ("entrypoint_output", result.entrypoint_output))
    values.update((key, value) for key, value in extra if value)
    return Evidence(command=command, output_tail=tail[-(OUTPUT_TAIL + EVIDENCE_AGENT_CHARS):], values=values)


def shortfall(result: TrialResult, what: str) -> str:
    """The one-line reason an oracle attempt failed: what it scored, and why."""
    cause = trial_cause(result)
    if not result.rewards:
        return f"{what}: {result.error or 'no reward'}" + (f" ({cause})" if cause and cause != result.error else "")
    if cause:
        return f"{what} scored {_rewards_text(result)}: {cause}"
    return f"{what} scored {_rewards_text(result)} (every reward must be 1)"


def _is_one(value: float) -> bool:
    return abs(value - 1.0) < 1e-9


def _rewards_text(result: TrialResult) -> str:
    if not result.rewards:
        return result.error or "no reward"
    if list(result.rewards) == ["reward"]:
        return f"{result.rewards['reward']:g}"
    return ", ".join(f"{k}={v:g}" for k, v in result.rewards.items())


class _AttemptGate(Gate):
    """Shared machinery: run one attempt and turn infrastructure trouble into error/timeout."""

    needs_sandbox = True

    async def attempt(self, task: Task, ctx: GateContext, agent: Agent) -> TrialResult:
        prepared = await ctx.prepared_environment(task)
        result = await ctx.require_runner().run(task, agent, prepared=prepared)
        if result.status == "ok" and agent.name in ("oracle", "nop"):
            (ctx.oracle_runs if agent.name == "oracle" else ctx.null_runs).append(result)
        return result

    def abnormal(self, result: TrialResult, evidence: list[Evidence]) -> GateResult | None:
        """The gate's result when the attempt itself did not complete, else None."""
        if result.status == "timeout":
            return self.result("timeout", f"{result.agent} attempt timed out: {result.error or 'verifier timed out'}",
                               evidence=evidence)
        if result.status == "error":
            return self.result("error", f"{result.agent} attempt failed: {result.error}", evidence=evidence)
        return None

    def oracle_verdict(self, result: TrialResult, evidence: list[Evidence], what: str) -> GateResult:
        if result.error == NO_SOLUTION:  # a task defect (lint reports it too), not an infrastructure error
            return self.result("fail", NO_SOLUTION, evidence=evidence)
        abnormal = self.abnormal(result, evidence)
        if abnormal is not None:
            return abnormal
        if not result.rewards or not all(_is_one(v) for v in result.rewards.values()):
            return self.result("fail", shortfall(result, what), evidence=evidence)
        return self.result("pass", evidence=evidence)


class OracleGate(_AttemptGate):
    """The reference solution scores 1 on every reward key (and on every step)."""

    name = "oracle"
    order = 30
    attempt_text = "oracle: solution/solve.sh, then tests/test.sh"  # the evidence's description
    who = "the oracle"  # who fell short, in the reason

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        result = await self.attempt(task, ctx, OracleAgent())
        evidence = [trial_evidence(result, self.attempt_text)]
        return self.oracle_verdict(result, evidence, self.who)


class NullGate(_AttemptGate):
    """Doing nothing must score below ``settings.null_max``; the exact value is reported."""

    name = "null"
    order = 40

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        result = await self.attempt(task, ctx, NopAgent())
        evidence = [trial_evidence(result, "null attempt: no action, then tests/test.sh")]
        abnormal = self.abnormal(result, evidence)
        if abnormal is not None:
            return abnormal
        # No reward file after doing nothing is a zero (Harbor scores a missing reward as failure).
        reward = result.reward
        limit = ctx.settings.null_max
        if reward >= limit:
            return self.result("fail", f"the null attempt scored {reward:g} (must be < {limit:g}): "
                               "the tests pass without any work", evidence=evidence)
        return self.result("pass", f"null reward {reward:g}", evidence=evidence)


class ResetGate(OracleGate):
    """The oracle scores 1 again on a fresh sandbox: a task must not depend on an earlier attempt."""

    name = "reset"
    order = 50
    attempt_text = "oracle again on a fresh sandbox"
    who = "the oracle on a fresh sandbox"


class FlakinessGate(_AttemptGate):
    """The oracle scores 1 on ``settings.flaky_runs`` attempts in all. Oracle attempts of earlier gates
    (oracle, reset) count as runs, so the gate adds only what is missing; it stops at the first miss."""

    name = "flaky"
    order = 60

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        earlier = list(ctx.oracle_runs)
        wanted = max(1, ctx.settings.flaky_runs)
        reused = min(len(earlier), wanted)
        rewards = [r.reward for r in earlier[:reused]]
        evidence: list[Evidence] = []
        for run in range(reused, wanted):
            result = await self.attempt(task, ctx, OracleAgent())
            rewards.append(result.reward)
            ev = trial_evidence(result, f"oracle run {run + 1} of {wanted}")
            abnormal = self.abnormal(result, [ev])
            if abnormal is not None:
                return abnormal
            if not result.rewards or not all(_is_one(v) for v in result.rewards.values()):
                evidence.append(ev.model_copy(update={"values": {**ev.values, "runs": rewards, "reused": reused}}))
                cause = trial_cause(result)
                return self.result("fail", f"oracle run {run + 1} of {wanted} scored {_rewards_text(result)} "
                                   f"after {run} perfect run(s)" + (f": {cause}" if cause else ""),
                                   evidence=evidence)
        evidence.append(Evidence(command=f"oracle x{wanted}", values={"runs": rewards, "reused": reused,
                                                                        "added": wanted - reused}))
        return self.result("pass", evidence=evidence)
