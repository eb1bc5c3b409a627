"""What one contained-process launch costs, from a small process and from one holding memory (as a
test worker or a flywheel with torch loaded does), through the fork server and forked here.

Each run launches ``/bin/true`` ``--launches`` times one after another with the setup every sandbox
command runs first (signals, umask), and measures the wall time and the machine's CPU time
(/proc/stat, every core, kernel included: the fork's page-table copy and the child's unmapping are
kernel work) per launch. ``--runs`` runs per case, alternating, median reported.

    .venv/bin/python bench/bench_launch.py [--launches 200] [--runs 5] [--ballast-mb 512]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import time


def machine_cpu() -> float:
    """Seconds of CPU every core spent busy so far (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as fh:
        fields = [int(v) for v in fh.readline().split()[1:]]
    busy = sum(fields[:3]) + sum(fields[5:8])
    return busy / os.sysconf("SC_CLK_TCK")


async def one_run(n: int) -> tuple[float, float]:
    from autoenvscaling.sandbox.spawner import ChildSetup, launch

    setup = ChildSetup(steps=(("clean",),))
    wall, cpu = time.perf_counter(), machine_cpu()
    for _ in range(n):
        proc = await launch(["/bin/true"], env={"PATH": "/usr/bin:/bin"}, setup=setup, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
        await proc.wait()
    return (time.perf_counter() - wall) / n * 1000, (machine_cpu() - cpu) / n * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ballast-mb", type=int, default=512, help="memory the process holds in the second case")
    args = parser.parse_args()
    from autoenvscaling.sandbox import spawner

    rows = []
    ballast = b""
    for label, mb in (("small process", 0), (f"holding {args.ballast_mb} MB", args.ballast_mb)):
        if mb:
            ballast = bytearray(mb << 20)
            for i in range(0, len(ballast), 4096):  # touch every page
                ballast[i] = 1
        rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
        results: dict[str, list[tuple[float, float]]] = {"fork server": [], "forked here": []}
        for _ in range(args.runs):
            for mode in results:
                os.environ["AUTOENVSCALING_FORKSERVER"] = "1" if mode == "fork server" else "0"
                results[mode].append(asyncio.run(one_run(args.launches)))
        spawner.restart()
        for mode, runs in results.items():
            rows.append((label, rss, mode, statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)))
    del ballast
    print(f"{args.launches} launches x {args.runs} runs per case, median per launch (machine CPU: every core, kernel included)")
    print(f"{'process':<22}{'RSS MB':>8}  {'how':<13}{'wall ms':>9}{'CPU ms':>9}")
    for label, rss, mode, wall, cpu in rows:
        print(f"{label:<22}{rss:>8}  {mode:<13}{wall:>9.2f}{cpu:>9.2f}")
    for label in dict.fromkeys(r[0] for r in rows):
        here = next(r for r in rows if r[0] == label and r[2] == "forked here")
        served = next(r for r in rows if r[0] == label and r[2] == "fork server")
        print(f"{label}: the fork server takes {here[4] / served[4]:.1f}x less CPU and {here[3] / served[3]:.1f}x less "
              f"wall time per launch than forking here")


if __name__ == "__main__":
    main()
