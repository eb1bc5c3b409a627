"""Does GRPO move the solver? A small real training run on this machine, printed whatever the result.

Easy procedural terminal tasks are generated and admitted through gates 1-6 on bwrap; a pool trains
the solver (multi-turn GRPO with TRL, dynamic sampling), and a held-out set of tasks of the same
families (other seeds, also admitted) measures the pass rate (reward 1) before and after, with 95%
Wilson intervals. Printed: the number of steps, the wall time, the useful-group rate and dropped
groups during training, the held-out pass rate and mean reward before and after, and a JSON line.

    .venv/bin/python bench/bench_train.py [--model embedded|PATH] [--families basics] [--pool 16]
        [--level N] [--held-out 12] [--steps 12] [--group-size 4] [--groups 2] [--lr 1e-5] [--turns 2]
        [--tokens 64] [--eval-rollouts 4] [--roles solver|proposer|both] [--proposer-tokens 768]
        [--out DIR] [--resume]

With ``--roles both`` one model is trained in both roles: a step's groups are split between solver
groups and proposer groups (real proposals of task variants, rewarded by the admission gates and
calibration against the policy); the proposer groups' outcomes and rewards are printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch on a busy 2-core machine: one thread is fastest

HELD_OUT_SEED = 500_000


def admitted(host: Any, families: list[str], count: int, first_seed: int, backend: Any,
             level: int | None = None) -> list[Any]:
    """``count`` easy tasks of ``families`` (round robin, seeds from ``first_seed``; at ``level`` of
    the family's finer levels when given) that pass gates 1-6."""
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator

    domain = host.domains.get("terminal")()
    validator = Validator(host=host, settings=GateSettings(flaky_runs=1, skip=("decontamination", "near-duplicate",
                                                                              "calibration")))
    validator.use_backend(backend)
    out: list[Any] = []
    seed = first_seed
    while len(out) < count:
        if seed - first_seed > count * 5:
            raise SystemExit(f"only {len(out)} of {count} tasks were admitted in {seed - first_seed} tries")
        family = families[seed % len(families)]
        task = domain.generate(family, seed=seed, difficulty="easy") if level is None else \
            domain.generate_level(family, seed=seed, level=level)
        seed += 1
        report = asyncio.run(validator.validate(task))
        print(f"  {task.name}: {report.status}{'' if report.valid else ' - ' + report.reason}", file=sys.stderr)
        if report.valid:
            out.append(task)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--families", default="basics")
    parser.add_argument("--level", type=int, default=None,
                        help="a finer level of the families (basics level 0: one-command tasks) instead of 'easy'")
    parser.add_argument("--pool", type=int, default=16)
    parser.add_argument("--held-out", type=int, default=12)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--eval-rollouts", type=int, default=4)
    parser.add_argument("--max-resamples", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--roles", choices=("solver", "proposer", "both"), default="solver")
    parser.add_argument("--proposer-tokens", type=int, default=768)
    parser.add_argument("--out", type=Path, default=Path("/tmp/aes-bench-train"))
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)

    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.bwrap import BwrapBackend
    from autoenvscaling_trainer.settings import GRPOSettings
    from autoenvscaling_trainer.training import GRPORun

    host = create_host()
    if "terminal" not in host.domains.names():
        raise SystemExit("the terminal domain plugin is not installed (bash scripts/bootstrap.sh)")
    families = args.families.split(",")
    started = time.monotonic()
    backend = BwrapBackend()
    try:
        print(f"admitting {args.pool} training and {args.held_out} held-out tasks ({', '.join(families)})",
              file=sys.stderr)
        pool = admitted(host, families, args.pool, args.seed * 1000, backend, args.level)
        held_out = admitted(host, families, args.held_out, HELD_OUT_SEED + args.seed * 1000, backend, args.level)
    finally:
        asyncio.run(backend.aclose())
    admit_seconds = time.monotonic() - started
    settings = GRPOSettings(steps=args.steps, group_size=args.group_size, groups=args.groups, learning_rate=args.lr,
                            max_turns=args.turns, tokens_per_turn=args.tokens, eval_rollouts=args.eval_rollouts,
                            max_resamples=args.max_resamples, seed=args.seed, roles=args.roles,
                            proposer_tokens=args.proposer_tokens)
    run = GRPORun(pool, model=args.model, out=args.out, settings=settings, host=host, backend_factory=BwrapBackend,
                  held_out=held_out)
    outcome = run.run(resume=args.resume)
    rows = [r for r in outcome.history if "groups" in r]
    groups = sum(r["groups"] for r in rows)
    useful = sum(r["useful_groups"] for r in rows)
    before, after = outcome.evaluations[0], outcome.evaluations[-1]
    print(f"\nGRPO on {len(pool)} admitted {'/'.join(families)} tasks, model {args.model}, roles {args.roles}, "
          f"{args.groups} x {args.group_size} rollouts per step, {args.turns} turns x {args.tokens} tokens, lr {args.lr:g}")
    print(f"steps: {outcome.steps}   wall time: {outcome.seconds / 60:.1f} min training+evaluation "
          f"(+{admit_seconds / 60:.1f} min admitting tasks)")
    print(f"useful-group rate during training: {useful / groups:.1%} ({useful:.0f} of {groups:.0f} groups generated; "
          f"{sum(r['dropped_groups'] for r in rows):.0f} dropped and replaced, "
          f"{sum(r['unfilled_slots'] for r in rows):.0f} slots left without a useful group)")
    print("per step (useful/generated, reward mean):",
          " ".join(f"{r['useful_groups']:.0f}/{r['groups']:.0f}:{r['reward_mean']:.2f}" for r in rows))
    for role in ("solver", "proposer") if args.roles == "both" else ():
        mine = [r for r in rows if f"{role}/groups" in r]
        print(f"{role}: {sum(r[f'{role}/useful_groups'] for r in mine):.0f} useful of "
              f"{sum(r[f'{role}/groups'] for r in mine):.0f} groups, reward mean per step "
              + " ".join(f"{r[f'{role}/reward_mean']:.2f}" for r in mine))
    for name, e in (("before", before), ("after", after)):
        print(f"held-out pass rate {name}: {e.pass_rate:.1%} [{e.low:.1%}, {e.high:.1%}] "
              f"({e.passed}/{e.n} rollouts on {len(held_out)} tasks), mean reward {e.mean_reward:.3f}")
    print(json.dumps({"steps": outcome.steps, "seconds": round(outcome.seconds, 1), "groups": groups,
                      "useful_groups": useful, "before": before.row(), "after": after.row(),
                      "pool": len(pool), "held_out": len(held_out), "model": str(outcome.model), "roles": args.roles}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
