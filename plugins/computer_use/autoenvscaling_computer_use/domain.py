"""``ComputerUseDomain``: tasks an agent completes in a web browser, verified on the app's state."""

from __future__ import annotations

import random
from typing import Any

from autoenvscaling.api import KitExample, LevelledDomain, Task

from .families import CATALOG, load
from .families.base import MAX_LEVEL, MIN_LEVEL


class ComputerUseDomain(LevelledDomain):
    """Local web apps (CRM, shop, kanban board, room booking) with SQLite data seeded per task; the
    agent drives Debian's Chromium through the browser tool (or aes-browser at a terminal); the
    verifier reads the app's state through an interface only it holds the key to."""

    name = "computer_use"
    description = "web apps in a real browser: search and edit, forms, checkout, bulk edits, booking (Playwright + Chromium)"
    catalog = CATALOG
    # every family: tests/test_cheats.py runs the red-team gate's every cheat on each one's tasks, unvouched
    redteam_tested_families = frozenset(CATALOG)
    min_level, max_level = MIN_LEVEL, MAX_LEVEL
    kit_examples = (KitExample("crm_search_edit", 3, "easy"), KitExample("shop_checkout", 2, "medium"))

    def build_task(self, family: str, rng: random.Random, *, seed: int, level: int) -> Task:
        """A task of ``family`` at ``level`` (easy 1, medium 2, hard 3; 0 to 5 reachable by variation);
        the same (family, seed, level) gives the same task on this machine. ``generate_level``
        takes no options."""
        from .render import render

        return render(family, load(family).build(rng, level), seed=seed, level=level)

    def family_info(self, family: str) -> dict[str, Any]:
        return {"app": CATALOG[family].app, **super().family_info(family)}

    def kit_tasks(self) -> list[Task]:
        """The worked examples, their state keys derived from the published ``render.EXAMPLE_SECRET``
        so they are the same on every machine (and must never be trained on)."""
        from . import render

        token = render._SECRET_OVERRIDE.set(render.EXAMPLE_SECRET)
        try:
            return super().kit_tasks()
        finally:
            render._SECRET_OVERRIDE.reset(token)
