"""Sandbox overheads of the bwrap backend, against a plain subprocess.

Prints the median of several runs of:
  (a) subprocess.run(["true"]) on the host,
  (b) exec of `true` in a started bwrap sandbox (the per-command cost an agent pays),
  (c) create + start + exec + close of a sandbox (the per-attempt cost),
  (d) prepare() of an already built environment (a layer-cache hit),
with the overhead of (b) and (c) over (a) (median of paired differences) and their ratio.

    .venv/bin/python bench/bench_sandbox.py [--runs 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import time

from autoenvscaling.sandbox.base import SandboxPolicy
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.tasks import Task

TASK = Task.create("bench", {"environment": {"memory_mb": 512, "storage_mb": 256}}, "bench",
                   {"environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n"})


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def plain_true() -> float:
    start = time.perf_counter()
    subprocess.run(["true"])
    return time.perf_counter() - start


async def measure(runs: int) -> dict[str, float]:
    """Each sandbox sample is paired with a plain-subprocess sample taken right before it, so load
    from other work on the machine weighs on both; the overhead is the median paired difference."""
    backend = BwrapBackend(policy=SandboxPolicy())
    prepared = await backend.prepare(TASK)  # builds once (cached afterwards)

    plain, execs, exec_diff = [], [], []
    async with await backend.create(TASK, prepared) as sandbox:
        await sandbox.exec("true")  # warm-up
        for _ in range(runs):
            plain.append(plain_true())
            start = time.perf_counter()
            result = await sandbox.exec("true")
            execs.append(time.perf_counter() - start)
            exec_diff.append(execs[-1] - plain[-1])
            assert result.ok, result.tail()

    lifecycles, life_diff = [], []
    for _ in range(runs):
        base = plain_true()
        start = time.perf_counter()
        sandbox = await backend.create(TASK, prepared)
        await sandbox.start()
        await sandbox.exec("true")
        await sandbox.close()
        lifecycles.append(time.perf_counter() - start)
        life_diff.append(lifecycles[-1] - base)

    hits = []
    for _ in range(runs):
        start = time.perf_counter()
        await backend.prepare(TASK)
        hits.append(time.perf_counter() - start)
    return {"plain": median_ms(plain), "exec": median_ms(execs), "exec_diff": median_ms(exec_diff),
            "lifecycle": median_ms(lifecycles), "life_diff": median_ms(life_diff), "prepare_hit": median_ms(hits),
            "plain_min": min(plain) * 1000, "exec_min": min(execs) * 1000, "life_min": min(lifecycles) * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    ok, why = BwrapBackend.available()
    if not ok:
        raise SystemExit(why)
    r = asyncio.run(measure(args.runs))
    print(f"{args.runs} runs: median (best); the best approximates an idle machine")
    print(f"(a) subprocess.run(['true'])             {r['plain']:7.2f} ms ({r['plain_min']:.2f})")
    print(f"(b) exec 'true' in a started sandbox     {r['exec']:7.2f} ms ({r['exec_min']:.2f})   "
          f"+{r['exec_diff']:.2f} ms over (a), x{r['exec'] / r['plain']:.1f}")
    print(f"(c) create + start + exec + close        {r['lifecycle']:7.2f} ms ({r['life_min']:.2f})   "
          f"+{r['life_diff']:.2f} ms over (a), x{r['lifecycle'] / r['plain']:.1f}")
    print(f"(d) prepare() with every layer cached    {r['prepare_hit']:7.2f} ms")


if __name__ == "__main__":
    main()
