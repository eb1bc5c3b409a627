"""The proposer kit of the professional domain: what an LLM proposer reads before writing a task.

``kit/guide.md`` explains what makes a good document-workspace task and how ours are built;
``kit/contract.md`` is what a proposed task must satisfy to pass admission (the core gates plus
professional-lint and professional-controls); the worked examples are complete task directories
from two of our generators (``EXAMPLES``), stored as package data. ``python -m
autoenvscaling_professional.proposer_kit`` rewrites them after a generator changes (a test checks
they are current).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autoenvscaling.domains.base import ProposerKit
from autoenvscaling.domains.kit import kit_dir, package_kit, write_examples

#: (family, seed, difficulty) of each worked example
EXAMPLES = [("summary_formulas", 4, "medium"), ("memo_docx", 2, "easy")]


def example_tasks() -> list:
    from .domain import ProfessionalDomain

    domain = ProfessionalDomain()
    return [domain.generate(f, seed=s, difficulty=d) for f, s, d in EXAMPLES]


def proposer_kit() -> ProposerKit:
    return package_kit(__package__)


def refresh_examples(dest: Path | None = None) -> list[Path]:
    """Write the worked examples (as generated now) under ``dest`` (default: the package's kit)."""
    return write_examples(example_tasks(), Path(dest) if dest else kit_dir(__package__) / "examples")


if __name__ == "__main__":
    for path in refresh_examples(Path(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(path)
