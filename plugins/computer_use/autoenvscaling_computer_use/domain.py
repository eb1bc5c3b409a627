"""``ComputerUseDomain``: tasks an agent completes in a web browser, verified on the app's state."""

from __future__ import annotations

import random

from autoenvscaling.domains.base import DIFFICULTIES, DIRECTIONS, Domain, Family, ProposerKit
from autoenvscaling.errors import UsageError
from autoenvscaling.tasks import Task

from .families import CATALOG, load
from .families.base import LEVELS, MAX_LEVEL, MIN_LEVEL


class ComputerUseDomain(Domain):
    """Local web apps (CRM, shop, kanban board, room booking) with SQLite data seeded per task; the
    agent drives Debian's Chromium through the browser tool (or aes-browser at a terminal); the
    verifier reads the app's state through an interface only it holds the key to."""

    name = "computer_use"
    description = "web apps in a real browser: search and edit, forms, checkout, bulk edits, booking (Playwright + Chromium)"
    sandbox_backend = "bwrap"

    def families(self) -> list[Family]:
        return [Family(name=f.name, description=f.description, skills=list(f.skills)) for f in CATALOG.values()]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        """A task of ``family``; the same (family, seed, difficulty) gives the same task on this machine."""
        if difficulty not in LEVELS:
            raise UsageError(f"unknown difficulty {difficulty!r}", hint=f"use one of {', '.join(DIFFICULTIES)}")
        return self.generate_level(family, seed=seed, level=LEVELS[difficulty])

    def generate_level(self, family: str, *, seed: int, level: int) -> Task:
        """Like ``generate`` with a numeric level (easy 1, medium 2, hard 3; 0 to 5 reachable by variation)."""
        from .render import render

        if not MIN_LEVEL <= level <= MAX_LEVEL:
            raise UsageError(f"level {level} is out of range", hint=f"use {MIN_LEVEL}..{MAX_LEVEL}")
        try:
            module = load(family)
        except KeyError:
            raise UsageError(f"unknown computer_use family {family!r}", hint=f"families: {', '.join(CATALOG)}") from None
        rng = random.Random(f"autoenvscaling-computer-use/{family}/{seed}/{level}")
        return render(family, module.build(rng, level), seed=seed, level=level)

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        """A child one level simpler or harder in the same family, or a task of the neighbouring family
        at the same level ("different")."""
        if direction not in DIRECTIONS:
            raise UsageError(f"unknown direction {direction!r}", hint=f"use one of {', '.join(DIRECTIONS)}")
        prov = parent.provenance
        params = prov.parameters
        if prov.domain != self.name or prov.family not in CATALOG or "level" not in params:
            return super().vary(parent, direction=direction, seed=seed)
        level, family = int(params["level"]), prov.family
        if direction == "different":
            family = CATALOG[family].neighbour if CATALOG[family].neighbour in CATALOG else family
        else:
            level += 1 if direction == "harder" else -1
            if not MIN_LEVEL <= level <= MAX_LEVEL:
                raise UsageError(f"{parent.name} is already the {'hardest' if direction == 'harder' else 'simplest'} variant",
                                 hint="vary it with direction='different'")
        child = self.generate_level(family, seed=seed, level=level)
        return child.with_provenance(parent=parent.name, direction=direction)

    def kit(self) -> ProposerKit:
        from .proposer_kit import proposer_kit

        return proposer_kit()
