"""Budgets on LLM work, per proposal, per round and per run, and the retries and timeouts recorded
per proposal: the real openai client against the scripted server over loopback HTTP, the flywheel's
worker processes and real bubblewrap gates."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.solver import SolverAgent
from autoenvscaling.errors import UsageError
from autoenvscaling.executors.jobs import LLMSpec
from autoenvscaling.flywheel.loop import Budgets, Flywheel, FlywheelConfig
from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.llm.base import ChatMessage
from autoenvscaling.llm.budget import Budget, MeteredLLM
from autoenvscaling.llm.errors import BudgetExceeded
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import DelayReply, ErrorReply, ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.response import render_task
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.testing import ToyDomain, toy

HELLO = [ChatMessage.user("hello")]


def test_a_budget_reads_from_the_command_line_and_a_bad_one_says_how() -> None:
    assert Budget.parse("tokens=20k, seconds=600,usd=0.5") == Budget(tokens=20_000, seconds=600, usd=0.5)
    assert Budget.parse("tokens=1.5m") == Budget(tokens=1_500_000) and not Budget.parse("").limited
    assert Budget(tokens=20_000, usd=0.5).describe() == "20,000 tokens, $0.5"
    for bad, why in (("tokens=lots", "cannot read"), ("minutes=3", "cannot read"), ("tokens=1,tokens=2", "cannot read"),
                     ("seconds=0", "not positive")):
        with pytest.raises(UsageError, match=why) as info:
            Budget.parse(bad)
        assert "tokens=20k,seconds=600,usd=0.5" in (info.value.hint or "") or why == "not positive"
    # The tighter of two budgets, and what is left after spending.
    assert Budget(tokens=100, seconds=60).tighter(Budget(tokens=50, usd=1.0)) == Budget(tokens=50, seconds=60, usd=1.0)
    assert Budget(tokens=100).left(tokens=30, seconds=5, usd=0) == Budget(tokens=70)
    assert Budget(tokens=100).spent(tokens=100, seconds=0, usd=0) == "100 tokens (100 used)"


def _backend(srv: ScriptedOpenAIServer, **kw: Any) -> OpenAIBackend:
    return OpenAIBackend(srv.base_url, None, "m", backoff_base=0.01, **kw)


def test_a_metered_model_counts_retries_and_timeouts_and_stops_at_its_token_budget() -> None:
    script = [ErrorReply(503), TextReply("one", prompt_tokens=60, completion_tokens=50),
              DelayReply(30.0, TextReply("late")), TextReply("two", prompt_tokens=60, completion_tokens=40)]
    with ScriptedOpenAIServer(script) as srv:
        async def go() -> tuple[MeteredLLM, BaseException]:
            llm = _backend(srv, timeout=10.0, max_retries=2)  # far above a loopback answer, far below 30 s
            meter = MeteredLLM(llm, Budget(tokens=200))
            try:
                await meter.chat(HELLO, max_tokens=512)
                await meter.chat(HELLO, max_tokens=512)
                with pytest.raises(BudgetExceeded) as info:
                    await meter.chat(HELLO, max_tokens=512)
                return meter, info.value
            finally:
                await llm.aclose()

        meter, error = asyncio.run(go())
        bodies = srv.chat_bodies
    # Four HTTP requests for two calls: a 503 retried, a timed-out attempt retried; the third call never left.
    assert len(bodies) == 4 and (meter.usage.calls, meter.usage.retries, meter.usage.timeouts) == (2, 2, 1)
    assert [b["max_tokens"] for b in bodies] == [200, 200, 90, 90]  # each reply capped at the tokens left
    assert error.scored and meter.stopped == error.message == "proposal budget spent: 200 tokens (210 used)"


def test_a_wall_time_budget_ends_a_call_still_waiting() -> None:
    with ScriptedOpenAIServer([DelayReply(30.0, TextReply("late"))]) as srv:
        async def go() -> str:
            llm = _backend(srv, timeout=120.0, max_retries=0)
            meter = MeteredLLM(llm, Budget(seconds=1.0), scope="round")
            try:
                with pytest.raises(BudgetExceeded) as info:
                    await meter.chat(HELLO)
                return info.value.message
            finally:
                await llm.aclose()

        message = asyncio.run(go())
    assert message == "round budget spent: 1 s of wall time (a call was still waiting)"


def test_an_agent_whose_budget_is_spent_stops_with_budget(backend: Any) -> None:
    task = ToyDomain().generate("count-lines", seed=7, difficulty="easy")
    calls = [ToolCallsReply([("bash", {"command": "true"})])] * 3
    with ScriptedOpenAIServer(calls) as srv:
        async def go() -> Any:
            llm = _backend(srv, max_retries=0)
            try:
                # The scripted server counts words: each turn costs more than 10 tokens.
                agent = SolverAgent(MeteredLLM(llm, Budget(tokens=10)))
                return await TrialRunner(backend, limits=AgentLimits(timeout_sec=60)).run(task, agent)
            finally:
                await llm.aclose()

        result = asyncio.run(go())
        sent = len(srv.chat_bodies)
    t = result.trajectory
    assert t is not None and t.stop_reason == "budget" and sent == 1 and len(t.actions) == 1
    assert "proposal budget spent: 10 tokens" in (t.error or "")


class ToyProposals:
    """A served proposer model for the toy domain: each answer is a toy task drawn from the
    request's seed, 200 tokens each; the first ``fail_first`` requests get HTTP 503. ``broken``:
    the task's solution does nothing, so the admission gates reject it."""

    def __init__(self, fail_first: int = 0, broken: bool = False) -> None:
        self.count = itertools.count()
        self.fail_first = fail_first
        self.broken = broken

    def __call__(self, request: dict[str, Any]) -> Any:
        if next(self.count) < self.fail_first:
            return ErrorReply(503)
        task = ToyDomain().generate("count-lines", seed=request.get("seed", 0), difficulty="easy")
        if self.broken:
            task = task.with_files({"solution/solve.sh": "#!/bin/bash\ntrue\n"})
        return TextReply(render_task(task), prompt_tokens=100, completion_tokens=100)


def _run(out: Path, backend: Any, srv: ScriptedOpenAIServer, budgets: Budgets, *, rounds: int = 2,
         resume: bool = False, proposer: str = "prompt") -> tuple[list[Any], str | None]:
    config = FlywheelConfig(seed=3, rounds=rounds, per_round=3, batch=1, mix={"toy": 1.0}, proposers={proposer: 1.0},
                            calibrate=False, review=False, settings=GateSettings(flaky_runs=1), budgets=budgets)
    fw = Flywheel(config, out, host=create_host(entrypoints=False, plugins=[toy]), backend=backend,
                  proposer_llm=LLMSpec(model="proposer", base_url=srv.base_url), resume=resume)
    try:
        return asyncio.run(fw.run()), fw.budget_stop
    finally:
        fw.close()


def test_a_round_budget_ends_the_rounds_proposing_and_a_larger_one_resumes(tmp_path: Path, backend: Any) -> None:
    out = tmp_path / "run"
    with ScriptedOpenAIServer(ToyProposals(fail_first=1)) as srv:
        summaries, stop = _run(out, backend, srv, Budgets(round=Budget(tokens=250)))
        db = RunDB(out / "run.sqlite")
        units = db.units()
        # Each round: a proposal (200 tokens), a second one with the 50 tokens left, then the budget is spent.
        assert [u.key for u in units] == ["r00-s000", "r00-s001", "r01-s000", "r01-s001"] and stop is None
        assert [s.proposals for s in summaries] == [2, 2]
        for r, summary in enumerate(summaries):
            assert summary.metrics["budget_stop"] == "round budget spent: 250 tokens (400 used)" == db.budget_stop(r)
        # The 503 before the first answer is recorded as a retry of that proposal, in run.sqlite.
        assert [(u.retries, u.timeouts) for u in units] == [(1, 0), (0, 0), (0, 0), (0, 0)]
        assert summaries[0].metrics["llm_retries"] == 1 and db.spent(0)["tokens"] == 400
        db.close()
        # Budgets are not part of the run's identity: a larger one continues the stopped rounds.
        summaries, stop = _run(out, backend, srv, Budgets(round=Budget(tokens=10_000)), resume=True)
    db = RunDB(out / "run.sqlite")
    keys = [u.key for u in db.units()]
    assert keys == [f"r0{r}-s00{s}" for r in range(2) for s in range(3)] and len(set(keys)) == 6
    assert [s.proposals for s in summaries] == [3, 3] and db.budget_stop(0) is None
    assert all("budget_stop" not in s.metrics for s in summaries) and stop is None
    db.close()


def test_a_spent_run_budget_ends_the_run_and_a_proposal_budget_ends_a_proposal(tmp_path: Path, backend: Any) -> None:
    with ScriptedOpenAIServer(ToyProposals()) as srv:
        summaries, stop = _run(tmp_path / "run", backend, srv, Budgets(run=Budget(tokens=300)))
        assert [s.round for s in summaries] == [0] and [s.proposals for s in summaries] == [2]
        assert stop == "round 1: run budget spent: 300 tokens (400 used)"
    # prompt-feedback on answers the gates reject: without a budget each proposal asks three times
    # (two revisions); a proposal budget of 150 tokens ends it after the first answer (200 tokens).
    with ScriptedOpenAIServer(ToyProposals(broken=True)) as srv:
        for name, budgets in (("free", Budgets()), ("budgeted", Budgets(proposal=Budget(tokens=150)))):
            _run(tmp_path / name, backend, srv, budgets, rounds=1, proposer="prompt-feedback")
    free, budgeted = (RunDB(tmp_path / name / "run.sqlite").units() for name in ("free", "budgeted"))
    assert [(u.attempts, u.tokens_in + u.tokens_out, u.budget_stop) for u in free] == [(3, 600, None)] * 3
    for u in budgeted:
        assert (u.attempts, u.tokens_in + u.tokens_out, u.outcome) == (1, 200, "failed_validation")
        assert u.budget_stop == "proposal budget spent: 150 tokens (200 used)"
        assert u.reason and "oracle" in u.reason  # the first answer's gate verdict stays the recorded reason
