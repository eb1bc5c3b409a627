"""``ProfessionalDomain``: office work in document workspaces."""

from __future__ import annotations

import random
from typing import Any

from autoenvscaling.api import KitExample, LevelledDomain, Task

from .families import CATALOG, load
from .families.base import MAX_LEVEL, MIN_LEVEL


class ProfessionalDomain(LevelledDomain):
    """Spreadsheets, Word documents, PDFs, CSV and calendar files generated per task with business
    content; the agent works at a terminal with the document libraries, the verifier inspects the
    files it leaves. Eight procedural families, no LLM."""

    name = "professional"
    description = "office work on generated documents: xlsx, docx, PDF, CSV, ics (reconcile, formulas, extract, memo, mail merge, schedule, clean, format)"
    sandbox_backend = "bwrap"
    catalog = CATALOG
    min_level, max_level = MIN_LEVEL, MAX_LEVEL
    kit_examples = (KitExample("summary_formulas", 4, "medium"), KitExample("memo_docx", 2, "easy"))

    def generate_level(self, family: str, *, seed: int, level: int, **options: Any) -> Task:
        """A task of ``family`` at ``level`` (easy 1, medium 2, hard 3; 0 to 5 reachable by variation).
        There are no options."""
        from .render import render

        self.check_request(family, level, options)
        module = load(family)
        rng = random.Random(f"autoenvscaling-professional/{family}/{seed}/{level}")
        return render(family, module.build(rng, level), seed=seed, level=level)
