"""The red team's cost and effect: every registered cheat on freshly generated tasks of each domain,
and admission with and without the red-team gate.

For each domain: generate ``--tasks`` tasks (procedural, spread over the families and levels), run
every cheat that applies on each (``autoenvscaling tasks redteam`` in-process: one sandbox attempt per
cheat) and print the table's totals (held, beaten, the worst cheat per task) and the seconds per task
(median over the tasks); then validate the same tasks twice, every gate (and the domain's) with and without ``redteam``,
and print the admission rates side by side and the added seconds per admission (median of the
per-task differences) with their ratio.

    .venv/bin/python bench/bench_redteam.py [--domains terminal,professional] [--tasks 20] [--backend bwrap]
    .venv/bin/python bench/bench_redteam.py --corpus ../shared/corpora/harbor-cookbook   # tasks from a folder
    .venv/bin/python bench/bench_redteam.py --domains swe --tasks 20 --table --no-admission  # the table only
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

def generate(domain: Any, n: int) -> list[Any]:
    families = [f.name for f in domain.families()]
    levels = ("easy", "medium", "hard")
    return [domain.generate(families[i % len(families)], seed=1000 + i, difficulty=levels[(i // len(families)) % 3])
            for i in range(n)]


async def redteam(tasks: list[Any], runner: Any, host: Any) -> tuple[list[Any], list[float]]:
    from autoenvscaling.redteam.run import RedTeamRow, cheats_for, outcome

    rows, seconds = [], []
    for task in tasks:
        start = time.monotonic()
        outcomes = [outcome(c.name, await runner.run(task, c)) for c in cheats_for(task, host)]
        seconds.append(time.monotonic() - start)
        rows.append(RedTeamRow(task=task.name, outcomes=outcomes))
    return rows, seconds


async def admit(tasks: list[Any], backend: Any, host: Any, *, with_redteam: bool) -> tuple[list[Any], list[float]]:
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator

    # Every gate but calibration (no solver here), with or without the red team.
    validator = Validator(host=host, backend=backend, settings=GateSettings(skip=() if with_redteam else ("redteam",)))
    reports, seconds = [], []
    for task in tasks:
        start = time.monotonic()
        reports.append(await validator.validate(task))
        seconds.append(time.monotonic() - start)
    return reports, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", default="terminal,professional")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--corpus", default=None, help="a folder of task directories instead of generated tasks")
    parser.add_argument("--table", action="store_true", help="print the task x cheat table, as `tasks redteam` does")
    parser.add_argument("--no-admission", action="store_true", help="the red team only, not admission with and without it")
    args = parser.parse_args()

    from autoenvscaling.plugins import create_host
    from autoenvscaling.redteam.run import summary_counts
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    backend = make_backend(args.backend, host)
    runner = TrialRunner(backend, host=host)
    if args.corpus:
        from autoenvscaling.gates.validate import discover_tasks
        from autoenvscaling.tasks.harbor import read_task

        suites = [(args.corpus, [read_task(p) for p in discover_tasks([args.corpus])])]
    else:
        suites = [(name, generate(host.domains.get(name)(), args.tasks)) for name in args.domains.split(",")]
    for name, tasks in suites:
        rows, per_task = asyncio.run(redteam(tasks, runner, host))
        counts = summary_counts(rows)
        print(f"{name}: {len(tasks)} tasks, {counts['attempts']} cheat attempts "
              f"({counts['attempts'] / max(1, len(tasks)):.1f} per task): {counts['held']} held, "
              f"{counts['beaten']} beaten, {counts['errors']} errors; "
              f"tasks redteam {statistics.median(per_task):.1f} s per task (median)")
        for row in rows:
            if row.worst is not None and row.worst.status == "beaten":
                print(f"  {row.task}: beaten by {', '.join(o.cheat for o in row.scored if o.status == 'beaten')}")
        if args.table:
            from autoenvscaling.cli.redteam_cmd import print_table

            print_table(rows)
        if args.no_admission:
            continue
        without, t0 = asyncio.run(admit(tasks, backend, host, with_redteam=False))
        withgate, t1 = asyncio.run(admit(tasks, backend, host, with_redteam=True))
        a0, a1 = sum(r.valid for r in without), sum(r.valid for r in withgate)
        added = statistics.median(b - a for a, b in zip(t0, t1))
        print(f"  admitted without the red-team gate {a0}/{len(tasks)}, with it {a1}/{len(tasks)}; "
              f"admission {statistics.median(t0):.1f} s -> {statistics.median(t1):.1f} s per task "
              f"(median), +{added:.1f} s, ratio {statistics.median(t1) / statistics.median(t0):.2f}")
        for report in withgate:
            if not report.valid and report.reason.startswith("redteam"):
                print(f"  rejected {report.name}: {report.reason[:140]}")
    asyncio.run(backend.aclose())


if __name__ == "__main__":
    main()
