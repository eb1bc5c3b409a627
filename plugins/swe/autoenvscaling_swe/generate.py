"""From a repository snapshot to admitted instances: inject, screen, hold tests back, write the issue.

``SweGenerator`` keeps one sandbox with the clean repository for a whole batch: the clean suite runs
``reruns`` times once, then every candidate bug runs ``reruns`` times with its files in place
(suite.classify decides). Every attempt is recorded (strategy, operators, verdict, reason) so a batch
reports its admission rate per strategy, operator and repository.
"""

from __future__ import annotations

import ast
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from autoenvscaling.api import ChatMessage, LLMBackend, LLMError, SandboxBackend, UsageError

from . import issue as issues
from .domain import SweDomain
from .inject import (STRATEGIES, Candidate, SiteIndex, function_defs, llm_candidates, mutation_candidate,
                     revert_candidate)
from .patches import unified_patch
from .render import Instance, instance_name
from .repos import Repository, Snapshot
from .suite import (DEFAULT_SUITE_TIMEOUT, MAX_BROKEN, Classification, RepoSandbox, SuiteRun, classify, clean_problem,
                    code_modules, copies_problem)

# Level 0, the simplest: one single-token mutation whose symptom points at its function, and at least
# two failing test functions, so one stays visible as a reproduction.
EASY_OPERATORS = ("comparison_flip", "off_by_one", "wrong_operator", "change_return")


@dataclass
class Attempt:
    """One candidate bug and what screening said about it."""

    repo: str
    strategy: str
    operators: list[str]
    admitted: bool
    reason: str
    seconds: float
    f2p: int = 0
    p2p: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class GenerateSettings:
    reruns: int = 2  # runs of the same code; a test whose outcome differs between them is flaky
    max_attempts: int = 40  # candidates tried for one instance before giving up
    suite_timeout: float = DEFAULT_SUITE_TIMEOUT
    max_broken: float = MAX_BROKEN
    operators: list[str] | None = None  # restrict mutation operators
    llm: LLMBackend | None = None  # for the llm strategy and LLM-written issues
    issue_llm: bool = True  # write the issue with ``llm`` when one is given


@dataclass
class SweGenerator:
    """Generates instances of one repository snapshot with one sandbox backend."""

    backend: SandboxBackend
    repository: Repository
    snapshot: Snapshot
    settings: GenerateSettings = field(default_factory=GenerateSettings)
    family: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    #: the clean suite's runs, when an earlier generator of the same snapshot made them
    clean: list[SuiteRun] = field(default_factory=list)

    async def __aenter__(self) -> "SweGenerator":
        self.box = RepoSandbox.of_snapshot(self.backend, self.snapshot, timeout=self.settings.suite_timeout)
        await self.box.__aenter__()
        try:
            # A snapshot whose clean runs an earlier generator made was already searched for copies.
            problem = "" if self.clean else copies_problem(await self.box.copies(code_modules(self.snapshot.files)))
            if problem:
                raise UsageError(f"{self.snapshot.origin}: {problem}",
                                 hint="a library the image's own packages carry cannot be the code under test")
            self.clean = self.clean or [await self.box.run() for _ in range(self.settings.reruns)]
            problem = clean_problem(self.clean)
            if not problem and self.suite_seconds > self.settings.suite_timeout / 4:
                problem = (f"the clean suite takes {self.suite_seconds:.0f}s; at most a quarter of the "
                           f"{self.settings.suite_timeout:g}s bound is allowed")
            if problem:
                raise UsageError(f"{self.snapshot.origin}: {problem}",
                                 hint="the suite must pass with `python3 -m pytest` in the repository's root")
        except BaseException:
            await self.box.__aexit__(None, None, None)
            raise
        self.index = SiteIndex(self.snapshot)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.box.__aexit__(*exc)

    @property
    def suite_seconds(self) -> float:
        return max(run.seconds for run in self.clean)

    @property
    def bug_timeout(self) -> float:
        """How long a run with a candidate bug may take: ten times the clean suite, at least 20 s (a
        mutation can turn a loop endless; waiting the whole suite bound for each would stall a batch)."""
        return min(self.settings.suite_timeout, max(20.0, 10 * self.suite_seconds))

    async def instance(self, *, seed: int, level: int = 1, strategy: str = "mutation") -> Instance | None:
        """The first candidate (in the seed's order) that screening admits, as an instance; None when
        ``max_attempts`` candidates were all rejected (each rejection is in ``attempts``)."""
        if strategy not in STRATEGIES:
            raise UsageError(f"unknown injection strategy {strategy!r}", hint=f"use one of {', '.join(STRATEGIES)}")
        SweDomain().check_level(level)
        rng = random.Random(f"autoenvscaling-swe/{self.snapshot.name}/{self.snapshot.commit}/{seed}/{level}/{strategy}")
        async for candidate in self._candidates(strategy, rng, level):
            if not candidate.changed:
                self._record(candidate, False, candidate.strategy.get("error", "no change"), 0.0)
                continue
            start = time.monotonic()
            buggy = [await self.box.run(candidate.changed, timeout=self.bug_timeout)]
            if not buggy[0].timed_out:  # an endless loop is rejected without waiting for it twice
                buggy += [await self.box.run(candidate.changed, timeout=self.bug_timeout)
                          for _ in range(self.settings.reruns - 1)]
            verdict = classify(self.clean, buggy, max_broken=self.settings.max_broken)
            if verdict.admitted and level == 0 and len({_function_of(t) for t in verdict.fail_to_pass}) < 2:
                verdict = Classification(verdict.fail_to_pass, verdict.pass_to_pass, verdict.flaky,
                                         "level 0 needs two failing test functions (one stays visible)")
            self._record(candidate, verdict.admitted, verdict.reason, time.monotonic() - start, verdict)
            if verdict.admitted:
                return await self._instance(candidate, verdict, buggy[0], seed=seed, level=level, rng=rng)
        return None

    def _record(self, candidate: Candidate, admitted: bool, reason: str, seconds: float,
                verdict: Classification | None = None) -> None:
        self.attempts.append(Attempt(repo=self.snapshot.name, strategy=candidate.strategy.get("kind", "?"),
                                     operators=candidate.operators, admitted=admitted, reason=reason or "admitted",
                                     seconds=round(seconds, 3), f2p=len(verdict.fail_to_pass) if verdict else 0,
                                     p2p=len(verdict.pass_to_pass) if verdict else 0))

    async def _candidates(self, strategy: str, rng: random.Random, level: int):
        limit = self.settings.max_attempts
        if strategy == "mutation":
            operators = self.settings.operators
            if level == 0:
                operators = [op for op in (operators or EASY_OPERATORS) if op in EASY_OPERATORS]
            for _ in range(limit):
                candidate = mutation_candidate(self.index, rng, max(1, level), operators)
                if candidate is None:
                    raise UsageError(f"{self.snapshot.origin} has too few mutation sites for {level} mutations",
                                     hint="lower the level")
                yield candidate
        elif strategy == "llm":
            if self.settings.llm is None:
                raise UsageError("the llm strategy needs a model", hint="pass --model (and --base-url) or use --strategy mutation")
            async for candidate in llm_candidates(self.snapshot, self.settings.llm, rng, limit=limit):
                yield candidate
        else:
            fixes = [] if self.snapshot.commit.startswith("sha256:") else self.repository.fix_commits(self.snapshot.commit)
            if not fixes:
                raise UsageError(f"{self.snapshot.origin} has no commit that fixed its code in its history",
                                 hint="history needs a git repository whose log has fix commits; use --strategy mutation")
            rng.shuffle(fixes)
            for fix in fixes[:limit]:
                candidate = revert_candidate(self.snapshot, fix)
                yield candidate or Candidate({}, {"kind": "history", "commit": fix.sha,
                                                  "error": "the fix no longer reverts cleanly"})

    async def _instance(self, candidate: Candidate, verdict: Classification, buggy: SuiteRun, *, seed: int,
                        level: int, rng: random.Random) -> Instance:
        snap = self.snapshot
        held = held_back(verdict.fail_to_pass, rng)
        original_tests = {p: d for p, d in snap.files.items() if p in {t.split("::")[0] for t in held}}
        visible_tests = {p: remove_tests(d.decode(), [t for t in held if t.startswith(p + "::")]).encode()
                         for p, d in original_tests.items()}
        visible = {**snap.with_files(candidate.changed), **visible_tests}
        fix = unified_patch(candidate.changed, {p: snap.files.get(p) for p in candidate.changed})
        name = instance_name(snap.name, candidate.strategy["kind"], level, seed)
        visible_f2p = set(verdict.fail_to_pass) - set(held)
        fact = issues.facts(verdict.fail_to_pass, visible_f2p, buggy.details, snap.bundle, snap.python_sources)
        text = await self._issue(fact, fix, seed=seed)
        return Instance(
            name=name, repo=snap.name, origin=snap.origin, base_commit=snap.commit, visible=visible,
            bundle=snap.bundle, patch=fix, test_patch=unified_patch(visible_tests, original_tests),
            bug_patch=unified_patch({p: snap.files.get(p) for p in {*visible, *candidate.changed}},
                                    {p: visible.get(p) for p in {*visible, *candidate.changed}}),
            fail_to_pass=verdict.fail_to_pass, pass_to_pass=verdict.pass_to_pass, held_back=sorted(held),
            issue=text, level=level, strategy={**candidate.strategy, "flaky_excluded": verdict.flaky},
            suite_timeout=self.settings.suite_timeout, seed=seed, family=self.family or snap.name)

    async def _issue(self, fact: issues.Facts, fix: str, *, seed: int) -> str:
        text = issues.procedural(fact, repo=self.snapshot.name, seed=seed)
        llm = self.settings.llm
        if llm is None or not self.settings.issue_llm:
            return text
        prompt = issues.llm_prompt(fact, repo=self.snapshot.name)
        try:
            reply = await llm.chat([ChatMessage.user(prompt)], temperature=0.3, max_tokens=600)
        except LLMError:
            return text
        written = (reply.message.content or "").strip()
        leak = issues.leaks(written, bundle=self.snapshot.bundle, changed_lines=issues.changed_lines(fix), patch=fix)
        return written + "\n" if written and not leak else text


def held_back(fail_to_pass: list[str], rng: random.Random) -> list[str]:
    """The FAIL_TO_PASS tests removed from the agent's copy: about half of the failing test functions
    (at least one; all when only one function fails), so that an agent special-casing the visible
    failures still fails the held-back ones."""
    functions = sorted({_function_of(t) for t in fail_to_pass})
    count = len(functions) if len(functions) == 1 else max(1, min(len(functions) - 1, math.ceil(len(functions) / 2)))
    chosen = set(rng.sample(functions, count))
    return sorted(t for t in fail_to_pass if _function_of(t) in chosen)


def _function_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def test_functions(source: str) -> dict[tuple[str, ...], ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of a test module by its path inside it: ("test_x",) or ("TestCls", "test_m").
    A method name may repeat across classes, so only the path identifies a test."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {tuple(qual.split(".")): node for node, qual in function_defs(tree)}


def test_path(nodeid: str) -> tuple[str, tuple[str, ...]]:
    """(file, path inside it) of a pytest node id, parameters dropped."""
    file, _, rest = _function_of(nodeid).partition("::")
    return file, tuple(rest.split("::"))


def remove_tests(source: str, nodeids: list[str]) -> str:
    """``source`` without the test functions (or methods) ``nodeids`` name, decorators included; a
    block left empty gets ``pass``."""
    targets = {test_path(t)[1] for t in nodeids}
    lines = source.splitlines(keepends=True)
    spans: list[tuple[int, int, str]] = []
    for path, node in test_functions(source).items():
        if path in targets:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            first = lines[start - 1]
            spans.append((start, node.end_lineno or node.lineno, first[:len(first) - len(first.lstrip())]))
    out = list(lines)
    for start, end, _indent in sorted(spans, reverse=True):
        out[start - 1:end] = []
    text = "".join(out)
    try:
        ast.parse(text)
    except SyntaxError:  # a class whose every method was removed: keep it, with ``pass``
        out = list(lines)
        for start, end, indent in sorted(spans, reverse=True):
            out[start - 1:end] = [indent + "pass\n"]
        text = "".join(out)
    return text
