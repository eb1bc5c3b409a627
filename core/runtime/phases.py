"""Where an admission's time goes: seconds per phase of an attempt (prepare, create, start,
healthcheck, agent, verifier setup, verifier, teardown), summed over the attempts of one gate.

A trial records its phases in ``TrialResult.phases``; each gate run collects the phases of every
attempt it makes (``collecting``, a context variable, so attempts run concurrently by one gate all
count, and nothing is shared between gates or tasks) into ``GateResult.phases``. What a gate spends
outside any phase (its own checks, lint, near-duplicates) is its seconds minus its phases, when its
attempts ran one after another.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

PHASES = ("prepare", "create", "start", "healthcheck", "agent", "verifier-setup", "verifier", "teardown")
"""The phases of an attempt, in order. prepare: the environment built, or found in the cache;
create: the sandbox made from it; start: its entrypoint and services started and the image indexed;
healthcheck: ``[environment.healthcheck]`` until ready; agent: the agent's turn (with a step's upload
and setup.sh); verifier-setup: agent processes ended, changes hidden, tests uploaded, runtimes
mounted; verifier: test.sh and the reward read; teardown: the sandbox closed."""

_CURRENT: ContextVar[dict[str, float] | None] = ContextVar("autoenvscaling_phases", default=None)


@contextmanager
def collecting() -> Iterator[dict[str, float]]:
    """Collect the phases recorded inside the block (and in tasks it starts) into the yielded dict."""
    totals: dict[str, float] = {}
    token = _CURRENT.set(totals)
    try:
        yield totals
    finally:
        _CURRENT.reset(token)


@contextmanager
def timed(phase: str, into: dict[str, float] | None = None) -> Iterator[None]:
    """Time the block as ``phase``: added to ``into`` (an attempt's own) and to what is collecting."""
    start = time.monotonic()
    try:
        yield
    finally:
        seconds = time.monotonic() - start
        for totals in (into, _CURRENT.get()):
            if totals is not None:
                totals[phase] = totals.get(phase, 0.0) + seconds
