"""The verifier library (core/verifier/aes_verifier.py, tests/aes_verifier.py in every task): pytest
reports read from CTRF and JUnit, partial credit, the result files, and the one way a verifier
imports it, which no module planted outside tests/ can hijack."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autoenvscaling.verifier import VERIFIER_LIBRARY, aes_verifier, verifier_library

LIBRARY = Path(aes_verifier.__file__)


def test_the_library_is_one_standard_library_file_for_python_3_8():
    assert verifier_library() == {VERIFIER_LIBRARY: LIBRARY.read_text(encoding="utf-8")}
    tree = ast.parse(LIBRARY.read_text(encoding="utf-8"), feature_version=(3, 8))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


# -- reading pytest reports -------------------------------------------------------------------------

def ctrf(tmp_path: Path, tests: list[tuple[str, str]]) -> Path:
    path = tmp_path / "ctrf.json"
    path.write_text(json.dumps({"results": {"tests": [{"name": n, "status": s} for n, s in tests]}}))
    return path


def test_ctrf_counts_only_passed_and_a_check_passes_only_when_every_case_did(tmp_path):
    report = ctrf(tmp_path, [
        ("tests/test_outputs.py::test_ok", "passed"),
        ("tests/test_outputs.py::test_failed", "failed"),
        ("tests/test_outputs.py::test_skipped", "skipped"),
        ("tests/test_outputs.py::test_pending", "pending"),
        ("tests/test_outputs.py::test_other", "other"),
        ("tests/test_outputs.py::TestX::test_param[1]", "passed"),
        ("tests/test_outputs.py::TestX::test_param[2]", "failed"),
        ("tests/test_outputs.py::test_all_params[a::b]", "passed"),  # "::" inside a parameter id
        ("tests/test_outputs.py::test_all_params[c]", "passed"),
        ("tests/test_outputs.py::test_twice", "passed"),
        ("tests/test_outputs.py::test_twice", "failed"),  # reported twice: the worse outcome stays
    ])
    assert aes_verifier.from_ctrf(str(report)) == {
        "test_ok": True, "test_failed": False, "test_skipped": False, "test_pending": False, "test_other": False,
        "test_param": False, "test_all_params": True, "test_twice": False}


def test_junit_counts_failures_errors_and_skips_as_not_passed(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(
        '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
        '<testcase classname="test_outputs" name="test_ok" time="0.1"><system-out>hi</system-out></testcase>'
        '<testcase classname="test_outputs" name="test_failed"><failure message="assert 1 == 2"/></testcase>'
        '<testcase classname="test_outputs" name="test_error"><error message="fixture broke"/></testcase>'
        '<testcase classname="test_outputs" name="test_skipped"><skipped message="no"/></testcase>'
        '<testcase classname="test_outputs" name="test_xfail"><skipped type="pytest.xfail" message="x"/></testcase>'
        '<testcase classname="test_outputs" name="test_param[1]"/>'
        '<testcase classname="test_outputs" name="test_param[2]"><failure message="x"/></testcase>'
        '<testcase classname="test_outputs" name="test_teardown"/>'
        '<testcase classname="test_outputs" name="test_teardown"><error message="teardown"/></testcase>'
        '</testsuite></testsuites>')
    assert aes_verifier.from_junit(str(report)) == {
        "test_ok": True, "test_failed": False, "test_error": False, "test_skipped": False, "test_xfail": False,
        "test_param": False, "test_teardown": False}


def test_read_results_prefers_a_non_empty_ctrf_and_says_what_it_read(tmp_path):
    logs = str(tmp_path)
    assert aes_verifier.read_results(logs) == ({}, "no test report")
    (tmp_path / "junit.xml").write_text('<testsuite><testcase name="test_a"/></testsuite>')
    (tmp_path / "ctrf.json").write_text("")
    assert aes_verifier.read_results(logs) == ({"test_a": True}, "junit.xml")
    ctrf(tmp_path, [("t.py::test_b", "failed")])
    assert aes_verifier.read_results(logs) == ({"test_b": False}, "ctrf.json")
    (tmp_path / "ctrf.json").write_text('{"results": {}}')
    results, source = aes_verifier.read_results(logs)
    assert results == {} and source.startswith("ctrf.json unreadable")
    (tmp_path / "ctrf.json").unlink()
    (tmp_path / "junit.xml").write_text("<testsuite><testcase")
    results, source = aes_verifier.read_results(logs)
    assert results == {} and source.startswith("junit.xml unreadable")


# -- partial credit -----------------------------------------------------------------------------------

def test_partial_credit_with_guards_and_shape_checks():
    score = aes_verifier.score
    checks = {"test_initial_inputs": True, "test_a": True, "test_b": False, "test_c": True, "test_d": True}
    assert score(checks, "fraction") == (0.75, "3/4 checks passed")
    assert score(checks, "binary") == (0.0, "3/4 checks passed (binary)")
    assert score({**checks, "test_b": True}, "binary") == (1.0, "4/4 checks passed (binary)")
    # a failed guard zeroes the reward, whatever passed
    assert score({**checks, "test_initial_inputs": False, "test_initial_b": False}, "fraction") == (
        0.0, "environment check failed: test_initial_b, test_initial_inputs")
    assert score({"test_initial_inputs": True}, "fraction") == (0.0, "no checks ran")
    assert score({}, "binary") == (0.0, "no checks ran")
    # shape checks count only next to a passed content check
    shape_only = {"test_initial_inputs": True, "test_shape_json": True, "test_shape_header": True, "test_total": False}
    assert score(shape_only, "fraction") == (0.0, "2/3 checks passed, none of them on content")
    assert score({"test_shape_json": True}, "binary") == (0.0, "1/1 checks passed, none of them on content")
    assert score({**shape_only, "test_total": True, "test_top": False}, "fraction")[0] == pytest.approx(3 / 4)


def test_fraction():
    assert aes_verifier.fraction([]) == 0.0
    assert aes_verifier.fraction([True, False, True, True]) == 0.75
    assert aes_verifier.fraction(ok for ok in (1, 0)) == 0.5


# -- result files -------------------------------------------------------------------------------------

def test_result_files_in_each_verifiers_format(tmp_path):
    logs = str(tmp_path / "logs")
    aes_verifier.write_reward(round(2 / 3, 6), logs, as_json=True)
    assert (tmp_path / "logs" / "reward.json").read_text() == '{"reward": 0.666667}'
    aes_verifier.write_reward(1, logs, as_json=True)
    assert (tmp_path / "logs" / "reward.json").read_text() == '{"reward": 1}'
    for reward, fmt, text in [(0.5, ".6f", "0.500000\n"), (0.25, ".4f", "0.2500\n"), (1, None, "1\n"),
                              (0, None, "0\n"), (1.0, "g", "1\n"), (0.1234567, "g", "0.123457\n")]:
        aes_verifier.write_reward(reward, logs, fmt=fmt)
        assert (tmp_path / "logs" / "reward.txt").read_text() == text
    aes_verifier.write_json("tests.json", {"b": 1, "a": 0}, logs, sort_keys=True)
    assert (tmp_path / "logs" / "tests.json").read_text() == '{\n "a": 0,\n "b": 1\n}'
    aes_verifier.write_json("kernel.json", {"x": [1]}, logs, indent=2)
    assert (tmp_path / "logs" / "kernel.json").read_text() == json.dumps({"x": [1]}, indent=2)


def test_clear_removes_stale_results_and_planted_links(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").write_text("1\n")
    (logs / "reward.json").symlink_to(tmp_path / "elsewhere.json")  # dangling: still removed
    (logs / "keep.log").write_text("x")
    (logs / "tests.json").mkdir()  # a folder in a result file's place
    aes_verifier.clear(str(logs), ("reward.txt", "reward.json", "tests.json"))
    assert sorted(p.name for p in logs.iterdir()) == ["keep.log"]
    aes_verifier.clear(str(tmp_path / "new"))
    assert (tmp_path / "new").is_dir()


# -- importing it: the one way, and why it cannot be hijacked -------------------------------------------

# A verifier as the plugins write one: the library from its own folder, first on sys.path.
VERIFIER = '''import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aes_verifier
results, source = aes_verifier.read_results(sys.argv[1])
reward, reason = aes_verifier.score(results, "fraction")
aes_verifier.write_reward(round(reward, 6), sys.argv[1], as_json=True)
'''
# The same verifier importing the library naively: its folder last on sys.path.
NAIVE = VERIFIER.replace("sys.path.insert(0, ", "sys.path.append(")
# What an agent could plant (in its working directory, on PYTHONPATH, in site-packages): every check
# passed. The sitecustomize.py beside it puts it in place before any script runs.
PLANTED = '''import json, os
def read_results(logs):
    return {"test_a": True}, "planted"
def score(results, mode):
    return 1.0, "planted"
def write_reward(reward, logs, **kw):
    with open(os.path.join(logs, "reward.json"), "w") as fh:
        json.dump({"reward": 1.0}, fh)
'''
SITECUSTOMIZE = "import sys, aes_verifier\nsys.modules['aes_verifier'] = aes_verifier\n"


def _verify(tmp_path: Path, script: str, python: str, *, isolated: bool, plant: Path | None = None) -> float:
    """The reward ``script`` writes for a report with 1 of 2 checks passed, run as test.sh runs a
    verifier (``isolated``: python3 -I tests/<script>.py) from the agent's working directory, with
    PYTHONPATH, PYTHONSTARTUP and PYTHONUSERBASE pointing at the agent's planted modules (and the
    same modules in ``plant``, a site-packages folder)."""
    tests, agent, logs = tmp_path / "tests", tmp_path / "agent", tmp_path / "logs"
    for d in (tests, agent, logs):
        d.mkdir(exist_ok=True)
    (tests / "reward.py").write_text(script)
    (tests / VERIFIER_LIBRARY).write_text(LIBRARY.read_text())
    for d in (agent, *([plant] if plant else [])):
        (d / "aes_verifier.py").write_text(PLANTED)
    (agent / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (agent / "usercustomize.py").write_text(SITECUSTOMIZE)
    ctrf(logs, [("t.py::test_a", "passed"), ("t.py::test_b", "failed")])
    env = {**os.environ, "PYTHONPATH": str(agent), "PYTHONSTARTUP": str(agent / "aes_verifier.py"),
           "PYTHONUSERBASE": str(agent)}
    argv = [python, *(["-I"] if isolated else []), str(tests / "reward.py"), str(logs)]
    subprocess.run(argv, cwd=agent, env=env, check=True, capture_output=True, timeout=60)
    return json.loads((logs / "reward.json").read_text())["reward"]


def test_a_module_planted_by_the_agent_cannot_stand_in_for_the_library(tmp_path):
    assert _verify(tmp_path, VERIFIER, sys.executable, isolated=True) == 0.5


def test_positive_control_without_isolation_a_planted_sitecustomize_replaces_it(tmp_path):
    assert _verify(tmp_path, VERIFIER, sys.executable, isolated=False) == 1.0


@pytest.fixture(scope="module")
def site_packages(tmp_path_factory) -> tuple[str, Path]:
    """A Python whose site-packages the agent could write (a fresh venv): (python, site-packages)."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    python = str(root / "bin" / "python")
    site = subprocess.run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    return python, Path(site)


def test_a_module_planted_in_site_packages_cannot_stand_in_for_the_library(tmp_path, site_packages):
    python, site = site_packages
    try:
        assert _verify(tmp_path, VERIFIER, python, isolated=True, plant=site) == 0.5
    finally:
        (site / "aes_verifier.py").unlink(missing_ok=True)


def test_positive_control_a_folder_appended_after_site_packages_loses_to_the_plant(tmp_path, site_packages):
    python, site = site_packages
    try:
        assert _verify(tmp_path, NAIVE, python, isolated=True, plant=site) == 1.0
    finally:
        (site / "aes_verifier.py").unlink(missing_ok=True)


def test_a_verifier_run_as_a_script_takes_the_sibling_branch(tmp_path):
    """Verifier modules the plugins also import on the host choose the core's copy by ``__package__``:
    a script run as test.sh runs it has none, whatever the environment says."""
    script = tmp_path / "probe.py"
    script.write_text("print(repr(__package__))\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-I", str(script)], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"
