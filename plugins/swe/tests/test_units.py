"""The swe plugin's pure parts, no sandbox: test outcomes from real pytest JUnit reports, the
classification rules, patches, held-back tests, issue text and its leak check, the lint gate."""

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


def test_junit_outcomes_come_from_pytests_own_report(tmp_path):
    """A real pytest run (this interpreter's pytest) of passing, failing, erroring, skipped,
    parametrized and class tests; node ids match pytest's, assertion lines and frames are kept."""
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
    (repo / "tests" / "test_broken.py").write_text("import missing_module\n\ndef test_never():\n    pass\n")
    broken = swe_verify.run_pytest(repo, [], timeout=60, plugins=[])
    assert broken["collection_errors"] == ["tests/test_broken.py"] and broken["tests"] == {}
    (repo / "lib.py").write_text("import time\n\ndef double(x):\n    time.sleep(30)\n")
    (repo / "tests" / "test_broken.py").unlink()
    slow = swe_verify.run_pytest(repo, ["tests/test_a.py::test_ok"], timeout=2, plugins=[])
    assert slow["timed_out"] and slow["tests"] == {} and slow["seconds"] < 10


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
    imports = {line.split()[1] for line in path.read_text().splitlines() if line.startswith(("import ", "from "))}
    assert imports <= {"__future__", "argparse", "json", "os", "re", "shutil", "signal", "subprocess", "sys",
                       "tempfile", "time", "xml.etree.ElementTree", "pathlib"}


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
