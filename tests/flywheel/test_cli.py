"""``autoenvscaling run`` and ``generate`` as a user runs them: the installed command, the installed
domains, a served solver (the scripted server over loopback HTTP), real sandboxes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, ToolCallsReply
from autoenvscaling.plugins import create_host



def _cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    code = "import sys; from autoenvscaling.cli.main import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def terminal_installed() -> None:
    if "terminal" not in create_host().domains.names():
        pytest.skip("the terminal domain plugin is not installed")


def test_run_with_a_served_solver(tmp_path: Path, backend: Any, terminal_installed: None) -> None:
    def give_up(request: dict[str, Any]) -> Any:  # a solver that looks once, then stops
        if any(m["role"] == "tool" for m in request["messages"]):
            return ToolCallsReply([("finish", {})])
        return ToolCallsReply([("bash", {"command": "ls"})])

    out = tmp_path / "run"
    with ScriptedOpenAIServer(give_up) as srv:
        done = _cli("run", "--out", str(out), "--rounds", "1", "--per-round", "1", "--mix", "terminal=1",
                    "--solver-base-url", srv.base_url, "--solver-model", "scripted", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["report"] == str(out / "report.html") and (out / "report.html").is_file()
    (round0,) = summary["rounds"]
    assert round0["proposals"] == 1 and round0["valid_rate"]["n"] <= 1
    db = RunDB(out / "run.sqlite")
    (unit,) = db.units()
    assert db.config()["solver_model"] == "scripted" and unit.domain == "terminal"
    if unit.outcome in ("admitted", "failed_calibration"):  # it reached calibration: four scripted rollouts
        assert len(db.rollouts(key=unit.key, phase="calibration")) >= 4
    assert "round 0" in done.stderr  # the progress bar went to stderr


def test_generate_a_suite(tmp_path: Path, backend: Any, terminal_installed: None) -> None:
    out = tmp_path / "suite"
    done = _cli("generate", "--mix", "terminal=1", "-n", "2", "--out", str(out), "--seed", "4", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    (summary,) = json.loads(done.stdout)["rounds"]
    assert summary["admitted"] == 2
    assert (out / "dataset.toml").read_text().count("[[tasks]]") == 2
    assert len([p for p in (out / "tasks").iterdir() if (p / "task.toml").is_file()]) == 2


@pytest.mark.parametrize(("args", "message"), [
    (["run", "--proposer", "prompt"], "error: the prompt proposer needs a model"),
    (["generate", "-n", "1", "--mix", "nosuch=1"], "error: unknown domain(s) in the mix: nosuch"),
    (["generate", "-n", "1", "--mix", "terminal=lots"], "the weight must be a number"),
    (["run", "--no-solver", "--trainer", "nope"], "error: unknown trainer 'nope'"),
    (["generate", "-n", "1", "--executor", "nope"], "error: unknown executor 'nope' (known: local, ray)"),
    (["generate", "-n", "1", "--ray-address", "head:6379"], "error: the local executor takes no address"),
    (["run", "--llm-backend", "openai"], "error: the openai LLM backend needs the server's base URL"),
    (["run", "--round-budget", "tokens=lots"], "cannot read the budget 'tokens=lots' at 'tokens=lots'"),
    (["generate", "-n", "1", "--run-budget", "usd=0"], "has a limit that is not positive"),
    (["run", "--train-roles", "both"], "error: --train-steps/--train-held-out/--train-roles configure training"),
])
def test_usage_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    done = _cli(*args, "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_bench_proposers_prints_rates_per_model(backend: Any, terminal_installed: None) -> None:
    from autoenvscaling.llm.scripted_server import TextReply
    from autoenvscaling.proposers.response import render_task

    domain = create_host().domains.get("terminal")()
    valid = render_task(domain.generate(domain.families()[0].name, seed=1, difficulty="easy"))

    def reply(request: dict[str, Any]) -> Any:
        return TextReply(valid if request["model"] == "good" else "I would write a task about files.")

    with ScriptedOpenAIServer(reply) as srv:
        done = _cli("bench", "proposers", "--model", "good", "--model", "bad", "--base-url", srv.base_url, "-n", "1",
                    "--kinds", "prompt", "--json")
        table = _cli("bench", "proposers", "--model", "bad", "--base-url", srv.base_url, "-n", "1", "--kinds", "prompt")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {r["model"]: r for r in json.loads(done.stdout)}
    assert (rows["good"]["rate"]["successes"], rows["good"]["rate"]["n"]) == (1, 1)
    assert (rows["bad"]["rate"]["successes"], rows["bad"]["rate"]["n"]) == (0, 1)
    assert rows["good"]["rate"]["low"] == pytest.approx(0.206549, abs=1e-6)  # Wilson interval of 1/1
    assert table.returncode == 0 and "bad" in table.stdout and "0/1" in table.stdout


def test_run_solves_with_the_default_solver_unless_told_otherwise() -> None:
    from autoenvscaling.cli.flywheel_cmd import DEFAULT_SOLVER, solver_target

    assert solver_target(None, None) == (DEFAULT_SOLVER, None) == ("embedded-qwen", None)
    assert solver_target("embedded", None) == ("embedded", None)
    assert solver_target(None, "http://127.0.0.1:9/v1") == (None, "http://127.0.0.1:9/v1")  # a served model
