"""Scoring cheats against tasks: which cheats apply, and the task x cheat table of rewards.

A cheat "holds" (the task resists it) when it scores below the null threshold; the worst cheat of a
task is the one that scored highest. Attempts that did not complete (a sandbox error, a timeout) are
neither held nor beaten: they are reported with their error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError
from ..tasks import Task
from .cheat import Cheat

if TYPE_CHECKING:
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialResult

NULL_MAX = 0.5  # the null gate's threshold: a cheat at or above it beats the task
# A file (JSON lines) where every scored cheat attempt is tallied, when set: the test session sets it
# and prints the counts per domain (cheats run, held, controls fooled) at its end.
TALLY_ENV = "AUTOENVSCALING_REDTEAM_TALLY"


class CheatOutcome(BaseModel):
    """One cheat's attempt at one task. ``status``: "held" (reward below the threshold), "beaten",
    or "error" (the attempt did not complete; ``error`` says why)."""

    model_config = ConfigDict(frozen=True)

    cheat: str
    reward: float = 0.0
    status: Literal["held", "beaten", "error"] = "held"
    seconds: float = 0.0
    error: str | None = None
    control: bool = False  # the attempt ran on the cheat's positive control, not the task


class RedTeamRow(BaseModel):
    """Every cheat's outcome on one task."""

    model_config = ConfigDict(frozen=True)

    task: str
    path: str = ""
    outcomes: list[CheatOutcome] = Field(default_factory=list)
    error: str | None = None  # the task itself could not be read or run

    @property
    def scored(self) -> list[CheatOutcome]:
        return [o for o in self.outcomes if not o.control and o.status != "error"]

    @property
    def worst(self) -> CheatOutcome | None:
        """The cheat that scored highest on the task itself (ties: the first)."""
        scored = self.scored
        return max(scored, key=lambda o: o.reward) if scored else None

    def to_json(self) -> dict[str, Any]:
        worst = self.worst
        return {"task": self.task, "path": self.path, "error": self.error,
                "worst_cheat": worst.cheat if worst else None, "worst_reward": worst.reward if worst else None,
                "beaten_by": [o.cheat for o in self.scored if o.status == "beaten"],
                "outcomes": [o.model_dump(mode="json") for o in self.outcomes]}


def outcome(cheat: str, result: "TrialResult", *, threshold: float = NULL_MAX, control: bool = False) -> CheatOutcome:
    if result.status != "ok":
        return CheatOutcome(cheat=cheat, status="error", error=result.error or result.status,
                            seconds=result.seconds, control=control)
    reward = result.reward
    return CheatOutcome(cheat=cheat, reward=reward, status="beaten" if reward >= threshold else "held",
                        seconds=result.seconds, control=control)


def cheats_for(task: Task, host: "PluginHost", *, names: Iterable[str] | None = None,
               gate_only: bool = False) -> list[Cheat]:
    """The registered cheats that apply to ``task``: those named (every one when ``names`` is None),
    only the gate's cheap ones when ``gate_only``. An unknown name is a usage error."""
    registry = host.cheats
    wanted = list(names) if names else registry.names()
    unknown = [n for n in wanted if n not in registry]
    if unknown:
        raise UsageError(f"unknown cheat {unknown[0]!r}", hint="`autoenvscaling tasks redteam --list` names them")
    cheats = []
    for name in wanted:
        cheat = registry.get(name)()
        if gate_only and not cheat.gate:
            continue
        if cheat.applies(task):
            cheats.append(cheat)
    return cheats


def summary_counts(rows: list[RedTeamRow]) -> dict[str, int]:
    """Totals over a table: attempts run, held, beaten, errors (controls apart)."""
    outcomes = [o for r in rows for o in r.outcomes if not o.control]
    return {"tasks": len(rows), "attempts": len(outcomes), "held": sum(o.status == "held" for o in outcomes),
            "beaten": sum(o.status == "beaten" for o in outcomes), "errors": sum(o.status == "error" for o in outcomes)}


def tally(domain: str | None, got: CheatOutcome) -> None:
    """Append one outcome to the tally file named by AUTOENVSCALING_REDTEAM_TALLY, if any."""
    import json
    import os

    path = os.environ.get(TALLY_ENV)
    if not path:
        return
    line = json.dumps({"domain": domain or "-", "cheat": got.cheat, "status": got.status, "reward": got.reward,
                       "control": got.control})
    try:
        with open(path, "a", encoding="utf-8") as fh:  # one short write: lines of parallel writers stay whole
            fh.write(line + "\n")
    except OSError:
        pass


def read_tally(path: str) -> list[str]:
    """The tally as lines of text, one per domain: attempts, held, beaten, controls fooled."""
    import json
    from collections import defaultdict

    counts: dict[str, dict[str, Any]] = defaultdict(lambda: {"cheats": set(), "attempts": 0, "held": 0,
                                                            "beaten": 0, "errors": 0, "controls": 0, "fooled": 0})
    try:
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError):
        return []
    for row in rows:
        c = counts[row["domain"]]
        if row["control"]:
            c["controls"] += 1
            c["fooled"] += row["status"] == "beaten"
            continue
        c["cheats"].add(row["cheat"])
        c["attempts"] += 1
        c[{"held": "held", "beaten": "beaten"}.get(row["status"], "errors")] += 1
    return [f"{domain}: {len(c['cheats'])} cheats, {c['attempts']} attempts, {c['held']} held, {c['beaten']} beaten, "
            f"{c['errors']} errors; positive controls {c['fooled']}/{c['controls']} fooled"
            for domain, c in sorted(counts.items())]
