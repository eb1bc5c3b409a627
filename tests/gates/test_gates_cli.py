"""`autoenvscaling tasks validate|run` as a user runs them: a real process, its stdout and exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SANDBOX_SKIPS = ["--skip", "build", "--skip", "oracle", "--skip", "null", "--skip", "reset", "--skip", "flaky"]


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
