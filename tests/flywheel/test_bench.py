"""The flywheel's benchmarks with real gates, real bubblewrap sandboxes and a scripted model server.
``bench proposers``: every kind on the same assignments, per model (one model that writes valid
tasks, one that never follows the format). ``bench calibration``: both pools from one rollout
stream, with a scripted solver whose rollouts succeed when their seed is even."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.solver import SolverAgent
from autoenvscaling.errors import UsageError
from autoenvscaling.flywheel.bench import bench_assignments, bench_calibration, bench_proposers, candidate_stream
from autoenvscaling.flywheel.calibration import in_band, rollout_seed
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.response import render_task
from autoenvscaling.tasks import render_config
from autoenvscaling.testing import ToyDomain, toy

GOOD = ToyDomain().generate("count-lines", seed=12, difficulty="easy")


def _write_script(task: Any) -> str:
    parts = ["rm -rf /workspace/task && mkdir -p /workspace/task"]
    files = {"task.toml": render_config(task), "instruction.md": task.instruction}
    files |= {p: f.text for p, f in task.files.items()}
    for path, text in files.items():
        parts.append(f"mkdir -p $(dirname /workspace/task/{path}) && cat > /workspace/task/{path} <<'AES_EOF'\n{text}AES_EOF")
    return "\n".join(parts) + "\nchmod +x /workspace/task/tests/test.sh /workspace/task/solution/solve.sh"


def reply(request: dict[str, Any]) -> Any:
    """A "good" model writes a valid task in whatever protocol it is asked for; "bad" never does."""
    good = request["model"] == "good"
    if "tools" not in request:
        return TextReply(render_task(GOOD) if good else "Here is an idea for a task: count some lines.")
    if not good:
        return ToolCallsReply([("finish", {})])
    last = request["messages"][-1]
    if last["role"] != "tool":
        return ToolCallsReply([("bash", {"command": _write_script(GOOD)})])
    if "Admission checks" in last["content"]:
        return ToolCallsReply([("finish", {})])
    return ToolCallsReply([("check", {})])


def test_bench_compares_kinds_per_model(backend: Any) -> None:
    host = create_host(entrypoints=False, plugins=[toy])
    domain = ToyDomain()
    assert bench_assignments(domain, 3, seed=1) == bench_assignments(domain, 3, seed=1)  # same for every model
    seen: list[tuple[str, str, str]] = []
    with ScriptedOpenAIServer(reply) as srv:
        models = {name: OpenAIBackend(srv.base_url, None, name, max_retries=0) for name in ("good", "bad")}

        async def go() -> Any:
            try:
                return await bench_proposers(host=host, backend=backend, domain=domain, models=models, n=1, seed=1,
                                             kinds=("procedural", "prompt", "prompt-feedback", "agentic"),
                                             progress=lambda *args: seen.append(args))
            finally:
                for llm in models.values():
                    await llm.aclose()

        rows = asyncio.run(go())
    table = {(r.model, r.proposer): r for r in rows}
    assert set(table) == {(m, k) for m in ("good", "bad") for k in ("prompt", "prompt-feedback", "agentic")} | {
        ("-", "procedural")}  # the procedural arm needs no model: it runs once
    procedural = table[("-", "procedural")]
    assert procedural.outcomes["admitted"] == 1 and procedural.tokens == 0 and procedural.tokens_per_valid == 0
    assert all(r.domain == "toy" and r.seconds >= 0 and r.useful is None for r in rows)  # no solver: no groups
    for kind in ("prompt", "prompt-feedback", "agentic"):
        good, bad = table[("good", kind)], table[("bad", kind)]
        assert (good.rate.successes, good.rate.n) == (1, 1) and good.outcomes["admitted"] == 1
        assert (bad.rate.successes, bad.rate.n) == (0, 1) and bad.outcomes["failed_validation"] == 1
        assert good.rate.low is not None and good.rate.low < 1.0  # a Wilson interval, not a point
        assert good.cost.per_valid_usd is None and good.cost.unpriced == 1  # these models have no price
        assert good.tokens > 0 and good.tokens_per_valid == good.tokens and bad.tokens_per_valid is None
    assert len(seen) == 7


def test_a_rerun_bench_skips_the_proposals_its_record_holds(backend: Any, tmp_path: Path) -> None:
    """A bench killed midway keeps what it finished: each proposal is a line of the record file as
    soon as it ends, and a rerun with that file asks the model only for the proposals it lacks (a
    line cut short by the kill is rerun). Records of another seed or budget are not reused."""
    host = create_host(entrypoints=False, plugins=[toy])
    record = tmp_path / "bench.jsonl"
    with ScriptedOpenAIServer(reply) as srv:
        async def go(n: int, seed: int = 1) -> Any:
            llm = OpenAIBackend(srv.base_url, None, "good", max_retries=0)
            try:
                return await bench_proposers(host=host, backend=backend, domain=ToyDomain(), models={"good": llm}, n=n,
                                             seed=seed, kinds=("prompt",), record=record)
            finally:
                await llm.aclose()

        (first,) = asyncio.run(go(2))
        asked = len(srv.chat_bodies)
        lines = record.read_text().splitlines()
        assert asked == 2 and len(lines) == 2  # one request and one record per proposal
        record.write_text(lines[0] + "\n" + lines[1][:30])  # the second proposal's line cut short by a kill
        (again,) = asyncio.run(go(3))
        assert len(srv.chat_bodies) == asked + 2  # the cut proposal and the new third one; the first is kept
        (other,) = asyncio.run(go(1, seed=2))
        assert len(srv.chat_bodies) == asked + 3  # another seed: other assignments, asked again
    assert (first.rate.successes, first.rate.n) == (2, 2) and (again.rate.successes, again.rate.n) == (3, 3)
    assert again.tokens > first.tokens and (other.rate.successes, other.rate.n) == (1, 1)


def test_bench_gives_the_useful_group_rate_of_admitted_tasks_with_a_solver(backend: Any,
                                                                          seeded_toy_solver: Any) -> None:
    """With a solver, each admitted task gets a group of calibration rollouts; a group whose rewards
    differ is useful. The seeded solver solves exactly the rollouts with an even seed, so which groups
    are mixed follows from the seeds: the same rollouts the calibration gate itself would run."""
    host = create_host(entrypoints=False, plugins=[toy])
    with ScriptedOpenAIServer(seeded_toy_solver) as srv:
        llm = OpenAIBackend(srv.base_url, None, "solver", max_retries=0)
        solver = SolverAgent(llm, limits=AgentLimits(max_turns=3, timeout_sec=60))

        async def go() -> Any:
            try:
                return await bench_proposers(host=host, backend=backend, domain=ToyDomain(), models={}, n=3, seed=2,
                                             kinds=("procedural",), solver=solver)
            finally:
                await llm.aclose()

        (row,) = asyncio.run(go())
        requests = len(srv.chat_bodies)
    assert row.outcomes["admitted"] == 3 and row.useful is not None and row.useful.n == 3
    assert requests >= 3 * 4  # a group of rollouts (at least four) per admitted task
    assert 0 < row.useful.successes <= 3  # even and odd seeds mix in some group


def _calibration_bench(backend: Any, script: Any, **kw: Any) -> Any:
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "solver", max_retries=0)
        solver = SolverAgent(llm, limits=AgentLimits(max_turns=3, timeout_sec=60))

        async def go() -> Any:
            try:
                return await bench_calibration(domain=ToyDomain(), backend=backend, solver=solver, **kw)
            finally:
                await llm.aclose()

        return asyncio.run(go())


def test_calibration_bench_forms_both_pools_from_one_stream(backend: Any, seeded_toy_solver: Any) -> None:
    domain = ToyDomain()
    seen: list[Any] = []
    result = _calibration_bench(backend, seeded_toy_solver, pool_size=2, group=4, candidates=10, seed=9, fresh=True,
                                progress=seen.append)
    # What the scripted solver will score: rollout i of a task solves it when its seed is even.
    expected = []
    for family, seed in candidate_stream(domain, 10, 9):
        task = domain.generate(family, seed=seed, difficulty="easy")
        expected.append((task.name, [1.0 if rollout_seed(task, i) % 2 == 0 else 0.0 for i in range(4)]))
    got = [(c.task, c.rewards, c.verdict) for c in result.candidates]
    assert [(name, rewards, in_band(rewards, (0.25, 0.75))[0]) for name, rewards in expected[:len(got)]] == got
    assert seen == result.candidates
    for c in result.candidates:  # the evidence: what each rollout ran (in order of the rollouts)
        assert [cmds != ["true"] for cmds in c.commands] == [r == 1.0 for r in c.rewards]
    # The stream stopped as soon as both pools were full: the first N, and the first N in the band.
    passing = [c.task for c in result.candidates if c.verdict == "pass"]
    assert result.stopped == "filled" and result.candidates[-1].task == passing[1] and len(passing) == 2
    assert result.uncalibrated.tasks == [c.task for c in result.candidates[:2]]
    assert result.calibrated.tasks == passing
    assert result.calibrated.useful.value == 1.0  # in the band with a spread: useful by construction
    useful_first = sum(1 for c in result.candidates[:2] if len(set(c.rewards)) > 1)
    assert (result.uncalibrated.useful.successes, result.uncalibrated.useful.n) == (useful_first, 2)
    assert useful_first < 2  # this seed's stream starts with a task the solver never solves
    assert result.uncalibrated.useful.low is not None and result.uncalibrated.useful.high is not None
    assert sum(result.histogram.values()) == len(result.candidates) and result.histogram["0"] >= 1
    assert result.every_group.n == len(result.candidates) and result.skipped == []
    # A fresh group per pool task draws new seeds (salt "fresh"), so it can disagree with the first.
    assert result.calibrated.fresh is not None and result.calibrated.fresh.n == 2
    assert result.uncalibrated.fresh is not None and result.uncalibrated.fresh.n == 2


def test_calibration_bench_stops_at_its_deadline(backend: Any, seeded_toy_solver: Any) -> None:
    result = _calibration_bench(backend, seeded_toy_solver, pool_size=2, deadline=time.monotonic() - 1)
    assert result.stopped == "time" and result.candidates == []
    assert result.calibrated.useful.value is None and result.uncalibrated.tasks == []


def test_calibration_bench_script_prints_the_table(seeded_toy_solver: Any) -> None:
    script = Path(__file__).resolve().parents[2] / "bench" / "bench_calibration.py"
    with ScriptedOpenAIServer(seeded_toy_solver) as srv:
        out = subprocess.run(
            [sys.executable, str(script), "--domain", "toy", "--pool", "1", "--group", "2", "--candidates", "3",
             "--solver-base-url", srv.base_url, "--solver-model", "scripted"],
            capture_output=True, text=True, timeout=120, env=os.environ | {"AUTOENVSCALING_LOAD_PLUGINS": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert any(line.startswith("uncalibrated ") for line in lines) and any(line.startswith("calibrated ") for line in lines)
    assert "pass-rate histogram" in out.stdout and "Wilson" in out.stdout and "solver scripted" in out.stdout
    assert "calibrated / uncalibrated useful-group rate: own groups " in out.stdout


def test_candidate_stream_families() -> None:
    domain = ToyDomain()
    names = [f.name for f in domain.families()]
    assert {f for f, _ in candidate_stream(domain, 12, 3)} == set(names)
    only = candidate_stream(domain, 5, 3, families=[names[-1]])
    assert [f for f, _ in only] == [names[-1]] * 5
    assert [s for _, s in only] == [s for _, s in candidate_stream(domain, 5, 3)]  # same seeds, other families
    with pytest.raises(UsageError, match="has no family nope"):
        candidate_stream(domain, 2, 3, families=["nope"])


def test_calibration_bench_script_rejects_an_unknown_family() -> None:
    script = Path(__file__).resolve().parents[2] / "bench" / "bench_calibration.py"
    out = subprocess.run([sys.executable, str(script), "--domain", "toy", "--families", "nope", "--solver-base-url",
                          "http://127.0.0.1:9/v1"], capture_output=True, text=True, timeout=120,
                         env=os.environ | {"AUTOENVSCALING_LOAD_PLUGINS": ""})
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "error: domain toy has no family nope" in out.stderr and "hint: families: write-file, count-lines" in out.stderr
