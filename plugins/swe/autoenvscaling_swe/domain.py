"""``SweDomain``: bug-fix tasks in the seed repositories (one family per repository).

A task of family ``datespan`` at difficulty easy/medium/hard is a bug made of 1/2/3 AST mutations in
as many functions, admitted only when the suite says it is a real, non-trivial bug (suite.classify).
Generation runs the suite in sandboxes, so the async forms are the real ones; the plain methods run
them on a private event loop (in a worker thread when the caller already has a loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from typing import Any, Coroutine, TypeVar

from autoenvscaling.api import DIFFICULTIES, DIRECTIONS, Domain, Family, Task, UsageError

from .render import DOMAIN

T = TypeVar("T")
LEVELS = {"easy": 1, "medium": 2, "hard": 3}  # level 0 (simpler than easy) is reached by vary
SCREEN_BACKEND = "bwrap"  # where candidate bugs are screened (the suite runs there, offline)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, inside or outside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class SweDomain(Domain):
    """Bug fixing in real Python repositories: a repository with an injected bug, an issue describing
    the failing behaviour, hidden tests that decide (FAIL_TO_PASS and PASS_TO_PASS)."""

    name = DOMAIN
    description = "bug-fix tasks in Python repositories (SWE-bench style): injected bugs, issue text, hidden tests"
    sandbox_backend = "bwrap"

    def families(self) -> list[Family]:
        from .repos import seed_names

        return [Family(name=name, description=f"bugs injected into the seed repository {name}",
                       skills=["debugging", "python", "reading code", "running tests"]) for name in seed_names()]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        return run_sync(self.agenerate(family, seed=seed, difficulty=difficulty))

    def vary(self, parent: Task, *, direction: str, seed: int) -> Task:
        return run_sync(self.avary(parent, direction=direction, seed=seed))

    async def agenerate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        if difficulty not in LEVELS:
            raise UsageError(f"unknown difficulty {difficulty!r}", hint=f"use one of {', '.join(DIFFICULTIES)}")
        return await self.generate_level(family, seed=seed, level=LEVELS[difficulty])

    async def generate_level(self, family: str, *, seed: int, level: int, strategy: str = "mutation") -> Task:
        from autoenvscaling.api import make_backend

        from .generate import SweGenerator
        from .render import render
        from .repos import open_repository, seed_names

        if family not in seed_names():
            raise UsageError(f"unknown swe family {family!r}", hint=f"families: {', '.join(seed_names())}")
        repository = open_repository(family)
        backend = make_backend(SCREEN_BACKEND)
        try:
            snapshot = repository.snapshot()
            # The clean suite's runs are the same for every task of a snapshot: made once per domain.
            clean = self.__dict__.setdefault("_clean_runs", {})
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
        return render(instance)

    async def avary(self, parent: Task, *, direction: str, seed: int) -> Task:
        """Simpler/harder: the same repository with one mutation fewer/more (simpler than one mutation:
        level 0, a single-token bug with a visible failing test); different: the next seed repository
        at the same level."""
        if direction not in DIRECTIONS:
            raise UsageError(f"unknown direction {direction!r}", hint=f"use one of {', '.join(DIRECTIONS)}")
        prov = parent.provenance
        families = [f.name for f in self.families()]
        family = prov.family if prov.family in families else families[0]
        level = int(prov.parameters.get("level", LEVELS.get(prov.difficulty or "", 1)))
        if direction == "different":
            family = families[(families.index(family) + 1) % len(families)]
        else:
            level += 1 if direction == "harder" else -1
            if not 0 <= level <= 3:
                raise UsageError(f"{parent.name} is already the {'hardest' if direction == 'harder' else 'simplest'} variant",
                                 hint="vary it with direction='different'")
        child = await self.generate_level(family, seed=seed, level=level)
        return child.with_provenance(parent=parent.name, direction=direction)

    def kit_tasks(self) -> list[Task]:
        """The worked examples: one bug from the seed repository's own history, one injected."""
        return [run_sync(self.generate_level("tablefmt", seed=0, level=1, strategy="history")),
                run_sync(self.generate_level("unitconv", seed=3, level=1, strategy="mutation"))]
