"""Shared helpers of the terminal plugin's tests: the sample of generated tasks and workload
measures used by several test modules."""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from functools import lru_cache

from autoenvscaling.tasks import Task
from autoenvscaling_terminal.domain import TerminalDomain
from autoenvscaling_terminal.families import CATALOG

DIFFICULTIES = ("easy", "medium", "hard")


@lru_cache(maxsize=1)
def domain() -> TerminalDomain:
    return TerminalDomain()


def suite_specs(n: int = 300) -> list[tuple[str, int, str]]:
    """``n`` (family, seed, difficulty) triples spread evenly over families and difficulties."""
    families = list(CATALOG)
    return [(families[i % len(families)], 1000 + i, DIFFICULTIES[(i // len(families)) % 3]) for i in range(n)]


@lru_cache(maxsize=4)
def suite(n: int = 300) -> tuple[Task, ...]:
    return tuple(domain().generate(f, seed=s, difficulty=d) for f, s, d in suite_specs(n))


def solve_commands(task: Task) -> int:
    """Commands in solution/solve.sh: non-blank lines outside heredocs, minus comments and the
    standard prologue (shebang, set, cd /app). Lines of an embedded script count as one command."""
    count, heredoc = 0, None
    for line in task.files["solution/solve.sh"].text.splitlines():
        stripped = line.strip()
        if heredoc is not None:
            if stripped == heredoc:
                heredoc = None
            continue
        if not stripped or stripped.startswith("#") or stripped in ("set -eu", "cd /app"):
            continue
        m = re.search(r"<<-?'?(\w+)'?", stripped)
        if m:
            heredoc = m.group(1)
        count += 1
    return count


def data_bytes(task: Task) -> int:
    """Bytes of input the environment holds, compressed files counted uncompressed, plus the
    build-time setup (a git history, a database script) and the hidden cases the checks run."""
    total = 0
    for path, f in task.files.items():
        if not (path.startswith("environment/") or path == "tests/test_outputs.py"):
            continue
        data = f.data
        for suffix, opener in ((".gz", gzip.decompress), (".xz", lzma.decompress), (".bz2", bz2.decompress)):
            if path.endswith(suffix):
                data = opener(data)
        total += len(data)
    return total
