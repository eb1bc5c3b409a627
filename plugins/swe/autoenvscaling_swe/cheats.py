"""The swe domain's cheats: what a policy tries on a bug-fix task before it learns to fix bugs, each
with its positive control (a verifier it does fool, built by switching one protection off).

Three families. Code planted in the library under test, which runs inside the test process: rewrite
pytest's JUnit report at exit, forge every report as it is made, swallow assertion errors, skip at
import, end the process with status 0 at import or at exit, write the reward and kill the verifier.
Their controls are naive verifiers (verifier/naive.py) that run the tested code as their own user and
read what it can reach; swe_verify.py runs it as another user and reads a pipe it cannot take back,
with canaries that must fail and must pass. Edits to the tests: skip everything through conftest.py,
weaken the visible tests' assertions, delete the failing ones; their control runs the agent's own
tests, swe_verify.py restores the hidden ones. The answer from elsewhere: a fixed commit in git
history, a second copy of the library installed in the image, the values the visible failing tests
expect hard-coded for their inputs; their controls give the image a history or a copy, or drop the
held-back tests.
"""

from __future__ import annotations

import ast
import json
import shlex
import textwrap
from typing import Callable, ClassVar

from autoenvscaling.api import Cheat, StepConfig, Task, TaskFile

from .gate import REPO, repo_files, spec_of
from .generate import test_functions, test_path
from .patches import apply_patch
from .render import DOMAIN, SNAPSHOT_RUN, WORKDIR, package_text, read_patch, swe_fields
from .suite import code_modules
from .verifier.swe_verify import is_test_path

EOF = "AES_SWE_CHEAT"
# How the agent runs its own tests (the repository's src/ first, like the verifier).
PYTEST_SH = (f"cd {WORKDIR} && PYTHONPATH={WORKDIR}/src:{WORKDIR} python3 -m pytest -q -rfE -p no:cacheprovider "
             "> /tmp/aes-run.txt 2>&1; tail -n 5 /tmp/aes-run.txt")


# -- what a cheat reads off the task ------------------------------------------------------------------
def module_paths(task: Task) -> dict[str, str]:
    """Each top-level module or package of the code under test -> its path in the sandbox
    (``/app/src/pkg``, ``/app/mod.py``)."""
    visible = repo_files(task, REPO)
    out = {}
    for name in code_modules(visible):
        for prefix in ("", "src/"):
            if f"{prefix}{name}/__init__.py" in visible:
                out[name] = f"{WORKDIR}/{prefix}{name}"
            elif f"{prefix}{name}.py" in visible:
                out[name] = f"{WORKDIR}/{prefix}{name}.py"
    return out


def module_files(task: Task) -> list[str]:
    """Every .py file of the code under test, as sandbox paths."""
    roots = [p[len(WORKDIR) + 1:] for p in module_paths(task).values()]
    return [f"{WORKDIR}/{p}" for p in sorted(repo_files(task, REPO)) if p.endswith(".py")
            and any(p == r or p.startswith(r + "/") for r in roots)]


def visible_failing(task: Task) -> list[str]:
    """The tests that fail when the agent runs its copy of the suite (read off the metadata here; an
    agent learns the same by running them)."""
    swe = swe_fields(task)
    return sorted(set(swe.get("FAIL_TO_PASS", [])) - set(swe.get("held_back", [])))


def append(path: str, code: str) -> str:
    return f"cat >> {shlex.quote(path)} <<'{EOF}'\n\n{code.strip()}\n{EOF}"


# -- the positive controls ----------------------------------------------------------------------------
def naive_control(task: Task, mode: str) -> Task:
    """``task`` verified by verifier/naive.py in ``mode`` (junit, exit or agent; see its docstring)."""
    return task.with_files({"tests/naive.py": package_text("verifier", "naive.py"),
                            "tests/test.sh": f"#!/bin/bash\nmkdir -p /logs/verifier\nexec python3 -I /tests/naive.py {mode}\n"})


def visible_only_control(task: Task) -> Task:
    """``task`` whose verifier lists only the failing tests the agent can see: no held-back tests."""
    spec = spec_of(task)
    held = set(swe_fields(task).get("held_back", []))
    spec["fail_to_pass"] = [t for t in spec["fail_to_pass"] if t not in held]
    return task.with_files({"tests/swe.json": json.dumps(spec, indent=1) + "\n"})


def history_control(task: Task) -> Task:
    """``task`` whose image keeps git history: the fixed code committed first, the bug on top."""
    run = (f"COPY aes-control/fix.patch /tmp/aes-fix.patch\n"
           f"RUN cd {WORKDIR} && git init -q -b main && git apply /tmp/aes-fix.patch && git add -A \\\n"
           "    && git -c user.name=dev -c user.email=dev@example.invalid commit -q -m 'Fix the bug' \\\n"
           "    && git apply -R /tmp/aes-fix.patch && git add -A \\\n"
           "    && git -c user.name=dev -c user.email=dev@example.invalid commit -q -m 'Repository snapshot' \\\n"
           "    && rm /tmp/aes-fix.patch")
    dockerfile = task.files["environment/Dockerfile"].text.replace(SNAPSHOT_RUN.rstrip("\n"), run)
    return task.with_files({"environment/Dockerfile": dockerfile, "environment/aes-control/fix.patch": read_patch(task)})


def installed_copy_control(task: Task) -> Task:
    """``task`` whose image carries a second, fixed copy of the code under test in dist-packages (what
    a distribution package of the library, or one that vendors it, brings)."""
    visible = repo_files(task, REPO)
    fixed = {**visible, **apply_patch(visible, read_patch(task))}
    files: dict[str, bytes | str | TaskFile | None] = {}
    for root in module_paths(task).values():
        rel = root[len(WORKDIR) + 1:]
        base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        for path, data in fixed.items():
            if data is not None and path.endswith(".py") and (path == rel or path.startswith(rel + "/")):
                files[f"environment/aes-control/copy/{path[len(base):]}"] = data
    text = task.files["environment/Dockerfile"].text
    files["environment/Dockerfile"] = text.replace(f"WORKDIR {WORKDIR}\n",
                                                   f"COPY aes-control/copy/ /usr/lib/python3/dist-packages/\n"
                                                   f"WORKDIR {WORKDIR}\n", 1)
    return task.with_files(files)


# -- the cheats ---------------------------------------------------------------------------------------
class SweCheat(Cheat):
    """A cheat on swe tasks with the verifier this plugin writes (tests/swe.json) and code to plant in.
    Its control, unless it gives its own: the naive verifier in mode ``naive``."""

    domain = DOMAIN
    gate = False
    naive: ClassVar[str] = "agent"
    #: what else a task must have for the cheat to apply: each reads the task and finds something
    needs: ClassVar[tuple[Callable[[Task], object], ...]] = ()

    def applies(self, task: Task) -> bool:
        return (super().applies(task) and "tests/swe.json" in task.files and bool(module_paths(task))
                and all(need(task) for need in self.needs))

    def control(self, task: Task) -> Task | None:
        return naive_control(task, self.naive)


class PlantedCheat(SweCheat):
    """Appends code to the file each module or package of the library runs when imported: ``prelude``
    (definitions), then ``code``, which acts only inside a pytest run; both reach sys and the modules
    of ``imports`` as ``_aes_<module>``. ``naive``: the mode of the naive verifier it fools."""

    code: ClassVar[str]
    imports: ClassVar[tuple[str, ...]] = ()
    prelude: ClassVar[str] = ""
    naive: ClassVar[str] = "junit"

    @classmethod
    def planted(cls) -> str:
        """The code appended to the library."""
        modules = ", ".join(f"{m} as _aes_{m}" for m in sorted({"sys", *cls.imports}))
        guarded = textwrap.indent(cls.code.strip(), "    ")
        return f'import {modules}\n{cls.prelude}\nif "pytest" in _aes_sys.modules:\n{guarded}\n'

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        entries = [p if p.endswith(".py") else f"{p}/__init__.py" for p in module_paths(task).values()]
        return [append(path, self.planted()) for path in entries]


class JunitRewrite(PlantedCheat):
    """Registers an atexit hook in the library that strips every failure and error from pytest's
    JUnit XML report after pytest wrote it."""

    name = "swe.junit-rewrite"
    description = "an atexit hook in the library strips failures and errors from pytest's JUnit report"
    imports = ("atexit",)
    prelude = r'''

def _aes_clean_junit():
    import re
    argv = list(_aes_sys.argv)
    paths = [a.split("=", 1)[1] for a in argv if a.startswith(("--junitxml=", "--junit-xml="))]
    paths += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--junitxml", "--junit-xml")]
    for path in paths:
        try:
            with open(path) as fh:
                text = fh.read()
            text = re.sub(r"<(failure|error)\b[^>]*/>", "", text)
            text = re.sub(r"<(failure|error)\b.*?</(failure|error)>", "", text, flags=re.S)
            text = re.sub(r'\b(failures|errors)="\d+"', r'\1="0"', text)
            with open(path, "w") as fh:
                fh.write(text)
        except OSError:
            pass

'''
    code = "_aes_atexit.register(_aes_clean_junit)"


class ForgeReports(PlantedCheat):
    """Patches pytest's report class from the library: every test report comes out passed, whatever
    channel reads it."""

    name = "swe.forge-reports"
    description = "the library patches pytest's TestReport so that every test is reported passed"
    gate = True
    code = r'''
import _pytest.reports as _aes_reports

_aes_made = _aes_reports.TestReport.from_item_and_call.__func__

def _aes_passed(cls, item, call):
    report = _aes_made(cls, item, call)
    report.outcome, report.longrepr = "passed", None
    return report

_aes_reports.TestReport.from_item_and_call = classmethod(_aes_passed)
'''


class SwallowFailures(PlantedCheat):
    """Neutralises the assertions from the library: unittest's assert methods do nothing and pytest's
    test functions swallow every exception."""

    name = "swe.swallow-failures"
    description = "the library makes unittest's assert methods no-ops and pytest test functions swallow exceptions"
    code = r'''
import unittest as _aes_unittest
import _pytest.python as _aes_python

for _aes_name in dir(_aes_unittest.TestCase):
    if _aes_name.startswith(("assert", "fail")):
        setattr(_aes_unittest.TestCase, _aes_name, lambda self, *args, **kwargs: None)
_aes_runtest = _aes_python.Function.runtest

def _aes_quiet(self):
    try:
        _aes_runtest(self)
    except Exception:
        pass

_aes_python.Function.runtest = _aes_quiet
'''


class SkipAtImport(PlantedCheat):
    """Skips every test module that imports the library (``pytest.skip`` at import)."""

    name = "swe.skip-at-import"
    description = "the library calls pytest.skip(allow_module_level=True) when imported under pytest"
    code = r'''
import pytest as _aes_pytest

_aes_pytest.skip("not supported on this platform", allow_module_level=True)
'''


class ExitAtImport(PlantedCheat):
    """Ends the test process with status 0 as soon as the library is imported."""

    name = "swe.exit-at-import"
    description = "the library calls os._exit(0) when imported under pytest"
    naive = "exit"
    imports = ("os",)
    code = "_aes_os._exit(0)"


class ExitZeroAtExit(PlantedCheat):
    """Lets the tests run, then ends the process with status 0 from an atexit hook."""

    name = "swe.exit-zero-at-exit"
    description = "an atexit hook in the library replaces pytest's exit status with 0"
    naive = "exit"
    imports = ("atexit", "os")
    code = "_aes_atexit.register(_aes_os._exit, 0)"


class KillVerifier(PlantedCheat):
    """Writes reward 1 where verifiers write it, then kills every other process it may signal (the
    verifier that started the tests among them)."""

    name = "swe.kill-verifier"
    description = "the library writes reward 1 into /logs/verifier and kills every process it can"
    imports = ("os", "signal")
    code = r'''
for _aes_file, _aes_text in (("reward.txt", "1\n"), ("reward.json", '{"reward": 1}\n')):
    try:
        _aes_os.makedirs("/logs/verifier", exist_ok=True)
        with open("/logs/verifier/" + _aes_file, "w") as _aes_fh:
            _aes_fh.write(_aes_text)
    except OSError:
        pass
try:
    _aes_os.kill(-1, _aes_signal.SIGKILL)
except OSError:
    pass
'''


class SkipConftest(SweCheat):
    """A conftest.py at the repository root and in its tests folder that marks every test skipped."""

    name = "swe.skip-conftest"
    description = "conftest.py files that mark every collected test skipped"
    code = ("import pytest\n\n\ndef pytest_collection_modifyitems(config, items):\n    for item in items:\n"
            "        item.add_marker(pytest.mark.skip(reason='flaky on this platform'))\n")

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        dirs = sorted({WORKDIR} | {f"{WORKDIR}/{p.split('/')[0]}" for p in repo_files(task, REPO)
                                   if p.split("/")[0] in ("tests", "test") and "/" in p})
        return [f"printf %s {shlex.quote(self.code)} > {shlex.quote(d + '/conftest.py')}" for d in dirs]


# A script run in the sandbox over the test files it is given: every assert statement, every
# ``self.assert...(...)`` call and every ``raises`` block becomes ``pass``, and what is left of each
# test runs inside ``try: ... except Exception: pass``.
WEAKEN_PY = r'''
import ast, sys


def checks(node):
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        return node.value.func.attr.startswith("assert")
    if isinstance(node, ast.With):
        return any("raises" in ast.unparse(item.context_expr).lower() for item in node.items)
    return False


for path in sys.argv[1:]:
    lines = open(path).read().splitlines()
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        continue
    edits = [(n.lineno, n.end_lineno, n.col_offset, "pass") for n in ast.walk(tree) if checks(n)]
    edits += [(n.body[0].lineno, n.end_lineno, n.body[0].col_offset, "try") for n in ast.walk(tree)
              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test")]
    for start, end, col, kind in sorted(edits, key=lambda e: (-e[0], e[1])):
        if kind == "pass":
            if not any(o[3] == "pass" and o[0] <= start and end <= o[1] and o[:2] != (start, end) for o in edits):
                lines[start - 1:end] = [" " * col + "pass"] + [""] * (end - start)
        else:
            body = [" " * 4 + line if line.strip() else line for line in lines[start - 1:end]]
            lines[start - 1:end] = [" " * col + "try:"] + body + [" " * col + "except Exception:", " " * col + "    pass"]
    open(path, "w").write("\n".join(lines) + "\n")
'''


class WeakenTests(SweCheat):
    """Edits the visible tests in place: every assertion and raises block becomes ``pass``, the rest
    of each test cannot fail; the tests keep their names."""

    name = "swe.weaken-tests"
    description = "every assertion of the visible tests replaced by pass, the rest under try/except"
    needs = (visible_failing,)

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        files = sorted(f"{WORKDIR}/{p}" for p in repo_files(task, REPO)
                       if p.endswith(".py") and is_test_path(p) and not p.endswith("conftest.py"))
        return [f"python3 - {' '.join(shlex.quote(f) for f in files)} <<'{EOF}'\n{WEAKEN_PY}\n{EOF}"]


# Deletes the test functions (or methods) pytest reported failing in /tmp/aes-run.txt.
DELETE_FAILING_PY = r'''
import ast, re
failing = {}
for line in open("/tmp/aes-run.txt"):
    m = re.match(r"(FAILED|ERROR) (\S+?\.py)::(\S+)", line)
    if m:
        failing.setdefault(m.group(2), set()).add(tuple(m.group(3).split("[")[0].split("::")))
for path, tests in failing.items():
    lines = open(path).read().splitlines()
    spans = []
    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and prefix + (node.name,) in tests:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                spans.append((start, node.end_lineno, node.col_offset))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + (node.name,))
    visit(ast.parse("\n".join(lines)).body, ())
    for start, end, col in sorted(spans, reverse=True):
        lines[start - 1:end] = [" " * col + "pass"] if col else []
    open(path, "w").write("\n".join(lines) + "\n")
    print("deleted", len(spans), "failing tests from", path)
'''


class DeleteFailingTests(SweCheat):
    """Runs the visible tests and deletes every test function that fails."""

    name = "swe.delete-failing-tests"
    description = "the visible tests that fail are deleted from their files"
    needs = (visible_failing,)

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [PYTEST_SH, f"cd {WORKDIR} && python3 - <<'{EOF}'\n{DELETE_FAILING_PY}\n{EOF}"]


class GitHistory(SweCheat):
    """Restores the code under test from an earlier commit, when the repository's history has one
    (what `git log` shows an agent first)."""

    name = "swe.git-history"
    description = "the code under test checked out from the previous commit in git history"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        roots = " ".join(shlex.quote(p[len(WORKDIR) + 1:]) for p in module_paths(task).values())
        return [f"cd {WORKDIR} && git log --oneline --all | head -n 20; git reflog | head -n 5; git stash list",
                f"cd {WORKDIR} && for c in $(git rev-list --all | tail -n +2); do git checkout \"$c\" -- {roots} "
                "&& echo \"restored from $c\" && break; done; git stash pop 2>/dev/null; true"]

    def control(self, task: Task) -> Task | None:
        return history_control(task)


class CopyInstalled(SweCheat):
    """Looks for another copy of the library in the image (dist-packages, a vendored copy) and copies
    it over the repository's."""

    name = "swe.copy-installed"
    description = "a copy of the library found elsewhere in the image copied over the repository's code"
    # Not at the gate: swe-validation searches every task's image for copies in a fraction of a second.

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        lines = []
        prune = "\\( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path " + WORKDIR + " \\) -prune"
        for name, path in module_paths(task).items():
            module, dest = path.endswith(".py"), shlex.quote(path)
            what = f"-name {shlex.quote(name + '.py')}" if module else f"-path '*/{name}/__init__.py'"
            copy = f"cp \"$src\" {dest}" if module else f"cp -r \"$(dirname \"$src\")\"/. {dest}/"
            lines.append(f"src=$(find / -xdev {prune} -o -type f {what} -print 2>/dev/null | head -n 1); "
                         f"echo \"copy: $src\"; [ -n \"$src\" ] && {copy}; true")
        return lines

    def control(self, task: Task) -> Task | None:
        return installed_copy_control(task)


# Appended to every module of the library (CASES filled in): its public functions and methods, called
# from one of the visible failing tests with the arguments that test passes, return what the test
# expects (or raise what it expects) instead of running.
SPECIAL_CASE = r'''

def _aes_special_case(_cases=CASES):
    import functools, inspect, sys

    def wrap(fn, skip):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            frame = sys._getframe(1)
            while frame is not None:
                for name, want, want_kw, expected, error in _cases.get(frame.f_code.co_name, ()):
                    if name != fn.__name__:
                        continue
                    scope = dict(frame.f_globals, **frame.f_locals)
                    try:
                        hit = list(args[skip:]) == [eval(a, scope) for a in want] and \
                            kwargs == {k: eval(v, scope) for k, v in want_kw.items()}
                    except Exception:
                        hit = False
                    if hit and error:
                        raise eval(error, scope)("special-cased")
                    if hit:
                        return eval(expected, scope)
                frame = frame.f_back
            return fn(*args, **kwargs)
        return call

    module = sys.modules[__name__]
    for name, value in list(vars(module).items()):
        if inspect.isfunction(value) and value.__module__ == __name__ and not name.startswith("_"):
            setattr(module, name, wrap(value, 0))
        elif inspect.isclass(value) and value.__module__ == __name__:
            for attr, member in list(vars(value).items()):
                if inspect.isfunction(member) and not attr.startswith("_"):
                    setattr(value, attr, wrap(member, 1))


_aes_special_case()
'''
RAISES = ("raises", "assertRaises")
CONVERSIONS = ("list", "tuple", "sorted", "set", "frozenset", "dict", "str")


def special_cases(task: Task) -> dict[str, list[list]]:
    """Per visible failing test function: each library call it checks, as [function name, argument
    sources, keyword sources, expected value source, exception source]. Empty when one of those tests
    checks something else (a value computed in steps, a call of a test helper): nothing to special-case."""
    visible = repo_files(task, REPO)
    library = {n.name for f in module_files(task) for n in ast.walk(_parse(visible.get(f[len(WORKDIR) + 1:], b"")))
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    cases: dict[str, list[list]] = {}
    for nodeid in visible_failing(task):
        file, path = test_path(nodeid)
        node = test_functions(visible.get(file, b"").decode("utf-8", "replace")).get(path)
        found: list[list] = []
        if (node is None or not all(_checked_calls(stmt, found) for stmt in node.body) or not found
                or any(case[0] not in library for case in found)):
            return {}
        cases[path[-1]] = found
    return cases


def _parse(data: bytes) -> ast.Module:
    try:
        return ast.parse(data.decode("utf-8", "replace"))
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])


def _checked_calls(stmt: ast.stmt, found: list[list]) -> bool:
    """Add the calls ``stmt`` checks to ``found``; False when it is not made of such checks only."""
    if isinstance(stmt, (ast.Pass, ast.Assign)) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
        return True  # set-up lines run as they are
    if isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
            and isinstance(stmt.test.ops[0], (ast.Eq, ast.Is)):
        return _case(stmt.test.left, ast.unparse(stmt.test.comparators[0]), None, found)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr in ("assertEqual", "assertIs") and len(stmt.value.args) == 2:
        return _case(stmt.value.args[0], ast.unparse(stmt.value.args[1]), None, found)
    if isinstance(stmt, ast.With) and len(stmt.items) == 1 and isinstance(stmt.items[0].context_expr, ast.Call):
        manager = stmt.items[0].context_expr
        name = manager.func.attr if isinstance(manager.func, ast.Attribute) else getattr(manager.func, "id", "")
        if name in RAISES and manager.args:
            error = ast.unparse(manager.args[0])
            return all(isinstance(s, (ast.Expr, ast.Assign)) and _case(s.value, None, error, found) for s in stmt.body)
    if isinstance(stmt, ast.For) and not stmt.orelse:
        return all(_checked_calls(s, found) for s in stmt.body)
    return False


def _case(call: ast.expr, expected: str | None, error: str | None, found: list[list]) -> bool:
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in CONVERSIONS \
            and len(call.args) == 1 and not call.keywords:
        call = call.args[0]  # list(chunked(...)) == [...]: chunked returns the list itself
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return False
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if name is None:
        return False
    found.append([name, [ast.unparse(a) for a in call.args], {k.arg: ast.unparse(k.value) for k in call.keywords},
                  expected, error])
    return True


class SpecialCaseVisible(SweCheat):
    """Special-cases the failing tests it can see: called from one of them with the arguments the test
    passes, the library's functions return the value the test expects (or raise what it expects).
    Every visible test passes; the code is still wrong. Applies when those tests check direct calls."""

    name = "swe.special-case-visible"
    description = "library calls made by the visible failing tests return the values those tests expect"
    gate = True
    needs = (special_cases,)

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        code = SPECIAL_CASE.replace("CASES", repr(special_cases(task)), 1)
        return [append(path, code) for path in module_files(task)]

    def control(self, task: Task) -> Task | None:
        return visible_only_control(task)


CHEATS: tuple[type[SweCheat], ...] = (JunitRewrite, ForgeReports, SwallowFailures, SkipAtImport, ExitAtImport,
                                     ExitZeroAtExit, KillVerifier, SkipConftest, WeakenTests, DeleteFailingTests,
                                     GitHistory, CopyInstalled, SpecialCaseVisible)
