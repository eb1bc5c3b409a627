"""Red-team checks for plugin authors: run a cheat on a task and on its positive control.

``check_cheat`` is what a domain's tests call for each of its cheats on a freshly generated task: the
cheat must score below the null threshold on the real verifier, and its positive control (the naive
verifier it exploits) must pay it, which proves the cheat really attempts what it claims. Every
outcome is tallied (see ``autoenvscaling.redteam.run.tally``) so the test session can print the
counts per domain.
"""

from __future__ import annotations

from typing import Any

from ..redteam.cheat import Cheat
from ..redteam.run import NULL_MAX, CheatOutcome, outcome, tally
from ..tasks import Task


async def run_cheat(runner: Any, task: Task, cheat: Cheat, *, control: bool = False,
                    threshold: float = NULL_MAX) -> CheatOutcome:
    """One attempt of ``cheat`` on ``task`` (or, with ``control``, on its positive control) with a
    ``TrialRunner``; tallied under the task's domain."""
    target = cheat.control(task) if control else task
    if target is None:
        raise ValueError(f"cheat {cheat.name} has no positive control")
    got = outcome(cheat.name, await runner.run(target, cheat), threshold=threshold, control=control)
    tally(task.provenance.domain, got)
    return got


async def check_cheat(runner: Any, task: Task, cheat: Cheat, *, threshold: float = NULL_MAX,
                      require_control: bool = True) -> tuple[CheatOutcome, CheatOutcome | None]:
    """Assert that ``cheat`` is held on ``task`` and fools its positive control. Returns both
    outcomes (the control's is None for a cheat without one, allowed only when not
    ``require_control``)."""
    real = await run_cheat(runner, task, cheat, threshold=threshold)
    assert real.status == "held", f"cheat {cheat.name} beat {task.name}: reward {real.reward:g} ({real.error or real.status})"
    if cheat.control(task) is None:
        assert not require_control, f"cheat {cheat.name} has no positive control on {task.name}"
        return real, None
    ctrl = await run_cheat(runner, task, cheat, control=True, threshold=threshold)
    assert ctrl.status == "beaten", (f"cheat {cheat.name} did not fool its positive control on {task.name}: "
                                     f"reward {ctrl.reward:g} ({ctrl.error or ctrl.status}): it does not do what it claims")
    return real, ctrl


def judge_unvouched(gate: Any, task: Task, backend: Any = None, *, host: Any = None) -> Any:
    """``gate`` (a Gate) alone on ``task``, judging it as a task no domain vouches for
    (``GateSettings(redteam_vouched=False)``): its GateResult. ``backend``: a sandbox backend
    (default: a bwrap one, closed afterwards). What a domain's tests run on every family before its
    gates skip the tasks those families generate."""
    import asyncio

    from ..gates.base import GateContext, GateSettings
    from ..plugins import create_host
    from ..runtime.trial import TrialRunner
    from ..sandbox.bwrap import BwrapBackend

    host = host or create_host()

    async def go() -> Any:
        sandboxes = backend or BwrapBackend()
        ctx = GateContext(backend=sandboxes, runner=TrialRunner(sandboxes, host=host),
                          settings=GateSettings(redteam_vouched=False), host=host)
        try:
            return await gate.check(task, ctx)
        finally:
            if backend is None:
                await sandboxes.aclose()

    return asyncio.run(go())


def assert_red_team_holds(task: Task, backend: Any, *, host: Any = None) -> dict[str, float]:
    """Run the red-team gate on ``task`` as it judges a task no domain vouches for, and assert that it
    passes: every gate cheat that applies (at least one) ran and scored below the null threshold.
    Returns each cheat's reward. A domain lists a family in ``redteam_tested_families`` only when its
    tests call this on the family's tasks."""
    from ..gates.redteam import RedTeamGate
    from ..plugins import create_host
    from ..redteam.run import cheats_for

    host = host or create_host()
    result = judge_unvouched(RedTeamGate(), task, backend, host=host)
    assert result.status == "pass", f"the red team beat {task.name}: {result.reason}"
    rewards: dict[str, float] = next((e.values["rewards"] for e in result.evidence if e.command == "red team"), {})
    expected = sorted(c.name for c in cheats_for(task, host, gate_only=True))
    assert expected, f"no gate cheat applies to {task.name}: vouching for it would rest on nothing"
    assert sorted(rewards) == expected, f"the gate ran {sorted(rewards)}, not every gate cheat {expected}"
    return dict(rewards)


def red_team_cases(families: list[str], levels: tuple[int, ...]) -> list[Any]:
    """pytest parameters (family, level) for a domain's ``assert_red_team_holds`` test: the first
    family at the first level in the fast set, every other pair marked slow."""
    import pytest

    pairs = [(f, lv) for f in families for lv in levels]
    return [pairs[0], *(pytest.param(f, lv, marks=pytest.mark.slow) for f, lv in pairs[1:])]


def assert_vouched_only_as_generated(domain: Any, family: str, *, seed: int = 4, level: int = 2,
                                     **options: Any) -> None:
    """``domain`` vouches for (``redteam_tested``) a ``family`` task exactly as ``generate_level``
    makes it, also renamed and stamped as the flywheel does, and not for the same task with a forged
    seed, a verifier that pays anything, or a changed setting in task.toml."""
    task = domain.generate_level(family, seed=seed, level=level, **options)
    assert domain.redteam_tested(task), f"{domain.name} does not vouch for {task.name} as generated"
    stamped = task.renamed(f"{task.name}-r1-s0").with_provenance(round=1, proposer="procedural")
    assert domain.redteam_tested(stamped), "a renamed, stamped task was not vouched for"
    assert not domain.redteam_tested(task.with_provenance(seed=seed + 1)), "a forged seed was vouched for"
    paying = task.with_files({"tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"})
    assert not domain.redteam_tested(paying), "an edited verifier was vouched for"
    env = task.config.verifier.model_copy(update={"env": {**task.config.verifier.env, "PATH": "/app:/usr/bin:/bin"}})
    assert not domain.redteam_tested(task.with_config(task.config.model_copy(update={"verifier": env}))), \
        "a changed verifier setting was vouched for"
