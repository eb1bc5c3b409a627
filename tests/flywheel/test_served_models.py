"""The slow tier of real models: llama.cpp's server (scripts/bootstrap.sh builds llama-cpp-python)
serving the embedded SmolLM2 GGUF, one proposal of each LLM proposer through it, and a calibration
whose rollouts the same served model plays, all in real bubblewrap sandboxes with the real gates."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from autoenvscaling.agents.solver import LOCAL_PROFILE, SolverAgent
from autoenvscaling.flywheel.assignments import new_task
from autoenvscaling.flywheel.calibration import CalibrationGate
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.gates.validate import Validator
from autoenvscaling.llm.serve import LlamaServerBackend, LocalServer, available
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.agentic import AgenticProposer
from autoenvscaling.proposers.base import Proposal
from autoenvscaling.proposers.prompt import PromptFeedbackProposer, PromptProposer
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import ToyDomain, toy

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not available(), reason="llama-cpp-python[server] is not installed")]

DOMAIN = ToyDomain()


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    with LocalServer("embedded") as running:
        yield running


def _llm(server: LocalServer) -> LlamaServerBackend:
    return LlamaServerBackend(server.base_url, None, server.alias)


@pytest.mark.parametrize("kind", ["prompt", "prompt-feedback", "agentic"])
def test_each_llm_proposer_proposes_through_the_served_model(kind: str, server: LocalServer,
                                                             backend: BwrapBackend) -> None:
    validator = Validator(host=create_host(entrypoints=False, plugins=[toy]), backend=backend)
    llm = _llm(server)
    options: dict[str, Any] = {"llm": llm, "checker": validator.validate}
    proposer = {"prompt": lambda: PromptProposer(**options),
                "prompt-feedback": lambda: PromptFeedbackProposer(**options),
                "agentic": lambda: AgenticProposer(backend=backend, **options)}[kind]()

    async def propose() -> Proposal:
        try:
            return await proposer.propose(new_task(DOMAIN, "write-file", seed=5), domain=DOMAIN, seed=5)
        finally:
            await llm.aclose()

    proposal = asyncio.run(propose())
    # A 135M model rarely writes a valid task; what must hold is that the call path is real and
    # accounted: the served model answered, its tokens were counted, and the outcome has a reason.
    assert proposal.kind == kind and proposal.model == server.alias
    assert proposal.tokens_in > 0 and proposal.tokens_out > 0 and llm.usage.calls >= 1
    assert proposal.scored, proposal.error
    assert proposal.task is not None or proposal.error


def test_calibration_rollouts_are_played_by_the_served_model(server: LocalServer, backend: BwrapBackend) -> None:
    task = DOMAIN.generate("count-lines", seed=11, difficulty="easy")
    llm = _llm(server)
    solver = SolverAgent(llm)
    assert solver.profile == LOCAL_PROFILE  # the local model's short budget and text protocol
    ctx = GateContext(backend=backend, runner=TrialRunner(backend), settings=GateSettings(), solver=solver)

    async def measure() -> Any:
        try:
            return await CalibrationGate().measure(task, ctx)
        finally:
            await llm.aclose()

    calibration = asyncio.run(measure())
    assert len(calibration.rewards) >= 4 and all(r in (0.0, 1.0) for r in calibration.rewards)
    assert calibration.gate.status in ("pass", "fail") and calibration.gate.reason
    assert llm.usage.calls >= len(calibration.rewards) and llm.usage.completion_tokens > 0


def _run_until(argv: list[str], stop_at: str | None) -> tuple[int, list[str], str]:
    """Run the CLI; when a stderr line contains ``stop_at``, send SIGTERM. (exit status, stderr lines, stdout)."""
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    cli = Path(sys.executable).with_name("autoenvscaling")
    proc = subprocess.Popen([str(cli), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    try:
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line.rstrip("\n"))
            if stop_at is not None and stop_at in line:
                proc.send_signal(signal.SIGTERM)
                stop_at = None
        code = proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join()
    return code, lines, "".join(out)


def test_run_with_a_served_proposer_shows_life_stops_on_sigterm_and_resumes(tmp_path: Any) -> None:
    from autoenvscaling.flywheel.loop import RUN_DB
    from autoenvscaling.flywheel.rundb import RunDB

    out = tmp_path / "run"
    argv = ["run", "--proposer", "agentic", "--proposer-model", "embedded", "--rounds", "1", "--per-round", "2",
            "--no-solver", "--mix", "terminal", "--out", str(out)]
    # Stopped twice, at the first heartbeat and at the first LLM call in flight, then resumed to the end.
    interrupted = 0
    for stop_at in ("] round 0", "LLM call"):
        code, lines, _ = _run_until([*argv, "--resume"] if out.exists() else argv, stop_at)
        if code == 0:
            break  # the run ended before the point came: nothing left to interrupt
        assert code == 130, lines
        assert lines[0].startswith("serving embedded with llama.cpp")
        assert any(line.startswith("[0:0") for line in lines), lines  # the heartbeat
        assert any(line.startswith("interrupted: ") for line in lines), lines
        resume = next(line for line in lines if line.startswith("continue with: "))
        assert resume.endswith(" --resume") and f"--out {out}" in resume
        interrupted += 1
    assert interrupted >= 1  # the first point comes seconds after the start, long before two proposals end
    code, lines, stdout = _run_until([*argv, "--resume"], None)
    assert code == 0, lines
    assert "round 0: 2 proposed" in stdout
    db = RunDB(out / RUN_DB)
    try:
        keys = [u.key for u in db.units()]
    finally:
        db.close()
    assert len(keys) == 2 == len(set(keys))
