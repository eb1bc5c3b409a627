"""Procedural, prompt+feedback and agentic proposers with the real admission gates (bubblewrap), the
LLM ones driven by the scripted OpenAI server over loopback HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from autoenvscaling.agents.base import Trajectory
from autoenvscaling.api import FamilyInfo, LevelledDomain, NoFurtherVariant
from autoenvscaling.flywheel.assignments import from_rollouts, new_task
from autoenvscaling.gates.validate import Validator
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import RefusalReply, ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.agentic import AgenticProposer
from autoenvscaling.proposers.base import Proposal
from autoenvscaling.proposers.procedural import ProceduralProposer
from autoenvscaling.proposers.prompt import PromptFeedbackProposer
from autoenvscaling.proposers.response import render_task
from autoenvscaling.runtime.trial import StepResult, TrialResult, VerifierResult
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.tasks import render_config
from autoenvscaling.testing import ToyDomain, toy

DOMAIN = ToyDomain()
GOOD = DOMAIN.generate("write-file", seed=5, difficulty="medium")
# The same task with a reference solution that writes the wrong file: the oracle gate fails it.
BROKEN = GOOD.with_files({"solution/solve.sh": "#!/bin/bash\necho wrong > /app/wrong.txt\n"})



@pytest.fixture(scope="module")
def validator(backend: BwrapBackend) -> Validator:
    return Validator(host=create_host(entrypoints=False, plugins=[toy]), backend=backend)


def test_procedural_generates_and_varies() -> None:
    proposer = ProceduralProposer()
    fresh = asyncio.run(proposer.propose(new_task(DOMAIN, "count-lines", seed=3, difficulty="easy"), domain=DOMAIN, seed=3))
    assert fresh.task is not None and fresh.error is None and fresh.cost_usd == 0.0 and fresh.model is None
    assert fresh.task == DOMAIN.generate("count-lines", seed=3, difficulty="easy").with_provenance(proposer="procedural")
    parent = DOMAIN.generate("count-lines", seed=3, difficulty="medium")
    solved = TrialResult(task=parent.name, agent="solver", rewards={"reward": 1.0},
                         steps=[StepResult(name="main", trajectory=Trajectory(agent="solver"),
                                           verifier=VerifierResult(rewards={"reward": 1.0}))])
    harder = from_rollouts(parent, [solved] * 4, domain="toy", seed=8)
    child = asyncio.run(proposer.propose(harder, domain=DOMAIN, seed=8))
    prov = child.task.provenance  # type: ignore[union-attr]
    assert (prov.parent, prov.direction, prov.difficulty, prov.family) == (parent.name, "harder", "hard", "count-lines")
    bad = new_task(DOMAIN, "no-such-family", seed=1)
    failed = asyncio.run(proposer.propose(bad, domain=DOMAIN, seed=1))
    assert failed.task is None and failed.scored and "no family" in (failed.error or "")


def test_procedural_varies_a_too_hard_simplest_task_into_another_skill() -> None:
    """The solver fails a task at a family's lowest level: "simpler" has nowhere to go, so the proposer
    asks for a "different" variant at that level instead of failing the proposal."""

    class Levels(LevelledDomain):
        name = "levels"
        max_level = 3
        catalog = {f.name: FamilyInfo(f.name, f.description, tuple(f.skills),
                                      "write-file" if f.name == "count-lines" else f.name) for f in DOMAIN.families()}

        def build_task(self, family, rng, *, seed, level):  # noqa: ANN001, ANN201
            task = DOMAIN.generate(family, seed=seed, difficulty=("easy", "medium", "hard")[level - 1])
            return task.with_provenance(domain=self.name, parameters={"level": level})

    domain = Levels()
    parent = domain.generate_level("count-lines", seed=3, level=domain.min_level)
    with pytest.raises(NoFurtherVariant, match="already the simplest variant"):
        domain.vary(parent, direction="simpler", seed=8)  # the control: the domain alone refuses
    failed = TrialResult(task=parent.name, agent="solver", rewards={"reward": 0.0},
                         steps=[StepResult(name="main", trajectory=Trajectory(agent="solver"),
                                           verifier=VerifierResult(rewards={"reward": 0.0}))])
    simpler = from_rollouts(parent, [failed] * 4, domain="levels", seed=8)
    assert simpler.direction == "simpler"
    child = asyncio.run(ProceduralProposer().propose(simpler, domain=domain, seed=8))
    assert child.error is None and child.task is not None
    prov = child.task.provenance
    assert (prov.parent, prov.direction, prov.family, prov.parameters["level"]) == (parent.name, "different", "write-file", domain.min_level)


def test_procedural_awaits_a_domains_async_generators() -> None:
    """A domain whose generation waits on processes overrides agenerate/avary; the proposer awaits
    them in the flywheel's loop (only they stamp the round used as a marker here)."""

    class AsyncToy(ToyDomain):
        async def agenerate(self, family: str, *, seed: int, difficulty: str = "medium"):
            await asyncio.sleep(0)
            return super().generate(family, seed=seed, difficulty=difficulty).with_provenance(round=41)

        async def avary(self, parent, *, direction: str, seed: int):
            await asyncio.sleep(0)
            return super().vary(parent, direction=direction, seed=seed).with_provenance(round=42)

    domain = AsyncToy()
    fresh = asyncio.run(ProceduralProposer().propose(new_task(domain, "count-lines", seed=3), domain=domain, seed=3))
    assert fresh.task is not None and fresh.task.provenance.round == 41
    parent = domain.generate("count-lines", seed=3, difficulty="medium")
    solved = TrialResult(task=parent.name, agent="solver", rewards={"reward": 1.0},
                         steps=[StepResult(name="main", trajectory=Trajectory(agent="solver"),
                                           verifier=VerifierResult(rewards={"reward": 1.0}))])
    child = asyncio.run(ProceduralProposer().propose(from_rollouts(parent, [solved] * 4, domain="toy", seed=8),
                                                     domain=domain, seed=8))
    assert child.task is not None and child.task.provenance.round == 42


def _with_llm(script: Any, fn: Any) -> tuple[Proposal, list[dict]]:
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "gpt-4o-mini", backoff_base=0.01, max_retries=0)

        async def go() -> Proposal:
            try:
                return await fn(llm)
            finally:
                await llm.aclose()

        return asyncio.run(go()), srv.chat_bodies


def test_prompt_feedback_sends_gate_errors_back_and_revises(validator: Validator) -> None:
    assignment = new_task(DOMAIN, "write-file", seed=5)
    script = [TextReply("FILE: task.toml\n```toml\nversion = '1.0'\n```\n"),  # malformed: files missing
              TextReply(render_task(BROKEN)),                                  # valid format, oracle fails
              TextReply(render_task(GOOD))]

    async def propose(llm: Any) -> Proposal:
        return await PromptFeedbackProposer(llm=llm, checker=validator.validate).propose(assignment, domain=DOMAIN, seed=5)

    proposal, bodies = _with_llm(script, propose)
    assert proposal.error is None and proposal.task is not None
    assert proposal.report is not None and proposal.report.valid
    assert (proposal.attempts, proposal.revisions) == (3, 2)
    assert proposal.cost_usd is not None and proposal.cost_usd > 0  # gpt-4o-mini has a list price
    first_feedback = bodies[1]["messages"][-1]["content"]
    assert "missing required files: instruction.md" in first_feedback and "2 more revision" in first_feedback
    second_feedback = bodies[2]["messages"][-1]["content"]
    assert "- oracle: fail" in second_feedback and "1 more revision" in second_feedback
    assert proposal.task.files["solution/solve.sh"] == GOOD.files["solution/solve.sh"]


def test_prompt_feedback_gives_up_after_two_revisions(validator: Validator) -> None:
    assignment = new_task(DOMAIN, "write-file", seed=6)

    async def propose(llm: Any) -> Proposal:
        return await PromptFeedbackProposer(llm=llm, checker=validator.validate).propose(assignment, domain=DOMAIN, seed=6)

    proposal, bodies = _with_llm([TextReply(render_task(BROKEN))] * 3, propose)
    assert len(bodies) == 3 and proposal.revisions == 2 and proposal.scored
    assert proposal.task is not None and proposal.report is not None and proposal.report.status == "invalid"
    assert "oracle: fail" in (proposal.error or "")


def _write_files(task: Any, root: str = "/workspace/task") -> str:
    """A bash script that writes ``task`` as a directory, the way an agent would with heredocs."""
    lines = [f"rm -rf {root} && mkdir -p {root}"]
    entries = {"task.toml": render_config(task), "instruction.md": task.instruction}
    entries |= {p: f.text for p, f in task.files.items()}
    for path, content in entries.items():
        lines.append(f"mkdir -p $(dirname {root}/{path}) && cat > {root}/{path} <<'AES_FILE_EOF'\n{content}AES_FILE_EOF")
        if path.endswith(".sh"):
            lines.append(f"chmod +x {root}/{path}")
    return "\n".join(lines)


def test_agentic_builds_in_its_sandbox_checks_outside_and_revises(backend: BwrapBackend, validator: Validator) -> None:
    assignment = new_task(DOMAIN, "write-file", seed=5)
    script = [
        ToolCallsReply([("bash", {"command": "ls /workspace /workspace/task && head -3 /workspace/GUIDE.md"})]),
        ToolCallsReply([("bash", {"command": _write_files(BROKEN)})]),
        ToolCallsReply([("check", {})]),
        ToolCallsReply([("bash", {"command": _write_files(GOOD)})]),
        ToolCallsReply([("check", {})]),
        ToolCallsReply([("finish", {})]),
    ]

    async def propose(llm: Any) -> Proposal:
        return await AgenticProposer(llm=llm, checker=validator.validate, backend=backend).propose(
            assignment, domain=DOMAIN, seed=5)

    proposal, bodies = _with_llm(script, propose)
    assert proposal.error is None and proposal.scored and proposal.task is not None
    assert proposal.revisions == 1 and proposal.attempts == 6
    assert proposal.report is not None and proposal.report.valid  # the last check saw the final directory
    assert proposal.task.instruction == GOOD.instruction and proposal.task.files["tests/test.sh"].executable
    assert proposal.task.provenance.proposer == "agentic" and proposal.tokens_in > 0
    # The agent saw its workspace: the skeleton and the guide.
    look = bodies[1]["messages"][-1]["content"]
    assert "GUIDE.md" in look and "task.toml" in look and "toy domain guide" in look
    # The first check failed on the oracle with evidence; the second passed.
    first_check = bodies[3]["messages"][-1]["content"]
    assert "invalid" in first_check and "- oracle: fail" in first_check and "2 check(s) left" in first_check
    assert "The task passes" in bodies[5]["messages"][-1]["content"]
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["bash", "finish", "check"]


def test_agentic_refuses_symlinks_and_limits_checks(backend: BwrapBackend, validator: Validator) -> None:
    assignment = new_task(DOMAIN, "write-file", seed=7)
    script = [
        ToolCallsReply([("bash", {"command": "ln -s /etc/shadow /workspace/task/tests/secret"})]),
        ToolCallsReply([("check", {})]),
        ToolCallsReply([("bash", {"command": "rm /workspace/task/tests/secret"})]),
        ToolCallsReply([("check", {})]),
        ToolCallsReply([("check", {})]),
        ToolCallsReply([("check", {})]),  # the fourth: no checks left
        ToolCallsReply([("finish", {})]),
    ]

    async def propose(llm: Any) -> Proposal:
        return await AgenticProposer(llm=llm, checker=validator.validate, backend=backend).propose(
            assignment, domain=DOMAIN, seed=7)

    proposal, bodies = _with_llm(script, propose)
    assert "symbolic links are not allowed" in bodies[2]["messages"][-1]["content"]
    assert "No checks left" in bodies[6]["messages"][-1]["content"]
    # The skeleton alone is not a valid task: its tests always write 0, so the oracle fails.
    assert proposal.task is not None and proposal.report is not None and not proposal.report.valid
    assert proposal.revisions == 2


def test_agentic_refusal_is_not_scored(backend: BwrapBackend, validator: Validator) -> None:
    async def propose(llm: Any) -> Proposal:
        return await AgenticProposer(llm=llm, checker=validator.validate, backend=backend).propose(
            new_task(DOMAIN, "write-file", seed=9), domain=DOMAIN, seed=9)

    proposal, _ = _with_llm([RefusalReply("No.")], propose)
    assert proposal.refused and not proposal.scored and proposal.report is None
