"""Assignments: what the solver's rollouts on a parent task tell the proposer to build next.

The rollouts are summarised into a pass rate and the most common failure (the verifier's failing
test names, else the last failing command's error line, else the way the attempt ended). The
direction follows from the pass rate and the calibration band: below it the solver keeps failing,
so ask for something simpler; above it the solver always succeeds, so ask for something harder
(a longer horizon or one more skill); inside it, ask for something different. The text an LLM
proposer reads is rendered from a package-data template; procedural proposers use the direction.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from pydantic import BaseModel, ConfigDict

from ..agents.solver import prompt_text
from ..domains.base import Domain
from ..runtime.trial import TrialResult
from ..tasks import Task

PROMPTS = "autoenvscaling.proposers"
# pytest's summary lines ("FAILED tests/test_x.py::test_name - AssertionError: ...") and its
# verbose lines ("tests/test_x.py::test_name FAILED").
_PYTEST_FAILED = re.compile(r"^FAILED\s+(\S+?)(?:\s+-\s|\s*$)|^(\S+::\S+)\s+FAILED\b", re.M)
_STOP_REASONS = {
    "max_turns": "the solver ran out of turns",
    "max_tokens": "the solver ran out of tokens",
    "timeout": "the solver ran out of time",
    "error": "the solver's replies were malformed",
    "refused": "the solver's model refused",
}


class RolloutSummary(BaseModel):
    """What a group of rollouts says about a task. ``n`` counts only rollouts that produced a
    reward; infrastructure failures say nothing about the task and are left out."""

    model_config = ConfigDict(frozen=True)

    n: int
    pass_rate: float | None
    failure: str | None
    rewards: list[float]


class Assignment(BaseModel):
    """One request to a proposer. ``direction``: "simpler", "harder", "different", or "new" (no
    parent: a task from ``family``). ``text`` is what an LLM proposer is told."""

    model_config = ConfigDict(frozen=True)

    domain: str
    direction: str
    seed: int
    text: str
    parent: str | None = None
    parent_task: Task | None = None
    family: str | None = None
    difficulty: str = "medium"
    pass_rate: float | None = None
    failure: str | None = None


def failure_of(result: TrialResult) -> str | None:
    """The most telling reason one rollout fell short, or None when it scored 1."""
    if result.status == "ok" and result.reward >= 1.0:
        return None
    tails = [s.verifier.output_tail for s in result.steps]
    names = [m.group(1) or m.group(2) for tail in tails for m in _PYTEST_FAILED.finditer(tail)]
    if names:
        tests = sorted({n.rsplit("::", 1)[-1] for n in names})
        return "failing tests: " + ", ".join(tests[:5]) + (" ..." if len(tests) > 5 else "")
    trajectory = result.trajectory
    if trajectory is not None:
        for action in reversed(trajectory.actions):
            if action.command and (action.timed_out or action.exit_code not in (0, None)):
                return f"`{_first_line(action.command, 60)}` failed: {_last_error_line(action.output)}"
        if trajectory.stop_reason in _STOP_REASONS:
            return _STOP_REASONS[trajectory.stop_reason]
    errors = [s.verifier.error for s in result.steps if s.verifier.error]
    if errors:
        return f"verifier: {errors[0]}"
    return f"the verifier gave {result.reward:.2f}"


def summarise(results: Sequence[TrialResult]) -> RolloutSummary:
    scored = [r for r in results if r.status != "error"]
    return summary_of([r.reward for r in scored], [failure_of(r) for r in scored])


def summary_of(rewards: Sequence[float | None], failures: Sequence[str | None]) -> RolloutSummary:
    """A summary from recorded rollouts: a None reward marks an infrastructure failure (left out)."""
    kept = [r for r in rewards if r is not None]
    counted = Counter(f for f in failures if f)
    # most_common keeps first-seen order among ties, so the summary is deterministic.
    return RolloutSummary(n=len(kept), pass_rate=sum(kept) / len(kept) if kept else None,
                          failure=counted.most_common(1)[0][0] if counted else None, rewards=kept)


def direction_for(pass_rate: float, band: tuple[float, float]) -> str:
    low, high = band
    if pass_rate < low:
        return "simpler"
    if pass_rate > high:
        return "harder"
    return "different"


def from_rollouts(parent: Task, results: Sequence[TrialResult], *, domain: str, seed: int,
                  band: tuple[float, float] = (0.25, 0.75)) -> Assignment:
    """The assignment the rollouts on ``parent`` call for."""
    return from_summary(parent, summarise(results), domain=domain, seed=seed, band=band)


def from_summary(parent: Task, summary: RolloutSummary, *, domain: str, seed: int,
                 band: tuple[float, float] = (0.25, 0.75)) -> Assignment:
    """The assignment for ``parent`` given what its rollouts said (e.g. as stored in a run database)."""
    pass_rate = summary.pass_rate if summary.pass_rate is not None else 0.0
    direction = direction_for(pass_rate, band)
    text = prompt_text(PROMPTS, f"assignment_{direction}.md", domain=domain, parent=parent.name,
                       rollouts=summary.n, pass_rate=f"{pass_rate:.2f}",
                       failure=summary.failure or "none recorded",
                       parent_instruction=_quote(parent.instruction or ""))
    prov = parent.provenance
    return Assignment(domain=domain, direction=direction, seed=seed, text=text, parent=parent.name,
                      parent_task=parent, family=prov.family, difficulty=prov.difficulty or "medium",
                      pass_rate=pass_rate, failure=summary.failure)


def new_task(domain: Domain, family: str, *, seed: int, difficulty: str = "medium") -> Assignment:
    """An assignment without a parent: a fresh task of ``family``."""
    fam = next((f for f in domain.families() if f.name == family), None)
    text = prompt_text(PROMPTS, "assignment_new.md", domain=domain.name, family=family,
                       family_description=fam.description if fam else "any", difficulty=difficulty,
                       skills=", ".join(fam.skills) if fam and fam.skills else "any")
    return Assignment(domain=domain.name, direction="new", seed=seed, text=text, family=family,
                      difficulty=difficulty)


def _first_line(text: str, limit: int) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _last_error_line(output: str) -> str:
    """The last line that looks like an error, else the last non-empty line of the output."""
    lines = [line.strip() for line in output.splitlines()
             if line.strip() and not re.match(r"\[(exit code|timed out)", line)]  # our status line
    for line in reversed(lines):
        if re.search(r"error|not found|no such|denied|invalid|fail|traceback|exception", line, re.I):
            return line[:200]
    return lines[-1][:200] if lines else "no output"


def _quote(text: str) -> str:
    return "\n".join("> " + line for line in text.strip().splitlines()) or "> (empty)"
