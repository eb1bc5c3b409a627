"""The solver agent in real bubblewrap sandboxes, driven by the scripted OpenAI server over loopback
HTTP (tool calls, fenced blocks, malformed output, refusal, limits) and by a tiny local model (the
text protocol, seeded sampling, the defaults a local model gets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.solver import (LOCAL_PROFILE, ROLLOUT_TEMPERATURE, SERVED_PROFILE, SolverAgent,
                                         truncate_middle)
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.pricing import PriceTable
from autoenvscaling.llm.scripted_server import DelayReply, RefusalReply, ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.runtime.trial import TrialResult, TrialRunner
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import ToyDomain

PRICES = PriceTable.from_toml_text('[prices]\n"solver-model" = { input = 1.0, output = 4.0 }\n')
TASK = ToyDomain().generate("count-lines", seed=7, difficulty="easy")
SOLVE = "wc -l < /app/input.txt > /app/answer.txt"



def _trial(backend: BwrapBackend, script: list, *, limits: AgentLimits | None = None, timeout: float = 10.0,
           **solver_kw: object) -> tuple[TrialResult, list[dict]]:
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "solver-model", prices=PRICES, backoff_base=0.01, timeout=timeout,
                            max_retries=0)
        solver = SolverAgent(llm, **solver_kw)  # type: ignore[arg-type]
        runner = TrialRunner(backend, limits=limits or AgentLimits(timeout_sec=60))

        async def go() -> TrialResult:
            try:
                return await runner.run(TASK, solver)
            finally:
                await llm.aclose()

        return asyncio.run(go()), srv.chat_bodies


def test_tool_call_path_solves_the_task(backend: BwrapBackend) -> None:
    result, bodies = _trial(backend, [
        ToolCallsReply([("bash", {"command": "ls /app"})], content="Let me look."),
        ToolCallsReply([("bash", {"command": SOLVE})]),
        ToolCallsReply([("finish", {})]),
    ])
    t = result.trajectory
    assert result.status == "ok" and result.reward == 1.0
    assert t is not None and t.stop_reason == "finished" and t.error is None
    assert [a.command for a in t.actions] == ["ls /app", SOLVE]
    assert t.actions[0].output == "[exit code 0]\ninput.txt" and t.actions[0].thought == "Let me look."
    # The tools were offered, and each result went back as a tool message answering its call.
    assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["bash", "finish"]
    assert bodies[1]["messages"][-1]["role"] == "tool" and "input.txt" in bodies[1]["messages"][-1]["content"]
    assert [msg["role"] for msg in t.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                   "assistant", "tool"]
    # Tokens are the server's word counts; the cost follows the price table.
    assert t.tokens_in > 0 and t.tokens_out > 0
    assert t.cost_usd == pytest.approx((t.tokens_in * 1.0 + t.tokens_out * 4.0) / 1e6)


def test_fenced_block_path_for_models_without_tools(backend: BwrapBackend) -> None:
    result, bodies = _trial(backend, [
        TextReply(f"I will count the lines.\n```bash\n{SOLVE}\n```\n"),
        TextReply("The answer is written.\nFINISH"),
    ], tool_calling=False)
    t = result.trajectory
    assert result.reward == 1.0 and t is not None and t.stop_reason == "finished"
    assert "tools" not in bodies[0]
    assert [a.command for a in t.actions] == [SOLVE]
    assert bodies[1]["messages"][-1] == {"role": "user", "content": "[exit code 0] (no output)"}


def test_malformed_output_is_recorded_and_the_agent_continues(backend: BwrapBackend) -> None:
    result, bodies = _trial(backend, [
        ToolCallsReply([("bash", "{not json")]),            # arguments that are not JSON
        TextReply("I am thinking about it."),               # neither a tool call nor a block
        ToolCallsReply([("bash", {"command": SOLVE})]),
        ToolCallsReply([("finish", {})]),
    ])
    t = result.trajectory
    assert result.reward == 1.0 and t is not None and t.stop_reason == "finished"
    nudges = [msg["content"] for msg in t.messages if msg["role"] == "user"][1:]
    assert len(nudges) == 2 and "not a JSON object" in nudges[0] and "no ```bash block" in nudges[1]


def test_repeated_malformed_output_stops_cleanly(backend: BwrapBackend) -> None:
    result, _ = _trial(backend, ["hmm", "", "still nothing"], tool_calling=False)
    t = result.trajectory
    assert t is not None and t.stop_reason == "error" and "3 replies in a row" in (t.error or "")
    assert result.status == "ok" and result.reward == 0.0  # the verifier still ran


def test_refusal_stops_with_refused(backend: BwrapBackend) -> None:
    result, _ = _trial(backend, [RefusalReply("I won't do that.")])
    t = result.trajectory
    assert t is not None and t.stop_reason == "refused" and "won't" in (t.error or "") and result.reward == 0.0


def test_model_timeout_stops_with_timeout(backend: BwrapBackend) -> None:
    # The model never answers and the client's own timeout is far away: only the agent's wall limit can
    # end the call, and it must interrupt it (not wait for the reply and stop between turns).
    limits = AgentLimits(timeout_sec=2.0)
    result, _ = _trial(backend, [DelayReply(300.0, TextReply("too late"))], limits=limits, timeout=600.0)
    t = result.trajectory
    assert t is not None and t.stop_reason == "timeout"
    assert t.error == "no answer from the model within the 2 s limit"
    assert "too late" not in str(t.messages)


def test_command_running_past_the_wall_limit_stops_with_timeout(backend: BwrapBackend) -> None:
    # sleep 20 ends well within the command timeout (30 s): only the wall limit can cut it short. The
    # limit leaves room for the model's round trip on a loaded machine.
    limits = AgentLimits(timeout_sec=5.0, command_timeout_sec=30)
    result, _ = _trial(backend, [ToolCallsReply([("bash", {"command": "sleep 20"})])], limits=limits)
    t = result.trajectory
    assert t is not None and t.stop_reason == "timeout" and t.actions[0].timed_out
    assert "timed out" in t.actions[0].output


def test_max_turns_and_max_tokens(backend: BwrapBackend) -> None:
    turns, _ = _trial(backend, [ToolCallsReply([("bash", {"command": "true"})])] * 2,
                      limits=AgentLimits(max_turns=2, timeout_sec=60))
    assert turns.trajectory is not None and turns.trajectory.stop_reason == "max_turns"
    assert len(turns.trajectory.actions) == 2
    tokens, bodies = _trial(backend, [TextReply("```bash\ntrue\n```", prompt_tokens=100, completion_tokens=30)],
                            limits=AgentLimits(max_tokens=120, timeout_sec=60), tool_calling=False)
    assert tokens.trajectory is not None and tokens.trajectory.stop_reason == "max_tokens"
    assert (tokens.trajectory.tokens_in, tokens.trajectory.tokens_out) == (100, 30) and len(bodies) == 1


def test_long_output_keeps_head_and_tail(backend: BwrapBackend) -> None:
    command = "seq 1 5000"
    result, _ = _trial(backend, [ToolCallsReply([("bash", {"command": command})]), ToolCallsReply([("finish", {})])],
                       limits=AgentLimits(observation_chars=200, timeout_sec=60))
    out = result.trajectory.actions[0].output  # type: ignore[union-attr]
    assert out.startswith("[exit code 0]\n1\n2\n3") and out.endswith("4999\n5000")
    assert "characters omitted" in out and len(out) < 300
    assert truncate_middle("x" * 10, 20) == "x" * 10


@pytest.fixture(scope="module")
def tiny_llm(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from autoenvscaling.llm.local_backend import TransformersBackend
    from autoenvscaling.llm.tiny import build_tiny_model

    return TransformersBackend(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


def test_tiny_local_model_runs_the_loop(backend: BwrapBackend, tiny_llm) -> None:  # type: ignore[no-untyped-def]
    solver = SolverAgent(tiny_llm, max_tokens_per_turn=8, temperature=0.7, seed=3,
                         limits=AgentLimits(max_turns=2, timeout_sec=60))
    runner = TrialRunner(backend)
    result = asyncio.run(runner.run(TASK, solver))
    t = result.trajectory
    assert result.status == "ok" and t is not None
    # A random model writes random tokens: the loop records them and ends on a limit, cleanly.
    assert t.stop_reason in ("max_turns", "error", "finished")
    assert t.tokens_out > 0 and t.tokens_in > 0 and t.cost_usd == 0.0
    # A local model gets the text protocol: the compact system prompt, the worked example (named
    # "example", so a trainer can leave it out), then the task.
    roles = [(msg["role"], msg.get("name")) for msg in t.messages]
    assert roles[:6] == [("system", None), ("user", "example"), ("assistant", "example"), ("user", "example"),
                         ("assistant", "example"), ("user", None)]
    assert "FINISH" in t.messages[0]["content"] and "`bash` tool" not in t.messages[0]["content"]
    assert "Count the" in t.messages[5]["content"]
    # Same seed, same rollout.
    again = asyncio.run(runner.run(TASK, solver)).trajectory
    assert again is not None and again.messages == t.messages


def test_seeded_rollouts_sample_reproducibly_and_differ(backend: BwrapBackend, tiny_llm) -> None:  # type: ignore[no-untyped-def]
    solver = SolverAgent(tiny_llm, max_tokens_per_turn=12, limits=AgentLimits(max_turns=1, timeout_sec=60))
    runner = TrialRunner(backend)

    def replies(agent: SolverAgent) -> list[str]:
        t = asyncio.run(runner.run(TASK, agent)).trajectory
        assert t is not None
        return [m["content"] for m in t.messages if m["role"] == "assistant" and m.get("name") is None]

    # No temperature given: a plain run decodes greedily (it repeats without a seed) ...
    assert solver.temperature is None
    assert replies(solver) == replies(solver)
    # ... and the copies made for rollouts sample, each from its own seed.
    first, second = solver.seeded(11), solver.seeded(12)
    assert first.temperature == second.temperature == ROLLOUT_TEMPERATURE > 0
    a, b, a_again = replies(first), replies(second), replies(solver.seeded(11))
    assert a == a_again and a != b
    assert solver.temperature is None and solver.seed is None  # seeded() left the original alone


def test_defaults_follow_the_model(tiny_llm) -> None:  # type: ignore[no-untyped-def]
    local = SolverAgent(tiny_llm)
    assert local.profile == LOCAL_PROFILE and not local.tool_calling and local.rollout_concurrency == 1
    assert local.max_tokens_per_turn == LOCAL_PROFILE.max_tokens_per_turn and local.limits == LOCAL_PROFILE.limits
    served = SolverAgent(OpenAIBackend("http://127.0.0.1:9/v1", None, "m"))
    assert served.tool_calling and served.limits is None and served.rollout_concurrency is None
    assert served.max_tokens_per_turn == SERVED_PROFILE.max_tokens_per_turn
    # Explicit arguments win over the profile.
    mine = SolverAgent(tiny_llm, tool_calling=True, max_tokens_per_turn=5, rollout_concurrency=3,
                       limits=AgentLimits(max_turns=9))
    assert mine.tool_calling and mine.max_tokens_per_turn == 5 and mine.rollout_concurrency == 3
    assert mine.limits is not None and mine.limits.max_turns == 9
