"""``autoenvscaling train``: GRPO on a fixed suite."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import click

from autoenvscaling.api import UsageError


@click.command()
@click.option("--suite", "suite_dir", type=click.Path(path_type=Path, exists=True, file_okay=False), required=True,
              help="A suite folder (autoenvscaling generate / suite import).")
@click.option("--model", default="embedded", show_default=True,
              help="A local checkpoint directory, or an embedded model: 'embedded' (SmolLM2-135M), "
                   "'embedded-qwen' (Qwen2.5-Coder-0.5B).")
@click.option("--steps", type=click.IntRange(min=1), default=10, show_default=True, help="GRPO optimizer steps.")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Run folder: checkpoints/, metrics.jsonl, model/ (the trained model).")
@click.option("--resume", is_flag=True, help="Continue the run in --out from its last checkpoint.")
@click.option("--group-size", type=click.IntRange(min=2), default=4, show_default=True, help="Rollouts per group.")
@click.option("--groups", type=click.IntRange(min=1), default=2, show_default=True, help="Groups per step.")
@click.option("--lr", "learning_rate", type=float, default=1e-6, show_default=True, help="Learning rate.")
@click.option("--temperature", type=click.FloatRange(min=0, min_open=True), default=0.7, show_default=True,
              help="Sampling temperature of the rollouts (the flywheel calibrates pools at 0.7).")
@click.option("--turns", "max_turns", type=click.IntRange(min=1), default=2, show_default=True,
              help="Agent turns per rollout.")
@click.option("--tokens-per-turn", type=click.IntRange(min=1), default=64, show_default=True)
@click.option("--max-resamples", type=click.IntRange(min=0), default=2, show_default=True,
              help="Dynamic sampling: replacement groups per slot when a group's rewards are all equal.")
@click.option("--no-dynamic-sampling", is_flag=True, help="Keep all-equal groups (plain GRPO).")
@click.option("--roles", type=click.Choice(["solver", "proposer", "both"]), default="solver", show_default=True,
              help="Train the solver, the proposer, or one model in both roles.")
@click.option("--scale-rewards", type=click.Choice(["role", "group", "none"]), default="role", show_default=True)
@click.option("--held-out", "held_out_fraction", type=click.FloatRange(0, 0.9), default=0.2, show_default=True,
              help="Fraction of the suite kept out of training to measure the pass rate before and after.")
@click.option("--eval-every", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also measure the held-out pass rate every N steps (0: before and after only).")
@click.option("--eval-rollouts", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--generation", type=click.Choice(["auto", "transformers", "vllm-colocate", "vllm-server"]),
              default="auto", show_default=True, help="auto: vLLM when CUDA and vllm are present.")
@click.option("--backend", "backend_name", default="bwrap", show_default=True, help="Sandbox backend.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def train(suite_dir: Path, model: str, out: Path, resume: bool, no_dynamic_sampling: bool, held_out_fraction: float,
          backend_name: str, as_json: bool, **options: Any) -> None:
    """Train a solver with multi-turn GRPO (TRL) on the tasks of a suite.

    Each rollout runs in its own sandbox with the solver's tools; the verifier's reward (the
    fraction of checks passed) scores it. Groups whose rewards are all equal are replaced by
    groups on other tasks (dynamic sampling). Progress, per-step figures and the held-out pass
    rate before and after are printed; the trained model is written to OUT/model.
    """
    from autoenvscaling.api import SuiteStore, create_host, make_backend

    from .settings import GRPOSettings
    from .training import GRPORun, require_trl

    require_trl()
    host = create_host()
    with SuiteStore(suite_dir, create=False) as store:
        tasks = sorted(store.tasks(), key=lambda t: t.name)
    if len(tasks) < 1:
        raise UsageError(f"the suite {suite_dir} has no tasks", hint="autoenvscaling generate --mix terminal=1 -n 20 --out DIR")
    settings = GRPOSettings(dynamic_sampling=not no_dynamic_sampling, **options)  # the options named as its fields
    held = round(len(tasks) * held_out_fraction) if len(tasks) > 1 else 0
    order = list(tasks)
    random.Random(f"held-out:{settings.seed}").shuffle(order)
    held_out, pool = order[:held], order[held:]
    asyncio.run(make_backend(backend_name, host).aclose())  # fail now, in one line, if it cannot run here
    run = GRPORun(pool, model=model, out=out, settings=settings, host=host,
                  backend_factory=lambda: make_backend(backend_name, host), held_out=held_out)
    if not as_json:
        click.echo(f"training {model} on {len(pool)} task(s) of {suite_dir} ({len(held_out)} held out), "
                   f"{settings.steps} step(s) of {settings.groups} x {settings.group_size} rollouts -> {out}", err=True)
    with contextlib.redirect_stdout(sys.stderr):  # transformers prints its progress logs; stdout is the result
        outcome = run.run(resume=resume)
    result = {"model": str(outcome.model), "steps": outcome.steps, "seconds": round(outcome.seconds, 1),
              "summary": outcome.summary(), "metrics": str(out / "metrics.jsonl"),
              "held_out": [{"step": e.step, "pass_rate": e.pass_rate, "interval": [e.low, e.high], "n": e.n,
                            "mean_reward": e.mean_reward} for e in outcome.evaluations]}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    summary = outcome.summary()
    click.echo(f"trained {outcome.steps} step(s) in {outcome.seconds:.0f} s: useful-group rate "
               f"{summary.get('useful_group_rate', 0):.0%}, {summary.get('dropped_groups', 0):.0f} group(s) dropped, "
               f"mean reward {summary.get('reward_mean', 0):.3f}")
    for e in outcome.evaluations:
        click.echo(f"held-out pass rate at step {e.step}: {e.pass_rate:.1%} [{e.low:.1%}, {e.high:.1%}] "
                   f"({e.passed}/{e.n} rollouts)")
    click.echo(f"model: {outcome.model}\nmetrics: {out / 'metrics.jsonl'}")
