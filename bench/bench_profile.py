"""Where an admission's time goes, per domain: one process, one task at a time, every installed
domain through the same gates (lint, build, oracle, null, reset, flakiness, the domain's own gates,
the red-team gate, decontamination, near-duplicate; no calibration) on the bwrap backend. The red-team
gate leaves alone what a domain vouches for (``Domain.redteam_tested``: a family's task as generated,
whose tests run the gate's cheats); ``--judge-all`` has it judge every task, as it judges a proposer's.

For each domain, ``--tasks`` tasks (one family after another, medium difficulty) are validated one
by one after a warm-up task (its first build fills the layer cache), or ``--jobs`` at a time. It
prints, per domain: seconds per admission (median), admitted per minute (the tasks over the wall
time of the whole batch: at ``--jobs 2`` on two cores, what the default ``--jobs`` gets from the
machine), and the mean seconds per admission spent in
each phase of the attempts (prepare: build or cache hit; create; start: entrypoint, services, image
index; healthcheck; agent; verifier-setup; verifier; teardown) and in each gate, with what the gates
spent outside any attempt ("gate work"). Then each domain's time per admission against terminal's:
the median at one job, the batch's wall time per task at several.

    .venv/bin/python bench/bench_profile.py [--tasks 3] [--jobs 1] [--domains terminal,swe] [--json out.json] [--judge-all]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

PHASE_ORDER = ("prepare", "create", "start", "healthcheck", "agent", "verifier-setup", "verifier", "teardown")


async def profile_domain(name: str, n: int, host, backend, *, judge_all: bool = False,  # noqa: ANN001
                         jobs: int = 1) -> dict:
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator

    domain = host.domains.get(name)()
    families = [f.name for f in domain.families()]
    settings = GateSettings(skip=("calibration",), redteam_vouched=not judge_all)
    validator = Validator(host=host, backend=backend, settings=settings)
    warm = await validator.validate(domain.generate(families[0], seed=1, difficulty="medium"))
    print(f"{name}: warm-up {warm.status} in {warm.seconds:.1f} s", flush=True)
    slots = asyncio.Semaphore(max(1, jobs))

    # Generated before the clock starts: a generator runs in this process and would hold up the
    # event loop, and with it the attempts of the tasks being validated.
    tasks = [domain.generate(families[i % len(families)], seed=100 + i, difficulty="medium") for i in range(n)]

    async def one(task):  # noqa: ANN001, ANN202
        async with slots:
            r = await validator.validate(task)
        print(f"  {r.name}: {r.status} in {r.seconds:.1f} s" + ("" if r.status == "valid" else f" ({r.reason})"), flush=True)
        return r

    began = time.monotonic()
    reports = list(await asyncio.gather(*(one(t) for t in tasks)))
    wall = time.monotonic() - began
    phases: dict[str, float] = defaultdict(float)
    gates: dict[str, float] = defaultdict(float)
    outside = 0.0
    for r in reports:
        for g in r.gates:
            gates[g.name] += g.seconds / n
            for k, v in g.phases.items():
                phases[k] += v / n
            outside += max(0.0, g.seconds - sum(g.phases.values())) / n
    seconds = [r.seconds for r in reports]
    valid = sum(r.status == "valid" for r in reports)
    return {"domain": name, "tasks": n, "jobs": jobs, "admitted": valid, "median_seconds": statistics.median(seconds),
            "mean_seconds": statistics.mean(seconds), "wall_seconds": wall, "wall_per_task": wall / n,
            "admitted_per_minute": valid / wall * 60 if wall else 0.0,
            "phases": dict(phases), "gates": dict(gates), "gate_work": outside,
            "rejected": {r.name: r.reason for r in reports if r.status != "valid"}}


def print_table(rows: list[dict]) -> None:
    names = [r["domain"] for r in rows]
    width = max(14, *(len(n) + 2 for n in names))
    # Gates that took time somewhere (another domain's own gates are skipped in 0 s).
    gate_names = sorted((g for g in {g for r in rows for g in r["gates"]} if any(r["gates"].get(g, 0) >= 0.005 for r in rows)),
                        key=lambda g: -max(r["gates"].get(g, 0) for r in rows))
    label = max(16, *(len(g) + 4 for g in gate_names)) if gate_names else 16
    print("\nseconds per admission (mean over the tasks), by phase of the attempts and by gate")
    print(f"{'':<{label}}" + "".join(f"{n:>{width}}" for n in names))
    print(f"{'median total':<{label}}" + "".join(f"{r['median_seconds']:>{width}.2f}" for r in rows))
    print(f"{'admitted/min':<{label}}" + "".join(f"{r['admitted_per_minute']:>{width}.1f}" for r in rows))
    if any(r["jobs"] > 1 for r in rows):
        print(f"{'wall per task':<{label}}" + "".join(f"{r['wall_per_task']:>{width}.2f}" for r in rows))
    print("phases (summed over each gate's attempts)")
    for phase in PHASE_ORDER:
        print(f"  {phase:<{label - 2}}" + "".join(f"{r['phases'].get(phase, 0.0):>{width}.2f}" for r in rows))
    print(f"  {'gate work':<{label - 2}}" + "".join(f"{r['gate_work']:>{width}.2f}" for r in rows))
    print("gates")
    for gate in gate_names:
        print(f"  {gate:<{label - 2}}" + "".join(f"{r['gates'].get(gate, 0.0):>{width}.2f}" for r in rows))
    base = next((r for r in rows if r["domain"] == "terminal"), None)
    if base is not None:
        key, what = (("wall_per_task", f"wall seconds per admission at {base['jobs']} jobs")
                     if base["jobs"] > 1 else ("median_seconds", "median seconds per admission"))
        print(f"\n{what} against terminal's: " + ", ".join(
            f"{r['domain']} {r[key] / base[key]:.1f}x" for r in rows))
    for r in rows:
        for task, reason in r["rejected"].items():
            print(f"  rejected {task}: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=3, help="tasks per domain after the warm-up")
    parser.add_argument("--jobs", type=int, default=1, help="tasks validated at a time (default 1)")
    parser.add_argument("--domains", default="", help="comma-separated (default: every installed domain)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--judge-all", action="store_true",
                        help="the red-team gate judges every task, as it does a proposer's (default: it leaves "
                             "alone the tasks a domain vouches for, Domain.redteam_tested)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: give 1 or more tasks at a time (2 on a 2-core machine)")

    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    backend = make_backend("bwrap", host)
    wanted = [d for d in args.domains.split(",") if d] or host.domains.names()
    wanted = sorted(wanted, key=lambda d: d != "terminal")  # the baseline first
    start = time.monotonic()
    rows = [asyncio.run(profile_domain(name, args.tasks, host, backend, judge_all=args.judge_all, jobs=args.jobs))
            for name in wanted]
    print_table(rows)
    pool = getattr(backend, "warm", None)
    if pool is not None:  # sandbox/warm.py: interpreters that imported a verifier's heavy modules once
        print(f"\nwarm verifier interpreters: {pool.started} started, {pool.served} verifications served"
              + ("" if pool.started or pool.served else " (off, or no task offered one)")
              + (f"; {pool.failed} did not start: {pool.last_failure}" if pool.failed else ""))
    print(f"\n({time.monotonic() - start:.0f} s in all)")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
