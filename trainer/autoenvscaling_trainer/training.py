"""A GRPO training run on a pool of tasks: TRL's GRPOTrainer with our rollout function, checkpoints
that resume, a metrics log, held-out evaluation before and after, and the trained model saved as a
plain checkpoint the solver loads.

Layout of ``out``::

    settings.json        the run's GRPOSettings and model (a resumed run must match)
    checkpoints/         TRL/transformers checkpoints (checkpoint-N: weights, optimizer, RNG states)
    metrics.jsonl        one row per step: TRL's loss and reward figures plus ours (groups, useful-group
                         rate, dropped groups, reward mean and spread), and held-out evaluations
    tensorboard/         the same figures, when tensorboard is installed
    model/               the trained model and tokenizer (written last, atomically)
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from autoenvscaling.api import ConfigError, MissingPrerequisite, UsageError

from .settings import GRPOSettings

if TYPE_CHECKING:
    from autoenvscaling.api import PluginHost, SandboxBackend, Task


def score_completions_only() -> None:
    """Have TRL's fused LM head score only the completion tokens on a CPU as well.

    TRL 1.16 projects only the positions that carry a label (the completion) through the LM head on
    CUDA and XPU; on any other device it projects every position, prompt included, so that a
    compiler (Neuron's) sees the same tile shapes on every batch. Nothing is compiled on a CPU, and a
    multi-turn episode's prompt is most of its tokens, so there the projection did several times the
    work for the same log-probabilities. The switch is TRL's own ``compact`` path (the one it takes
    on a GPU); only the decision of ``trl.trainer.utils`` is changed, not which kernels run. Done
    once per process; a TRL without that function is left as it is."""
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:  # pragma: no cover - the trainer depends on trl
        return
    decide = getattr(trl_utils, "_use_triton", None)
    if decide is None or getattr(decide, "completions_only", False):
        return

    def compact(device: Any) -> bool:
        return bool(device.type == "cpu" or decide(device))

    compact.completions_only = True  # type: ignore[attr-defined]
    trl_utils._use_triton = compact


EVAL_TEMPERATURE = 0.7
"""Held-out rollouts sample as the flywheel's calibration rollouts do (ROLLOUT_TEMPERATURE)."""


@dataclass
class Evaluation:
    """A solver's pass rate (reward 1) on held-out tasks, with its 95% Wilson interval."""

    step: int
    passed: int
    n: int
    mean_reward: float
    low: float
    high: float

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    def row(self) -> dict[str, float]:
        return {"step": float(self.step), "held_out_pass_rate": self.pass_rate, "held_out_low": self.low,
                "held_out_high": self.high, "held_out_mean_reward": self.mean_reward, "held_out_rollouts": float(self.n)}


@dataclass
class TrainOutcome:
    model: Path
    steps: int
    seconds: float
    history: list[dict[str, float]] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """Figures for a flywheel round's record."""
        rows = [r for r in self.history if "groups" in r]
        out: dict[str, float] = {"steps": float(self.steps), "seconds": round(self.seconds, 1)}
        if rows:
            groups = sum(r["groups"] for r in rows)
            out["useful_group_rate"] = sum(r["useful_groups"] for r in rows) / groups if groups else 0.0
            out["dropped_groups"] = sum(r["dropped_groups"] for r in rows)
            out["reward_mean"] = sum(r["reward_mean"] for r in rows) / len(rows)
        if self.evaluations:
            out["held_out_pass_rate_before"] = self.evaluations[0].pass_rate
            out["held_out_pass_rate_after"] = self.evaluations[-1].pass_rate
        return out


def resolve_model(model: str) -> Path:
    """A local checkpoint directory for ``model``: an embedded model's name ("embedded" for SmolLM2,
    "embedded-qwen"), converted on first use, or a path."""
    from autoenvscaling.api import EMBEDDED_MODELS, embedded_model_path

    if model in EMBEDDED_MODELS:
        return embedded_model_path(model)
    path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        raise ConfigError(f"no model checkpoint at {model!r} (no config.json there)",
                          hint=f"pass a local checkpoint directory, or an embedded model ({', '.join(EMBEDDED_MODELS)}); "
                               "no model hub is reachable")
    return path.resolve()


def require_trl() -> None:
    try:
        import torch  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        raise MissingPrerequisite(f"training needs {exc.name}, which is not installed",
                                  hint="pip install -e trainer/ (install torch==2.13.0 first on a CPU machine)") from None


def generation_mode(settings: GRPOSettings) -> str | None:
    """The vLLM mode to ask TRL for, or None for transformers."""
    if settings.generation == "transformers":
        return None
    import importlib.util

    import torch

    has_vllm = torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None
    if settings.generation == "auto":
        return "colocate" if has_vllm else None
    if not has_vllm:
        raise MissingPrerequisite(f"--generation {settings.generation} needs CUDA and vllm",
                                  hint="pip install 'autoenvscaling-trainer[vllm]' on a GPU machine, "
                                       "or --generation transformers")
    return settings.generation.removeprefix("vllm-")


class GRPORun:
    """One run in ``out``. ``backend_factory`` makes a sandbox backend (one per step, closed after)."""

    def __init__(self, pool: list[Task], *, model: str, out: str | Path, settings: GRPOSettings, host: PluginHost,
                 backend_factory: Callable[[], SandboxBackend], held_out: list[Task] | None = None,
                 callbacks: list[Any] | None = None) -> None:
        if not pool:
            raise UsageError("nothing to train on: the pool has no tasks",
                             hint="admit tasks first (autoenvscaling generate) or pass a suite that has some")
        self.pool = pool
        self.model_name = model
        self.out = Path(out)
        self.settings = settings
        self.host = host
        self.backend_factory = backend_factory
        self.held_out = held_out or []
        self.callbacks = list(callbacks or [])  # extra transformers TrainerCallbacks
        self.stats: dict[int, dict[str, float]] = {}

    # -- bookkeeping ----------------------------------------------------------------------------
    def _identity(self) -> dict[str, Any]:
        return {"settings": self.settings.model_dump(mode="json"), "model": self.model_name,
                "pool": sorted(t.name for t in self.pool), "held_out": sorted(t.name for t in self.held_out)}

    def _bind(self, resume: bool) -> Path | None:
        """Write or check settings.json; the checkpoint to resume from (None: start fresh)."""
        from transformers.trainer_utils import get_last_checkpoint

        path = self.out / "settings.json"
        identity = self._identity()
        checkpoints = self.out / "checkpoints"
        if path.is_file():
            if not resume:
                raise UsageError(f"{self.out} already holds a training run",
                                 hint="pass --resume to continue it, or choose another --out")
            recorded = json.loads(path.read_text())
            if recorded != identity:
                changed = sorted(k for k in identity if recorded.get(k) != identity[k])
                raise UsageError(f"the run in {self.out} was started with other {', '.join(changed)}",
                                 hint="resume with the same options, or start a new --out")
            last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
            return Path(last) if last else None
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(identity, indent=2, sort_keys=True))
        os.replace(tmp, path)
        return None

    # -- the run --------------------------------------------------------------------------------
    def run(self, *, resume: bool = False) -> TrainOutcome:
        """Train (or resume, from the last checkpoint) to ``settings.steps``."""
        require_trl()
        started = time.monotonic()
        checkpoint = self._bind(resume)
        # A run that reached its last step before it was stopped only has its final save left to do.
        done = checkpoint is not None and _step_of(checkpoint) >= self.settings.steps
        trainer, model, tokenizer = self._trainer(weights=checkpoint if done else None)
        log = MetricsLog(self.out, resume_step=_step_of(checkpoint))
        trainer.add_callback(log.callback(self.stats))
        if self.held_out:
            trainer.add_callback(_EvalCallback(self, model, tokenizer, log))
            if not any("held_out_pass_rate" in r and r["step"] == 0 for r in log.rows()):
                log.write(self.evaluate(model, tokenizer, step=0).row())
        if not done:
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        steps = _step_of(checkpoint) if done else int(trainer.state.global_step)
        if self.held_out and not any("held_out_pass_rate" in r and r["step"] == steps for r in log.rows()):
            log.write(self.evaluate(model, tokenizer, step=steps).row())
        final = self._save(model, tokenizer)
        log.close()
        rows = log.rows()
        evaluations = [Evaluation(step=int(r["step"]), passed=round(r["held_out_pass_rate"] * r["held_out_rollouts"]),
                                  n=int(r["held_out_rollouts"]), mean_reward=r["held_out_mean_reward"],
                                  low=r["held_out_low"], high=r["held_out_high"])
                       for r in rows if "held_out_pass_rate" in r]
        return TrainOutcome(model=final, steps=steps, seconds=time.monotonic() - started,
                            history=[r for r in rows if "held_out_pass_rate" not in r], evaluations=evaluations)

    def _trainer(self, weights: Path | None = None) -> tuple[Any, Any, Any]:
        """TRL's trainer with the model (from ``weights``, a checkpoint, when given)."""
        import torch
        from datasets import Dataset
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from trl import GRPOConfig, GRPOTrainer

        from .rewards import make_reward_function
        from .rollout import RolloutEngine, task_prompt

        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
        path = resolve_model(self.model_name)
        cuda = torch.cuda.is_available()
        score_completions_only()
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        if not tokenizer.chat_template:
            raise ConfigError(f"model {self.model_name!r} has no chat template", hint="train an instruct model")
        # float32 master weights always: small GRPO updates vanish in bfloat16 weights. On a GPU with
        # bfloat16 support the forward and backward passes run in bfloat16 autocast (bf16=True).
        mixed = cuda and torch.cuda.is_bf16_supported()
        model = AutoModelForCausalLM.from_pretrained(weights or path, local_files_only=True, dtype=torch.float32)
        s = self.settings
        vllm_mode = generation_mode(s)
        turn_budget = s.max_turns * (s.tokens_per_turn + s.observation_chars // 2)
        args = GRPOConfig(
            output_dir=str(self.out / "checkpoints"), max_steps=s.steps, seed=s.seed,
            per_device_train_batch_size=s.groups * s.group_size, num_generations=s.group_size,
            gradient_accumulation_steps=1, learning_rate=s.learning_rate, beta=s.beta, temperature=s.temperature,
            max_completion_length=max(turn_budget, s.proposer_tokens), logging_steps=1,
            save_strategy="steps", save_steps=s.save_every, save_total_limit=2, report_to="none",
            scale_rewards="group" if s.scale_rewards == "group" else "none",
            use_cpu=not cuda, bf16=mixed, dataloader_num_workers=0,
            use_vllm=vllm_mode is not None, vllm_mode=vllm_mode or "colocate", disable_tqdm=False,
        )
        engine = RolloutEngine(self.pool, s, host=self.host, backend_factory=self.backend_factory,
                               on_step=self._record)
        # A step takes ``groups`` prompts: a pool smaller than that (a flywheel's first round) is
        # repeated, or TRL's sampler would find no full batch and train no step at all.
        prompts = [task_prompt(t) for t in self.pool] * -(-s.groups // len(self.pool))
        dataset = Dataset.from_dict({"prompt": prompts})
        trainer = GRPOTrainer(model=model, reward_funcs=[make_reward_function(s.scale_rewards)], args=args,
                              train_dataset=dataset, processing_class=tokenizer, rollout_func=engine,
                              callbacks=self.callbacks)
        self.engine = engine
        return trainer, model, tokenizer

    def _record(self, stats: dict[str, float]) -> None:
        self.stats[int(stats["step"])] = stats

    def _save(self, model: Any, tokenizer: Any) -> Path:
        final = self.out / "model"
        tmp = self.out / ".model.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        return final

    def evaluate(self, model: Any, tokenizer: Any, *, step: int) -> Evaluation:
        """The solver's pass rate on the held-out tasks: ``eval_rollouts`` sampled rollouts each."""
        import asyncio

        from autoenvscaling.api import ChatTemplate, eos_ids, wilson_interval

        from .policy import Sampling, TransformersGenerator
        from .rollout import draw_seed

        generator = TransformersGenerator(model, tokenizer, eos_ids(model, tokenizer),
                                          Sampling(temperature=EVAL_TEMPERATURE))
        template = ChatTemplate(tokenizer)

        async def go() -> list[float | None]:
            backend = self.backend_factory()
            try:
                rollouts = self.engine.rollouts(backend, generator, template)
                episodes = await asyncio.gather(*(rollouts.solve(t, draw_seed("held-out", t.name, i))
                                                  for t in self.held_out for i in range(self.settings.eval_rollouts)))
            finally:
                await backend.aclose()
            return [e.reward for e in episodes]

        rewards = [r for r in asyncio.run(go()) if r is not None]
        passed = sum(r >= 1.0 for r in rewards)
        low, high = wilson_interval(passed, len(rewards))
        mean = sum(rewards) / len(rewards) if rewards else 0.0
        return Evaluation(step=step, passed=passed, n=len(rewards), mean_reward=mean, low=low, high=high)


def _step_of(checkpoint: Path | None) -> int:
    return int(checkpoint.name.rsplit("-", 1)[-1]) if checkpoint else 0


class MetricsLog:
    """metrics.jsonl (and TensorBoard when installed). On resume, rows after the checkpoint's step
    are dropped first: those steps run again, and each step is logged once."""

    def __init__(self, out: Path, *, resume_step: int) -> None:
        self.path = out / "metrics.jsonl"
        kept = [r for r in self.rows() if r.get("step", 0) <= resume_step]
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
        os.replace(tmp, self.path)
        self.writer: Any
        try:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(out / "tensorboard"))
        except ImportError:  # tensorboard is optional (the trainer's [tensorboard] extra)
            self.writer = None

    def rows(self) -> list[dict[str, float]]:
        if not self.path.is_file():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def write(self, row: dict[str, float]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(row, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if self.writer is not None:
            for key, value in row.items():
                if key != "step" and isinstance(value, (int, float)):
                    self.writer.add_scalar(key, value, int(row["step"]))
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def callback(self, stats: dict[int, dict[str, float]]) -> Any:
        from transformers import TrainerCallback

        log = self

        class _Log(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
                step = int(state.global_step)
                if not logs or "loss" not in logs:
                    return  # the end-of-training summary, not a step
                row = {f"trl/{k}": float(v) for k, v in logs.items() if isinstance(v, (int, float))}
                log.write({**row, **stats.get(step, {}), "step": float(step)})

        return _Log()


def _EvalCallback(run: GRPORun, model: Any, tokenizer: Any, log: MetricsLog) -> Any:  # noqa: N802 - a class factory
    from transformers import TrainerCallback

    class _Eval(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            every = run.settings.eval_every
            step = int(state.global_step)
            if every and step % every == 0 and step < run.settings.steps:
                log.write(run.evaluate(model, tokenizer, step=step).row())

    return _Eval()

