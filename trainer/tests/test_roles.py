"""Both roles: the proposer's rewards come from the admission gates, and advantages are normalised per
role so neither role's reward scale drowns the other."""

from __future__ import annotations

import asyncio
import statistics
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.gates.base import GateSettings
from autoenvscaling.gates.validate import Validator
from autoenvscaling.llm.chat_template import ChatTemplate
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.response import render_task
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import toy
from autoenvscaling.agents.base import AgentLimits
from autoenvscaling_trainer.episodes import Rollouts
from autoenvscaling_trainer.policy import Generated, Generator, Sampling
from autoenvscaling_trainer.rewards import role_scaled
from autoenvscaling_trainer.settings import GRPOSettings


def test_rewards_are_scaled_by_their_own_roles_spread() -> None:
    rewards = [0.0, 1.0, 1.0, 0.0, -1.0, 1.0, -0.25, -1.0]
    roles = ["solver"] * 4 + ["proposer"] * 4
    scaled = role_scaled(rewards, roles)
    for role in ("solver", "proposer"):
        mine = [s for s, r in zip(scaled, roles) if r == role]
        assert statistics.pstdev(mine) == pytest.approx(1.0)  # each role now varies on the same scale
    assert role_scaled([0.5, 0.5, None], ["solver"] * 3) == [0.5, 0.5, None]  # no spread: left as is


def test_both_roles_split_a_steps_groups() -> None:
    assert GRPOSettings(roles="both", groups=4).role_groups() == {"solver": 2, "proposer": 2}
    assert GRPOSettings(roles="both", groups=3, proposer_share=0.1).role_groups() == {"solver": 2, "proposer": 1}
    with pytest.raises(Exception, match="at least 2 groups"):
        GRPOSettings(roles="both", groups=1)


class Replay(Generator):
    """A policy that always writes ``text``: it stands for a model able to write a whole task, which
    no model that runs here can (the token stream and scoring are what is under test)."""

    def __init__(self, tokenizer: Any, eos: int, text: str) -> None:
        super().__init__(tokenizer, [eos], Sampling(), None)
        self.text = text

    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        ids = list(self.tokenizer(self.text, add_special_tokens=False)["input_ids"])[:max_new_tokens - 1] + self.eos_ids
        return Generated(ids=ids, logprobs=[-0.1] * len(ids), ended=True)


def propose_with(text: str, tokens: int = 4096) -> Any:
    from transformers import AutoTokenizer

    from autoenvscaling.flywheel.assignments import new_task
    from autoenvscaling.llm.embedded import embedded_model_path

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_path())
    host = create_host(entrypoints=False, plugins=[toy])
    backend = BwrapBackend()

    async def go() -> Any:
        try:
            runner = TrialRunner(backend, host=host)
            validator = Validator(host=host, settings=GateSettings(flaky_runs=1, skip=("calibration",)))
            validator.use_backend(backend, runner=runner)
            rollouts = Rollouts(Replay(tokenizer, tokenizer.eos_token_id, text), ChatTemplate(tokenizer), runner,
                                host=host, limits=AgentLimits(max_turns=1, command_timeout_sec=10),
                                tokens_per_turn=16, proposer_tokens=tokens, validator=validator)
            assignment = new_task(toy.ToyDomain(), "write-file", seed=1, difficulty="easy")
            return await rollouts.propose(assignment, seed=3)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_a_proposal_scores_by_its_admission_outcome() -> None:
    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    valid = render_task(toy.ToyDomain().generate("write-file", seed=11, difficulty="easy"))
    # Admitted by gates 1-8; the policy as solver writes the task text again, whose first bash block is the
    # solution: it solves every calibration rollout, so the task is too easy (mean 1 above the band).
    admitted_then_too_hard = propose_with(valid)
    assert admitted_then_too_hard.status == "failed_calibration" and admitted_then_too_hard.reward == -0.25
    assert admitted_then_too_hard.stream.prompt_ids and sum(admitted_then_too_hard.stream.env_mask) > 0
    garbage = propose_with("I would rather not write a task today.")
    assert garbage.status == "failed_validation" and garbage.reward == -1.0


@pytest.mark.slow  # the flywheel test in test_cli_and_flywheel.py takes such steps in the fast set
def test_one_model_takes_a_grpo_step_in_both_roles(half_solver: Path, tmp_path: Path) -> None:
    """TRL's GRPOTrainer steps on a solver group and a proposer group of the same tiny model: the
    proposer's episodes are real proposals (the domain guide, contract and example as prompt),
    scored by the admission path, and both roles' token streams reach the loss."""
    from safetensors.torch import load_file
    from trainer_helpers import count_task

    from autoenvscaling_trainer.training import GRPORun

    settings = GRPOSettings(steps=1, roles="both", groups=2, group_size=4, max_turns=2, tokens_per_turn=24,
                            proposer_tokens=24, learning_rate=1e-3, command_timeout_sec=10, temperature=1.0)
    run = GRPORun([count_task(0), count_task(100)], model=str(half_solver), out=tmp_path / "run", settings=settings,
                  host=create_host(entrypoints=False, plugins=[toy]), backend_factory=BwrapBackend)
    outcome = run.run()
    [row] = outcome.history
    assert row["solver/groups"] >= 1 and row["proposer/groups"] >= 1 and "trl/loss" in row
    solver, proposer = run.engine.last_groups  # the groups kept: dynamic sampling found a useful solver group
    assert solver.useful, solver.rewards
    assert (solver.role, proposer.role) == ("solver", "proposer")
    # 24 tokens cannot hold a task: every proposal is the model's own failed validation (the gates' -1).
    assert proposer.rewards == [-1.0] * 4 and {e.status for e in proposer.episodes} == {"failed_validation"}
    tokenizer = run.engine.generator.tokenizer
    prompt = tokenizer.decode(proposer.episodes[0].stream.prompt_ids)
    assert "toy" in prompt and "tests/test.sh" in prompt  # the proposer's real prompt: guide, contract, example
    assert all(0 < len(e.stream.completion_ids) <= 25 for e in proposer.episodes)
    before, after = load_file(half_solver / "model.safetensors"), load_file(outcome.model / "model.safetensors")
    assert any((before[k] - after[k]).abs().max() > 0 for k in before)
