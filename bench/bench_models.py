"""The embedded models side by side: SmolLM2-135M and Qwen2.5-Coder-0.5B as the solver on the same easy
terminal tasks, one per family, each decoded by transformers in this process and by llama.cpp's server.

Each model gets the same task of every family (``domain.generate(family, seed=..., difficulty="easy")``,
seeds drawn from --seed) and the same budget; the solver (SolverAgent, the fenced-block protocol of
local models) runs k sampled rollouts per task through the TrialRunner on the bwrap backend, as the
calibration gate does. Printed per family and model: pass rate (reward == 1) and mean reward over the
k rollouts; per model: its greedy decoding speed (tokens/s, prompt reading excluded), the output
tokens per second of its rollouts' chat calls (prompt reading included: long prompts, short
replies), tokens in and out, rollouts per minute and wall time. Then one JSON line with everything. Progress
goes to stderr. ``--engines`` picks the decoders: ``transformers`` (TransformersBackend) and
``llama-server`` (a LocalServer of the model's GGUF file and the OpenAI client); the ratio line says how
much faster the second engine is than the first, per model.

    .venv/bin/python bench/bench_models.py [--models embedded,embedded-qwen] [--families basics,...]
        [--engines transformers,llama-server] [--rollouts 4] [--turns 4] [--tokens-per-turn 160]
        [--timeout 300] [--temperature 0.7] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch on a busy 2-core machine: one thread is fastest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_calibration import load_domain  # noqa: E402 - the sibling bench's domain loader


def timed_backend(model: str, engine: str, servers: contextlib.ExitStack) -> Any:
    """A backend for an embedded model's key (a checkpoint path for transformers, a GGUF path for
    llama-server) that adds up the seconds its chat calls take, for tokens per second. The model
    is loaded (or its server started) here."""
    from autoenvscaling.llm.embedded import resolve_model_source
    from autoenvscaling.llm.local_backend import TransformersBackend
    from autoenvscaling.llm.serve import LlamaServerBackend, LocalServer

    base = LlamaServerBackend if engine == "llama-server" else TransformersBackend

    class TimedBackend(base):  # type: ignore[misc, valid-type]
        seconds = 0.0

        async def chat(self, *args: Any, **kwargs: Any) -> Any:
            response = await super().chat(*args, **kwargs)
            self.seconds += response.seconds
            return response

    if engine == "llama-server":
        server = servers.enter_context(LocalServer(model))
        return TimedBackend(server.base_url, None, server.alias)
    llm = TimedBackend(resolve_model_source(model))
    llm.load()
    return llm


async def decode_rate(llm: Any, tokens: int = 64) -> float | None:
    """Greedy decoding speed in tokens per second, prompt reading excluded: the same prompt answered
    with 1 and with ``tokens`` new tokens (after a first call that warms any prompt cache); the
    difference in time over the difference in tokens."""
    from autoenvscaling.llm.base import ChatMessage

    prompt = [ChatMessage.user("Count from 1 to 300, the numbers separated by spaces.")]
    await llm.chat(prompt, max_tokens=1)  # warm: a server's prompt cache then serves both calls alike
    short = await llm.chat(prompt, max_tokens=1)
    long = await llm.chat(prompt, max_tokens=tokens)
    extra = long.usage.completion_tokens - short.usage.completion_tokens
    return extra / (long.seconds - short.seconds) if extra > 0 and long.seconds > short.seconds else None


def make_solver(llm: Any, args: argparse.Namespace) -> Any:
    from autoenvscaling.agents.solver import LOCAL_LIMITS, SolverAgent

    # The local profile's limits with this bench's turns, and room for the prompts of every turn
    # (the token budget counts prompt tokens too) and for the slower model's decoding.
    limits = LOCAL_LIMITS.model_copy(update={"max_turns": args.turns, "max_tokens": 50_000,
                                             "timeout_sec": args.timeout})
    return SolverAgent(llm, temperature=args.temperature, max_tokens_per_turn=args.tokens_per_turn, limits=limits)


async def measure(model: str, engine: str, domain: Any, backend: Any, families: list[str],
                  args: argparse.Namespace, servers: contextlib.ExitStack) -> dict[str, Any]:
    """k rollouts of one model, decoded by one engine, on one easy task per family."""
    from autoenvscaling.flywheel.bench import bench_calibration
    from autoenvscaling.llm.base import UsageTotals

    began = time.monotonic()
    llm = timed_backend(model, engine, servers)
    load_seconds = time.monotonic() - began
    decode = await decode_rate(llm)
    llm.usage, llm.seconds = UsageTotals(), 0.0  # from here on, the rollouts' totals only
    solver = make_solver(llm, args)
    print(f"{model} ({llm.model}, {engine}): loaded in {load_seconds:.1f} s, greedy decoding {decode or 0:.1f} tokens/s",
          file=sys.stderr, flush=True)

    def progress(c: Any) -> None:
        print(f"  {model:<14} {c.family:<14} {c.task:<44} rewards {[round(r, 2) for r in c.rewards]} "
              f"({c.seconds:.0f} s)", file=sys.stderr, flush=True)

    try:
        result = await bench_calibration(domain=domain, backend=backend, solver=solver, pool_size=len(families),
                                         group=args.rollouts, candidates=len(families), difficulty="easy",
                                         seed=args.seed, families=families, progress=progress)
    finally:
        await llm.aclose()
    rows = {}
    for c in result.candidates:
        rewards = c.rewards
        rows[c.family] = {
            "task": c.task, "rewards": rewards, "excluded": c.excluded,
            "pass_rate": sum(1 for r in rewards if r >= 1.0) / len(rewards) if rewards else None,
            "mean_reward": sum(rewards) / len(rewards) if rewards else None,
            "seconds": round(c.seconds, 1),
        }
    usage = llm.usage
    rollouts = sum(len(row["rewards"]) for row in rows.values())
    return {
        "name": f"{model}@{engine}", "model": llm.model, "engine": engine, "families": rows,
        "skipped": result.skipped,
        "calls": usage.calls, "tokens_in": usage.prompt_tokens, "tokens_out": usage.completion_tokens,
        "chat_seconds": round(llm.seconds, 1),
        "decode_tokens_per_s": round(decode, 2) if decode else None,
        "rollout_tokens_per_s": round(usage.completion_tokens / llm.seconds, 2) if llm.seconds else None,
        "load_seconds": round(load_seconds, 1), "minutes": round(result.seconds / 60, 1),
        "rollouts_per_min": round(rollouts / (result.seconds / 60), 2) if result.seconds else None,
    }


def cell(row: dict[str, Any] | None) -> str:
    if row is None or row["pass_rate"] is None:
        return "-"
    passed = sum(1 for r in row["rewards"] if r >= 1.0)
    return f"{passed}/{len(row['rewards'])} {row['mean_reward']:.2f}"


def print_table(results: dict[str, dict[str, Any]], families: list[str], args: argparse.Namespace) -> None:
    models = list(results)
    print(f"one easy task per family, {args.rollouts} rollouts each (T={args.temperature}, seed {args.seed}), "
          f"{args.turns} turns x {args.tokens_per_turn} tokens, fenced-block protocol, bwrap")
    print("cells: rollouts with reward 1 / rollouts, mean reward")
    width = max(16, *(len(results[m]["name"]) + 2 for m in models))
    print(f"{'family':<15}" + "".join(f"{results[m]['name']:>{width}}" for m in models))
    for family in families:
        print(f"{family:<15}" + "".join(f"{cell(results[m]['families'].get(family)):>{width}}"
                                        for m in models))

    def total(m: str) -> str:
        rewards = [r for row in results[m]["families"].values() for r in row["rewards"]]
        if not rewards:
            return "-"
        return f"{sum(1 for r in rewards if r >= 1.0)}/{len(rewards)} {sum(rewards) / len(rewards):.2f}"

    def reached(m: str) -> str:
        rows = results[m]["families"].values()
        return f"{sum(1 for row in rows if row['mean_reward'])}/{len(rows)}"

    summary = [
        ("all", total),
        ("families > 0", reached),
        ("decode tok/s", lambda m: f"{results[m]['decode_tokens_per_s']}"),
        ("rollout tok/s", lambda m: f"{results[m]['rollout_tokens_per_s']}"),
        ("tokens in/out", lambda m: f"{results[m]['tokens_in']}/{results[m]['tokens_out']}"),
        ("rollouts/min", lambda m: f"{results[m]['rollouts_per_min']}"),
        ("minutes", lambda m: f"{results[m]['minutes']}"),
    ]
    print("-" * (15 + width * len(models)))
    for label, value in summary:
        print(f"{label:<15}" + "".join(f"{value(m):>{width}}" for m in models))
    for m in models:
        for line in results[m]["skipped"]:
            print(f"{results[m]['name']}: skipped {line}")
    engines = list(dict.fromkeys(results[m]["engine"] for m in models))
    for model in dict.fromkeys(m.split("@")[0] for m in models):
        if len(engines) == 2 and all(f"{model}@{e}" in results for e in engines):
            first, second = (results[f"{model}@{e}"] for e in engines)
            ratios = [f"{label} x{second[key] / first[key]:.1f}" for label, key in
                      (("decode tok/s", "decode_tokens_per_s"), ("rollout tok/s", "rollout_tokens_per_s"),
                       ("rollouts/min", "rollouts_per_min")) if first[key] and second[key]]
            print(f"{model}: {engines[1]} vs {engines[0]}: {', '.join(ratios)}")


async def main(args: argparse.Namespace) -> None:
    from autoenvscaling.sandbox.select import make_backend

    host, domain = load_domain("terminal")
    families = args.families.split(",") if args.families else [f.name for f in domain.families()]
    backend = make_backend("bwrap", host)
    results = {}
    try:
        for model in args.models.split(","):
            for engine in args.engines.split(","):
                with contextlib.ExitStack() as servers:
                    results[f"{model}@{engine}"] = await measure(model, engine, domain, backend, families, args, servers)
    finally:
        await backend.aclose()
    print_table(results, families, args)
    settings = {k: getattr(args, k) for k in ("rollouts", "turns", "tokens_per_turn", "timeout", "temperature", "seed",
                                               "engines")}
    print(json.dumps({"bench": "models", "settings": settings, "models": results}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="embedded,embedded-qwen",
                        help="comma-separated embedded model keys (or local checkpoint paths)")
    parser.add_argument("--engines", default="transformers,llama-server",
                        help="comma-separated decoders: transformers (in this process), llama-server (llama.cpp)")
    parser.add_argument("--families", default=None, help="comma-separated terminal families (default: all)")
    parser.add_argument("--rollouts", type=int, default=4, help="k: sampled rollouts per task")
    parser.add_argument("--turns", type=int, default=4, help="solver turns per rollout")
    parser.add_argument("--tokens-per-turn", type=int, default=160, help="new tokens per solver turn")
    parser.add_argument("--timeout", type=float, default=300.0, help="wall-clock seconds per rollout")
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of the rollouts")
    parser.add_argument("--seed", type=int, default=0, help="draws the task of each family")
    from autoenvscaling.errors import AESError

    try:
        asyncio.run(main(parser.parse_args()))
    except AESError as exc:  # a model not installed, an unusable machine: one line and a hint
        raise SystemExit(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")) from None
