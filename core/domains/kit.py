"""Proposer kits shipped as package data: ``<package>/kit/guide.md``, ``kit/contract.md`` and worked
examples under ``kit/examples/<task>/``, written from the domain's own generators and refreshed
with ``write_examples`` when a generator changes (each plugin's tests check they are current)."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path
from typing import Iterable

from ..tasks import Task, short_name, write_task
from .base import ProposerKit


def kit_dir(package: str) -> Path:
    return Path(str(resources.files(package).joinpath("kit")))


def package_kit(package: str) -> ProposerKit:
    """The kit stored in ``package``'s kit/ folder."""
    root = kit_dir(package)
    examples = sorted(p for p in (root / "examples").iterdir() if p.is_dir())
    return ProposerKit(guide=(root / "guide.md").read_text(encoding="utf-8"),
                       contract=(root / "contract.md").read_text(encoding="utf-8"), examples=examples)


def write_examples(tasks: Iterable[Task], dest: Path) -> list[Path]:
    """Replace ``dest`` with one task directory per task."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    return [write_task(task, dest / short_name(task.name)) for task in tasks]
