"""``ProfessionalDomain``: office work in document workspaces."""

from __future__ import annotations

import random

from autoenvscaling.domains.base import DIFFICULTIES, DIRECTIONS, Domain, Family, ProposerKit
from autoenvscaling.errors import UsageError
from autoenvscaling.tasks import Task

from .families import CATALOG, load
from .families.base import LEVELS, MAX_LEVEL, MIN_LEVEL


class ProfessionalDomain(Domain):
    """Spreadsheets, Word documents, PDFs, CSV and calendar files generated per task with business
    content; the agent works at a terminal with the document libraries, the verifier inspects the
    files it leaves. Eight procedural families, no LLM."""

    name = "professional"
    description = "office work on generated documents: xlsx, docx, PDF, CSV, ics (reconcile, formulas, extract, memo, mail merge, schedule, clean, format)"
    sandbox_backend = "bwrap"

    def families(self) -> list[Family]:
        return [Family(name=f.name, description=f.description, skills=list(f.skills)) for f in CATALOG.values()]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        """A task of ``family``; the same (family, seed, difficulty) always gives the same task."""
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
            raise UsageError(f"unknown professional family {family!r}", hint=f"families: {', '.join(CATALOG)}") from None
        rng = random.Random(f"autoenvscaling-professional/{family}/{seed}/{level}")
        return render(family, module.build(rng, level), seed=seed, level=level)

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        """A child one level simpler or harder in the same family (fewer or more rows, documents and
        traps), or a task of the neighbouring family at the same level ("different")."""
        if direction not in DIRECTIONS:
            raise UsageError(f"unknown direction {direction!r}", hint=f"use one of {', '.join(DIRECTIONS)}")
        prov = parent.provenance
        params = prov.parameters
        if prov.domain != self.name or prov.family not in CATALOG or "level" not in params:
            return super().vary(parent, direction=direction, seed=seed)
        level, family = int(params["level"]), prov.family
        if direction == "different":
            family = CATALOG[family].neighbour
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
