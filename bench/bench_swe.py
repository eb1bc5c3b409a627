"""The swe domain's yield: instances admitted from the seed repositories, per repository and per
mutation operator, and how many per minute.

For every repository (the seeds by default, or --repos with paths/URLs) it generates --per-repo
instances at each --levels level with the mutation strategy (one SweGenerator per repository: one
sandbox, the clean suite run twice, every candidate twice), then runs the admission gates (the core
ones: lint, build, oracle, null, reset, flakiness, decontamination, near-duplicates; and swe-lint,
swe-validation) on each screened instance. Printed: per repository and per operator, candidates
tried, admitted by screening, admitted by the gates; screening reasons; instances admitted per minute
(wall time of screening + validation). Then one JSON line with everything. Progress goes to stderr.

    .venv/bin/python bench/bench_swe.py [--repos datespan,...] [--per-repo 50] [--levels 1,2]
        [--seed 0] [--no-validate] [--backend bwrap]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any


def table(rows: dict[str, dict[str, int]], title: str) -> None:
    print(f"\n{title:<20} {'tried':>6} {'screened':>9} {'rate':>6} {'admitted':>9} {'rate':>6}")
    for key, row in sorted(rows.items()):
        tried, screened, admitted = row["tried"], row["screened"], row.get("admitted", 0)
        print(f"{key:<20} {tried:>6} {screened:>9} {screened / max(tried, 1):>6.0%} {admitted:>9} "
              f"{admitted / max(tried, 1):>6.0%}")


async def bench_repo(spec: str, args: argparse.Namespace, host: Any, totals: dict[str, Any]) -> None:
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling_swe.generate import GenerateSettings, SweGenerator
    from autoenvscaling_swe.render import render
    from autoenvscaling_swe.repos import open_repository

    repository = open_repository(spec)
    snapshot = repository.snapshot()
    backend = make_backend(args.backend, host)
    validator = Validator(host=host, backend=backend) if args.validate else None
    try:
        async with SweGenerator(backend, repository, snapshot, settings=GenerateSettings()) as gen:
            for level in args.levels:
                for i in range(args.per_repo):
                    seed = args.seed + i
                    before = len(gen.attempts)
                    start = time.monotonic()
                    instance = await gen.instance(seed=seed, level=level)
                    screen_s = time.monotonic() - start
                    verdict, reason, gate_s = "none", "", 0.0
                    if instance is not None:
                        verdict = "screened"
                        if validator is not None:
                            start = time.monotonic()
                            report = await validator.validate(render(instance))
                            gate_s = time.monotonic() - start
                            verdict, reason = ("admitted" if report.valid else "rejected"), report.reason
                    for attempt in gen.attempts[before:]:
                        final = attempt.admitted and verdict == "admitted"
                        totals["attempts"].append({**attempt.as_dict(), "level": level, "final": final})
                    totals["instances"].append({"repo": snapshot.name, "level": level, "seed": seed, "verdict": verdict,
                                                "reason": reason, "screen_s": round(screen_s, 2), "gate_s": round(gate_s, 2)})
                    print(f"[{snapshot.name} l{level} s{seed}] {verdict} {reason} "
                          f"({screen_s:.1f}s screening, {gate_s:.1f}s gates)", file=sys.stderr, flush=True)
    finally:
        await backend.aclose()


def summarise(totals: dict[str, Any], seconds: float, validate: bool) -> dict[str, Any]:
    by_repo: dict[str, dict[str, int]] = {}
    by_op: dict[str, dict[str, int]] = {}
    for a in totals["attempts"]:
        for table_, key in [(by_repo, a["repo"])] + [(by_op, op) for op in a["operators"]]:
            row = table_.setdefault(key, {"tried": 0, "screened": 0, "admitted": 0})
            row["tried"] += 1
            row["screened"] += int(a["admitted"])
            row["admitted"] += int(a["final"])
    admitted = sum(1 for i in totals["instances"] if i["verdict"] == ("admitted" if validate else "screened"))
    return {"seconds": round(seconds, 1), "instances_admitted": admitted, "per_minute": round(admitted / (seconds / 60), 2),
            "candidates": len(totals["attempts"]), "by_repo": by_repo, "by_operator": by_op,
            "screening_reasons": dict(Counter(a["reason"] for a in totals["attempts"])),
            "gate_rejections": dict(Counter(i["reason"] for i in totals["instances"] if i["verdict"] == "rejected")),
            "median_screen_s": sorted(i["screen_s"] for i in totals["instances"])[len(totals["instances"]) // 2],
            "median_gate_s": sorted(i["gate_s"] for i in totals["instances"])[len(totals["instances"]) // 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", default="", help="comma-separated seeds, paths or URLs (default: every seed)")
    parser.add_argument("--per-repo", type=int, default=50)
    parser.add_argument("--levels", default="1", help="comma-separated levels (mutations per bug)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", default="bwrap")
    parser.add_argument("--no-validate", dest="validate", action="store_false")
    args = parser.parse_args()
    args.levels = [int(x) for x in args.levels.split(",")]
    from autoenvscaling.plugins import create_host
    from autoenvscaling_swe.repos import seed_names

    repos = [r for r in args.repos.split(",") if r] or seed_names()
    host = create_host()
    totals: dict[str, Any] = {"attempts": [], "instances": []}
    start = time.monotonic()
    for spec in repos:
        asyncio.run(bench_repo(spec, args, host, totals))
    result = summarise(totals, time.monotonic() - start, args.validate)
    table(result["by_repo"], "repository")
    table(result["by_operator"], "operator")
    print("\nscreening reasons:")
    for reason, n in sorted(result["screening_reasons"].items(), key=lambda kv: -kv[1]):
        print(f"  {n:>5}  {reason}")
    if result["gate_rejections"]:
        print("gate rejections:")
        for reason, n in result["gate_rejections"].items():
            print(f"  {n:>5}  {reason}")
    print(f"\n{result['instances_admitted']} instances admitted from {result['candidates']} candidates in "
          f"{result['seconds']:.0f}s: {result['per_minute']:.2f} per minute (median {result['median_screen_s']:.1f}s "
          f"screening + {result['median_gate_s']:.1f}s gates per instance)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
