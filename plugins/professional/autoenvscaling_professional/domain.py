"""``ProfessionalDomain``: office work in document workspaces."""

from __future__ import annotations

import random

from autoenvscaling.api import KitExample, LevelledDomain, Task

from .families import CATALOG, load
from .families.base import MAX_LEVEL, MIN_LEVEL


class ProfessionalDomain(LevelledDomain):
    """Spreadsheets, Word documents, PDFs, CSV and calendar files generated per task with business
    content; the agent works at a terminal with the document libraries, the verifier inspects the
    files it leaves. Eight procedural families, no LLM."""

    name = "professional"
    description = "office work on generated documents: xlsx, docx, PDF, CSV, ics (reconcile, formulas, extract, memo, mail merge, schedule, clean, format)"
    catalog = CATALOG
    # every family: tests/test_redteam.py runs the red-team gate's every cheat on each one's tasks, unvouched
    redteam_tested_families = frozenset(CATALOG)
    min_level, max_level = MIN_LEVEL, MAX_LEVEL
    kit_examples = (KitExample("summary_formulas", 4, "medium"), KitExample("memo_docx", 2, "easy"))

    def build_task(self, family: str, rng: random.Random, *, seed: int, level: int) -> Task:
        """A task of ``family`` at ``level`` (easy 1, medium 2, hard 3; 0 to 5 reachable by variation).
        ``generate_level`` takes no options."""
        from .render import render

        return render(family, load(family).build(rng, level), seed=seed, level=level)
