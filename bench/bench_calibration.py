"""Does calibration pay? The useful-group rate of a calibrated pool against an uncalibrated pool of
the same size, in one run with the embedded solver (SmolLM2-135M) on procedural terminal tasks.

A rollout group is useful to GRPO when its rewards are not all equal. The bench generates tasks,
keeps the valid ones (gates 1-7), calibrates each against the solver (gate 9), and then draws one
fresh group of rollouts per task (new seeds, as training would) for two pools of equal size: the
tasks that passed calibration, and the first valid tasks regardless of calibration. It prints both
useful-group rates with 95% Wilson intervals, plus the rate over every calibration group.

    .venv/bin/python bench/bench_calibration.py [--tasks 8] [--group 4] [--turns 2] [--tokens 48]
        [--solver-base-url URL --solver-model NAME]   # a served solver instead of the embedded one
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")


async def main(args: argparse.Namespace) -> None:
    from autoenvscaling.agents.base import AgentLimits
    from autoenvscaling.agents.solver import SolverAgent
    from autoenvscaling.flywheel.calibration import CalibrationGate, rollout_seed, usable
    from autoenvscaling.flywheel.metrics import useful_group_rate
    from autoenvscaling.gates.validate import Validator, validate_task
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    if args.domain not in host.domains.names():
        raise SystemExit(f"domain {args.domain!r} is not installed (installed: {', '.join(host.domains.names())})")
    domain = host.domains.get(args.domain)()
    backend = make_backend("bwrap", host)
    limits = AgentLimits(max_turns=args.turns, max_tokens=64_000, timeout_sec=300, command_timeout_sec=30,
                         observation_chars=2000)
    if args.solver_base_url:
        from autoenvscaling.llm.openai_backend import OpenAIBackend

        llm = OpenAIBackend(args.solver_base_url, None, args.solver_model or "default")
        solver = SolverAgent(llm, temperature=0.8, max_tokens_per_turn=args.tokens, limits=limits)
    else:
        from autoenvscaling.llm.local_backend import TransformersBackend

        llm = TransformersBackend(args.solver_model or "embedded")
        solver = SolverAgent(llm, tool_calling=False, temperature=0.8, max_tokens_per_turn=args.tokens,
                             limits=limits, rollout_concurrency=1)
    validator = Validator(host=host, backend=backend, solver=solver)
    gates = [g for g in validator.gates if g.name not in ("near-duplicate", "calibration")]
    families = domain.families()
    rng = random.Random(args.seed)
    start = time.monotonic()
    valid, calibrated, calibration_groups = [], [], []
    for i in range(args.tasks):
        family, seed = families[i % len(families)].name, rng.randrange(1, 2**31)
        try:
            task = domain.generate(family, seed=seed, difficulty=args.difficulty)
        except Exception as exc:  # a generator bug costs one task, not the measurement
            print(f"  {family} seed {seed}: generator failed: {type(exc).__name__}: {exc}")
            continue
        ctx = validator.context(task)
        report = await validate_task(task, lambda _, ctx=ctx: ctx, gates=gates)
        if not report.valid:
            print(f"  {task.name}: not valid ({report.reason})")
            continue
        valid.append(task)
        cal = await CalibrationGate().measure(task, ctx)
        calibration_groups.append(cal.rewards)
        if cal.gate.status == "pass":
            calibrated.append(task)
        print(f"  {task.name}: calibration {cal.gate.status}, rewards {[round(r, 2) for r in cal.rewards]}")
    size = len(calibrated)
    uncalibrated = valid[:size]
    groups: dict[str, list[float]] = {}

    async def fresh_group(task) -> list[float]:  # type: ignore[no-untyped-def]
        if task.name not in groups:
            results = [await validator.runner.run(task, solver.seeded(rollout_seed(task, i, "train")))
                       for i in range(args.group)]
            groups[task.name] = [r.reward for r in results if usable(r)]
        return groups[task.name]

    cal_rate = useful_group_rate([await fresh_group(t) for t in calibrated])
    uncal_rate = useful_group_rate([await fresh_group(t) for t in uncalibrated])
    all_rate = useful_group_rate(calibration_groups)
    minutes = (time.monotonic() - start) / 60
    print()
    print(f"domain {args.domain}, {args.tasks} tasks ({args.difficulty}), {len(valid)} valid, solver "
          f"{llm.model} ({args.turns} turns x {args.tokens} tokens, T=0.8), groups of {args.group}, {minutes:.1f} min")
    if llm.usage.calls:
        print(f"solver calls {llm.usage.calls}, tokens in/out {llm.usage.prompt_tokens}/{llm.usage.completion_tokens}")
    print(f"useful-group rate, calibrated pool   ({size} tasks): {cal_rate}")
    print(f"useful-group rate, uncalibrated pool ({len(uncalibrated)} tasks): {uncal_rate}")
    print(f"useful-group rate, every calibration group ({len(calibration_groups)}): {all_rate}")
    if size == 0:
        print("no task passed calibration with this solver: the pools are empty, so there is nothing to compare")
    await backend.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", default="terminal")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=48)
    parser.add_argument("--difficulty", default="easy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--solver-base-url", default=None, help="OpenAI-compatible server of the solver")
    parser.add_argument("--solver-model", default=None, help="served model name, or a local checkpoint path")
    asyncio.run(main(parser.parse_args()))
