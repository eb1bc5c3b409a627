"""What a family's builder returns: a ``Draft`` the renderer turns into a Harbor task."""

from __future__ import annotations

import dataclasses
from typing import Any

from autoenvscaling.api import FamilyInfo

MIN_LEVEL, MAX_LEVEL = 0, 5


@dataclasses.dataclass
class Draft:
    """One task before rendering.

    ``app``: the web app (image/apps/<app>.py); ``rows``: its seed data ({table: [row dicts]});
    ``instruction``: what a person would ask, naming every verified value; ``expect``: the hidden
    requirements (verifier/verify.py documents the kinds); ``free_tables``: tables that change as a
    side effect; ``params``: what solution/solve.py needs (only what the instruction states, plus
    where to click); ``kind``/``tags``/``parameters``: provenance."""

    app: str
    rows: dict[str, list[dict]]
    instruction: str
    expect: list[dict]
    params: dict[str, Any]
    kind: str
    free_tables: list[str] = dataclasses.field(default_factory=list)
    tags: list[str] = dataclasses.field(default_factory=list)
    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)
    agent_timeout_sec: float = 900.0


@dataclasses.dataclass(frozen=True)
class AppFamilyInfo(FamilyInfo):
    """A family of the catalog and the web app (image/apps/<app>.py) its tasks run."""

    app: str
