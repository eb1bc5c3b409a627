"""The one-shot prompt proposer through the scripted OpenAI server (real HTTP, real openai client)."""

from __future__ import annotations

import asyncio

from autoenvscaling.flywheel.assignments import new_task
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.pricing import PriceTable
from autoenvscaling.llm.scripted_server import ErrorReply, RefusalReply, ScriptedOpenAIServer, TextReply
from autoenvscaling.proposers.prompt import PromptProposer
from autoenvscaling.proposers.response import render_task
from autoenvscaling.testing import ToyDomain

PRICES = PriceTable.from_toml_text('[prices]\n"proposer-model" = { input = 1.0, output = 2.0 }\n')


def _propose(script: list, **backend_kw: object):  # type: ignore[no-untyped-def]
    domain = ToyDomain()
    assignment = new_task(domain, "count-lines", seed=21, difficulty="easy")
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "proposer-model", prices=PRICES, backoff_base=0.01,
                            **backend_kw)  # type: ignore[arg-type]

        async def go():  # type: ignore[no-untyped-def]
            try:
                return await PromptProposer(llm=llm).propose(assignment, domain=domain, seed=21)
            finally:
                await llm.aclose()

        return asyncio.run(go()), srv.chat_bodies


def test_a_valid_reply_becomes_a_task_with_provenance_and_cost() -> None:
    reply_task = ToyDomain().generate("count-lines", seed=99, difficulty="easy")
    reply = "I'll build a counting task.\n\n" + render_task(reply_task)
    proposal, bodies = _propose([TextReply(reply, prompt_tokens=1000, completion_tokens=500)])
    assert proposal.error is None and proposal.scored and proposal.task is not None
    assert proposal.task.instruction == reply_task.instruction
    assert proposal.task.files["environment/input.txt"] == reply_task.files["environment/input.txt"]
    assert (proposal.tokens_in, proposal.tokens_out, proposal.attempts, proposal.revisions) == (1000, 500, 1, 0)
    assert proposal.cost_usd == (1000 * 1.0 + 500 * 2.0) / 1e6
    prov = proposal.task.provenance
    assert (prov.proposer, prov.proposer_model, prov.domain, prov.seed) == ("prompt", "proposer-model", "toy", 21)
    # What the model was told: the assignment, the contract, the format rules and a worked example.
    (body,) = bodies
    user = body["messages"][1]["content"]
    assert "count-lines" in user and "FILE: tests/test.sh" in user and "/logs/verifier/reward.txt" in user
    assert "[metadata.autoenvscaling]" not in user  # provenance is stripped from the example
    assert [m["role"] for m in proposal.transcript] == ["system", "user", "assistant"]


def test_a_malformed_reply_is_a_scored_failure() -> None:
    proposal, _ = _propose(["Sure! The task is: count lines. The test checks the count."])
    assert proposal.task is None and proposal.scored
    assert proposal.error is not None and proposal.error.startswith("malformed response: no FILE blocks")


def test_a_refusal_is_not_scored() -> None:
    proposal, _ = _propose([RefusalReply("I can't help with that.")])
    assert proposal.task is None and proposal.refused and not proposal.scored
    assert "refused" in (proposal.error or "")


def test_an_unreachable_server_is_an_infrastructure_failure() -> None:
    proposal, bodies = _propose([ErrorReply(503), ErrorReply(503)], max_retries=1)
    assert proposal.task is None and proposal.infrastructure_failure and not proposal.scored
    assert "503" in (proposal.error or "") and len(bodies) == 2
