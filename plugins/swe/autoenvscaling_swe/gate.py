"""The swe domain's admission gates, on top of the core ones.

``swe-lint`` (static, order 15): the test lists and the hidden bundle agree, and nothing in the
agent's environment gives the answer away: no git metadata, byte-code or caches copied in, no file
holding the fixed version of a changed file, no held-back test.

``swe-validation`` (order 35, after the oracle): in the task's own built environment, no second copy
of the code under test lies outside the repository (suite.copies_problem), and the suite runs
``reruns`` times on the agent's repository and ``reruns`` times with the fix applied; suite.classify
must admit the bug and give exactly the FAIL_TO_PASS and PASS_TO_PASS lists the task carries. A
task the domain vouches for (``redteam_tested``: a seed repository's bug this process generated, byte
for byte) is skipped with the reason, unless ``GateSettings.redteam_vouched`` is False: its generator
ran the same screening (the copies search, the suite twice clean and twice with the bug) on the
same snapshot, and the domain's tests run this gate on every seed repository at levels 0, 1 and 3.
The oracle, reset and flakiness gates still run the task's own verifier three times with the fix,
and the null gate once with the bug.
"""

from __future__ import annotations

import ast
import asyncio
import json

from autoenvscaling.api import DomainLintGate, Evidence, Gate, GateContext, GateResult, Task

from .domain import SweDomain
from .patches import PatchError, apply_patch
from .render import DOMAIN, read_patch
from .suite import RepoSandbox, classify, code_modules, copies_problem
from .generate import test_functions, test_path

REPO = "environment/repo/"
BUNDLE = "tests/repo/"
FORBIDDEN_PARTS = (".git", "__pycache__", ".pytest_cache", ".hg", ".svn", ".tox", ".venv")
FORBIDDEN_SUFFIXES = (".pyc", ".pyo", ".orig", ".rej", ".whl", ".patch", ".diff")


def repo_files(task: Task, prefix: str) -> dict[str, bytes]:
    return {p[len(prefix):]: f.data for p, f in task.files.items() if p.startswith(prefix)}


def spec_of(task: Task) -> dict:
    return json.loads(task.files["tests/swe.json"].text)


class SweLintGate(DomainLintGate):
    name = "swe-lint"
    order = 15
    domain = DOMAIN
    required = ("tests/swe.json", "tests/swe_verify.py", "tests/aes_verifier.py", "solution/solve.sh")
    hidden = ()  # the public test files are in both tests/repo and the image, on purpose

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        try:
            spec = spec_of(task)
            listed = list(spec["fail_to_pass"]) + list(spec["pass_to_pass"])
        except (ValueError, KeyError, TypeError) as exc:
            return f"tests/swe.json is not a valid test list ({exc})"
        if not spec["fail_to_pass"]:
            return "FAIL_TO_PASS is empty: nothing decides whether the bug was fixed"
        bundle = repo_files(task, BUNDLE)
        missing = sorted({t.split("::")[0] for t in listed} - set(bundle))
        if missing:
            return f"listed tests live in files the hidden bundle lacks: {', '.join(missing[:3])}"
        env = {p: f.data for p, f in task.files.items() if p.startswith("environment/")}
        for path in env:
            if any(p in FORBIDDEN_PARTS for p in path.split("/")) or path.endswith(FORBIDDEN_SUFFIXES):
                return f"{path} must not reach the image: it can hold the original code"
        visible = repo_files(task, REPO)
        try:
            fixed = apply_patch(visible, read_patch(task))
        except (PatchError, ValueError) as exc:
            return f"the fix does not apply to environment/repo: {exc}"
        for path, data in fixed.items():
            if data is None or data == visible.get(path):
                continue
            copies = [p for p, d in env.items() if d == data]
            if copies:
                return f"{copies[0]} holds the fixed version of {path}: the answer is in the image"
        for pattern in task.provenance.public_files or []:
            rel = pattern.removeprefix(BUNDLE)
            if not pattern.startswith(BUNDLE) or bundle.get(rel) is None or visible.get(rel) != bundle[rel]:
                return f"public_files names {pattern}, which the agent's repository does not hold as it is"
        for nodeid in task.config.metadata.get("swe", {}).get("held_back", []):
            leak = held_back_leak(nodeid, bundle, visible)
            if leak:
                return leak
        return ""


def held_back_leak(nodeid: str, bundle: dict[str, bytes], visible: dict[str, bytes]) -> str:
    """Where the agent's repository holds a held-back test: defined at its own place in its file, or
    its source copied into any file ("" when nowhere)."""
    file, path = test_path(nodeid)
    name = "::".join(path)
    if path in test_functions(visible.get(file, b"").decode("utf-8", "replace")):
        return f"the held-back test {name} is in environment/repo/{file}"
    original = bundle.get(file, b"").decode("utf-8", "replace")
    node = test_functions(original).get(path)
    body = ast.get_source_segment(original, node) if node is not None else None
    if body and len(body) >= 40:
        for other, data in visible.items():
            if body.encode() in data:
                return f"the held-back test {name} is copied into environment/repo/{other}"
    return ""


class SweValidationGate(Gate):
    name = "swe-validation"
    order = 35
    needs_sandbox = True
    domain = DOMAIN
    reruns = 2

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        if ctx.settings.redteam_vouched and SweDomain().redteam_tested(task):
            return self.result("pass", f"skipped: the {DOMAIN} domain's generator screened this bug in the same "
                                       "snapshot, and its tests run this gate on every seed repository")
        spec = spec_of(task)
        visible, bundle = repo_files(task, REPO), repo_files(task, BUNDLE)
        try:
            fixed = apply_patch(visible, read_patch(task))
        except PatchError as exc:
            return self.result("fail", f"the fix does not apply: {exc}")
        prepared = await ctx.prepared_environment(task)
        timeout = float(spec.get("timeout_sec", 600))

        async def runs(changed: dict[str, bytes | None], *, search: bool = False) -> tuple[list, list[dict]]:
            async with RepoSandbox(ctx.require_backend(), task, visible, bundle, timeout=timeout, prepared=prepared,
                                   name=task.name) as box:
                found = await box.copies(code_modules(visible)) if search else []
                return [await box.run(changed) for _ in range(self.reruns)], found

        (buggy, found), (clean, _) = await asyncio.gather(runs({}, search=True), runs(fixed))  # side by side
        problem = copies_problem(found)
        if problem:
            return self.result("fail", problem,
                               evidence=[Evidence(command="find_copies.py", values={"copies": found[:10]})])
        verdict = classify(clean, buggy)
        values = {"fail_to_pass": len(verdict.fail_to_pass), "pass_to_pass": len(verdict.pass_to_pass),
                  "flaky": verdict.flaky[:20], "suite_seconds": round(max(r.seconds for r in clean + buggy), 3)}
        evidence = [Evidence(command=f"swe_verify.py report x{self.reruns} (buggy) + x{self.reruns} (fixed)", values=values)]
        if not verdict.admitted:
            return self.result("fail", verdict.reason, evidence=evidence)
        for label, seen, listed in (("FAIL_TO_PASS", verdict.fail_to_pass, spec["fail_to_pass"]),
                                    ("PASS_TO_PASS", verdict.pass_to_pass, spec["pass_to_pass"])):
            if sorted(seen) != sorted(listed):
                extra, lost = sorted(set(seen) - set(listed)), sorted(set(listed) - set(seen))
                return self.result("fail", f"{label} differs when the validation is rerun: "
                                           f"{len(extra)} more ({', '.join(extra[:2])}), {len(lost)} fewer ({', '.join(lost[:2])})",
                                   evidence=evidence)
        return self.result("pass", evidence=evidence)
