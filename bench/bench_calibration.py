"""Does calibration pay? The useful-group rate of a calibrated pool against an uncalibrated pool of
the same size, measured in one run with the embedded solver (SmolLM2-135M) on procedural tasks.

One stream of candidate tasks (easy, cycling over the domain's families) gets G solver rollouts
each (sampled, seeded per rollout). From those same rollouts: the uncalibrated pool is the first N
candidates; the calibrated pool is the first N that the calibration rule passes (mean reward in the
band [0.25, 0.75], rewards not all equal). A group is useful to GRPO when its rewards are not all
equal. Printed: both pools' useful-group rates with 95% Wilson intervals, the rate over every group,
and the histogram of per-task pass rates (mean reward). If the band is never hit, the table says so;
nothing is widened. ``--fresh`` adds one more, independent group per pool task (the pool's own
groups chose the calibrated pool, so its rate on them is 1 by construction; a fresh group is not).

    .venv/bin/python bench/bench_calibration.py [--domain terminal|toy] [--pool 6] [--group 4]
        [--candidates 40] [--families basics,...] [--minutes 12] [--turns 3] [--tokens 64] [--temperature 0.7] [--fresh]
        [--validate] [--show-commands] [--solver-base-url URL --solver-model NAME]  # a served solver
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch on a busy 2-core machine: one thread is fastest


def load_domain(name: str) -> Any:
    """An installed domain plugin by name; ``toy`` is the plugin author kit's toy domain."""
    from autoenvscaling.plugins import create_host
    from autoenvscaling.testing import toy

    host = create_host(plugins=[toy]) if name == "toy" else create_host()
    if name not in host.domains.names():
        raise SystemExit(f"domain {name!r} is not installed (installed: {', '.join(host.domains.names())})")
    return host, host.domains.get(name)()


def make_solver(args: argparse.Namespace) -> Any:
    from autoenvscaling.agents.base import AgentLimits
    from autoenvscaling.agents.solver import LOCAL_LIMITS, SolverAgent

    if args.solver_base_url:
        from autoenvscaling.llm.openai_backend import OpenAIBackend

        llm = OpenAIBackend(args.solver_base_url, None, args.solver_model or "default")
    else:
        from autoenvscaling.llm.local_backend import TransformersBackend

        llm = TransformersBackend(args.solver_model or "embedded")
    limits = None
    if args.turns is not None:  # a served model keeps the trial runner's limits, with these turns
        base = AgentLimits() if args.solver_base_url else LOCAL_LIMITS
        limits = base.model_copy(update={"max_turns": args.turns})
    return SolverAgent(llm, temperature=args.temperature, max_tokens_per_turn=args.tokens, limits=limits)


def print_result(result: Any, args: argparse.Namespace, solver: Any) -> None:
    limits = solver.limits
    turns = limits.max_turns if limits else "runner's"
    print()
    families = args.families or "all families"
    print(f"domain {args.domain} ({families}, {args.difficulty}), solver {solver.model} ({turns} turns x "
          f"{solver.max_tokens_per_turn} tokens, T={args.temperature}), groups of {result.group}, "
          f"band [{result.band[0]:g}, {result.band[1]:g}], pools of N={result.pool_size}")
    print(f"candidates with a group: {len(result.candidates)}, skipped: {len(result.skipped)}, "
          f"stopped: {result.stopped}, {result.seconds / 60:.1f} min")
    usage = solver.llm.usage
    if usage.calls:
        print(f"solver calls {usage.calls}, tokens in/out {usage.prompt_tokens}/{usage.completion_tokens}")
    print("pass-rate histogram (tasks by mean reward): "
          + "  ".join(f"{k}: {v}" for k, v in result.histogram.items()))
    print()
    header = f"{'pool':<14} {'tasks':>5}  {'useful-group rate [95% Wilson] (k/n)':<40} {'mean reward':>11}"
    if args.fresh:
        header += "  fresh group: useful-group rate"
    print(header)
    rows = [("uncalibrated", result.uncalibrated), ("calibrated", result.calibrated)]
    for name, pool in rows:
        mean = "-" if pool.mean_reward is None else f"{pool.mean_reward:.3f}"
        line = f"{name:<14} {len(pool.tasks):>5}  {str(pool.useful):<40} {mean:>11}"
        if args.fresh:
            line += f"  {pool.fresh}"
        print(line)
    print(f"{'every group':<14} {result.every_group.n:>5}  {str(result.every_group):<40}")
    ratios = [("own groups", result.calibrated.useful, result.uncalibrated.useful)]
    if args.fresh:
        ratios.append(("fresh groups", result.calibrated.fresh, result.uncalibrated.fresh))
    shown = [f"{label} {ratio(cal, unc)}" for label, cal, unc in ratios]
    print("calibrated / uncalibrated useful-group rate: " + ", ".join(shown))
    print()
    if not result.calibrated.tasks:
        print(f"no candidate passed calibration (band never hit in {len(result.candidates)} groups): "
              "the calibrated pool is empty, so there is nothing to compare")
    elif len(result.calibrated.tasks) < result.pool_size:
        print(f"the band was hit only {len(result.calibrated.tasks)} times: the calibrated pool is smaller than "
              f"N={result.pool_size}")
    for line in result.skipped:
        print(f"skipped: {line}")


def ratio(calibrated: Any, uncalibrated: Any) -> str:
    """The calibrated pool's rate over the uncalibrated one's ("n/a" when either is unmeasured or 0)."""
    if calibrated is None or uncalibrated is None or calibrated.value is None or not uncalibrated.value:
        return "n/a"
    return f"{calibrated.value / uncalibrated.value:.2f}x"


async def main(args: argparse.Namespace) -> None:
    from autoenvscaling.flywheel.bench import bench_calibration
    from autoenvscaling.gates.validate import load_gates
    from autoenvscaling.sandbox.select import make_backend

    host, domain = load_domain(args.domain)
    backend = make_backend("bwrap", host)
    solver = make_solver(args)
    gates = None
    if args.validate:  # gates 1-7: lint, build, oracle, null, reset, flakiness, decontamination
        gates = [g for g in load_gates(host) if g.name not in ("near-duplicate", "calibration")]

    def progress(c: Any) -> None:
        print(f"  [{c.index:>2}] {c.task:<48} {c.verdict:<5} rewards {[round(r, 2) for r in c.rewards]} "
              f"({c.seconds:.0f} s)", flush=True)
        if args.show_commands:
            for i, commands in enumerate(c.commands):
                shown = " | ".join(command.replace("\n", " \u23ce ")[:100] for command in commands) or "(nothing run)"
                print(f"        rollout {i}: {shown}", flush=True)

    try:
        result = await bench_calibration(
            domain=domain, backend=backend, solver=solver, pool_size=args.pool, group=args.group,
            candidates=args.candidates, difficulty=args.difficulty, seed=args.seed, validate=gates,
            families=args.families.split(",") if args.families else None,
            deadline=time.monotonic() + args.minutes * 60, fresh=args.fresh, progress=progress)
    finally:
        await solver.llm.aclose()
        await backend.aclose()
    print_result(result, args, solver)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="terminal", help="terminal, or toy (the plugin kit's toy tasks)")
    parser.add_argument("--pool", type=int, default=6, help="N: the size of each pool")
    parser.add_argument("--group", type=int, default=4, help="G: rollouts per task")
    parser.add_argument("--candidates", type=int, default=40, help="at most this many candidate tasks")
    parser.add_argument("--minutes", type=float, default=12.0, help="no new candidate after this budget")
    parser.add_argument("--turns", type=int, default=None, help="solver turns (default: the model's profile)")
    parser.add_argument("--tokens", type=int, default=None, help="tokens per turn (default: the model's profile)")
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of the rollouts")
    parser.add_argument("--difficulty", default="easy")
    parser.add_argument("--families", default=None, help="comma-separated families to draw from (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh", action="store_true", help="also draw one fresh group per pool task")
    parser.add_argument("--validate", action="store_true", help="candidates must pass gates 1-7 first")
    parser.add_argument("--show-commands", action="store_true", help="print what every rollout ran")
    parser.add_argument("--solver-base-url", default=None, help="OpenAI-compatible server of the solver")
    parser.add_argument("--solver-model", default=None, help="served model name, or a local checkpoint path")
    from autoenvscaling.errors import AESError

    try:
        asyncio.run(main(parser.parse_args()))
    except AESError as exc:  # bad arguments or an unusable machine: one line and a hint
        raise SystemExit(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")) from None
