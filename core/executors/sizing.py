"""How many jobs this machine runs at once by default (light: imported by the command line)."""

from __future__ import annotations

import os


def default_jobs() -> int:
    """What ``--jobs`` defaults to: the cores this process may use, at most one per 2 GiB of memory
    (a worker holds a sandbox backend, a verifier runtime and, with --llm-backend transformers, a
    model), and at least 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return max(1, cores)
    return max(1, min(cores, memory // (2 << 30)))
