"""``SweDomain``: bug-fix tasks in the seed repositories (one family per repository).

A task of family ``datespan`` at difficulty easy/medium/hard is a bug made of 1/2/3 AST mutations in
as many functions, admitted only when the suite says it is a real, non-trivial bug (suite.classify).
Generation runs the suite in sandboxes, so the async form (``agenerate_level``) is the real one; the
plain methods run it on a private event loop (in a worker thread when the caller already has a loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, Coroutine, TypeVar

from autoenvscaling.api import Family, KitExample, LevelledDomain, Task, UsageError, generated_here, remember_generated

from .render import DOMAIN

T = TypeVar("T")
SCREEN_BACKEND = "bwrap"  # where candidate bugs are screened (the suite runs there, offline)
#: the strategies whose tasks the domain vouches for (redteam_tested); an LLM's bug is judged
VOUCHED_STRATEGIES = ("mutation", "history")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, inside or outside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class SweDomain(LevelledDomain):
    """Bug fixing in real Python repositories: a repository with an injected bug, an issue describing
    the failing behaviour, hidden tests that decide (FAIL_TO_PASS and PASS_TO_PASS).

    Simpler/harder: the same repository with one mutation fewer/more (simpler than one mutation:
    level 0, a single-token bug with a visible failing test); different: the next seed repository at
    the same level."""

    name = DOMAIN
    description = "bug-fix tasks in Python repositories (SWE-bench style): injected bugs, issue text, hidden tests"
    min_level = 0  # simpler than easy (level 1), reached by vary; easy, medium, hard are levels 1 to 3
    # The worked examples: one bug from the seed repository's own history, one injected.
    kit_examples = (KitExample("tablefmt", 0, "easy", {"strategy": "history"}),
                    KitExample("unitconv", 3, "easy", {"strategy": "mutation"}))

    def families(self) -> list[Family]:
        """One family per seed repository (the seeds shipped as package data, not a catalog)."""
        from .repos import seed_names

        return [Family(name=name, description=f"bugs injected into the seed repository {name}",
                       skills=["debugging", "python", "reading code", "running tests"]) for name in seed_names()]

    def neighbour(self, family: str) -> str:
        """The next seed repository (the first after the last)."""
        families = [f.name for f in self.families()]
        return families[(families.index(family) + 1) % len(families)]

    def vary_origin(self, parent: Task) -> tuple[str, int]:
        """Any parent varies: one of another family starts from the first seed repository, one without
        a recorded level from its difficulty's level (easy when it has none)."""
        prov = parent.provenance
        families = [f.name for f in self.families()]
        family = prov.family if prov.family in families else families[0]
        return family, int(prov.parameters.get("level", self.levels.get(prov.difficulty or "", 1)))

    def generate_level(self, family: str, *, seed: int, level: int, strategy: str = "mutation",
                       **options: Any) -> Task:
        return run_sync(self.agenerate_level(family, seed=seed, level=level, strategy=strategy, **options))

    async def agenerate_level(self, family: str, *, seed: int, level: int, strategy: str = "mutation",
                              **options: Any) -> Task:
        """A bug of ``level`` mutations (0: one single-token mutation) in the seed repository ``family``,
        made with ``strategy`` (mutation, llm, history) and admitted by screening. There are no other
        options."""
        from autoenvscaling.api import make_backend

        from .generate import SweGenerator
        from .render import render
        from .repos import open_repository, seed_names
        from .suite import SuiteRun

        if family not in seed_names():
            raise UsageError(f"unknown swe family {family!r}", hint=f"families: {', '.join(seed_names())}")
        if options:
            raise UsageError(f"unknown swe generation options: {', '.join(sorted(options))}", hint="the option is strategy")
        self.check_level(level)  # before the clean suite runs
        repository = open_repository(family)
        backend = make_backend(SCREEN_BACKEND)
        try:
            snapshot = repository.snapshot()
            # The clean suite's runs are the same for every task of a snapshot: made once per domain.
            clean: dict[str, list[SuiteRun]] = self.__dict__.setdefault("_clean_runs", {})
            async with SweGenerator(backend, repository, snapshot, family=family,
                                    clean=list(clean.get(snapshot.digest, []))) as generator:
                clean[snapshot.digest] = generator.clean
                instance = await generator.instance(seed=seed, level=level, strategy=strategy)
                if instance is None:
                    reasons = sorted({a.reason for a in generator.attempts})
                    raise UsageError(f"no usable bug in {family} after {len(generator.attempts)} candidates "
                                     f"({'; '.join(reasons[:3])})", hint="try another seed")
        finally:
            await backend.aclose()
        task = render(instance)
        return remember_generated(self.name, task) if strategy in VOUCHED_STRATEGIES else task

    def redteam_tested(self, task: Task) -> bool:
        """A task this process generated from a seed repository by mutation or from its history,
        content byte for byte: tests/test_cheats.py runs the red-team gate, unvouched, on each seed
        repository. Regenerating would screen the bug again in sandboxes (more than the gate costs),
        so the domain remembers what it made instead (``generated_here``): a task read from disk,
        sent by a proposer, edited, or made by another process is judged."""
        from .repos import seed_names

        prov = task.provenance
        strategy = prov.parameters.get("strategy")
        kind = strategy.get("kind") if isinstance(strategy, dict) else None
        return (prov.domain == self.name and prov.family in seed_names() and kind in VOUCHED_STRATEGIES
                and generated_here(self.name, task))
