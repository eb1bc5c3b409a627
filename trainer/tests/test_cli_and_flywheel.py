"""`autoenvscaling train` as a user runs it, and the flywheel's training phase (`run --train`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from trainer_helpers import count_task

from autoenvscaling.executors.jobs import LLMSpec, SolverSpec
from autoenvscaling.flywheel.loop import Budgets, Flywheel, FlywheelConfig
from autoenvscaling.llm.budget import Budget
from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.plugins import create_host
from autoenvscaling.report.html import write_report
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.testing import toy


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from autoenvscaling.cli.main import main; main(sys.argv[1:])"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600)


def test_train_on_a_suite_then_resume(half_solver: Path, tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    with SuiteStore(suite) as store:
        for seed in (0, 100, 200, 300):
            store.add(count_task(seed))
    out = tmp_path / "train"
    args = ["train", "--suite", str(suite), "--model", str(half_solver), "--steps", "1", "--out", str(out),
            "--group-size", "2", "--groups", "1", "--tokens-per-turn", "24", "--held-out", "0.25", "--temperature", "1",
            "--json"]
    done = _cli(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["steps"] == 1 and Path(result["model"], "config.json").is_file()
    assert [e["step"] for e in result["held_out"]] == [0, 1] and result["held_out"][0]["n"] == 2  # 1 task x 2
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert any("useful_group_rate" in r and "dropped_groups" in r and "reward_std" in r for r in rows)
    again = _cli(*args)
    assert again.returncode != 0 and "already holds a training run" in again.stderr and "--resume" in again.stderr
    assert "Traceback" not in again.stderr
    resumed = _cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads(resumed.stdout)["steps"] == 1  # nothing left to train, nothing trained twice
    missing = _cli("train", "--suite", str(suite), "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "x"))
    assert missing.returncode != 0 and "no model checkpoint" in missing.stderr and "Traceback" not in missing.stderr


def _run(fw: Flywheel) -> None:
    """The flywheel's rounds, then its workers stopped (the caller closes it)."""

    async def go() -> None:
        try:
            await fw.run()
        finally:
            await fw.executor.aclose()

    asyncio.run(go())


def test_the_flywheel_trains_one_model_in_both_roles_between_rounds(half_solver: Path, tmp_path: Path) -> None:
    """``run --train --train-roles both`` with the model as solver and as prompt proposer: each
    round's training returns the model the next round solves and proposes with."""
    import autoenvscaling_trainer

    host = create_host(entrypoints=False, plugins=[toy, autoenvscaling_trainer])
    options = {"steps": 1, "held_out": 1, "group_size": 2, "groups": 2, "tokens_per_turn": 24, "temperature": 1.0,
               "roles": "both", "proposer_tokens": 24, "max_resamples": 0}
    # The proposal budget caps the model's answer at 64 tokens: too short for a task, long enough to record.
    config = FlywheelConfig(seed=2, rounds=2, per_round=3, mix={"toy": 1.0}, trainer="grpo", trainer_options=options,
                            proposers={"procedural": 2.0, "prompt": 1.0}, budgets=Budgets(proposal=Budget(tokens=64)),
                            settings=GateSettings(flaky_runs=1, calibration_band=(0.0, 1.0)))
    model = LLMSpec(model=str(half_solver), backend="transformers")
    solver = SolverSpec(llm=model)
    out = tmp_path / "run"
    fw = Flywheel(config, out, host=host, backend=BwrapBackend(), solver=solver, proposer_llm=model,
                  report_writer=write_report)
    try:
        _run(fw)
        proposers = (fw._proposer_for(0), fw._proposer_for(1))
    finally:
        fw.close()
    trainings = RunDB(out / "run.sqlite").trainings()
    assert [t.round for t in trainings] == [0, 1]
    first = trainings[0]
    assert first.solver.model == str(out / "training" / "round-0" / "model") and first.before.model == str(half_solver)
    assert trainings[1].before.model == first.solver.model  # round 1's solver was the trained one
    assert first.proposer is not None and first.proposer.model == first.solver.model
    # Round 0 proposed with the initial model, round 1 with the trained one (a resumed run too).
    assert proposers == (model, first.proposer)
    assert any(u.proposer == "prompt" for u in RunDB(out / "run.sqlite").units())
    assert any(row.get("proposer/groups") == 1 for row in first.history)
    assert first.metrics["steps"] == 1  # round 0 admitted tasks, and the solver trained on them
    assert any("useful_group_rate" in row for row in first.history)
    assert any("held_out_pass_rate" in row for row in first.history)
    assert 'id="training"' in (out / "report.html").read_text()  # the report draws the curves


def test_the_served_solver_follows_the_trained_checkpoint(half_solver: Path, tmp_path: Path) -> None:
    """``run --train`` with llama.cpp installed: the trainer trains transformers checkpoints, and each
    round's solver is a llama.cpp server of that round's checkpoint, converted to GGUF (round 1: the
    checkpoint round 0's training wrote). Calibration is skipped so that round 0's pool, and with it
    the training, does not hang on sampled rollouts; the served spec of round 1 is then asked for an
    answer as a worker would. A checkpoint's server is stopped when the next checkpoint of the same
    training starts; the initial model's stays (a role may keep it)."""
    import contextlib

    import pytest

    import autoenvscaling_trainer
    from autoenvscaling.cli.flywheel_cmd import _Served
    from autoenvscaling.llm import serve
    from autoenvscaling.llm.base import ChatMessage

    required = os.environ.get("AUTOENVSCALING_REQUIRE_LLAMA_SERVER")  # CI: the bootstrap installs both
    if not (serve.available() and serve.converter() is not None) and not required:
        pytest.skip("llama-cpp-python's server and converter are not installed (scripts/bootstrap.sh)")
    host = create_host(entrypoints=False, plugins=[toy, autoenvscaling_trainer])
    options = {"steps": 1, "held_out": 0, "group_size": 2, "groups": 2, "tokens_per_turn": 24, "temperature": 1.0,
               "max_resamples": 0}
    config = FlywheelConfig(seed=2, rounds=3, per_round=2, mix={"toy": 1.0}, trainer="grpo", trainer_options=options,
                            settings=GateSettings(flaky_runs=1, skip=("calibration",)))
    out = tmp_path / "run"
    asked: list[tuple[str, LLMSpec, list[str]]] = []  # (model asked for, spec served, servers running)
    with contextlib.ExitStack() as servers:
        served = _Served(servers)

        def serve_and_log(spec: LLMSpec) -> LLMSpec:
            got = served(spec)
            asked.append((spec.model, got, list(served.running)))
            return got

        fw = Flywheel(config, out, host=host, backend=BwrapBackend(), solver=SolverSpec(llm=LLMSpec(model=str(half_solver))),
                      serve=serve_and_log)
        try:
            _run(fw)
        finally:
            fw.close()
        llm = asked[-1][1].build(host)  # the last round's solver, as a worker builds it

        async def ask() -> str:
            try:
                return (await llm.chat([ChatMessage.user("Count the lines.")], max_tokens=8, temperature=0)).message.content
            finally:
                await llm.aclose()

        answer = asyncio.run(ask())
    trainings = RunDB(out / "run.sqlite").trainings()
    assert [t.metrics["steps"] for t in trainings] == [1, 1, 1]  # every round's pool trained the solver
    assert all(t.before.llm.backend is None for t in trainings)  # the trainer trains transformers weights
    checkpoints = [str(out / "training" / f"round-{r}" / "model") for r in (0, 1)]
    assert [t.solver.model for t in trainings[:2]] == checkpoints
    assert [model for model, _, _ in asked] == [str(half_solver), *checkpoints]  # each round's solver, served
    assert [(spec.backend, spec.model) for _, spec, _ in asked] == [
        ("llama-server", f"{half_solver.parent.name}-model"), ("llama-server", "round-0-model"),
        ("llama-server", "round-1-model")]
    assert [running for _, _, running in asked] == [[str(half_solver)], [str(half_solver), checkpoints[0]],
                                                    [str(half_solver), checkpoints[1]]]  # round 1's retired round 0's
    assert all((Path(c) / "model.gguf").is_file() for c in checkpoints)
    assert answer  # the server of the last checkpoint answers


def test_train_refuses_a_served_solver_and_skips_an_empty_pool(tmp_path: Path) -> None:
    import pytest

    from autoenvscaling.errors import ConfigError
    from autoenvscaling.trainers.base import TrainerContext
    from autoenvscaling_trainer.flywheel import GRPOFlywheelTrainer

    trainer = GRPOFlywheelTrainer()
    trainer.configure(TrainerContext(workdir=tmp_path / "t", round=0, seed=0, backend="bwrap"), create_host())
    served = SolverSpec(llm=LLMSpec(model="m", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match="solver is served") as raised:
        asyncio.run(trainer.train([count_task(0)], [], served))
    assert "--solver-model embedded" in (raised.value.hint or "")
    local = SolverSpec(llm=LLMSpec(model="embedded", backend="transformers"))
    result = asyncio.run(trainer.train([], [], local))
    assert result.solver == local and result.metrics == {"steps": 0.0, "skipped_empty_pool": 1.0}
    with pytest.raises(Exception, match="unknown trainer option"):
        trainer.configure(TrainerContext(workdir=tmp_path, round=0, seed=0, backend="bwrap",
                                         options={"stepz": 3}), create_host())
        trainer.settings()
