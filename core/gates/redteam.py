"""The red-team gate: the cheap cheats (redteam/) run against every candidate task after the null
gate, and a cheat that scores at or above the null threshold rejects the task with its name and
reward. Weak verifiers (a file that exists, a keyword, an exit code, a file the agent writes) come
from LLM proposers, from imported suites and from hand-written tasks alike, so it judges them all.
"""

from __future__ import annotations

from ..sandbox.select import plugin_host
from ..tasks import Task
from .base import Evidence, GateContext, GateResult
from .runtime import _AttemptGate, trial_evidence


class RedTeamGate(_AttemptGate):
    """Every cheap cheat that applies to the task (the core's and the task's domain's) must score
    below ``settings.null_max``; the first that does not names itself in the reason. A task its
    domain vouches for (``Domain.redteam_tested``: regenerated from its seed by a family whose own
    tests red-team its verifier) is left alone."""

    name = "redteam"
    order = 45

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        from ..redteam.run import cheats_for, outcome, tally

        host = plugin_host(ctx.host)
        domain = task.provenance.domain
        if (domain and ctx.settings.redteam_vouched and domain in host.domains
                and host.domains.get(domain)().redteam_tested(task)):
            return self.result("pass", f"skipped: a {domain} family whose own tests red-team its verifier "
                               "(the task is the family's own, as it generated it)")
        cheats = cheats_for(task, host, gate_only=True)
        evidence: list[Evidence] = []
        rewards: dict[str, float] = {}
        for cheat in cheats:
            result = await self.attempt(task, ctx, cheat)
            ev = trial_evidence(result, f"cheat {cheat.name}: {cheat.summary()}")
            abnormal = self.abnormal(result, [ev])
            if abnormal is not None:
                return abnormal
            got = outcome(cheat.name, result, threshold=ctx.settings.null_max)
            rewards[cheat.name] = got.reward
            tally(task.provenance.domain, got)
            if got.status == "beaten":
                why = cheat.summary().rstrip(".")
                return self.result("fail", f"cheat {cheat.name} scored {got.reward:g} (must be < "
                                   f"{ctx.settings.null_max:g}): {why[:1].lower() + why[1:]}",
                                   evidence=[ev, Evidence(command="red team", values={"rewards": rewards})])
        evidence.append(Evidence(command="red team", values={"rewards": rewards, "cheats": len(cheats)}))
        return self.result("pass", f"{len(cheats)} cheat(s) held" if cheats else "no cheat applies", evidence=evidence)
