"""The rollout function TRL's GRPOTrainer calls each step (``rollout_func``), with DAPO-style dynamic
sampling.

TRL hands over the step's prompts, each repeated ``num_generations`` times in a row; our prompts
name a pool task (``autoenvscaling:<task name>``). Each prompt is a slot. A slot is a solver slot
(rollouts of its task) or, when the proposer role trains, a proposer slot (proposals of a variant of
its task, the assignment the flywheel would give: simpler, harder or different from how the solver
did on it). The slot's group runs; if its rewards are all equal (GRPO learns nothing from it) it is
dropped and the slot is refilled with a group on another task drawn from the pool, up to
``max_resamples`` times. TRL gets back the token streams, with environment tokens masked out of
the loss (``env_mask``), and the rewards as an extra column that the reward function reads.

Everything a step draws is seeded by (seed, step, slot, attempt, rollout), so a step repeats exactly
after a resume, whatever order its rollouts finish in.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import statistics
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable

from autoenvscaling.api import AgentLimits, ChatTemplate, eos_ids

from .episodes import Group, Rollouts, run_group
from .policy import Generator, Sampling, TransformersGenerator, VLLMGenerator
from .settings import GRPOSettings, Role

if TYPE_CHECKING:
    from autoenvscaling.api import PluginHost, SandboxBackend, Task

PROMPT_PREFIX = "autoenvscaling:"


def task_prompt(task: Task) -> str:
    """The dataset prompt that stands for ``task`` (the rollout function renders the real one)."""
    return f"{PROMPT_PREFIX}{task.name}"


def draw_seed(*parts: object) -> int:
    """A 31-bit seed from any parts, the same in every process and Python version."""
    digest = hashlib.sha256(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def step_stats(step: int, kept: list[Group], generated: list[Group], seconds: float,
               generation: tuple[int, float] = (0, 0.0)) -> dict[str, float]:
    """The figures logged per step: groups generated, useful, dropped (replaced by oversampling),
    unfilled (slots that kept an all-equal group), reward mean and spread, per role too;
    ``generation``: (tokens generated, seconds spent generating) during the step."""
    out: dict[str, float] = {"step": float(step), "rollout_seconds": seconds}
    for role in (None, "solver", "proposer"):
        mine = [g for g in generated if role is None or g.role == role]
        if role is not None and not mine:
            continue
        prefix = "" if role is None else f"{role}/"
        rewards = [r for g in mine for r in g.rewards]
        useful = sum(g.useful for g in mine)
        out[f"{prefix}groups"] = float(len(mine))
        out[f"{prefix}useful_groups"] = float(useful)
        out[f"{prefix}useful_group_rate"] = useful / len(mine) if mine else 0.0
        out[f"{prefix}reward_mean"] = statistics.fmean(rewards) if rewards else 0.0
        out[f"{prefix}reward_std"] = statistics.pstdev(rewards) if len(rewards) > 1 else 0.0
        kept_here = [g for g in kept if role is None or g.role == role]
        out[f"{prefix}dropped_groups"] = float(len(mine) - len(kept_here))
        out[f"{prefix}unfilled_slots"] = float(sum(not g.useful for g in kept_here))
        kept_rewards = [r for g in kept_here for r in g.rewards]
        out[f"{prefix}trained_reward_mean"] = statistics.fmean(kept_rewards) if kept_rewards else 0.0
    episodes = [e for g in generated for e in g.episodes]
    out["rerendered_turns"] = float(sum(e.stream.rerendered for e in episodes))
    out["unscored_rollouts"] = float(sum(not e.usable for e in episodes))
    tokens, generating = generation
    out["generated_tokens"] = float(tokens)
    out["tokens_per_second"] = tokens / generating if generating else 0.0
    return out


class RolloutEngine:
    """TRL's ``rollout_func`` over a pool of tasks. ``backend_factory`` makes the sandbox backend of
    a step (made and closed inside the step's event loop). ``on_step`` receives each step's
    figures (see ``step_stats``)."""

    def __init__(self, pool: list[Task], settings: GRPOSettings, *, host: PluginHost,
                 backend_factory: Callable[[], SandboxBackend],
                 on_step: Callable[[dict[str, float]], None] | None = None) -> None:
        if not pool:
            raise ValueError("the pool is empty")
        self.tasks = {t.name: t for t in pool}
        self.settings = settings
        self.host = host
        self.backend_factory = backend_factory
        self.on_step = on_step
        self.generator: Generator | None = None
        self.template: ChatTemplate | None = None
        self.seen: dict[str, list[float]] = defaultdict(list)  # solver rewards per task, for proposer assignments
        self.last_groups: list[Group] = []

    # -- what TRL calls -----------------------------------------------------------------------
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        size = trainer.num_generations
        keys = [str(p).removeprefix(PROMPT_PREFIX) for p in prompts[::size]]
        unknown = [k for k in keys if k not in self.tasks]
        if unknown:
            raise ValueError(f"prompts name tasks outside the pool: {unknown[:3]}")
        self.bind(trainer)
        step = int(trainer.state.global_step)
        assert self.generator is not None
        started, tokens, generating = time.monotonic(), self.generator.tokens, self.generator.seconds
        kept, generated = asyncio.run(self.run_step(step, keys, size))
        stats = step_stats(step + 1, kept, generated, time.monotonic() - started,
                           (self.generator.tokens - tokens, self.generator.seconds - generating))
        if self.on_step is not None:
            self.on_step(stats)
        self.last_groups = kept
        return self.output(kept)

    def bind(self, trainer: Any) -> None:
        """The generator and chat template of ``trainer`` (once)."""
        if self.generator is not None:
            return
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        eos = eos_ids(model, tokenizer)
        args = trainer.args
        sampling = Sampling(temperature=args.temperature, top_p=args.top_p, top_k=args.top_k or 0)
        self.generator = VLLMGenerator(trainer, eos, sampling) if trainer.use_vllm else \
            TransformersGenerator(model, tokenizer, eos, sampling)
        self.template = ChatTemplate(tokenizer)

    # -- one step -----------------------------------------------------------------------------
    def roles(self, slots: int) -> list[Role]:
        counts = self.settings.role_groups()
        solver = min(slots, counts.get("solver", 0)) if "proposer" in counts else slots
        return ["solver" if i < solver else "proposer" for i in range(slots)]

    async def run_step(self, step: int, keys: list[str], size: int) -> tuple[list[Group], list[Group]]:
        """(the group kept per slot, every group generated)."""
        backend = self.backend_factory()
        try:
            rollouts = self.rollouts(backend)
            results = await asyncio.gather(*(self.fill(rollouts, step, slot, key, role, size)
                                             for slot, (key, role) in enumerate(zip(keys, self.roles(len(keys))))),
                                           return_exceptions=True)
        finally:
            await backend.aclose()
        failures = [r for r in results if isinstance(r, BaseException)]
        if failures:
            raise failures[0]
        kept = [r[0] for r in results if not isinstance(r, BaseException)]
        generated = [g for r in results if not isinstance(r, BaseException) for g in r[1]]
        for group in generated:
            if group.role == "solver":
                self.seen[group.key] += group.rewards
        return kept, generated

    def rollouts(self, backend: SandboxBackend, generator: Generator | None = None,
                 template: ChatTemplate | None = None) -> Rollouts:
        """Episodes on ``backend`` with ``generator`` and ``template`` (default: the bound trainer's)."""
        from autoenvscaling.api import GateSettings, TrialRunner, Validator

        generator, template = generator or self.generator, template or self.template
        assert generator is not None and template is not None, "bind(trainer) first"
        s = self.settings
        limits = AgentLimits(max_turns=s.max_turns, max_tokens=1_000_000, timeout_sec=s.rollout_timeout_sec,
                             command_timeout_sec=s.command_timeout_sec, observation_chars=s.observation_chars)
        runner = TrialRunner(backend, host=self.host)
        validator = None
        if s.roles != "solver":
            validator = Validator(host=self.host, settings=GateSettings(flaky_runs=1, skip=("calibration",)))
            validator.use_backend(backend, runner=runner)
        return Rollouts(generator, template, runner, host=self.host, limits=limits,
                        tokens_per_turn=s.tokens_per_turn, proposer_tokens=s.proposer_tokens, validator=validator,
                        calibration_rollouts=s.proposer_calibration_rollouts)

    async def fill(self, rollouts: Rollouts, step: int, slot: int, key: str, role: Role,
                   size: int) -> tuple[Group, list[Group]]:
        """The slot's group: its own task's, or (dynamic sampling) the first group with a spread of
        rewards among replacements drawn from the pool. Returns (kept, all generated)."""
        s = self.settings
        others = sorted(k for k in self.tasks if k != key)
        rng = random.Random(draw_seed(s.seed, step, slot, "replacements"))
        tries = 1 + (s.max_resamples if s.dynamic_sampling else 0)
        candidates = [key] + rng.sample(others, min(tries - 1, len(others)))
        generated: list[Group] = []
        for attempt, candidate in enumerate(candidates):
            seeds = [draw_seed(s.seed, step, slot, attempt, i) for i in range(size)]
            group = await self.group(rollouts, role, candidate, seeds, step, slot)
            generated.append(group)
            if not s.dynamic_sampling or group.useful:
                break
        return generated[-1], generated

    async def group(self, rollouts: Rollouts, role: Role, key: str, seeds: list[int], step: int, slot: int) -> Group:
        task = self.tasks[key]
        if role == "solver":
            return await run_group(role, key, seeds, lambda seed: rollouts.solve(task, seed))
        assignment = self.assignment(task, draw_seed(self.settings.seed, step, slot, key))
        return await run_group(role, key, seeds, lambda seed: rollouts.propose(assignment, seed))

    def assignment(self, parent: Task, seed: int) -> Any:
        """What the flywheel would ask a proposer for, given how the solver did on ``parent``:
        simpler when it keeps failing, harder when it always succeeds, different otherwise."""
        from autoenvscaling.api import from_summary, summary_of

        domain = parent.provenance.domain or self.host.domains.names()[0]
        rewards = self.seen.get(parent.name, [])
        return from_summary(parent, summary_of(rewards, []), domain=domain, seed=seed)

    # -- what TRL gets back -------------------------------------------------------------------
    def output(self, groups: list[Group]) -> dict[str, list[Any]]:
        assert self.generator is not None
        placeholder = [self.generator.eos_ids[0]]
        columns = ("prompt_ids", "completion_ids", "logprobs", "env_mask", "env_reward", "role")
        out: dict[str, list[Any]] = {column: [] for column in columns}
        for group in groups:
            for episode in group.episodes:
                stream = episode.stream
                if stream.prompt_ids and stream.completion_ids:
                    row = (stream.prompt_ids, stream.completion_ids, stream.logprobs, stream.env_mask)
                else:  # the model never spoke (the sandbox failed first): nothing to train on
                    row = (stream.prompt_ids or placeholder, placeholder, [0.0], [0])
                for column, value in zip(columns, (*row, episode.reward, episode.role)):
                    out[column].append(value)
        return out

