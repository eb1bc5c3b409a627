"""The gpu_kernels domain on this machine (no GPU): generation, the reference kernels in the Triton
interpreter, and admission through the gates.

1. Generation: tasks per minute (each draw's reference runs on the host for the degeneracy filter).
2. Interpreter check of --tasks generated tasks (families x difficulties, seeds from --seed): the
   verifier harness (the file test.sh runs) on each task's reference kernel must score 1, and on no
   answer at all (the null attempt) 0. Run on the host, --jobs at a time, resumable through --log.
3. Admission of --admit of those tasks through gates 1-8 plus gpu-kernels-lint on the bwrap backend
   (lint, build, oracle, null, reset, flakiness, decontamination, near-duplicate): admitted per
   minute, every rejection with its reason.

    .venv/bin/python bench/bench_gpu_kernels.py [--tasks 100] [--admit 100] [--jobs 2] [--log FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from admission_table import DIFFICULTIES, summarise  # noqa: E402
from autoenvscaling.tasks import short_name, write_task  # noqa: E402
from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain  # noqa: E402
from autoenvscaling_gpu_kernels.families import CATALOG  # noqa: E402
from autoenvscaling_gpu_kernels.harness import run_harness  # noqa: E402


def specs(n: int, offset: int) -> list[tuple[str, int, str]]:
    families = list(CATALOG)
    return [(families[i % len(families)], offset + i, DIFFICULTIES[(i // len(families)) % 3]) for i in range(n)]


def bench_generation(wanted: list[tuple[str, int, str]]) -> tuple[list, float]:
    domain = GpuKernelsDomain()
    for family in CATALOG:  # every generator imported and torch warm: the figure is steady-state
        domain.generate(family, seed=10**6)
    start = time.perf_counter()
    tasks = [domain.generate(f, seed=s, difficulty=d) for f, s, d in wanted]
    seconds = time.perf_counter() - start
    print(f"generation: {len(tasks)} tasks in {seconds:.1f} s = {len(tasks) / seconds * 60:,.0f} tasks/minute (one process)")
    dtypes = Counter(t.provenance.parameters["dtype"] for t in tasks)
    print("  dtypes: " + ", ".join(f"{k} {v}" for k, v in sorted(dtypes.items())))
    return tasks, len(tasks) / seconds * 60


def interpreter_check(tasks: list, jobs: int, log: Path) -> dict:
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            row = json.loads(line)
            done[row["name"]] = row
    todo = [t for t in tasks if t.name not in done]
    print(f"\ninterpreter check: {len(todo)} tasks ({len(tasks) - len(todo)} already in {log}), {jobs} at a time")
    root = Path(tempfile.mkdtemp(prefix="bench-gpu-kernels-"))

    def one(task) -> dict:
        folder = write_task(task, root / short_name(task.name))
        t0 = time.perf_counter()
        oracle = run_harness(folder, None)
        oracle_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        nop = run_harness(folder, folder / "no-such-solution.py")
        return {"name": task.name, "family": task.provenance.family, "difficulty": task.provenance.difficulty,
                "dtype": task.provenance.parameters["dtype"], "oracle": oracle.reward, "oracle_reason": oracle.reason,
                "oracle_seconds": round(oracle_s, 2), "nop": nop.reward, "nop_reason": nop.reason,
                "nop_seconds": round(time.perf_counter() - t0, 2)} | {"nop_reason": nop.reason.replace(str(folder), "TASK")}

    start = time.perf_counter()
    with log.open("a") as fh, ThreadPoolExecutor(jobs) as pool:
        for row in pool.map(one, todo):
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            done[row["name"]] = row
            mark = "ok" if row["oracle"] == 1 and row["nop"] == 0 else "FAIL"
            print(f"  [{len(done)}/{len(tasks)}] {row['name']}: oracle {row['oracle']:g} ({row['oracle_seconds']:.1f}s) "
                  f"nop {row['nop']:g} {mark}", flush=True)
    seconds = time.perf_counter() - start
    rows = [done[t.name] for t in tasks]
    per_family = defaultdict(Counter)
    for r in rows:
        per_family[r["family"]][r["oracle"] == 1 and r["nop"] == 0] += 1
    print(f"\n{'family':<18} {'oracle 1, nop 0':>16} {'total':>6}")
    for name, c in sorted(per_family.items()):
        print(f"{name:<18} {c[True]:>16} {c[True] + c[False]:>6}")
    good = sum(r["oracle"] == 1 and r["nop"] == 0 for r in rows)
    print(f"{'all':<18} {good:>16} {len(rows):>6}")
    for r in rows:
        if r["oracle"] != 1 or r["nop"] != 0:
            print(f"  FAILED {r['name']}: oracle {r['oracle']:g} ({r['oracle_reason']}); nop {r['nop']:g} ({r['nop_reason']})")
    nop_reasons = Counter(r["nop_reason"] for r in rows)
    print("null attempts: " + "; ".join(f"{n} x {reason!r}" for reason, n in nop_reasons.most_common(3)))
    oracle_median = statistics.median(r["oracle_seconds"] for r in rows)
    print(f"harness run on a reference kernel: median {oracle_median:.1f} s (interpreter, {jobs} at a time); "
          f"null attempt median {statistics.median(r['nop_seconds'] for r in rows):.2f} s"
          + (f"; {len(todo)} tasks checked in {seconds:.0f} s" if todo else ""))
    return {"checked": len(rows), "oracle_1_nop_0": good, "oracle_median_seconds": oracle_median}


async def admission(tasks: list, jobs: int) -> dict:
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.gates.validate import Validator, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    backend = make_backend("bwrap", host)
    validator = Validator(host=host, backend=backend)
    warm = await validator.validate(GpuKernelsDomain().generate("elementwise_chain", seed=10**6 + 1, difficulty="easy"))
    print(f"\nwarm-up task: {warm.status} in {warm.seconds:.1f} s (builds the domain's image once per machine)")
    rows, start = [], time.perf_counter()
    async with LocalExecutor(concurrency=jobs) as executor:
        async for report in validate_many(tasks, validator=validator, executor=executor):
            task = next(t for t in tasks if t.name == report.name)
            lint = next((g.reason for g in report.gates if g.name == "gpu-kernels-lint"), "")
            rows.append({"name": report.name, "family": task.provenance.family, "difficulty": task.provenance.difficulty,
                         "status": report.status, "reason": report.reason, "seconds": round(report.seconds, 2)})
            print(f"  [{len(rows)}/{len(tasks)}] {report.name}: {report.status} {report.seconds:.1f}s  {lint}", flush=True)
    seconds = time.perf_counter() - start
    await backend.aclose()
    return summarise(rows, validated=len(rows), seconds=seconds, jobs=jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100, help="generated tasks checked in the interpreter")
    parser.add_argument("--admit", type=int, default=100, help="of those, tasks validated through the gates (0 skips)")
    parser.add_argument("--jobs", type=int, default=2, help="harness runs / validations at once")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--log", type=Path, default=Path("bench-gpu-kernels.jsonl"), help="per-task results (resume)")
    args = parser.parse_args()
    wanted = specs(args.tasks, args.seed)
    tasks, rate = bench_generation(wanted)
    out = {"generated_per_minute": rate, **interpreter_check(tasks, args.jobs, args.log)}
    if args.admit:
        # the first N: they cycle through every family, then every difficulty
        out["admission"] = asyncio.run(admission(tasks[:args.admit], args.jobs))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
