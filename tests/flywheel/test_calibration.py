"""Gate 9 with real rollouts: a scripted solver (real HTTP) acting in bubblewrap sandboxes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from autoenvscaling.agents.solver import SolverAgent
from autoenvscaling.flywheel.calibration import CalibrationGate, in_band, rollout_seed
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import DelayReply, ErrorReply, ScriptedOpenAIServer, ToolCallsReply
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.tasks import Task
from autoenvscaling.testing import ToyDomain

TASK = ToyDomain().generate("count-lines", seed=11, difficulty="easy")
SOLVE = "wc -l < /app/input.txt > /app/answer.txt"



class Solves:
    """A scripted solver whose n-th attempt (in the order attempts start) solves the task when
    ``plan[n]`` is true, and otherwise gives up at once. Records the seeds it was sent."""

    def __init__(self, plan: list[bool]) -> None:
        self.plan = plan
        self.started = 0
        self.seeds: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        if any(m["role"] == "tool" for m in request["messages"]):
            return ToolCallsReply([("finish", {})])
        with self.lock:
            solve = self.plan[self.started]
            self.started += 1
            self.seeds.append(request["seed"])
        return ToolCallsReply([("bash", {"command": SOLVE if solve else "true"})])


def _measure(backend: BwrapBackend, script: Any, task: Task = TASK, servers: list | None = None,
             concurrency: int | None = None, **settings: Any):  # type: ignore[no-untyped-def]
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "solver", backoff_base=0.01, max_retries=0)
        ctx = GateContext(backend=backend, runner=TrialRunner(backend), settings=GateSettings(**settings),
                          solver=SolverAgent(llm, rollout_concurrency=concurrency))
        if servers is not None:
            servers.append(srv)

        async def go():  # type: ignore[no-untyped-def]
            try:
                return await CalibrationGate().measure(task, ctx)
            finally:
                await llm.aclose()

        return asyncio.run(go())


def test_without_a_solver_the_gate_skips(backend: BwrapBackend) -> None:
    ctx = GateContext(backend=backend, runner=TrialRunner(backend), settings=GateSettings())
    result = asyncio.run(CalibrationGate().check(TASK, ctx))
    assert result.status == "skip" and "no solver" in result.reason and result.passed


def test_too_hard_and_too_easy_fail_after_four_rollouts(backend: BwrapBackend) -> None:
    hard = _measure(backend, Solves([False] * 8))
    assert hard.gate.status == "fail" and "below the band" in hard.gate.reason
    assert hard.rewards == [0.0] * 4 and hard.gate.evidence[0].values["rewards"] == [0.0] * 4
    easy = _measure(backend, Solves([True] * 8))
    assert easy.gate.status == "fail" and "above the band" in easy.gate.reason and easy.rewards == [1.0] * 4


def test_inside_the_band_passes_with_four(backend: BwrapBackend) -> None:
    solver = Solves([True, False, True, False])
    cal = _measure(backend, solver)
    assert cal.gate.status == "pass" and sorted(cal.rewards) == [0.0, 0.0, 1.0, 1.0] and cal.mean == 0.5
    # Every rollout samples from its own seed, derived from the task: the solver's first turn says so.
    assert sorted(solver.seeds) == sorted(rollout_seed(TASK, i) * 1000 + 1 for i in range(4))
    assert len(cal.gate.evidence) == 1 + 4


def test_near_a_band_edge_expands_to_eight(backend: BwrapBackend) -> None:
    # 1 of 4 (mean 0.25, on the edge) -> four more; 3 of 8 in all (0.375) passes.
    cal = _measure(backend, Solves([True, False, False, False, True, True, False, False]))
    assert len(cal.rewards) == 8 and sum(cal.rewards) == 3.0
    assert cal.gate.status == "pass" and cal.gate.evidence[0].values["rollouts"] == 8
    # The counts come from the settings.
    small = _measure(backend, Solves([True, False, False, False]), calibration_expand_to=4)
    assert len(small.rewards) == 4 and small.gate.status == "pass"
    narrow = _measure(backend, Solves([True, True, False, False]), calibration_band=(0.6, 0.9))
    assert narrow.gate.status == "fail" and "below the band [0.6, 0.9]" in narrow.gate.reason


def test_equal_partial_rewards_have_no_learning_signal(backend: BwrapBackend) -> None:
    half = TASK.with_files({"tests/test.sh": "#!/bin/bash\necho 0.5 > /logs/verifier/reward.txt\n"})
    cal = _measure(backend, Solves([False] * 8), task=half)
    assert cal.rewards == [0.5] * 4 and cal.gate.status == "fail" and "no learning signal" in cal.gate.reason


def test_an_unreachable_solver_model_is_an_infrastructure_error(backend: BwrapBackend) -> None:
    cal = _measure(backend, lambda request: ErrorReply(503))
    assert cal.gate.status == "error" and cal.excluded == 4 and cal.rewards == []
    assert all(e.values["stop_reason"] == "infrastructure" for e in cal.gate.evidence[1:])


def test_rollout_concurrency_limits_parallel_rollouts(backend: BwrapBackend) -> None:
    def slow(request: dict[str, Any]) -> Any:  # each answer takes a while, so parallel rollouts overlap
        return DelayReply(0.3, ToolCallsReply([("finish", {})]))

    parallel: list[ScriptedOpenAIServer] = []
    _measure(backend, slow, servers=parallel)
    serial: list[ScriptedOpenAIServer] = []
    cal = _measure(backend, slow, servers=serial, concurrency=1)
    assert parallel[0].max_in_flight >= 2 and serial[0].max_in_flight == 1
    assert len(cal.rewards) == 4


def test_the_band_rule() -> None:
    band = (0.25, 0.75)
    assert in_band([0.0, 1.0, 0.0, 1.0], band)[0] == "pass"
    assert in_band([1.0, 0.0, 0.0, 0.0], band)[0] == "pass"  # the edges belong to the band
    assert in_band([0.0, 0.0, 0.0, 0.5], band)[0] == "fail"  # mean 0.125
    assert in_band([1.0, 1.0, 1.0, 0.5], band)[0] == "fail"  # mean 0.875
    status, reason = in_band([0.5] * 4, band)
    assert status == "fail" and "no learning signal" in reason  # partial credit, but no spread
    assert in_band([0.25, 0.5, 0.5, 0.5], band)[0] == "pass"  # partial credit with a spread
    assert in_band([1.0], band)[0] == "error"
