"""Admission throughput per executor on this machine: tasks validated per minute through gates 1-8
(lint, build, oracle, null, reset, flakiness k=3, decontamination, near-duplicate) on bwrap, for the
local executor with 1 and 2 worker processes and for Ray (a local instance), side by side.

Every run validates the same batch of procedural terminal tasks (families cycled, easy); the layer
cache is warmed first so the figure is steady-state. Each executor's workers start inside the timed
run (a fresh pool per run: that is what one ``tasks validate`` pays), Ray's instance once before.
The figure is the median over ``--runs`` runs, taken round-robin over the executors.

    .venv/bin/python bench/bench_executors.py [--tasks 8] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time


def tasks(n: int) -> list:
    from autoenvscaling_terminal.domain import TerminalDomain
    from autoenvscaling_terminal.families import CATALOG

    domain = TerminalDomain()
    families = list(CATALOG)
    return [domain.generate(families[i % len(families)], seed=7000 + i, difficulty="easy") for i in range(n)]


async def one_run(batch: list, executor) -> tuple[float, int]:  # noqa: ANN001
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    validator = Validator(host=host, backend=make_backend("bwrap", host), settings=GateSettings(flaky_runs=3))
    start = time.perf_counter()
    try:
        reports = [r async for r in validate_many(batch, validator=validator, executor=executor)]
    finally:
        await executor.aclose()
    return time.perf_counter() - start, sum(r.status == "valid" for r in reports)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="tasks per run")
    parser.add_argument("--runs", type=int, default=3, help="runs per executor (the median is reported)")
    args = parser.parse_args()
    from autoenvscaling.executors.base import LocalExecutor

    batch = tasks(args.tasks)
    warm_seconds, _ = asyncio.run(one_run(batch[:1], LocalExecutor(concurrency=1)))
    print(f"warm-up: 1 task in {warm_seconds:.1f} s; {args.tasks} tasks x {args.runs} runs per executor")
    setups = [("local, 1 worker", lambda: LocalExecutor(concurrency=1)),
              ("local, 2 workers", lambda: LocalExecutor(concurrency=2))]
    ray = None
    try:
        import ray

        from autoenvscaling.executors.ray_executor import RayExecutor

        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {k: v for k, v in os.environ.items() if k.startswith("AUTOENVSCALING_")}},
                 _temp_dir=tempfile.mkdtemp(prefix="aes-ray-"))
        print(f"ray: local instance (num_cpus=2) started in {time.perf_counter() - t0:.1f} s")
        setups.append(("ray, 2 CPUs", lambda: RayExecutor(concurrency=2)))
    except ImportError:
        ray = None
        print("ray: not installed (pip install 'autoenvscaling[ray]'); its row is left out")
    # Round-robin over the executors, so each sees the same background load on a shared machine.
    seconds: dict[str, list[float]] = {label: [] for label, _ in setups}
    valid: dict[str, int] = {}
    for _ in range(args.runs):
        for label, make in setups:
            s, valid[label] = asyncio.run(one_run(batch, make()))
            seconds[label].append(s)
    rows = []
    for label, _ in setups:
        median = statistics.median(seconds[label])
        rows.append((label, median, args.tasks / median * 60, valid[label]))
    base = rows[0][2]
    print(f"{'executor':<18} {'median s':>9} {'tasks/min':>10} {'vs 1 worker':>12} {'valid':>6}")
    for label, median, rate, valid in rows:
        print(f"{label:<18} {median:>9.1f} {rate:>10.1f} {rate / base:>11.2f}x {valid:>3}/{args.tasks}")
    if ray is not None:
        ray.shutdown()


if __name__ == "__main__":
    main()
