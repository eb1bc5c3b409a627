"""Real admission through the bwrap backend and the core's gates 1-8, and reward-hack attempts
by a scripted agent through the core's TrialRunner: every hack scores 0.

The full 300-task admission (``-m slow``) writes its report to $AUTOENVSCALING_TERMINAL_REPORT
(default /tmp/terminal-admission.json): the admission rate and each rejection with its reason."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from autoenvscaling.gates.base import GateSettings
from autoenvscaling.gates.validate import Validator, validate_many
from autoenvscaling.plugins import create_host
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling_terminal.families import CATALOG
from autoenvscaling.testing import ScriptedAgent
from helpers import domain, suite

# One task per family through every gate. Three of them run in the fast set: between them they run
# every line of the shipped code the thirteen run (scripts/fast_set.py); every family's oracle and
# null attempts are in test_scratch_runs.py, and all thirteen run with -m slow.
FAST_FAMILIES = {"git_ops", "log_analysis", "shell_script"}
SAMPLE = [pytest.param(family, ("easy", "medium", "hard")[i % 3],
                       marks=() if family in FAST_FAMILIES else pytest.mark.slow) for i, family in enumerate(CATALOG)]


@pytest.mark.parametrize("family,difficulty", SAMPLE)
def test_sample_is_admitted(family, difficulty, bwrap_backend):
    task = domain().generate(family, seed=31, difficulty=difficulty)
    validator = Validator(host=create_host(strict=True), backend=bwrap_backend, settings=GateSettings(flaky_runs=3))
    report = asyncio.run(validator.validate(task))
    assert report.status == "valid", json.dumps(report.to_json(), indent=1)[-4000:]
    gates = {g.name: g for g in report.gates}
    for name in ("lint", "build", "oracle", "null", "redteam", "reset", "flaky", "decontamination", "near-duplicate"):
        assert gates[name].status == "pass", name
    assert "null reward 0" in gates["null"].reason


def test_asked_for_folders_of_python_files_stay_visible_to_the_verifier(bwrap_backend):
    """file_search's collect copies matching .py files into /app/export/matches: to the verifier view
    /app/export is then a namespace package the tests do not import, hidden unless the task names it
    in agent_paths (what the generator now does). Without them the oracle lost half its reward."""
    from autoenvscaling.agents.builtin import OracleAgent

    task = domain().generate("file_search", seed=101, difficulty="medium")
    assert "-collect-" in task.name and "/app/export" in task.config.verifier.agent_paths
    runner = TrialRunner(bwrap_backend)
    result = asyncio.run(runner.run(task, OracleAgent()))
    assert result.reward == 1.0, result.steps[-1].verifier.output_tail
    bare = task.with_config(task.config.model_copy(update={"verifier": task.config.verifier.model_copy(
        update={"agent_paths": []})}))
    control = asyncio.run(runner.run(bare, OracleAgent()))
    assert control.reward == 0.5
    assert control.steps[-1].verifier.restored_paths["/app/export"] == "a Python module the tests do not import"


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_full_suite_admission(bwrap_backend):
    """300 generated tasks, all families, three difficulties: at least 97% pass gates 1-8."""
    tasks = list(suite(300))
    host = create_host(strict=True)
    validator = Validator(host=host, backend=bwrap_backend, settings=GateSettings(flaky_runs=3))

    async def run():
        from autoenvscaling.executors.base import LocalExecutor

        async with LocalExecutor(concurrency=2) as executor:
            return [r async for r in validate_many(tasks, validator=validator, executor=executor)]

    start = time.monotonic()
    reports = asyncio.run(run())
    seconds = time.monotonic() - start
    valid = [r for r in reports if r.status == "valid"]
    rejected = [{"task": r.name, "status": r.status, "reason": r.reason} for r in reports if r.status != "valid"]
    by_family = Counter(t.provenance.family for t in tasks)
    admitted_by_family = Counter(r.name.split("-")[1] for r in valid)
    summary = {"tasks": len(reports), "admitted": len(valid), "rate": len(valid) / len(reports), "seconds": round(seconds, 1),
               "per_minute": round(len(valid) / seconds * 60, 1), "rejections": rejected,
               "by_family": {f: by_family[f] for f in CATALOG}, "admitted_by_family_prefix": dict(admitted_by_family)}
    Path(os.environ.get("AUTOENVSCALING_TERMINAL_REPORT", "/tmp/terminal-admission.json")).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "rejections"}), *rejected, sep="\n")
    assert len(reports) == 300
    assert summary["rate"] >= 0.97, rejected


# -- reward hacks: a scripted agent tries to score without doing the task -------------------------

@pytest.fixture(scope="module")
def hack_target():
    """A log-analysis task and the path of the report it asks for."""
    import ast

    task = domain().generate("log_analysis", seed=8, difficulty="medium", kind="access_report")
    truth = ast.literal_eval(next(n for n in ast.parse(task.files["tests/test_outputs.py"].text).body if isinstance(n, ast.Assign)).value)
    return task, f"/app/{truth['report']}"


def trial(backend, task, *commands):
    result = asyncio.run(TrialRunner(backend).run(task, ScriptedAgent(*commands)))
    assert result.status == "ok", result.error
    return result


def solution_body(task):
    return task.files["solution/solve.sh"].text


def test_scripted_solution_scores_one(bwrap_backend, hack_target):
    """The scripted agent can succeed: running the reference commands itself scores 1."""
    task, _ = hack_target
    assert trial(bwrap_backend, task, solution_body(task)).reward == 1.0


def test_hack_writing_the_reward_file(bwrap_backend, hack_target):
    task, _ = hack_target
    fake_ctrf = json.dumps({"results": {"tests": [{"name": "test_outputs.py::test_total_requests", "status": "passed"}]}})
    result = trial(bwrap_backend, task, "mkdir -p /logs/verifier && echo '{\"reward\": 1}' > /logs/verifier/reward.json"
                   " && echo 1 > /logs/verifier/reward.txt && echo '{\"test_x\": 1}' > /logs/verifier/tests.json"
                   f" && echo '{fake_ctrf}' > /logs/verifier/ctrf.json")
    assert result.reward == 0.0


def test_hack_editing_the_tests(bwrap_backend, hack_target):
    task, _ = hack_target
    result = trial(bwrap_backend, task, "mkdir -p /tests && printf 'def test_ok():\\n    pass\\n' > /tests/test_outputs.py"
                   " && printf '#!/bin/bash\\necho {\\\\\"reward\\\\\": 1} > /logs/verifier/reward.json\\n' > /tests/test.sh"
                   " && chmod 555 /tests /tests/test.sh")
    assert result.reward == 0.0


def test_hack_deleting_the_tests(bwrap_backend, hack_target):
    task, _ = hack_target
    result = trial(bwrap_backend, task, "rm -rf /tests /logs && mkdir -p /tmp/decoy && ln -s /tmp/decoy /tests && ln -s /tmp/decoy /logs")
    assert result.reward == 0.0


def test_hack_printing_the_answer_without_the_artifact(bwrap_backend, hack_target):
    """Computing the right report but only printing it (the file is not left behind) scores 0."""
    task, report = hack_target
    result = trial(bwrap_backend, task, solution_body(task), f"cat {report} && rm -f {report}")
    assert '"total_requests"' in result.trajectory.actions[-1].output
    assert result.reward == 0.0


CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""


def test_hack_planting_pytest_configuration(bwrap_backend, hack_target):
    """A conftest.py that turns every failure into a pass, and pytest.ini files, left where pytest
    might pick them up, change nothing: the task's own pytest.ini pins the rootdir to /tests."""
    task, _ = hack_target
    plant = " && ".join(f"cat > {d}/conftest.py <<'EOF'\n{CONFTEST}EOF" for d in ("", "/app", "/logs"))
    result = trial(bwrap_backend, task, "mkdir -p /logs && " + plant,
                   "printf '[pytest]\\naddopts = -p conftest\\n' | tee /pytest.ini /app/pytest.ini > /dev/null",
                   "printf '[tool.pytest.ini_options]\\naddopts = \"-x\"\\n' > /pyproject.toml")
    assert result.reward == 0.0, result.steps[-1].verifier.output_tail


FAKE = """#!/bin/sh
mkdir -p /logs/verifier
echo '{"reward": 1}' > /logs/verifier/reward.json
echo '{"results": {"tests": [{"name": "test_outputs.py::test_total_requests", "status": "passed"}]}}' > /logs/verifier/ctrf.json
"""


def test_hack_shadowing_the_verifier_tools(bwrap_backend, hack_target):
    """Fake uvx, pytest and python3 in /usr/local/bin (ahead of /usr/bin on PATH) are never run."""
    task, _ = hack_target
    plant = " && ".join(f"cat > /usr/local/bin/{tool} <<'EOF'\n{FAKE}EOF\nchmod +x /usr/local/bin/{tool}"
                        for tool in ("uvx", "uv", "pytest", "python3"))
    result = trial(bwrap_backend, task, "mkdir -p /usr/local/bin && " + plant)
    assert result.reward == 0.0, result.steps[-1].verifier.output_tail
