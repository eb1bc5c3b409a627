"""`autoenvscaling tasks validate|run` as a user runs them: a real process, its stdout and exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SANDBOX_SKIPS = ["--skip", "build", "--skip", "oracle", "--skip", "null", "--skip", "redteam", "--skip", "reset",
                 "--skip", "flaky"]


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("autoenvscaling")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)


def test_validate_json_contract_in_input_order(defects):
    proc = cli("tasks", "validate", str(defects / "good"), str(defects), "--json", *SANDBOX_SKIPS)
    assert proc.returncode == 0, proc.stderr
    reports = json.loads(proc.stdout)
    assert [r["task"] for r in reports][:2] == [str(defects / "good"), str(defects / "failing-solution")]
    assert len(reports) == 9  # good, named twice, is validated once
    for r in reports:
        assert {"task", "name", "status", "reason", "gates"} <= set(r)
        assert r["status"] in ("valid", "invalid", "error", "timeout")
        assert "\n" not in r["reason"]
        for g in r["gates"]:
            assert {"name", "status", "seconds", "evidence"} <= set(g)
    statuses = {Path(r["task"]).name: r["status"] for r in reports}
    assert statuses["malformed-toml"] == statuses["missing-test-sh"] == statuses["solution-reads-tests"] == "invalid"
    assert statuses["good"] == "valid"


def test_validate_table_and_held_out(defects, tmp_path):
    held = tmp_path / "held.jsonl"
    held.write_text(json.dumps({"instruction": "Please write the word ready and nothing else into /app/answer.txt now"}) + "\n")
    proc = cli("tasks", "validate", str(defects / "good"), "--held-out", str(held), *SANDBOX_SKIPS)
    assert proc.returncode == 0, proc.stderr
    assert "invalid" in proc.stdout and "decontamination" in proc.stdout
    assert "1 invalid" in proc.stdout


@pytest.mark.parametrize("args, message, code", [
    (["--skip", "lnt"], "error: unknown gate(s) to skip: lnt", 2),
    (["/no/such/dir"], "error: /no/such/dir: no such file or directory", 2),
    (["--backend", "kvm"], "error: unknown sandbox backend 'kvm' (known: bwrap, docker)", 2),
])
def test_usage_errors_exit_non_zero_with_one_line(defects, args, message, code):
    proc = cli("tasks", "validate", str(defects / "good"), *args)
    assert proc.returncode == code
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_and_run_on_bwrap(defects, bwrap_backend):
    proc = cli("tasks", "validate", str(defects / "good"), "--json", "--flaky-runs", "2", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)[0]
    assert report["status"] == "valid", report["reason"]
    gates = {g["name"]: g for g in report["gates"]}
    assert gates["oracle"]["evidence"][0]["values"]["rewards"] == {"reward": 1.0}
    assert gates["null"]["evidence"][0]["values"]["reward"] == 0.0
    assert gates["flaky"]["evidence"][-1]["values"]["runs"] == [1.0, 1.0]
    assert gates["calibration"]["status"] == "skip"
    for agent, reward in (("oracle", 1.0), ("nop", 0.0)):
        proc = cli("tasks", "run", "--agent", agent, str(defects / "good"), str(defects / "malformed-toml"), "--json")
        assert proc.returncode == 0, proc.stderr
        rows = json.loads(proc.stdout)
        assert (rows[0]["status"], rows[0]["reward"]) == ("ok", reward)
        assert rows[1]["status"] == "invalid" and "malformed TOML" in rows[1]["error"]


HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
RUN_FIELDS = {"path", "task", "agent", "status", "reward", "rewards", "seconds", "error", "commands", "cause", "reason",
              "verifier_view"}


def test_run_oracle_without_a_solution_is_an_error_and_a_zero_says_why(bwrap_backend):
    no_solution, missing_python = HARBOR / "lint-many-problems", HARBOR / "cause-missing-python"
    proc = cli("tasks", "run", "--agent", "oracle", str(no_solution), str(missing_python), "--json")
    assert proc.returncode == 0, proc.stderr  # the batch ran; the verdicts are per task
    rows = json.loads(proc.stdout)
    assert all(set(row) == RUN_FIELDS for row in rows)
    assert [row["path"] for row in rows] == [str(no_solution), str(missing_python)]
    error, zero = rows
    assert (error["status"], error["error"], error["reason"]) == (
        "error", "no solution/solve.sh: the oracle has nothing to run", "no solution/solve.sh: the oracle has nothing to run")
    assert (error["reward"], error["rewards"], error["commands"]) == (0.0, {}, 0)
    assert (zero["status"], zero["reward"], zero["cause"]) == ("ok", 0.0, "python: command not found")
    assert zero["reason"] == "scored 0: python: command not found"
    assert error["verifier_view"] == [] and zero["verifier_view"] == ["verifier view: protected"]
    table = cli("tasks", "run", "--agent", "oracle", str(no_solution))
    assert table.returncode == 0 and "error" in table.stdout and "nothing to run" in table.stdout  # a wrapped table


def test_lint_judges_the_base_image_for_the_chosen_backend():
    task = str(HARBOR / "lint-many-problems")
    bwrap, docker = (json.loads(cli("tasks", "validate", task, "--json", "--backend", b, *SANDBOX_SKIPS).stdout)[0]
                     for b in ("bwrap", "docker"))
    assert bwrap["reason"].startswith("lint: 3 problems: missing solution/solve.sh; FROM registry.example.com/")
    assert docker["reason"] == ("lint: 2 problems: missing solution/solve.sh; "
                                "COPY source app.py is not in environment/ (Dockerfile line 3)")
    lint = docker["gates"][0]["evidence"][0]
    assert lint["command"] == "static lint (backend docker)" and lint["values"]["warnings"] == 1
