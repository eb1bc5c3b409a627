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
