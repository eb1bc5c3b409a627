"""Admission cost: seconds to take a trivial task through gates 1-6 (lint, build, oracle, null, reset,
flakiness) on the bwrap backend, cold and warm build cache.

Cold: each run's Dockerfile carries a fresh nonce, so the task's layer is built from scratch (the
Debian base root is cached either way: it is built once per machine). Warm: the same task again, its
layer taken from the cache. Prints the median and range of several runs, and the median per gate.

    .venv/bin/python bench/bench_admit.py [--runs 5] [--flaky-runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid

from autoenvscaling.gates.base import GateSettings, ValidationReport
from autoenvscaling.gates.validate import Validator
from autoenvscaling.plugins import create_host
from autoenvscaling.sandbox.select import make_backend
from autoenvscaling.tasks import Task

GATES_1_TO_6 = ("lint", "build", "oracle", "null", "reset", "flaky")


def trivial_task(nonce: str) -> Task:
    """Write one word into a file; the verifier checks it. ``nonce`` makes the build unique."""
    return Task.create(
        f"bench-admit-{nonce}",
        {"version": "1.0", "verifier": {"timeout_sec": 60.0}, "agent": {"timeout_sec": 60.0}},
        "Write the word `ready` into /app/answer.txt.\n",
        {
            "environment/Dockerfile": f"FROM debian:bookworm-slim\nRUN echo {nonce} > /etc/bench-nonce\nWORKDIR /app\n",
            "tests/test.sh": "#!/bin/bash\nif [ \"$(cat /app/answer.txt 2>/dev/null)\" = ready ]; then echo 1; else echo 0; fi"
                             " > /logs/verifier/reward.txt\n",
            "solution/solve.sh": "#!/bin/bash\necho ready > /app/answer.txt\n",
        },
    )


async def admit(validator: Validator, task: Task) -> tuple[float, ValidationReport]:
    start = time.perf_counter()
    report = await validator.validate(task)
    seconds = time.perf_counter() - start
    if report.status != "valid":
        raise SystemExit(f"the trivial task was not admitted: {report.reason}")
    return seconds, report


async def main_async(runs: int, flaky_runs: int) -> None:
    host = create_host()
    skip = tuple(n for n in host.gates.names() if n not in GATES_1_TO_6)
    validator = Validator(host=host, settings=GateSettings(flaky_runs=flaky_runs, skip=skip))
    validator.use_backend(make_backend("bwrap", host))
    # Warm-up: the base root filesystem and the offline verifier runtime are built once per machine.
    await admit(validator, trivial_task("warmup"))
    results: dict[str, list[tuple[float, ValidationReport]]] = {"cold": [], "warm": []}
    warm_task = trivial_task("warm")
    await admit(validator, warm_task)
    for _ in range(runs):
        results["cold"].append(await admit(validator, trivial_task(uuid.uuid4().hex[:12])))
        results["warm"].append(await admit(validator, warm_task))
    await validator.backend.aclose()
    print(f"admission through gates 1-6 on bwrap ({flaky_runs} oracle runs in the flakiness gate, {runs} runs each)")
    for kind, rows in results.items():
        times = [s for s, _ in rows]
        cached = {g.evidence[0].values.get("cached") for _, r in rows for g in r.gates if g.name == "build"}
        print(f"  {kind:<4} build cache: median {statistics.median(times):6.2f} s  "
              f"(min {min(times):.2f}, max {max(times):.2f}; build cached={sorted(cached, key=str)})")
        per_gate = {g: statistics.median(next(x.seconds for x in r.gates if x.name == g) for _, r in rows)
                    for g in GATES_1_TO_6}
        print("        per gate (median s): " + ", ".join(f"{g} {s:.2f}" for g, s in per_gate.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--flaky-runs", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.flaky_runs))


if __name__ == "__main__":
    main()
