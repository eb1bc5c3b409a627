"""The one timing function, used for the reference (parent) and for ModelNew (child) alike.

CUDA only. Each timed call starts with a cold L2 (a buffer of twice the L2 size is zeroed first),
and is bracketed by device-wide synchronisation, so work a submission pushes onto another stream
is inside the measurement. Warm-up: at least 3 calls and 25 ms. Then two back-to-back series; the
figure is the median of all reps, the spread says how far the two series' medians disagree.
"""

from __future__ import annotations

import statistics
import time

import torch

_Event = torch.cuda.Event
_sync = torch.cuda.synchronize
_clock = time.perf_counter

WARMUP_CALLS, WARMUP_SEC = 3, 0.025
SERIES_SEC = 0.25          # rough budget of one series
MIN_REPS, MAX_REPS = 10, 200


def bench(fn) -> dict:  # noqa: ANN001 - a no-argument callable that launches GPU work
    """{"median_ms", "spread", "reps"} of ``fn()`` on the current CUDA device."""
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)

    def once() -> float:
        flush.zero_()
        _sync()
        start.record()
        fn()
        _sync()  # device-wide: a side stream's work counts too
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    calls, t0 = 0, _clock()
    while calls < WARMUP_CALLS or _clock() - t0 < WARMUP_SEC:
        once()
        calls += 1
    per_call = (_clock() - t0) / calls
    reps = max(MIN_REPS, min(MAX_REPS, int(SERIES_SEC / max(per_call, 1e-6))))
    first = [once() for _ in range(reps)]
    second = [once() for _ in range(reps)]
    median = statistics.median(first + second)
    m1, m2 = statistics.median(first), statistics.median(second)
    return {"median_ms": median, "spread": abs(m1 - m2) / median if median > 0 else 0.0, "reps": 2 * reps}


def copy_bandwidth_gbs(megabytes: int = 512) -> float:
    """The card's measured device-to-device copy bandwidth (read + write bytes per second)."""
    n = megabytes << 20
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    src.fill_(1)
    ms = bench(lambda: dst.copy_(src))["median_ms"]
    return 2 * n / (ms * 1e-3) / 1e9
