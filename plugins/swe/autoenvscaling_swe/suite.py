"""Running a repository's test suite inside a sandbox, and what a bug does to it.

``RepoSandbox`` prepares the repository's environment (the image a task of it would get, with the
clean code), starts one sandbox and runs the suite there as often as asked, each time with a set of
changed files in place (restored afterwards). The run goes through the same ``swe_verify.py`` the
task's verifier uses, so screening and verification agree on every outcome.

``classify`` turns the clean runs and the buggy runs into the FAIL_TO_PASS and PASS_TO_PASS lists,
or a one-line reason to reject the bug. ``RepoSandbox.copies`` looks for a second copy of the code
under test in the image (``copies_problem`` says why a repository with one is refused).
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass, field
from typing import Any

from autoenvscaling.api import PreparedEnvironment, Sandbox, SandboxBackend, SandboxError, Task

from .render import WORKDIR, environment_files, package_text, requirements
from .repos import Snapshot

TOOLS = "/opt/aes-swe"
NOT_MODULES = {"setup", "conftest", "noxfile", "fabfile", "tasks", "manage", "docs", "doc", "examples", "scripts",
               "benchmarks", "tests", "test"}
DEFAULT_SUITE_TIMEOUT = 120.0  # seconds one run of a suite may take; the clean run must stay well under
MAX_BROKEN = 0.5  # a bug failing more than this share of the tests breaks "most of the suite"


@dataclass(frozen=True)
class SuiteRun:
    """One run of the suite: every test's outcome ("passed", "failed", "error", "skipped"), failure
    details (assertion lines and frames) and what went wrong as a whole."""

    outcomes: dict[str, str]
    details: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    collection_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    timed_out: bool = False
    integrity: str = ""  # why the run's report cannot be trusted (canaries, session end, exit status)
    output_tail: str = field(default="", repr=False)

    @classmethod
    def from_report(cls, data: dict[str, Any]) -> "SuiteRun":
        tests = data.get("tests", {})
        return cls(outcomes={t: v["outcome"] for t, v in tests.items()},
                   details={t: {k: v[k] for k in ("message", "frames") if k in v} for t, v in tests.items() if "message" in v},
                   collection_errors=list(data.get("collection_errors", [])), seconds=float(data.get("seconds", 0.0)),
                   timed_out=bool(data.get("timed_out")), integrity=str(data.get("integrity", "")),
                   output_tail=str(data.get("output_tail", "")))

    @property
    def passed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o == "passed"}


@dataclass(frozen=True)
class Classification:
    """The verdict on one bug: ``reason`` is "" when it is usable."""

    fail_to_pass: list[str]
    pass_to_pass: list[str]
    flaky: list[str]
    reason: str = ""

    @property
    def admitted(self) -> bool:
        return not self.reason


def classify(clean: list[SuiteRun], buggy: list[SuiteRun], *, max_broken: float = MAX_BROKEN) -> Classification:
    """FAIL_TO_PASS: passed in every clean run and failed (or errored) in every buggy run.
    PASS_TO_PASS: passed in every run. A test whose outcome changed between reruns of the same code is
    flaky and in neither list. Rejected: no test notices the bug, the bug stops tests from being
    collected (caught at import), it breaks more than ``max_broken`` of the suite, or a run timed out."""
    problem = clean_problem(clean)
    if problem:
        return Classification([], [], [], problem)
    flaky = sorted(_unstable(clean) | _unstable(buggy))
    if any(run.timed_out for run in buggy):
        return Classification([], [], flaky, f"the suite did not finish with the bug (over {buggy[0].seconds:.0f}s: an endless loop?)")
    if any(run.collection_errors for run in buggy):
        where = sorted({e for run in buggy for e in run.collection_errors})
        return Classification([], [], flaky, f"trivially detectable: the tests cannot even be collected ({', '.join(where[:3])})")
    broken_run = next((run for run in buggy if run.integrity), None)
    if broken_run is not None:
        return Classification([], [], flaky, f"the suite does not run to its end with the bug ({broken_run.integrity})")
    stable_clean = set.intersection(*(run.passed for run in clean)) - set(flaky)
    broken = {t for t in stable_clean if all(run.outcomes.get(t) in ("failed", "error") for run in buggy)}
    still = {t for t in stable_clean if all(run.outcomes.get(t) == "passed" for run in buggy)}
    f2p, p2p = sorted(broken), sorted(still)
    if not f2p:
        return Classification([], p2p, flaky, "no test notices the bug")
    if not p2p:
        return Classification(f2p, [], flaky, "the bug leaves no test passing")
    share = len(f2p) / (len(f2p) + len(p2p))
    if share > max_broken:
        return Classification(f2p, p2p, flaky, f"the bug breaks {len(f2p)} of {len(f2p) + len(p2p)} tests "
                                               f"(more than {max_broken:.0%} of the suite): trivially detectable")
    return Classification(f2p, p2p, flaky)


def clean_problem(clean: list[SuiteRun]) -> str:
    """Why the clean repository cannot be used ("" when it can)."""
    if any(run.timed_out for run in clean):
        return "the clean test suite did not finish within its time limit"
    if any(run.collection_errors for run in clean):
        return f"the clean test suite has collection errors ({', '.join(clean[0].collection_errors[:3])})"
    if not any(run.passed for run in clean):
        return "no test passes on the clean repository (missing dependencies? a src/ layout pytest cannot import?)"
    if any(run.integrity for run in clean):
        return f"the verifier cannot trust the clean suite's report: {next(r.integrity for r in clean if r.integrity)}"
    return ""


def code_modules(files: dict[str, bytes]) -> dict[str, list[str]]:
    """The repository's top-level modules and packages (at its root or under src/) with the public
    names each defines: what a second copy of the code under test would be called and define."""
    from .verifier.find_copies import public_names
    from .verifier.swe_verify import is_config_path, is_test_path

    modules: dict[str, set[str]] = {}
    for path, data in files.items():
        if not path.endswith(".py") or is_test_path(path) or is_config_path(path):
            continue
        rel = path.removeprefix("src/")
        parts = rel.split("/")
        top = parts[0][:-3] if len(parts) == 1 else parts[0]
        if len(parts) > 1 and f"{path[:len(path) - len(rel)]}{top}/__init__.py" not in files:
            continue  # a folder of scripts, not a package
        if top in NOT_MODULES or not top.isidentifier():
            continue
        modules.setdefault(top, set()).update(public_names(data.decode("utf-8", "replace")))
    return {name: sorted(names) for name, names in sorted(modules.items()) if names}


def copies_problem(found: list[dict]) -> str:
    """Why a repository cannot make tasks in this image ("" when it can): a copy defining at least half
    of a module's public names (and two of them) already lies in the image."""
    copies = [c for c in found if c["shared"] >= max(2, math.ceil(c["of"] / 2))]
    if not copies:
        return ""
    first = copies[0]
    return (f"the image already holds a copy of the code under test: {first['module']} at {first['path']} "
            f"defines {first['shared']} of its {first['of']} public names ({len(copies)} copies in all); "
            "an agent could copy it over the bug")


def _unstable(runs: list[SuiteRun]) -> set[str]:
    return {t for t in set().union(*(run.outcomes for run in runs)) if len({run.outcomes.get(t) for run in runs}) > 1}


def environment_task(snapshot: Snapshot, visible: dict[str, bytes] | None = None) -> Task:
    """The task-shaped environment of a repository (what every task of it builds on)."""
    files = environment_files(visible if visible is not None else snapshot.files, requirements(snapshot.files))
    files["tests/test.sh"] = "#!/bin/bash\nexit 0\n"
    name = f"swe-env-{snapshot.name.lower()}"[:60].strip("-")
    config = {"schema_version": "1.1", "task": {"name": name},
              "environment": {"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 4096,
                              "workdir": WORKDIR}}
    return Task.create(name, config, "environment of a repository", files)


class RepoSandbox:
    """One sandbox of ``task``'s environment whose /app holds ``files``, to run the suite (restored from
    ``bundle``) with changes in place. ``prepared``: the environment when the caller built it already."""

    def __init__(self, backend: SandboxBackend, task: Task, files: dict[str, bytes], bundle: dict[str, bytes], *,
                 timeout: float = DEFAULT_SUITE_TIMEOUT, prepared: PreparedEnvironment | None = None,
                 name: str = "repository") -> None:
        self.backend, self.task, self.files, self.bundle = backend, task, files, bundle
        self.timeout, self.prepared, self.name = timeout, prepared, name
        self.sandbox: Sandbox | None = None

    @classmethod
    def of_snapshot(cls, backend: SandboxBackend, snapshot: Snapshot, *, timeout: float = DEFAULT_SUITE_TIMEOUT) -> "RepoSandbox":
        return cls(backend, environment_task(snapshot), snapshot.files, snapshot.bundle, timeout=timeout, name=snapshot.name)

    async def __aenter__(self) -> "RepoSandbox":
        if self.prepared is None:
            self.prepared = await self.backend.prepare(self.task)
        self.sandbox = await self.backend.create(self.task, self.prepared)
        try:
            await self.sandbox.start()
            bundle = {f"bundle/{p}": (d, False) for p, d in self.bundle.items()}
            await self.sandbox.upload_files({"swe_verify.py": (package_text("verifier", "swe_verify.py").encode(), False),
                                             "find_copies.py": (package_text("verifier", "find_copies.py").encode(), False),
                                             **bundle}, TOOLS)
        except BaseException:
            await self.sandbox.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.sandbox is not None:
            await self.sandbox.close()

    async def run(self, changed: dict[str, bytes | None] | None = None, *, timeout: float | None = None) -> SuiteRun:
        """The suite with ``changed`` files in place (None: deleted), restored afterwards; ``timeout``
        bounds this run (default: the sandbox's suite timeout)."""
        assert self.sandbox is not None, "use RepoSandbox as an async context manager"
        changed = changed or {}
        limit = timeout or self.timeout
        await self._apply(changed)
        try:
            out = f"{TOOLS}/report.json"
            result = await self.sandbox.exec(
                f"python3 -I {TOOLS}/swe_verify.py report --workdir {WORKDIR} --bundle {TOOLS}/bundle --out {out} "
                f"--timeout {limit:g} && cat {out}", timeout=limit + 60, cwd="/", output_limit=16 << 20)
            if result.exit_code != 0:
                last = (result.stderr or result.stdout).strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
                raise SandboxError(f"running the suite of {self.name} failed: {last[0]}")
            return SuiteRun.from_report(json.loads(result.stdout))
        finally:
            await self._apply({p: self.files.get(p) for p in changed})

    async def copies(self, modules: dict[str, list[str]]) -> list[dict]:
        """Modules and packages in the sandbox's image, outside the repository, named like one of
        ``modules`` (``code_modules``), with how many of its names each defines."""
        assert self.sandbox is not None, "use RepoSandbox as an async context manager"
        if not modules:
            return []
        request = json.dumps({"modules": modules, "exclude": [WORKDIR, TOOLS]}).encode()
        result = await self.sandbox.exec(f"python3 -I {TOOLS}/find_copies.py", timeout=300, cwd="/", stdin=request,
                                         output_limit=16 << 20)
        if result.exit_code != 0:
            last = (result.stderr or result.stdout).strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
            raise SandboxError(f"looking for copies of {self.name} failed: {last[0]}")
        return json.loads(result.stdout)

    async def _apply(self, changed: dict[str, bytes | None]) -> None:
        assert self.sandbox is not None
        present = {p: (d, False) for p, d in changed.items() if d is not None}
        gone = [p for p, d in changed.items() if d is None]
        if present:
            await self.sandbox.upload_files(present, WORKDIR)
        if gone:
            await self.sandbox.exec("rm -f -- " + " ".join(shlex.quote(f"{WORKDIR}/{p}") for p in gone), timeout=60)
