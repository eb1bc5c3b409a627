"""The admission summary the domain benchmarks print: admitted/total per family and per difficulty,
every rejection with its reason, admitted per minute. Imported by bench_professional.py and
bench_computer_use.py (run from the repository root, as `.venv/bin/python bench/NAME.py`)."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

DIFFICULTIES = ("easy", "medium", "hard")


def summarise(rows: list[dict], *, validated: int, seconds: float, jobs: int) -> dict:
    """Print the tables for ``rows`` (name, family, difficulty, status, reason, seconds) and return the
    figures; ``validated`` tasks were run now, in ``seconds`` (the others came from the resume log)."""
    valid = sum(r["status"] == "valid" for r in rows)
    per_family, per_level = defaultdict(Counter), defaultdict(Counter)
    for r in rows:
        per_family[r["family"]][r["status"] == "valid"] += 1
        per_level[r["difficulty"]][r["status"] == "valid"] += 1
    print(f"\n{'family':<18} {'admitted':>9} {'total':>6} {'rate':>6}")
    for name, c in sorted(per_family.items()):
        print(f"{name:<18} {c[True]:>9} {c[True] + c[False]:>6} {c[True] / (c[True] + c[False]):>6.0%}")
    for name in DIFFICULTIES:
        c = per_level[name]
        print(f"{name:<18} {c[True]:>9} {c[True] + c[False]:>6} {c[True] / max(1, c[True] + c[False]):>6.0%}")
    print(f"{'all':<18} {valid:>9} {len(rows):>6} {valid / len(rows):>6.0%}")
    for r in rows:
        if r["status"] != "valid":
            print(f"  rejected {r['name']}: {r['reason']}")
    median = statistics.median(r["seconds"] for r in rows)
    per_minute = validated / seconds * 60 * valid / len(rows) if validated else None
    if per_minute is not None:
        print(f"admitted per minute: {per_minute:.1f} ({validated} tasks validated in {seconds:.0f} s with {jobs} jobs; "
              f"{median:.1f} s median per task)")
    return {"admitted": valid, "total": len(rows), "rate": valid / len(rows), "admitted_per_minute": per_minute,
            "seconds": seconds, "median_task_seconds": median,
            "per_family": {k: [c[True], c[True] + c[False]] for k, c in per_family.items()}}
