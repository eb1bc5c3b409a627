"""Multi-turn GRPO on real sandboxes: TRL's GRPOTrainer steps whose rollouts run the solver's tools in
bubblewrap and whose rewards come from the tasks' verifiers; dynamic sampling; resume; cleanup."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any

import pytest
from trainer_helpers import IDLES, SOLVES, count_task, write_task

from autoenvscaling.llm.chat_template import ChatTemplate, eos_ids
from autoenvscaling.plugins import create_host
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling_trainer.policy import Sampling, TransformersGenerator
from autoenvscaling_trainer.rollout import RolloutEngine, step_stats
from autoenvscaling_trainer.settings import GRPOSettings
from autoenvscaling_trainer.training import GRPORun

SMALL = dict(group_size=4, groups=1, max_turns=2, tokens_per_turn=24, learning_rate=1e-3, command_timeout_sec=10,
             temperature=1.0)


def engine_for(model_path: Path, pool: list[Any], **settings: Any) -> RolloutEngine:
    """A rollout engine bound to the model at ``model_path`` without a trainer (as TRL would bind it)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    model = AutoModelForCausalLM.from_pretrained(model_path)
    engine = RolloutEngine(pool, GRPOSettings(**{**SMALL, **settings}), host=create_host(), backend_factory=BwrapBackend)
    engine.generator = TransformersGenerator(model, tokenizer, eos_ids(model, tokenizer), Sampling(1.0))
    engine.template = ChatTemplate(tokenizer)
    return engine


def test_a_grpo_step_trains_on_multi_turn_rollouts_in_bwrap(half_solver: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    pool = [count_task(0), count_task(100)]
    run = GRPORun(pool, model=str(half_solver), out=tmp_path / "run", settings=GRPOSettings(steps=1, **SMALL),
                  host=create_host(), backend_factory=BwrapBackend)
    outcome = run.run()
    [row] = outcome.history
    assert row["step"] == 1 and "trl/loss" in row and row["groups"] >= 1
    [group] = run.engine.last_groups
    assert group.useful, [e.reward for e in group.episodes]  # the verifiers disagreed within the group
    assert set(group.rewards) == {0.0, 1.0} and row["trained_reward_mean"] == pytest.approx(group.mean())
    tokenizer = run.engine.generator.tokenizer
    for episode in group.episodes:
        stream = episode.stream
        assert episode.status == "ok" and stream.replies == 2 and stream.rerendered == 0
        mask = stream.env_mask
        # model tokens, then the environment's answer (masked out of the loss), then model tokens again
        first_env = mask.index(0)
        assert 0 < first_env and 1 in mask[first_env:]
        env_text = tokenizer.decode([t for t, m in zip(stream.completion_ids, mask) if m == 0])
        model_text = tokenizer.decode([t for t, m in zip(stream.completion_ids, mask) if m == 1])
        assert env_text.startswith("<|im_end|>") or env_text.startswith("\n")  # the template's own turn markers
        assert len(stream.logprobs) == len(stream.completion_ids)
        if episode.reward == 1.0:  # it ran the command in its sandbox and read the observation back
            assert SOLVES in model_text and "exit code 0" in env_text
        elif IDLES in model_text:
            assert "exit code 0" in env_text and SOLVES not in model_text
    before = load_file(half_solver / "model.safetensors")
    after = load_file(outcome.model / "model.safetensors")
    assert any((before[k] - after[k]).abs().max() > 0 for k in before)  # the optimizer step changed weights
    assert (tmp_path / "run" / "checkpoints" / "checkpoint-1").is_dir()


def test_dynamic_sampling_drops_an_all_equal_group(half_solver: Path) -> None:
    never = write_task(3)  # the model runs its count command there: every rollout scores 0
    engine = engine_for(half_solver, [never, count_task(0), count_task(100)], max_resamples=2)
    kept, generated = asyncio.run(engine.run_step(0, [never.name], 4))
    assert generated[0].key == never.name and generated[0].rewards == [0.0] * 4 and not generated[0].useful
    [slot] = kept
    assert slot.useful and slot.key != never.name and slot is generated[-1]
    stats = step_stats(1, kept, generated, 0.0)
    assert stats["dropped_groups"] == len(generated) - 1 >= 1 and stats["unfilled_slots"] == 0
    assert stats["useful_group_rate"] == pytest.approx(1 / len(generated))
    # Without dynamic sampling the all-equal group is what the step trains on.
    plain = engine_for(half_solver, [never, count_task(0)], dynamic_sampling=False)
    kept, generated = asyncio.run(plain.run_step(0, [never.name], 4))
    assert [g.key for g in generated] == [never.name] and not kept[0].useful


def test_checkpoint_and_resume_give_the_same_next_step(half_solver: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file
    from transformers import TrainerCallback

    pool = [count_task(0), count_task(100), count_task(200)]
    settings = GRPOSettings(steps=2, **SMALL)

    def run(out: Path, callbacks: list[Any] = (), resume: bool = False) -> Any:
        return GRPORun(pool, model=str(half_solver), out=out, settings=settings, host=create_host(),
                       backend_factory=BwrapBackend, callbacks=list(callbacks)).run(resume=resume)

    straight = run(tmp_path / "straight")

    class Interrupt(TrainerCallback):  # stands for a kill right after the first checkpoint was written
        def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path / "resumed", [Interrupt()])
    assert not (tmp_path / "resumed" / "model").exists()
    with pytest.raises(Exception, match="already holds a training run"):
        run(tmp_path / "resumed")
    resumed = run(tmp_path / "resumed", resume=True)
    rows = [json.loads(line) for line in (tmp_path / "resumed" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1.0, 2.0]  # step 1 logged once, step 2 once
    keys = ("reward_mean", "reward_std", "groups", "dropped_groups", "trl/loss", "trl/num_tokens")
    assert {k: resumed.history[1][k] for k in keys} == pytest.approx({k: straight.history[1][k] for k in keys})
    a, b = load_file(straight.model / "model.safetensors"), load_file(resumed.model / "model.safetensors")
    assert all((a[k] - b[k]).abs().max() < 1e-6 for k in a)


def _jails() -> set[str]:
    from autoenvscaling.sandbox.isolation import owner_tag, run_dir

    root = run_dir()
    return {p.name for p in root.iterdir() if p.name.startswith(owner_tag())} if root.is_dir() else set()


def test_no_sandbox_survives_a_failed_step(half_solver: Path) -> None:
    class Crash(RuntimeError):
        pass

    engine = engine_for(half_solver, [count_task(0)])
    real = engine.generator
    assert real is not None
    calls = {"n": 0}

    class Failing(TransformersGenerator):  # the model fails mid-step (an out-of-memory, a driver error)
        def _generate_batch(self, requests: list[Any]) -> Any:
            calls["n"] += 1
            if calls["n"] == 2:  # the second turn: every rollout has run a command in its live sandbox
                raise Crash("generation failed")
            return real._generate_batch(requests)

    engine.generator = Failing(real.model, real.tokenizer, real.eos_ids, real.sampling)
    before = _jails()
    with pytest.raises(Crash):
        asyncio.run(engine.run_step(0, [count_task(0).name], 4))
    assert calls["n"] == 2  # the rollouts were live (mid-attempt) when generation failed
    gc.collect()
    assert _jails() == before  # every sandbox of the step was closed: no attempt directory, no mount left
    open_jails = [o for o in gc.get_objects() if type(o).__name__ == "BwrapSandbox" and o.jail.opened and not o.jail.closed]
    assert not open_jails


def test_on_a_cpu_only_the_completion_goes_through_the_lm_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TRL scores every position of a sequence on a CPU (the prompt too); after
    ``score_completions_only`` only the completion's, with the same log-probabilities and entropies."""
    import torch
    import trl.trainer.utils as trl_utils
    from transformers import AutoModelForCausalLM
    from trl.kernels.chunked_logprob import _use_triton as trl_decision

    from autoenvscaling.llm.tiny import build_tiny_model
    from autoenvscaling_trainer.training import score_completions_only

    model = AutoModelForCausalLM.from_pretrained(build_tiny_model(tmp_path / "m"), dtype=torch.float32)
    trl_utils.add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids = torch.randint(0, 2000, (2, 40), generator=torch.Generator().manual_seed(0))
    labels = ids.masked_fill(torch.arange(40) < 32, -100)  # a 32-token prompt, an 8-token completion
    rows: list[int] = []
    apply = trl_utils._ChunkedLogProbFunction.apply

    def counting(hidden: Any, *rest: Any) -> Any:
        rows.append(hidden.shape[0])
        return apply(hidden, *rest)

    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", counting)
    monkeypatch.setattr(trl_utils, "_use_triton", trl_decision)  # TRL's own decision (the control)
    with torch.no_grad():
        every = model(input_ids=ids, labels=labels, fused_lm_head=True)
        score_completions_only()
        score_completions_only()  # once per process: a second call changes nothing
        completion = model(input_ids=ids, labels=labels, fused_lm_head=True)
    assert rows == [2 * 39, 2 * 8]  # the control projects all 39 shifted positions of each row
    assert torch.allclose(every.log_probs, completion.log_probs, atol=1e-5)
    assert torch.allclose(every.entropy, completion.entropy, atol=1e-5)
    assert bool((completion.log_probs[:, 31:] < 0).all()) and bool((completion.log_probs[:, :31] == 0).all())
