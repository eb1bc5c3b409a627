"""Throughput and admission rate of the professional domain on this machine: tasks generated per
minute, and tasks admitted per minute through gates 1-8 (lint, build, oracle, null, red team,
reset, flakiness, decontamination, near-duplicate) plus the domain's own (professional-lint,
professional-controls: valid empty outputs score 0, the null attempt at most 0.1, the plausible
wrong answer at most 0.5), on the bwrap backend.

Tasks cycle through every family and difficulty (seeds from --seed). Admission runs ``--jobs`` tasks
at a time with the layer cache warm (the domain's image preamble is built once per machine). Every
report is appended to --log as a JSON line, and a rerun with the same --log skips the tasks already
there, so an interrupted run resumes. Printed: per family and per difficulty, admitted/total;
every rejection with its reason; admitted per minute; the control rewards; then one JSON line.

    .venv/bin/python bench/bench_professional.py [--admit 200] [--generate 400] [--jobs 2] [--log FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from admission_table import DIFFICULTIES, summarise
from autoenvscaling_professional.domain import ProfessionalDomain
from autoenvscaling_professional.families import CATALOG



def specs(n: int, offset: int) -> list[tuple[str, int, str]]:
    families = list(CATALOG)
    return [(families[i % len(families)], offset + i, DIFFICULTIES[(i // len(families)) % 3]) for i in range(n)]


def bench_generation(n: int) -> float:
    domain = ProfessionalDomain()
    for family in CATALOG:  # import every generator module first: the figure is steady-state
        domain.generate(family, seed=0)
    per_family: dict[str, list[float]] = defaultdict(list)
    start = time.perf_counter()
    for family, seed, difficulty in specs(n, 5000):
        t0 = time.perf_counter()
        domain.generate(family, seed=seed, difficulty=difficulty)
        per_family[family].append(time.perf_counter() - t0)
    seconds = time.perf_counter() - start
    rate = n / seconds * 60
    print(f"generation: {n} tasks in {seconds:.2f} s = {rate:,.0f} tasks/minute (one process)")
    for family, samples in per_family.items():
        print(f"  {family:<17} median {statistics.median(samples) * 1000:7.1f} ms/task")
    return rate


def controls_of(report) -> str:
    gate = next((g for g in report.gates if g.name == "professional-controls"), None)
    return gate.reason if gate is not None else ""


async def bench_admission(n: int, jobs: int, seed: int, log: Path) -> dict:
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.gates.validate import Validator, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    domain = ProfessionalDomain()
    host = create_host()
    backend = make_backend("bwrap", host)
    validator = Validator(host=host, backend=backend)
    warm = await validator.validate(domain.generate("format_sheet", seed=10**6, difficulty="easy"))
    print(f"warm-up task: {warm.status} in {warm.seconds:.1f} s (builds the domain's image once per machine)")
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            row = json.loads(line)
            done[row["name"]] = row
    wanted = specs(n, seed)
    tasks = [domain.generate(f, seed=s, difficulty=d) for f, s, d in wanted]
    todo = [t for t in tasks if t.name not in done]
    print(f"admission: {len(todo)} tasks to validate ({len(tasks) - len(todo)} already in {log})")
    start = time.perf_counter()
    with log.open("a") as fh:
        async with LocalExecutor(concurrency=jobs) as executor:
            async for report in validate_many(todo, validator=validator, executor=executor):
                task = next(t for t in todo if t.name == report.name)
                row = {"name": report.name, "family": task.provenance.family, "difficulty": task.provenance.difficulty,
                       "status": report.status, "reason": report.reason, "seconds": round(report.seconds, 2),
                       "controls": controls_of(report)}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                done[report.name] = row
                print(f"  [{len(done)}/{len(tasks)}] {report.name}: {report.status} {report.seconds:.1f}s {row['controls']}", flush=True)
    seconds = time.perf_counter() - start
    await backend.aclose()
    rows = [done[t.name] for t in tasks]
    return summarise(rows, validated=len(todo), seconds=seconds, jobs=jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate", type=int, default=400, help="tasks to generate for the generation figure")
    parser.add_argument("--admit", type=int, default=200, help="tasks to validate (0 skips admission)")
    parser.add_argument("--jobs", type=int, default=2, help="tasks validated at once")
    parser.add_argument("--seed", type=int, default=0, help="first seed of the admitted tasks")
    parser.add_argument("--log", type=Path, default=Path("bench-professional.jsonl"), help="per-task reports (resume)")
    args = parser.parse_args()
    out = {"generated_per_minute": bench_generation(args.generate)}
    if args.admit:
        out.update(asyncio.run(bench_admission(args.admit, args.jobs, args.seed, args.log)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
