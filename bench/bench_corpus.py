"""What works in a corpus: validate a folder of Harbor tasks and count verdicts, first failing gates
and the most common reasons.

Runs the validation pipeline (core/gates/validate.py, gates 1-6 by default: lint, build, oracle, null,
reset, flaky) over every task in PATH... and prints, per verdict (valid / invalid / error / timeout)
and per first failing gate, how many tasks; the most common reasons, normalised so that similar ones
group (paths, numbers, quoted names, image and test names are replaced by placeholders; a lint
failure counts each of its problems); and the total time. ``--json`` prints the same as one object,
with every task's report (the ``tasks validate --json`` objects) under ``reports``.

    .venv/bin/python bench/bench_corpus.py PATH... [--backend bwrap|docker] [--jobs 2] [--json]
        [--gates lint,build,oracle,null,reset,flaky] [--flaky-runs 3] [--top 10] [--network none|task]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

DEFAULT_GATES = ("lint", "build", "oracle", "null", "reset", "flaky")
VERDICTS = ("valid", "invalid", "error", "timeout")
UNREAD = "read"  # the "gate" of a task that could not even be read (task.toml, the files)
# Placeholders that make similar reasons group, applied in order (the first rules see the raw text).
NORMALISE: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(rx), repl) for rx, repl in (
    (r"\bFROM \S+", "FROM <image>"),
    (r"\btask \S+:", "task <task>:"),
    (r"\b(source|COPY|ADD) (?!source\b)\S+", r"\1 <file>"),
    (r"\b(FAILED|ERROR) \S+", r"\1 <test>"),
    (r"'[^']*'|\"[^\"]*\"", "<name>"),
    (r"(?<![\w.])(?:/[\w.@+-]+)+/?", "<path>"),
    (r"\b\d+(?:\.\d+)?(?:s|ms)?\b", "<n>"),
    (r"^[\w.-]+/task\.toml:", "<task>/task.toml:"),
))


def normalise(reason: str) -> str:
    """A reason with its particulars replaced, so that tasks failing the same way share one line."""
    for pattern, replacement in NORMALISE:
        reason = pattern.sub(replacement, reason)
    return reason


def first_failing_gate(report: dict[str, Any]) -> str | None:
    """The gate that decided a report that is not valid (``read`` when no gate ran)."""
    if report["status"] == "valid":
        return None
    failing = [g["name"] for g in report["gates"] if g["status"] not in ("pass", "skip")]
    return failing[0] if failing else UNREAD


def reasons_of(report: dict[str, Any]) -> list[str]:
    """What one rejected report counts towards: each lint problem on its own (a task with three has
    three reasons), otherwise the report's one-line reason."""
    lint = next((g for g in report["gates"] if g["name"] == "lint" and g["status"] == "fail"), None)
    if lint is not None and lint["evidence"]:
        findings = lint["evidence"][0]["values"].get("findings", [])
        problems = [f"lint: {f['text']}" for f in findings if f.get("level") == "problem"]
        if problems:
            return problems
    return [report["reason"]]


def summarise(reports: list[dict[str, Any]], seconds: float, top: int) -> dict[str, Any]:
    """Counts per verdict and per first failing gate, the ``top`` most common reasons (with up to
    three example tasks each) and timings."""
    verdicts = Counter(r["status"] for r in reports)
    gates = Counter(g for g in (first_failing_gate(r) for r in reports) if g is not None)
    groups: dict[str, dict[str, Any]] = {}
    for report in reports:
        if report["status"] == "valid":
            continue
        for reason in reasons_of(report):
            group = groups.setdefault(normalise(reason), {"count": 0, "example": reason, "tasks": []})
            group["count"] += 1
            group["tasks"].append(report["name"])
    common = sorted(groups.items(), key=lambda kv: -kv[1]["count"])[:top]  # stable: first seen wins ties
    per_task = [r["seconds"] for r in reports]
    slowest = max(reports, key=lambda r: r["seconds"]) if reports else None
    return {
        "tasks": len(reports), "seconds": round(seconds, 2),
        "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
        "first_failing_gate": dict(gates.most_common()),
        "reasons": [{"reason": key, "count": g["count"], "example": g["example"], "tasks": g["tasks"][:3]}
                    for key, g in common],
        "task_seconds": {"median": round(statistics.median(per_task), 2) if per_task else 0.0,
                         "max": round(slowest["seconds"], 2) if slowest else 0.0,
                         "slowest": slowest["name"] if slowest else None},
    }


def print_summary(summary: dict[str, Any], args: argparse.Namespace) -> None:
    n = summary["tasks"]
    print(f"{n} tasks from {', '.join(args.paths)}: backend {args.backend}, gates {','.join(args.gates)}, "
          f"{args.jobs} job(s)")
    print("\nverdicts")
    for verdict, count in summary["verdicts"].items():
        print(f"  {verdict:<10}{count:>5}  {100 * count / n if n else 0:5.1f}%")
    print("\nfirst failing gate")
    for gate, count in summary["first_failing_gate"].items() or [("(none)", 0)]:
        print(f"  {gate:<10}{count:>5}")
    print("\nmost common reasons (lint problems counted one by one)")
    for group in summary["reasons"] or [{"count": 0, "reason": "(none: every task is valid)", "tasks": []}]:
        print(f"  {group['count']:>4}  {group['reason']}")
        if group["tasks"] and group.get("example") != group["reason"]:
            print(f"        e.g. {group['tasks'][0]}: {group['example']}")
    timing = summary["task_seconds"]
    print(f"\ntotal {summary['seconds']:.1f} s ({summary['seconds'] / n if n else 0:.2f} s per task; "
          f"median task {timing['median']:.2f} s; slowest {timing['slowest']} {timing['max']:.1f} s)")


async def validate(args: argparse.Namespace) -> list[dict[str, Any]]:
    from autoenvscaling.errors import UsageError
    from autoenvscaling.executors.base import LocalExecutor
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator, discover_tasks, validate_many
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.base import SandboxPolicy
    from autoenvscaling.sandbox.select import make_backend

    host = create_host()
    unknown = sorted(set(args.gates) - set(host.gates.names()))
    if unknown:
        raise UsageError(f"unknown gate(s): {', '.join(unknown)}", hint=f"gates: {', '.join(host.gates.names())}")
    task_dirs = discover_tasks(args.paths)
    skip = tuple(name for name in host.gates.names() if name not in args.gates)
    settings = GateSettings(skip=skip, **({"flaky_runs": args.flaky_runs} if args.flaky_runs else {}))
    validator = Validator(host=host, settings=settings, backend_name=args.backend)
    if validator.needs_sandbox:
        validator.use_backend(make_backend(args.backend, host, SandboxPolicy(network=args.network)))
    order = {str(p): i for i, p in enumerate(task_dirs)}
    reports = []
    async with LocalExecutor(concurrency=args.jobs) as executor:
        async for report in validate_many(task_dirs, validator=validator, executor=executor):
            reports.append(report)
            if not args.quiet:  # a corpus of hundreds takes a while: say where it is, on stderr
                print(f"[{len(reports)}/{len(task_dirs)}] {report.name}: {report.status}"
                      + (f" ({report.reason[:100]})" if report.status != "valid" else ""), file=sys.stderr, flush=True)
    if validator.backend is not None:
        await validator.backend.aclose()
    return [r.to_json() for r in sorted(reports, key=lambda r: order.get(r.task, len(order)))]


class Parser(argparse.ArgumentParser):
    """Bad arguments: one line and a hint, not argparse's usage block."""

    def error(self, message: str) -> Any:
        raise SystemExit(f"error: {message}\nhint: {self.prog} --help")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = Parser(prog="bench/bench_corpus.py", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="task directories, or folders of them")
    parser.add_argument("--backend", default="bwrap", help="sandbox backend: bwrap (default) or docker")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="tasks validated at once (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object (with every report)")
    parser.add_argument("--gates", default=",".join(DEFAULT_GATES),
                        help=f"comma-separated gates to run (default {','.join(DEFAULT_GATES)})")
    parser.add_argument("--flaky-runs", type=int, default=None, help="oracle runs of the flakiness gate (default 3)")
    parser.add_argument("--top", type=int, default=10, help="how many common reasons to list (default 10)")
    parser.add_argument("--quiet", "-q", action="store_true", help="no per-task progress lines on stderr")
    parser.add_argument("--network", choices=["none", "task"], default="none",
                        help="none: loopback only; task: the internet for tasks that set allow_internet")
    args = parser.parse_args(argv)
    args.gates = tuple(g.strip() for g in args.gates.split(",") if g.strip())
    for name in ("jobs", "top", "flaky_runs"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1 (got {value})")
    if not args.gates:
        parser.error("--gates names no gate")
    return args


def main(argv: list[str] | None = None) -> None:
    from autoenvscaling.errors import AESError

    args = parse_args(argv)
    start = time.monotonic()
    try:
        reports = asyncio.run(validate(args))
    except AESError as exc:  # a missing path, an unknown backend or gate, an unusable machine
        hint = exc.hint or "pass task directories or folders of them; bench/bench_corpus.py --help"
        raise SystemExit(f"error: {exc.message}\nhint: {hint}") from None
    summary = summarise(reports, time.monotonic() - start, args.top)
    if args.json:
        json.dump({**summary, "backend": args.backend, "gates": list(args.gates), "reports": reports}, sys.stdout, indent=2)
        print()
    else:
        print_summary(summary, args)


if __name__ == "__main__":
    main()
