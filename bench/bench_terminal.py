"""Throughput of the terminal domain on this machine: tasks generated per minute, and tasks admitted
per minute through gates 1-8 (lint, build, oracle, null, reset, flakiness k=3, decontamination,
near-duplicate) on the bwrap backend.

Generation cycles through every family and difficulty. Admission runs a sample of the same mix
with the layer cache warm (the shared preamble is built once per machine; each task then builds
only its own COPY/setup layers), ``--jobs`` tasks at a time.

    .venv/bin/python bench/bench_terminal.py [--generate 300] [--admit 24] [--jobs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter

from autoenvscaling_terminal.domain import TerminalDomain
from autoenvscaling_terminal.families import CATALOG

DIFFICULTIES = ("easy", "medium", "hard")


def specs(n: int, offset: int) -> list[tuple[str, int, str]]:
    families = list(CATALOG)
    return [(families[i % len(families)], offset + i, DIFFICULTIES[(i // len(families)) % 3]) for i in range(n)]


def bench_generation(n: int) -> list:
    domain = TerminalDomain()
    for family in CATALOG:  # import every generator module first: the figure is steady-state
        domain.generate(family, seed=0)
    per_family: dict[str, list[float]] = {}
    tasks = []
    start = time.perf_counter()
    for family, seed, difficulty in specs(n, 5000):
        t0 = time.perf_counter()
        tasks.append(domain.generate(family, seed=seed, difficulty=difficulty))
        per_family.setdefault(family, []).append(time.perf_counter() - t0)
    seconds = time.perf_counter() - start
    print(f"generation: {n} tasks in {seconds:.2f} s = {n / seconds * 60:,.0f} tasks/minute (one process)")
    for family, samples in per_family.items():
        print(f"  {family:<14} median {statistics.median(samples) * 1000:6.1f} ms/task")
    return tasks


async def bench_admission(n: int, jobs: int) -> None:
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    domain = TerminalDomain()
    host = create_host()
    backend = make_backend("bwrap", host)
    validator = Validator(host=host, backend=backend, settings=GateSettings(flaky_runs=3))
    # warm the shared preamble layer (built once per machine) so the figure is steady-state
    warm = await validator.validate(domain.generate("file_search", seed=1, difficulty="easy"))
    print(f"warm-up task: {warm.status} in {warm.seconds:.1f} s")
    tasks = [domain.generate(f, seed=s, difficulty=d) for f, s, d in specs(n, 9000)]
    start = time.perf_counter()
    async with LocalExecutor(concurrency=jobs) as executor:
        reports = [r async for r in validate_many(tasks, validator=validator, executor=executor)]
    seconds = time.perf_counter() - start
    valid = sum(r.status == "valid" for r in reports)
    print(f"admission: {valid}/{n} admitted in {seconds:.1f} s with {jobs} jobs = {valid / seconds * 60:.1f} admitted/minute "
          f"({statistics.median(r.seconds for r in reports):.1f} s median per task)")
    gate_time = Counter()
    for r in reports:
        for g in r.gates:
            gate_time[g.name] += g.seconds
    print("  gate seconds (sum over tasks): " + ", ".join(f"{k} {v:.0f}" for k, v in gate_time.most_common()))
    for r in reports:
        if r.status != "valid":
            print(f"  rejected {r.name}: {r.reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate", type=int, default=300, help="tasks to generate")
    parser.add_argument("--admit", type=int, default=24, help="tasks to admit (0 skips admission)")
    parser.add_argument("--jobs", type=int, default=2, help="tasks validated at once")
    args = parser.parse_args()
    bench_generation(args.generate)
    if args.admit:
        asyncio.run(bench_admission(args.admit, args.jobs))


if __name__ == "__main__":
    main()
