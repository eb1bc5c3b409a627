"""GRPO on one GPU with TRL's GRPOTrainer: how fast a training step is, and how much memory it takes.

Meant for a lent GPU machine (see bench/README-gpu.md and bench/gpu_grpo.sh, which installs the
carried wheels and makes the project importable there). No model hub is reachable on that machine,
so the model is built at run time from a config with random weights; only the SmolLM2 tokenizer
(and its config.json, which gives the default model shape) is carried, in .gpu_assets/smollm2.

Part A: plain single-turn GRPO with TRL's own generation on a synthetic verifiable task (small
        arithmetic prompts made here; reward 1 when the completion's first integer is the answer,
        plus a 0.1-weighted "wrote a number at all" reward, so that some groups of a random model
        are not all equal). Weights and compute in bfloat16 on CUDA, as GRPORun loads its model.
Part B: the project's multi-turn GRPORun (autoenvscaling_trainer) on generated terminal `basics`
        tasks, its rollouts running in bubblewrap sandboxes. Runs only where the bwrap backend can
        run (bwrap, root, overlayfs, a built Debian base root filesystem); otherwise it says why not.

Figures printed per part: model, parameters, dtype, steps, seconds per step (median over the steps
after the first, which carries the warm-up), generation tokens/s, peak GPU memory, the share of
weight elements the training changed (bfloat16 weights cannot hold updates much smaller than 1/256
of their size), and per step the reward mean and the useful-group rate (the share of groups whose
rewards are not all equal, the groups GRPO learns from). Every figure is measured in this run; a part that did not run prints no
figures. Without CUDA the script says "no CUDA", runs one tiny CPU step of each part as a sanity
check (no figures worth reporting), and exits 0.

    python3 bench/gpu_grpo.py                 # on the GPU machine (through bench/gpu_grpo.sh)
    OMP_NUM_THREADS=1 .venv/bin/python bench/gpu_grpo.py --smoke   # here: a tiny CPU run of both parts
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
# The GPU machine's image has a peft built for its own transformers; TRL imports it when present.
# Nothing here uses peft, so hide it (transformers' is_peft_available() then says False) rather
# than risk a version clash with the carried transformers. --keep-peft turns this off.
if "--keep-peft" not in sys.argv:
    sys.modules.setdefault("peft", None)  # type: ignore[assignment]

REPO = Path(__file__).resolve().parent.parent
ASSETS = REPO / ".gpu_assets" / "smollm2"
T0 = time.monotonic()


def say(msg: str = "") -> None:
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}" if msg else "", flush=True)


# ---------------------------------------------------------------------------------------------
# Model and tokenizer
# ---------------------------------------------------------------------------------------------
def tokenizer_dir(arg: str | None) -> Path:
    """The carried SmolLM2 tokenizer; here (no .gpu_assets) the embedded checkpoint's."""
    if arg:
        return Path(arg)
    if (ASSETS / "tokenizer.json").is_file():
        return ASSETS
    from autoenvscaling.llm.embedded import embedded_model_path

    return embedded_model_path()


ARCHS = ("smollm2-135m", "llama-250m", "tiny")


def model_config(arch: str, tok_dir: Path, tokenizer: Any) -> Any:
    """smollm2-135m: SmolLM2-135M's own shape (its config.json, 30 layers x 576); llama-250m: a
    wider 16 x 1024 Llama with grouped-query attention; tiny: 2 x 64, for CPU smoke runs."""
    from transformers import LlamaConfig

    ids = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
               pad_token_id=tokenizer.pad_token_id)
    if arch == "smollm2-135m":
        config = LlamaConfig.from_pretrained(tok_dir)
        for key, value in ids.items():
            setattr(config, key, value)
        return config
    if arch == "llama-250m":
        return LlamaConfig(vocab_size=len(tokenizer), hidden_size=1024, intermediate_size=2816, num_hidden_layers=16,
                           num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=4096,
                           tie_word_embeddings=True, **ids)
    return LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                       tie_word_embeddings=True, **ids)


def build_model(arch: str, tok_dir: Path, dtype: Any, device: str, seed: int) -> tuple[Any, Any]:
    """A random-weight Llama of ``arch`` on ``device`` in ``dtype``, and the tokenizer."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig, LlamaForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tok_dir, local_files_only=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    config = model_config(arch, tok_dir, tokenizer)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model = model.to(device=device, dtype=dtype)
    model.generation_config = GenerationConfig(bos_token_id=tokenizer.bos_token_id,  # type: ignore[no-untyped-call]
                                               eos_token_id=tokenizer.eos_token_id,
                                               pad_token_id=tokenizer.pad_token_id)
    return model, tokenizer


def describe(model: Any) -> str:
    c = model.config
    n = sum(p.numel() for p in model.parameters())
    return (f"random-init Llama {c.num_hidden_layers} layers x {c.hidden_size} (heads {c.num_attention_heads}, "
            f"kv heads {c.num_key_value_heads}, vocab {c.vocab_size}), {n / 1e6:.1f}M parameters")


# ---------------------------------------------------------------------------------------------
# Timing and budget
# ---------------------------------------------------------------------------------------------
def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def step_clock(budget_s: float, times: list[float], label: str) -> Any:
    """A TrainerCallback that times each optimizer step (CUDA synchronised) and stops training
    before a step that would not finish inside ``budget_s`` (judged by the slowest step so far)."""
    from transformers import TrainerCallback

    started = time.monotonic()

    class _Clock(TrainerCallback):  # type: ignore[misc]
        begun = 0.0

        def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            sync()
            self.begun = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            sync()
            times.append(time.perf_counter() - self.begun)
            elapsed = time.monotonic() - started
            if state.global_step < state.max_steps and elapsed + max(times) > budget_s:
                say(f"{label}: stopping after step {state.global_step}: another step (~{max(times):.1f} s) would "
                    f"pass the {budget_s:.0f} s budget ({elapsed:.1f} s used)")
                control.should_training_stop = True

    return _Clock()


def median_after_warmup(values: list[float]) -> tuple[float, str]:
    if len(values) >= 2:
        return statistics.median(values[1:]), f"median of steps 2-{len(values)}; step 1 (warm-up) {values[0]:.2f} s"
    return values[0], "one step only, warm-up included"


def changed_share(before: list[Any], after: list[Any]) -> float:
    """The share of weight elements whose value differs between two lists of tensors."""
    differ = sum(int((a != b.detach().to(a.device)).sum()) for a, b in zip(before, after))
    return differ / max(1, sum(a.numel() for a in before))


def gpu_memory_reset() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def gpu_memory() -> dict[str, float]:
    import torch

    if not torch.cuda.is_available():
        return {}
    return {"peak_allocated_gib": torch.cuda.max_memory_allocated() / 2**30,
            "peak_reserved_gib": torch.cuda.max_memory_reserved() / 2**30}


# ---------------------------------------------------------------------------------------------
# Part A: single-turn GRPO with TRL's generation on arithmetic
# ---------------------------------------------------------------------------------------------
def arithmetic(n: int, seed: int) -> dict[str, list[Any]]:
    rng = random.Random(seed)
    prompts, answers = [], []
    for _ in range(n):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        op = rng.choice("+-*")
        answer = a + b if op == "+" else a - b if op == "-" else a * b
        prompts.append([{"role": "user", "content": f"What is {a} {op} {b}? Reply with the number only."}])
        answers.append(str(answer))
    return {"prompt": prompts, "answer": answers}


def _text(completion: Any) -> str:
    return completion[-1]["content"] if isinstance(completion, list) else str(completion)


class Rewards:
    """The reward functions, recording each batch's rewards for the per-step figures. ``exact`` (weight
    1) and ``has_number`` (0.1). A smoke run adds ``shorter`` (weight 0.01, minus the completion's
    length in kilo-characters): a tiny random model never writes a number, so without it every group
    would be all-equal and the smoke step would never move the weights."""

    def __init__(self, *, smoke: bool) -> None:
        self.funcs = [self.exact, self.has_number] + ([self.shorter] if smoke else [])
        self.weights = [1.0, 0.1] + ([0.01] if smoke else [])
        self.batches: list[dict[str, list[float]]] = []

    def exact(self, completions: list[Any], answer: list[str], **_: Any) -> list[float]:
        out = []
        for completion, want in zip(completions, answer):
            found = re.search(r"-?\d+", _text(completion))
            out.append(1.0 if found and found.group() == want else 0.0)
        self.batches.append({"exact": out})
        return out

    def has_number(self, completions: list[Any], **_: Any) -> list[float]:
        out = [1.0 if re.search(r"\d", _text(c)) else 0.0 for c in completions]
        self.batches[-1]["has_number"] = out
        return out

    def shorter(self, completions: list[Any], **_: Any) -> list[float]:
        out = [-len(_text(c)) / 1000 for c in completions]
        self.batches[-1]["shorter"] = out
        return out

    def step_figures(self, group_size: int) -> dict[str, float]:
        batch = self.batches[-1]
        names = ["exact", "has_number", "shorter"][:len(self.weights)]
        total = [sum(w * batch[n][i] for w, n in zip(self.weights, names)) for i in range(len(batch["exact"]))]
        groups = [total[i:i + group_size] for i in range(0, len(total), group_size)]
        useful = sum(max(g) > min(g) for g in groups)
        return {"reward_mean": statistics.fmean(total), "exact_mean": statistics.fmean(batch["exact"]),
                "has_number_mean": statistics.fmean(batch["has_number"]), "groups": float(len(groups)),
                "useful_group_rate": useful / len(groups)}


def part_a(args: argparse.Namespace, cuda: bool, tok_dir: Path, work: Path) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    say("part A: single-turn GRPO, TRL's own generation, arithmetic with an exact-match reward")
    device = "cuda" if cuda else "cpu"
    # bf16: bfloat16 weights and compute (as GRPORun on CUDA); amp: float32 weights, bfloat16
    # autocast in the loss (generation then runs in float32); fp32: float32 throughout.
    precision = args.precision if args.precision != "auto" else ("bf16" if cuda else "fp32")
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    gpu_memory_reset()
    model, tokenizer = build_model(args.arch, tok_dir, dtype, device, seed=0)
    say(f"part A model: {describe(model)}, precision {precision} on {device}")

    gen_log: list[tuple[float, int, int]] = []  # (seconds, completion tokens, padded tokens) per generation

    class TimedGRPOTrainer(GRPOTrainer):  # type: ignore[misc]
        def _generate_single_turn(self, prompt_ids: Any, *rest: Any, **kw: Any) -> Any:
            sync()
            t = time.perf_counter()
            completion_ids, logprobs = super()._generate_single_turn(prompt_ids, *rest, **kw)
            sync()
            lengths = [len(c) for c in completion_ids]
            gen_log.append((time.perf_counter() - t, sum(lengths), len(lengths) * max(lengths, default=0)))
            return completion_ids, logprobs

    smoke = args.smoke or not cuda
    rewards = Rewards(smoke=smoke)
    G, P = args.group_size, args.prompts_per_step
    steps = args.steps_a
    dataset = Dataset.from_dict(arithmetic(max(64, steps * P * 2), seed=0))
    config = GRPOConfig(
        output_dir=str(work / "part_a"), max_steps=steps, seed=0,
        per_device_train_batch_size=P * G, num_generations=G, gradient_accumulation_steps=1,
        learning_rate=1e-5, beta=0.0, temperature=1.0, max_completion_length=args.completion_tokens,
        reward_weights=rewards.weights, logging_steps=1, save_strategy="no", report_to="none",
        use_cpu=not cuda, bf16=precision in ("bf16", "amp"), dataloader_num_workers=0, disable_tqdm=True,
    )
    times: list[float] = []
    rows: list[dict[str, float]] = []

    class Figures(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args_: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if not logs or "loss" not in logs or not rewards.batches:
                return
            seconds, toks, padded = gen_log[-1] if gen_log else (0.0, 0, 0)
            row = {"step": float(state.global_step), "step_s": times[-1] if times else float("nan"),
                   "gen_s": seconds, "gen_tokens": float(toks), "gen_tok_s": toks / seconds if seconds else 0.0,
                   "loss": float(logs["loss"]), **rewards.step_figures(G)}
            rows.append(row)
            say(f"  A step {int(row['step'])}: {row['step_s']:.2f} s (generation {seconds:.2f} s, {toks} tokens, "
                f"{row['gen_tok_s']:.0f} tok/s)  reward mean {row['reward_mean']:.3f} (exact {row['exact_mean']:.3f}, "
                f"has-number {row['has_number_mean']:.3f})  useful groups {row['useful_group_rate']:.2f}  "
                f"loss {row['loss']:.4f}")

    trainer = TimedGRPOTrainer(model=model, reward_funcs=rewards.funcs, args=config,
                               train_dataset=dataset, processing_class=tokenizer,
                               callbacks=[step_clock(args.budget_a, times, "part A"), Figures()])
    say(f"part A: {steps} steps max, {P} prompts x {G} completions per step, up to {args.completion_tokens} "
        f"new tokens each, budget {args.budget_a:.0f} s; reward weights "
        f"{dict(zip([f.__name__ for f in rewards.funcs], rewards.weights))}")
    before = [p.detach().clone() for p in model.parameters()]
    trainer.train()
    changed = changed_share(before, list(model.parameters()))
    del before
    memory = gpu_memory()
    dtype_name = {"bf16": "bfloat16", "amp": "float32 weights, bfloat16 autocast", "fp32": "float32"}[precision]
    result: dict[str, Any] = {"model": describe(model), "dtype": dtype_name, "device": device,
                              "steps": len(times), "prompts_per_step": P, "group_size": G,
                              "max_completion_tokens": args.completion_tokens, "learning_rate": config.learning_rate,
                              "changed_weight_share": changed,
                              "per_step": rows, **memory}
    if times:
        result["seconds_per_step_median"], result["seconds_per_step_note"] = median_after_warmup(times)
    if gen_log:
        later = gen_log[1:] or gen_log
        result["generation_tok_s"] = sum(g[1] for g in later) / sum(g[0] for g in later)
        result["generation_padded_tok_s"] = sum(g[2] for g in later) / sum(g[0] for g in later)
        result["generation_share_of_step"] = sum(g[0] for g in later) / sum((times[1:] or times))
    del trainer, model
    return result


# ---------------------------------------------------------------------------------------------
# Part B: the project's multi-turn GRPORun on terminal basics tasks in bwrap
# ---------------------------------------------------------------------------------------------
def bwrap_unready() -> str | None:
    """Why the bwrap backend cannot run here, or None."""
    if shutil.which("bwrap") is None:
        return ("bwrap (bubblewrap) is not installed on this machine; the multi-turn rollouts run the solver's "
                "commands in bubblewrap sandboxes")
    from autoenvscaling.sandbox.bwrap import BwrapBackend
    from autoenvscaling.sandbox.rootfs import base_rootfs_built

    ok, why = BwrapBackend.available()
    if not ok:
        return why
    if not base_rootfs_built():
        return ("the Debian base root filesystem is not built here, and building it (mmdebstrap) and the tasks' "
                "apt layer needs Debian's archive, which this machine cannot reach")
    return None


def part_b(args: argparse.Namespace, cuda: bool, tok_dir: Path, work: Path) -> dict[str, Any]:
    import asyncio

    import torch

    started = time.monotonic()
    say("part B: the project's multi-turn GRPORun on terminal `basics` tasks in bwrap sandboxes")
    why = bwrap_unready()
    if why:
        say(f"part B SKIPPED: {why}")
        return {"skipped": why}

    import autoenvscaling_terminal
    import autoenvscaling_trainer
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.bwrap import BwrapBackend
    from autoenvscaling_terminal.domain import TerminalDomain
    from autoenvscaling_trainer.settings import GRPOSettings
    from autoenvscaling_trainer.training import GRPORun

    # No entry points on the GPU machine (nothing is installed): register the plugins in-process.
    host = create_host(entrypoints=False, plugins=[autoenvscaling_terminal, autoenvscaling_trainer])
    domain = TerminalDomain()
    pool = [domain.generate("basics", seed=s, difficulty="easy") for s in range(args.tasks_b)]
    say(f"part B pool: {', '.join(t.name for t in pool)}")

    async def warm() -> None:  # builds (or finds cached) the shared layers, so step 1 times rollouts, not builds
        backend = BwrapBackend()
        try:
            await backend.prepare(pool[0])
        finally:
            await backend.aclose()

    t = time.monotonic()
    try:
        asyncio.run(asyncio.wait_for(warm(), timeout=args.prepare_timeout))
    except Exception as exc:  # noqa: BLE001 - any failure to build the environment means part B cannot run
        why = f"preparing a task environment failed ({type(exc).__name__}: {exc})"
        say(f"part B SKIPPED: {why}")
        return {"skipped": why}
    say(f"part B: task environment prepared in {time.monotonic() - t:.1f} s")

    dtype = torch.bfloat16 if cuda and torch.cuda.is_bf16_supported() else torch.float32
    model, tokenizer = build_model(args.arch, tok_dir, dtype, "cpu", seed=1)
    model_dir = work / "part_b_model"
    shutil.rmtree(model_dir, ignore_errors=True)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    desc = describe(model)
    del model
    smoke = args.smoke or not cuda
    settings = GRPOSettings(
        steps=args.steps_b, group_size=2 if smoke else 4, groups=1 if smoke else 2, max_turns=1 if smoke else 2,
        tokens_per_turn=16 if smoke else 48, learning_rate=1e-5, dynamic_sampling=False, save_every=10_000,
        generation="transformers", command_timeout_sec=10, rollout_timeout_sec=60, seed=0,
    )
    say(f"part B model: {desc}, {str(dtype).removeprefix('torch.')} (GRPORun loads it on "
        f"{'cuda' if cuda else 'cpu'}); settings: {settings.model_dump(include={'steps', 'group_size', 'groups', 'max_turns', 'tokens_per_turn', 'dynamic_sampling'})}")
    gpu_memory_reset()
    times: list[float] = []
    left = args.budget_b - (time.monotonic() - started)
    out = work / "part_b_run"
    shutil.rmtree(out, ignore_errors=True)
    run = GRPORun(pool, model=str(model_dir), out=out, settings=settings, host=host, backend_factory=BwrapBackend,
                  callbacks=[step_clock(left, times, "part B")])
    outcome = run.run()
    memory = gpu_memory()
    rows = []
    for i, r in enumerate(outcome.history):
        row = {"step": r["step"], "step_s": times[i] if i < len(times) else float("nan"),
               "rollout_s": r.get("rollout_seconds", float("nan")), "reward_mean": r.get("reward_mean", float("nan")),
               "useful_group_rate": r.get("useful_group_rate", float("nan")),
               "gen_tok_s_cumulative": r.get("tokens_per_second", float("nan")), "loss": r.get("trl/loss", float("nan"))}
        rows.append(row)
        say(f"  B step {int(row['step'])}: {row['step_s']:.2f} s (rollouts {row['rollout_s']:.2f} s)  reward mean "
            f"{row['reward_mean']:.3f}  useful groups {row['useful_group_rate']:.2f}  generation "
            f"{row['gen_tok_s_cumulative']:.0f} tok/s (cumulative)  loss {row['loss']:.4f}")
    generator = getattr(run.engine, "generator", None)
    from safetensors.torch import load_file

    start, end = load_file(model_dir / "model.safetensors"), load_file(outcome.model / "model.safetensors")
    keys = sorted(start)
    changed = changed_share([start[k] for k in keys], [end[k] for k in keys])
    result: dict[str, Any] = {"model": desc, "dtype": str(dtype).removeprefix("torch."), "steps": outcome.steps,
                              "learning_rate": settings.learning_rate, "changed_weight_share": changed,
                              "tasks": [t.name for t in pool], "settings": settings.model_dump(), "per_step": rows,
                              **memory}
    if times:
        result["seconds_per_step_median"], result["seconds_per_step_note"] = median_after_warmup(times)
    if generator is not None and generator.seconds:
        result["generation_tok_s"] = generator.tokens_per_second()
        result["generation_tokens"] = generator.tokens
    return result


# ---------------------------------------------------------------------------------------------
def report(name: str, r: dict[str, Any]) -> None:
    say(f"== part {name} ==")
    if "skipped" in r:
        say(f"  skipped: {r['skipped']}")
        return
    if "error" in r:
        say(f"  FAILED: {r['error']}")
        return
    say(f"  model: {r['model']}")
    say(f"  dtype: {r['dtype']}   steps: {r['steps']}   learning rate: {r.get('learning_rate')}")
    if "changed_weight_share" in r:
        say(f"  weight elements changed by training: {r['changed_weight_share'] * 100:.2f}%")
    if "seconds_per_step_median" in r:
        say(f"  seconds per step: {r['seconds_per_step_median']:.3f} ({r['seconds_per_step_note']})")
    if "generation_tok_s" in r:
        extra = f", padded {r['generation_padded_tok_s']:.0f} tok/s" if "generation_padded_tok_s" in r else ""
        share = f", {r['generation_share_of_step'] * 100:.0f}% of step time" if "generation_share_of_step" in r else ""
        say(f"  generation: {r['generation_tok_s']:.0f} completion tokens/s{extra}{share}")
    if "peak_allocated_gib" in r:
        say(f"  peak GPU memory: {r['peak_allocated_gib']:.2f} GiB allocated, {r['peak_reserved_gib']:.2f} GiB reserved")
    for row in r.get("per_step", []):
        say(f"  step {int(row['step'])}: reward mean {row['reward_mean']:.3f}, useful-group rate "
            f"{row['useful_group_rate']:.2f}")


def environment(cuda: bool) -> dict[str, Any]:
    import importlib

    import torch

    info: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                            "cuda_runtime": torch.version.cuda, "cuda_available": cuda}
    if cuda:
        info["gpu"] = torch.cuda.get_device_name(0)
        info["gpu_memory_gib"] = round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1)
    for name in ("trl", "transformers", "accelerate", "datasets", "tokenizers", "huggingface_hub", "pyarrow", "pydantic",
                 "autoenvscaling", "autoenvscaling_trainer", "autoenvscaling_terminal"):
        try:
            module = importlib.import_module(name)
            info[name] = getattr(module, "__version__", "?") + f" ({Path(module.__file__ or '?').parent})"
        except Exception as exc:  # noqa: BLE001 - a report line, not a failure
            info[name] = f"NOT IMPORTABLE: {type(exc).__name__}: {exc}"
    info["bwrap"] = shutil.which("bwrap") or "absent"
    return info


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--smoke", action="store_true", help="tiny model, one step of each part (CPU or GPU)")
    p.add_argument("--arch", choices=ARCHS, default=None, help="model shape (default smollm2-135m; tiny with --smoke)")
    p.add_argument("--tokenizer", default=None, help="tokenizer directory (default .gpu_assets/smollm2)")
    p.add_argument("--steps-a", type=int, default=None, help="part A steps at most (default 20; 1 in smoke)")
    p.add_argument("--prompts-per-step", type=int, default=None, help="part A prompts per step (default 16)")
    p.add_argument("--group-size", type=int, default=None, help="part A completions per prompt (default 8)")
    p.add_argument("--completion-tokens", type=int, default=None, help="part A max new tokens (default 128)")
    p.add_argument("--budget-a", type=float, default=100.0, help="seconds of part A training at most")
    p.add_argument("--steps-b", type=int, default=None, help="part B steps at most (default 3; 1 in smoke)")
    p.add_argument("--tasks-b", type=int, default=4, help="terminal basics tasks in part B's pool")
    p.add_argument("--budget-b", type=float, default=120.0, help="seconds of part B at most (environment build included)")
    p.add_argument("--prepare-timeout", type=float, default=60.0, help="seconds to build part B's task environment")
    p.add_argument("--precision", choices=("auto", "bf16", "amp", "fp32"), default="auto",
                   help="part A: bf16 weights+compute (auto on CUDA, as GRPORun), amp (fp32 weights, bf16 autocast), "
                        "fp32 (auto on CPU)")
    p.add_argument("--skip-b", action="store_true", help="run part A only")
    p.add_argument("--keep-peft", action="store_true", help="let TRL import peft (hidden by default)")
    p.add_argument("--work", default="/tmp/gpu_grpo", help="scratch directory (checkpoints, the part B model)")
    p.add_argument("--json", default=None, help="write the figures here (default $OUT/gpu_grpo.json when OUT is set)")
    args = p.parse_args()

    import torch

    cuda = torch.cuda.is_available()
    smoke = args.smoke or not cuda
    if not cuda:
        say("no CUDA: no GPU figures from this run. Running one tiny CPU step of each part as a sanity check.")
    args.arch = args.arch or ("tiny" if smoke else "smollm2-135m")
    args.steps_a = args.steps_a or (1 if smoke else 20)
    args.prompts_per_step = args.prompts_per_step or (2 if smoke else 16)
    args.group_size = args.group_size or (2 if smoke else 8)
    args.completion_tokens = args.completion_tokens or (16 if smoke else 128)
    args.steps_b = args.steps_b or (1 if smoke else 3)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)

    env = environment(cuda)
    say("environment: " + json.dumps(env, indent=1))
    tok_dir = tokenizer_dir(args.tokenizer)
    say(f"tokenizer: {tok_dir}")
    results: dict[str, Any] = {"environment": env, "smoke": smoke, "arch": args.arch}
    failed = False
    for name, fn, skip in (("A", part_a, False), ("B", part_b, args.skip_b)):
        if skip:
            results[name] = {"skipped": "--skip-b"}
            continue
        try:
            results[name] = fn(args, cuda, tok_dir, work)
        except Exception as exc:  # noqa: BLE001 - report the failure, then go on to the next part
            traceback.print_exc()
            results[name] = {"error": f"{type(exc).__name__}: {exc}"}
            failed = True
        if cuda:
            torch.cuda.empty_cache()

    say("")
    say("SUMMARY" + (" (smoke run: tiny model, figures are not benchmarks)" if smoke else ""))
    if cuda:
        say(f"  GPU: {env.get('gpu')} ({env.get('gpu_memory_gib')} GiB), torch {env['torch']}, CUDA {env['cuda_runtime']}")
    else:
        say("  no CUDA: sanity run on CPU only")
    for name in ("A", "B"):
        report(name, results[name])
    target = args.json or (str(Path(os.environ["OUT"]) / "gpu_grpo.json") if os.environ.get("OUT") else None)
    if target:
        Path(target).write_text(json.dumps(results, indent=1, default=str))
        say(f"figures written to {target}")
    say(f"total {time.monotonic() - T0:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
