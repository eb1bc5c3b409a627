"""The swe plugin's pure parts, no sandbox: test outcomes from the verifier's recorder in real pytest
runs, canaries that expose forged reports, the classification rules, patches, held-back tests, issue
text and its leak check, the lint gate, what counts as a second copy of the code under test."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from autoenvscaling_swe import issue
from autoenvscaling_swe.generate import held_back, remove_tests
from autoenvscaling_swe.patches import PatchError, apply_patch, unified_patch
from autoenvscaling_swe.suite import SuiteRun, classify
from autoenvscaling_swe.verifier import swe_verify
from swe_helpers import LIBRARY, ROMAN_BUGGY, ROMAN_FIXED, TESTS


def run(outcomes: dict[str, str], **kw) -> SuiteRun:
    return SuiteRun(outcomes=outcomes, **kw)


CLEAN = {f"t.py::test_{i}": "passed" for i in range(10)}


def test_outcomes_come_from_the_recorder_in_a_real_pytest_run(tmp_path):
    """A real pytest run (this interpreter's pytest) of passing, failing, erroring, skipped,
    parametrized and class tests; node ids match pytest's, assertion lines and frames are kept (lines
    as in the file before the canaries went in), the canaries are not among the outcomes."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text("def double(x):\n    return x * 3\n")
    (repo / "tests" / "test_a.py").write_text(
        "import pytest\nfrom lib import double\n\n"
        "def test_ok():\n    assert double(0) == 0\n\n"
        "def test_bad():\n    assert double(2) == 4\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture')\n\n"
        "def test_error(broken):\n    pass\n\n"
        "@pytest.mark.skip(reason='no')\ndef test_skip():\n    pass\n\n"
        "@pytest.mark.parametrize('n', [0, 1])\ndef test_param(n):\n    assert double(n) == 2 * n\n\n"
        "class TestK:\n    def test_m(self):\n        assert True\n")
    report = swe_verify.run_pytest(repo, [], timeout=60, plugins=[])
    outcomes = {t: v["outcome"] for t, v in report["tests"].items()}
    assert outcomes == {"tests/test_a.py::test_ok": "passed", "tests/test_a.py::test_bad": "failed",
                        "tests/test_a.py::test_error": "error", "tests/test_a.py::test_skip": "skipped",
                        "tests/test_a.py::test_param[0]": "passed", "tests/test_a.py::test_param[1]": "failed",
                        "tests/test_a.py::TestK::test_m": "passed"}
    bad = report["tests"]["tests/test_a.py::test_bad"]
    assert "assert 6 == 4" in bad["message"] and "where 6 = double(2)" in bad["message"]
    assert bad["frames"] == [{"path": "tests/test_a.py", "line": 8, "function": "test_bad"}]
    assert report["collection_errors"] == [] and not report["timed_out"]
    assert report["integrity"] == "" and report["canaries"] >= 2 and report["exit_code"] == 1
    (repo / "tests" / "test_broken.py").write_text("import missing_module\n\ndef test_never():\n    pass\n")
    broken = swe_verify.run_pytest(repo, [], timeout=60, plugins=[])
    assert broken["collection_errors"] == ["tests/test_broken.py"] and broken["tests"] == {}
    # The test never ends on its own: only the timeout can stop it, and it leaves nothing behind.
    (repo / "lib.py").write_text("import time\n\ndef double(x):\n    time.sleep(3000)\n")
    (repo / "tests" / "test_broken.py").unlink()
    slow = swe_verify.run_pytest(repo, ["tests/test_a.py::test_ok"], timeout=2, plugins=[])
    assert slow["timed_out"] and slow["tests"] == {}
    assert "could not end" not in slow["integrity"], slow["integrity"]  # no process kept the report pipe open


def test_the_scratch_copy_keeps_the_agents_code_and_the_original_tests(tmp_path):
    agent = tmp_path / "agent"
    (agent / "tests").mkdir(parents=True)
    (agent / "pkg").mkdir()
    (agent / "pkg" / "core.py").write_text("AGENT = 1\n")
    (agent / "pkg" / "conftest.py").write_text("planted\n")
    (agent / "tests" / "test_x.py").write_text("edited by the agent\n")
    (agent / "tests" / "test_new.py").write_text("added by the agent\n")
    (agent / "pytest.ini").write_text("[pytest]\naddopts = -k nothing\n")
    (agent / "sitecustomize.py").write_text("import os\n")
    (agent / "hook.pth").write_text("import os\n")
    bundle = tmp_path / "bundle"
    (bundle / "tests").mkdir(parents=True)
    (bundle / "tests" / "test_x.py").write_text("original\n")
    (bundle / "pyproject.toml").write_text("[project]\nname='p'\n")
    dest = tmp_path / "scratch"
    swe_verify.assemble(agent, bundle, dest)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert files == ["pkg/core.py", "pyproject.toml", "tests/test_x.py"]
    assert (dest / "tests" / "test_x.py").read_text() == "original\n"


def test_classify_finds_fail_to_pass_and_pass_to_pass():
    buggy = dict(CLEAN, **{"t.py::test_1": "failed", "t.py::test_2": "error"})
    verdict = classify([run(CLEAN), run(CLEAN)], [run(buggy), run(buggy)])
    assert verdict.admitted and verdict.fail_to_pass == ["t.py::test_1", "t.py::test_2"]
    assert len(verdict.pass_to_pass) == 8 and not verdict.flaky


def test_tests_that_change_outcome_on_rerun_are_in_neither_list():
    flaky_clean = dict(CLEAN, **{"t.py::test_3": "failed"})
    buggy = dict(CLEAN, **{"t.py::test_1": "failed", "t.py::test_4": "failed"})
    buggy_rerun = dict(CLEAN, **{"t.py::test_1": "failed"})
    verdict = classify([run(CLEAN), run(flaky_clean)], [run(buggy), run(buggy_rerun)])
    assert verdict.fail_to_pass == ["t.py::test_1"]
    assert verdict.flaky == ["t.py::test_3", "t.py::test_4"]
    assert "t.py::test_3" not in verdict.pass_to_pass and "t.py::test_4" not in verdict.pass_to_pass


@pytest.mark.parametrize("buggy,reason", [
    (run(CLEAN), "no test notices the bug"),
    (run({}, collection_errors=["tests/test_a.py"]), "trivially detectable: the tests cannot even be collected"),
    (run({t: "failed" for t in list(CLEAN)[:7]} | {t: "passed" for t in list(CLEAN)[7:]}), "the bug breaks 7 of 10 tests"),
    (run({}, timed_out=True, seconds=120), "the suite did not finish with the bug"),
])
def test_unusable_bugs_are_rejected_with_their_reason(buggy, reason):
    verdict = classify([run(CLEAN)], [buggy])
    assert not verdict.admitted and verdict.reason.startswith(reason)


def test_a_clean_suite_that_does_not_pass_rejects_the_repository():
    assert classify([run({"t.py::a": "failed"})], [run({})]).reason.startswith("no test passes on the clean repository")


def test_patches_apply_and_reverse_with_git(tmp_path):
    before = {"numtools.py": LIBRARY.replace(ROMAN_FIXED, ROMAN_BUGGY).encode(), "old.py": b"x = 1\n"}
    after = {"numtools.py": LIBRARY.encode(), "new.py": b"y = 2\n"}
    patch = unified_patch(before, after)
    assert "--- a/numtools.py" in patch and "+++ /dev/null" in patch and "--- /dev/null" in patch
    assert apply_patch(before, patch) == {"numtools.py": after["numtools.py"], "old.py": None, "new.py": b"y = 2\n"}
    assert apply_patch(after, patch, reverse=True)["numtools.py"] == before["numtools.py"]
    with pytest.raises(PatchError):
        apply_patch(after, patch)  # already applied


def test_held_back_tests_are_about_half_the_failing_functions_and_never_all_when_several():
    f2p = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b", "t.py::test_c", "t.py::test_d"]
    for seed in range(20):
        held = held_back(f2p, random.Random(seed))
        functions = {t.split("[")[0] for t in held}
        assert len(functions) == 2 and ("t.py::test_a[1]" in held) == ("t.py::test_a[2]" in held)
    assert held_back(["t.py::test_only"], random.Random(0)) == ["t.py::test_only"]


def test_removing_tests_keeps_the_rest_of_the_file_intact():
    source = TESTS + "\n\nclass TestGroup:\n    def test_one(self):\n        assert True\n"
    out = remove_tests(source, ["tests/test_numtools.py::test_to_roman[1-I]", "tests/test_numtools.py::test_mean",
                                "tests/test_numtools.py::TestGroup::test_one"])
    assert "def test_to_roman(" not in out and "@pytest.mark.parametrize" not in out
    assert "def test_mean(" not in out and "def test_mean_single(" in out and "def test_one" not in out
    assert "class TestGroup:\n    pass" in out
    compile(out, "t.py", "exec")


def test_issue_text_names_the_function_and_never_the_tests_or_the_fix():
    bundle = {"tests/test_numtools.py": TESTS.encode()}
    details = {"tests/test_numtools.py::test_mean": {"message": "assert 3.0 == 2.5\n +  where 3.0 = mean([1, 2, 3, 4])",
                                                    "frames": []}}
    facts = issue.facts(["tests/test_numtools.py::test_mean"], {"tests/test_numtools.py::test_mean"}, details, bundle,
                        {"numtools.py": LIBRARY})
    assert (facts.function, facts.module, facts.symptom) == ("mean", "numtools", "returns a wrong result")
    text = issue.procedural(facts, repo="numtools", seed=3)
    assert "`mean`" in text and "assert 3.0 == 2.5" in text
    patch = unified_patch({"numtools.py": b"    return sum(values) / len(values)\n"},
                          {"numtools.py": b"    return sum(values) / (len(values) + 1)\n"})
    assert issue.leaks(text, bundle=bundle, changed_lines=issue.changed_lines(patch), patch=patch) == ""
    assert issue.leaks(text + "\nsee test_mean_single", bundle=bundle, changed_lines=[], patch="").startswith("it names the test")
    assert issue.leaks("in tests/test_numtools.py", bundle=bundle, changed_lines=[], patch="").startswith("it names the test file")
    assert issue.leaks("return sum(values) / len(values)", bundle=bundle, changed_lines=issue.changed_lines(patch),
                       patch=patch).startswith("it quotes a changed line")
    # a frame of the standard library that happens to share a library function's name is not the library
    stdlib = {"tests/test_numtools.py::test_mean": {"message": "AssertionError: Lists differ", "frames": [
        {"path": "/usr/lib/python3.11/unittest/case.py", "line": 873, "function": "spread"}]}}
    assert issue.facts(["tests/test_numtools.py::test_mean"], set(), stdlib, bundle, {"numtools.py": LIBRARY}).function == "mean"
    inside = {"tests/test_numtools.py::test_mean": {"message": "ZeroDivisionError: division by zero", "frames": [
        {"path": "numtools.py", "line": 50, "function": "spread"}]}}
    assert issue.facts(["tests/test_numtools.py::test_mean"], set(), inside, bundle, {"numtools.py": LIBRARY}).function == "spread"
    hidden = issue.facts(["tests/test_numtools.py::test_mean"], set(), details, bundle, {"numtools.py": LIBRARY})
    assert hidden.example == "" and hidden.function == "mean", "a held-back test's values are never shown"


def test_the_verifier_script_is_standalone():
    """tests/swe_verify.py runs with nothing but the standard library (it is copied into tasks)."""
    path = Path(swe_verify.__file__)
    proc = subprocess.run([sys.executable, "-S", "-I", str(path), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "verify" in proc.stdout
    assert _imports(path) <= {"__future__", "argparse", "ast", "json", "os", "random", "re", "shutil", "signal",
                              "subprocess", "sys", "tempfile", "threading", "time", "pathlib",
                              "aes_verifier"}
    for helper in ("find_copies.py", "naive.py"):
        assert _imports(path.parent / helper) <= {"__future__", "ast", "json", "os", "subprocess", "sys", "tempfile",
                                                  "xml.etree.ElementTree", "pathlib", "swe_verify"}, helper


def _imports(path: Path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text())
    return ({a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            | {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)})


def test_dependencies_get_one_layer_keyed_by_their_content():
    """Declared dependencies (pyproject, else requirements files; pytest itself comes with the image)
    are installed in a layer before the repository is copied: every task of a repository and commit
    shares it, and the build cache keys it by the requirements' content."""
    from autoenvscaling_swe.render import dockerfile, environment_files, requirements

    pyproject = (b'[project]\nname = "lib"\ndependencies = ["attrs>=23", "python-dateutil==2.9.0"]\n'
                 b'[project.optional-dependencies]\ntest = ["pytest>=7", "hypothesis"]\ndocs = ["sphinx"]\n')
    assert requirements({"pyproject.toml": pyproject}) == ["attrs>=23", "hypothesis", "python-dateutil==2.9.0"]
    assert requirements({"requirements.txt": b"# pinned\nrequests==2.32.3\n-e .\npytest-xdist\n\n"}) == \
        ["pytest-xdist", "requests==2.32.3"]
    assert requirements({"setup.py": b"from setuptools import setup\n"}) == []
    reqs = requirements({"pyproject.toml": pyproject})
    text = dockerfile(reqs)
    assert text.index("pip install") < text.index("COPY repo/ /app/"), "dependencies before the code"
    one = environment_files({"pyproject.toml": pyproject, "lib.py": b"A = 1\n"}, reqs)
    two = environment_files({"pyproject.toml": pyproject, "lib.py": b"A = 2\n"}, reqs)
    assert one["environment/deps/requirements.txt"] == two["environment/deps/requirements.txt"]
    assert one["environment/Dockerfile"] == two["environment/Dockerfile"]
    assert "deps/" not in dockerfile([]), "no dependency layer when there is nothing to install"


LIB = "def double(x):\n    return x * 3\n"
SUITE = ("import pytest\nimport unittest\nfrom lib import double\n\n\ndef test_ok():\n    assert double(0) == 0\n\n\n"
         "def test_bad():\n    assert double(2) == 4\n\n\nclass TestU(unittest.TestCase):\n    def test_u(self):\n"
         "        with pytest.raises(ValueError):\n            int('x')\n        self.assertEqual(double(1), 3)\n")
FORGERIES = {
    "forge every report": ("import _pytest.reports as r\nmade = r.TestReport.from_item_and_call.__func__\n"
                           "def passed(cls, item, call):\n    rep = made(cls, item, call)\n"
                           "    rep.outcome, rep.longrepr = 'passed', None\n    return rep\n"
                           "r.TestReport.from_item_and_call = classmethod(passed)\n"),
    "swallow assertion errors": ("import _pytest.python as p\nrun = p.Function.runtest\ndef quiet(self):\n"
                                 "    try:\n        run(self)\n    except AssertionError:\n        pass\n"
                                 "p.Function.runtest = quiet\n"),
    "no-op unittest asserts": "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n",
    "skip at import": "import pytest\npytest.skip('unsupported', allow_module_level=True)\n",
    "exit 0 at import": "import os\nos._exit(0)\n",
    "exit 0 at exit": "import atexit, os\natexit.register(os._exit, 0)\n",
    "close the report pipe": "import os\nfor fd in range(3, 256):\n    try:\n        os.close(fd)\n    except OSError:\n"
                             "        pass\n",
}


def _suite(tmp_path, prelude: str = "") -> Path:
    repo = tmp_path / "scratch" / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text(prelude + LIB)
    (repo / "tests" / "test_a.py").write_text(SUITE)
    return repo


def test_an_honest_run_is_trusted_and_its_canaries_follow_the_files_styles(tmp_path):
    """Canaries go between the real tests, at least one must pass and one must fail, and the styles
    the file uses (pytest.raises, unittest asserts) each get a must-fail canary; an honest run of a
    failing suite is trusted, whatever the seed draws."""
    for seed in range(5):
        repo = _suite(tmp_path / str(seed))
        report = swe_verify.run_pytest(repo, ["tests/test_a.py"], timeout=60, plugins=[], rng=random.Random(seed))
        assert report["integrity"] == "", report["output_tail"]
        assert {t.split("::")[-1]: v["outcome"] for t, v in report["tests"].items()} == \
            {"test_ok": "passed", "test_bad": "failed", "test_u": "passed"}
    canaries, _ = swe_verify.plant_canaries(_suite(tmp_path / "p"), ["tests/test_a.py"], random.Random(1))
    expects = [c["expect"] for c in canaries]
    assert "passed" in expects and "failed" in expects and len(canaries) >= 4
    assert any("::" in c["name"] and c["expect"] == "failed" for c in canaries), "a failing unittest canary"
    assert len({c["name"] for c in canaries}) == len(canaries)


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_forgery_from_the_code_under_test_breaks_the_canaries(tmp_path, forgery):
    """The library patches pytest, skips, or ends the process: the run is not trusted (every way of
    making the listed tests look better than they are changes a canary, the session end or the exit
    status)."""
    repo = _suite(tmp_path, FORGERIES[forgery])
    report = swe_verify.run_pytest(repo, ["tests/test_a.py"], timeout=60, plugins=[], rng=random.Random(7))
    assert report["integrity"], f"{forgery} went unnoticed: {report['tests']}"


def test_records_keep_the_worst_outcome_and_passes_only_from_the_call():
    """A forger can add lines to the pipe but never take one back: a failure stays a failure."""
    lines = ['{"k": "start"}',
             '{"k": "test", "nodeid": "t.py::a", "when": "setup", "outcome": "passed"}',
             '{"k": "test", "nodeid": "t.py::a", "when": "call", "outcome": "failed", "text": "E   assert 1 == 2"}',
             '{"k": "test", "nodeid": "t.py::a", "when": "call", "outcome": "passed"}',
             '{"k": "test", "nodeid": "t.py::b", "when": "setup", "outcome": "passed"}',
             '{"k": "test", "nodeid": "t.py::c", "when": "setup", "outcome": "failed"}',
             'not json', '{"k": "collect", "nodeid": "t2.py"}']
    records = swe_verify.read_records(lines)
    assert {t: v["outcome"] for t, v in records["tests"].items()} == {"t.py::a": "failed", "t.py::c": "error"}
    assert records["tests"]["t.py::a"]["message"] == "assert 1 == 2"
    assert records["started"] and not records["ended"] and records["collection_errors"] == ["t2.py"]
    assert swe_verify.integrity_problem(records, [{"file": "t.py", "name": "a", "expect": "failed"}], 1).startswith(
        "the test session never reached its end")


def test_a_second_copy_is_a_module_of_the_same_name_defining_most_of_the_same_names():
    from autoenvscaling_swe.suite import code_modules, copies_problem

    files = {"src/pkg/__init__.py": b"from .core import *\n", "src/pkg/core.py": b"def a(): pass\ndef b(): pass\n"
             b"class C: pass\ndef _private(): pass\n", "tool.py": b"def run(): pass\n", "setup.py": b"def x(): pass\n",
             "scripts/go.py": b"def go(): pass\n", "tests/test_pkg.py": b"def test_a(): pass\n"}
    assert code_modules(files) == {"pkg": ["C", "a", "b"], "tool": ["run"]}
    assert copies_problem([{"module": "pkg", "path": "/usr/lib/python3/dist-packages/pkg", "shared": 1, "of": 3}]) == ""
    problem = copies_problem([{"module": "pkg", "path": "/opt/x/_vendor/pkg", "shared": 2, "of": 3}])
    assert "pkg at /opt/x/_vendor/pkg defines 2 of its 3 public names" in problem


def test_the_kit_examples_carry_the_current_verifier_and_image():
    """The examples a proposer learns from are verified like generated tasks: the same verifier files,
    the same image preamble, the repository as the only declared output."""
    from autoenvscaling.tasks.harbor import read_task
    from autoenvscaling_swe.domain import SweDomain
    from autoenvscaling_swe.render import PREAMBLE, PURGE_RUN, WORKDIR, package_text

    examples = SweDomain().kit().examples
    assert examples
    for path in examples:
        task = read_task(path)
        assert task.files["tests/swe_verify.py"].text == package_text("verifier", "swe_verify.py"), path.name
        assert task.files["tests/test.sh"].text == package_text("verifier", "test.sh"), path.name
        dockerfile = task.files["environment/Dockerfile"].text
        assert dockerfile.startswith(PREAMBLE) and PURGE_RUN in dockerfile, path.name
        assert task.config.verifier.outputs == [WORKDIR], path.name
