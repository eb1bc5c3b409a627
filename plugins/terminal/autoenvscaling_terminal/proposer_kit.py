"""The proposer kit of the terminal domain: what an LLM proposer reads before writing a task.

``guide.md`` explains what makes a good terminal task and how ours are built; ``contract.md`` is the
task-directory contract every proposed task must satisfy to pass admission; the worked examples are
complete task directories produced by three of our generators (``EXAMPLES``), stored as package
data. ``python -m autoenvscaling_terminal.proposer_kit`` rewrites them after a generator changes (a test
checks they are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autoenvscaling.domains.base import ProposerKit
from autoenvscaling.domains.kit import kit_dir, package_kit, write_examples

#: (family, seed, difficulty, kind) of each worked example
EXAMPLES = [("log_analysis", 3, "medium", "app_errors"), ("git_ops", 5, "hard", "restore_file"), ("shell_script", 2, "easy", "stats")]


def example_tasks() -> list:
    from .domain import TerminalDomain

    domain = TerminalDomain()
    return [domain.generate(f, seed=s, difficulty=d, kind=k) for f, s, d, k in EXAMPLES]


def proposer_kit() -> ProposerKit:
    return package_kit(__package__)


def refresh_examples(dest: Path | None = None) -> list[Path]:
    """Write the worked examples (as generated now) under ``dest`` (default: the package's kit)."""
    return write_examples(example_tasks(), Path(dest) if dest else kit_dir(__package__) / "examples")


if __name__ == "__main__":
    for path in refresh_examples(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(path)
