"""Shared pieces of the flywheel tests: a bubblewrap backend, and a scripted solver for the toy
domain that solves a rollout when its seed says so (so calibration sees a spread of rewards)."""

from __future__ import annotations

import asyncio
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.executors.jobs import LLMSpec, SolverSpec
from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, ToolCallsReply
from autoenvscaling.plugins import create_host, hookimpl
from autoenvscaling.report.html import write_report
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import toy

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # worker processes get the driver's sys.path, so they import crashy_plugin too
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def backend() -> BwrapBackend:
    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend()


def toy_command(instruction: str) -> str:
    """The shell command that solves a toy-domain task, read off its instruction."""
    if instruction.startswith("Count the"):
        word = re.search(r"contain the word `([^`]+)`", instruction)
        if word:
            return f"grep -c -w -F {word.group(1)} /app/input.txt > /app/answer.txt"
        if "non-empty" in instruction:
            return "grep -c . /app/input.txt > /app/answer.txt"
        return "wc -l < /app/input.txt > /app/answer.txt"
    path = re.search(r"Create the file `([^`]+)`", instruction)
    body = re.search(r"-----BEGIN-----\n(.*)-----END-----", instruction, re.S)
    assert path and body, instruction
    return f"mkdir -p $(dirname {path.group(1)}) && cat > {path.group(1)} <<'AES_EOF'\n{body.group(1)}AES_EOF"


class SeededToySolver:
    """A scripted-server reply function: a rollout whose sampling seed is even solves the task, an
    odd one does nothing. Replies depend only on the request, so any order of requests (concurrent
    rollouts, a resumed run) gets the same answers."""

    def __call__(self, request: dict[str, Any]) -> Any:
        if any(m["role"] == "tool" for m in request["messages"]):
            return ToolCallsReply([("finish", {})])
        instruction = request["messages"][1]["content"].split("Your task:", 1)[-1].split("You start in", 1)[0].strip()
        solve = (request.get("seed", 0) // 1000) % 2 == 0
        return ToolCallsReply([("bash", {"command": toy_command(instruction) if solve else "true"})])


@pytest.fixture
def seeded_toy_solver() -> SeededToySolver:
    return SeededToySolver()


class RoundListener:
    """A plugin that listens to the round hook, the way a dashboard plugin would."""

    def __init__(self) -> None:
        self.rounds: list[Any] = []

    @hookimpl
    def autoenvscaling_round_ended(self, summary: Any) -> None:
        self.rounds.append(summary)


def scripted_solver_spec(base_url: str, model: str = "scripted-solver") -> SolverSpec:
    """The solver the toy flywheels use: the scripted server's model, built in each worker."""
    return SolverSpec(llm=LLMSpec(model=model, base_url=base_url), limits=AgentLimits(max_turns=3, timeout_sec=60))


def run_toy_flywheel(config: FlywheelConfig, out: Path, backend: Any, script: Any, *, plugins: Any = (),
                     **kw: Any) -> Any:
    """A flywheel over the toy domain whose solver is the scripted server running ``script`` (writing
    report.html, as the CLI's does)."""
    host = create_host(entrypoints=False, plugins=[toy, *plugins])
    kw.setdefault("report_writer", write_report)
    with ScriptedOpenAIServer(script) as srv:
        fw = Flywheel(config, out, host=host, backend=backend, solver=scripted_solver_spec(srv.base_url), **kw)

        async def go() -> Any:
            try:
                return await fw.run()
            finally:
                await fw.executor.aclose()

        try:
            return asyncio.run(go())
        finally:
            fw.close()


@pytest.fixture
def toy_flywheel() -> Any:
    """``run_toy_flywheel`` for tests (conftest helpers are reached through fixtures)."""
    return run_toy_flywheel


@dataclass
class ToyRun:
    out: Path
    summaries: list[Any]
    announced: list[Any]


@pytest.fixture(scope="session")
def toy_run(tmp_path_factory: pytest.TempPathFactory, backend: BwrapBackend) -> ToyRun:
    """One two-round flywheel over the toy domain, shared by the loop and report tests (~15 s). Seed 5
    gives admissions, a calibration failure, and a pool review where one task stays and one leaves."""
    out = tmp_path_factory.mktemp("toy-run") / "run"
    listener = RoundListener()
    config = FlywheelConfig(seed=13, rounds=2, per_round=2, settings=GateSettings(flaky_runs=2))
    summaries = run_toy_flywheel(config, out, backend, SeededToySolver(), plugins=[listener])
    return ToyRun(out=out, summaries=summaries, announced=listener.rounds)
