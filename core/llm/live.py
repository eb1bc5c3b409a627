"""LLM calls in flight, visible from outside the process that makes them.

A run's proposals and rollouts call their models in worker processes, and one call of a small
model on a CPU can take minutes. Each call in flight is a small JSON file in the directory named by
``AUTOENVSCALING_LIVE_DIR`` (``run``/``generate`` set it to ``<out>/.live``), rewritten at most
once a second while tokens stream in and deleted when the call ends; the command line reads the
directory to show what each call is doing (tokens so far, tokens/s, elapsed). Without the variable
nothing is written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
from pathlib import Path
from typing import Any

LIVE_DIR_ENV = "AUTOENVSCALING_LIVE_DIR"
WRITE_EVERY = 1.0
_ids = itertools.count()


class LiveCall:
    """One call in flight: ``with LiveCall(model) as call: ... call.add_tokens(n)``."""

    def __init__(self, model: str) -> None:
        directory = os.environ.get(LIVE_DIR_ENV)
        self.path = Path(directory) / f"{os.getpid()}-{next(_ids)}.json" if directory else None
        self.model = model
        self.started = time.time()
        self.tokens = 0
        self._written = 0.0

    def __enter__(self) -> LiveCall:
        self._write()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def add_tokens(self, count: int = 1) -> None:
        self.tokens += count
        if time.monotonic() - self._written >= WRITE_EVERY:
            self._write()

    def _write(self) -> None:
        self._written = time.monotonic()
        if self.path is None:
            return
        state = {"model": self.model, "pid": os.getpid(), "started": self.started, "tokens": self.tokens}
        with contextlib.suppress(OSError):  # a live view is best effort: it never fails the call
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(".part")
            partial.write_text(json.dumps(state))
            os.replace(partial, self.path)


def calls_in_flight(directory: Path) -> list[dict[str, Any]]:
    """The calls in flight in ``directory``, oldest first, each with ``elapsed`` (seconds) and
    ``rate`` (tokens/s, None before the first token). Files of processes that are gone are skipped."""
    calls = []
    now = time.time()
    for path in sorted(directory.glob("*.json")):
        try:
            state = json.loads(path.read_text())
            os.kill(int(state["pid"]), 0)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        elapsed = max(0.0, now - float(state["started"]))
        tokens = int(state.get("tokens") or 0)
        calls.append({**state, "elapsed": elapsed, "rate": tokens / elapsed if tokens and elapsed else None})
    return sorted(calls, key=lambda c: c["started"])


def describe(calls: list[dict[str, Any]]) -> str:
    """One line for the calls in flight: ``2 LLM calls: qwen 212 tokens, 37 tok/s, 6 s; ...``."""
    if not calls:
        return "no LLM call in flight"
    parts = []
    for c in calls:
        rate = f", {c['rate']:.0f} tok/s" if c["rate"] else ""
        tokens = f" {c['tokens']} tokens{rate}," if c["tokens"] else ""
        parts.append(f"{c['model']}{tokens} {c['elapsed']:.0f} s")
    return f"{len(calls)} LLM call{'s' if len(calls) > 1 else ''}: " + "; ".join(parts)
