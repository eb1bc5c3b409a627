"""Suite statistics from index records (no task directory is read)."""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable

from .records import SuiteStats, TaskRecord

NONE = "(none)"
_FACETS = ("domain", "family", "difficulty", "category", "proposer", "status")  # counted as by_<facet>


def suite_stats(records: Iterable[TaskRecord]) -> SuiteStats:
    records = list(records)
    lengths = sorted(r.instruction_chars for r in records)
    counts = {f"by_{facet}": _count(getattr(r, facet) for r in records) for facet in _FACETS}
    return SuiteStats(tasks=len(records), **counts, by_tag=_count(tag for r in records for tag in r.tags),
                      instruction_chars=_distribution(lengths), total_bytes=sum(r.size_bytes for r in records))


def percentile(sorted_values: list[int], q: float) -> int:
    """Nearest-rank percentile (``q`` in [0, 100]) of an ascending list: always an observed value."""
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def _distribution(lengths: list[int]) -> dict[str, float]:
    if not lengths:
        return {}
    return {"min": lengths[0], "p50": percentile(lengths, 50), "p90": percentile(lengths, 90),
            "p99": percentile(lengths, 99), "max": lengths[-1], "mean": round(sum(lengths) / len(lengths), 1)}


def _count(values: Iterable[str | None]) -> dict[str, int]:
    """Counts, most common first (ties by name) so listings read top-down."""
    counts = Counter(NONE if v is None else v for v in values)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
