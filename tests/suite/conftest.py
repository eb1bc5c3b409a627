"""Small real tasks for suite tests, built in memory (the cookbook tasks cover real-world files)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from autoenvscaling.tasks import Task, TaskFile


def build_task(name: str, body: str = "", *, domain: str | None = None, family: str | None = None,
               difficulty: str | None = None, tags: list[str] | None = None, proposer: str | None = None,
               instruction: str | None = None) -> Task:
    """A complete little Harbor task whose content depends on ``body``."""
    metadata: dict[str, object] = {}
    if tags is not None:
        metadata["tags"] = tags
    task = Task.create(
        name,
        {"version": "1.0", "verifier": {"timeout_sec": 30.0}, "metadata": metadata},
        instruction if instruction is not None else f"Write {body or name!r} to /app/out.txt.\n",
        {
            "environment/Dockerfile": "FROM debian:bookworm-slim\nWORKDIR /app\n",
            "tests/test.sh": f"#!/bin/bash\ngrep -qx '{body or name}' /app/out.txt && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n",
            "solution/solve.sh": f"#!/bin/bash\necho '{body or name}' > /app/out.txt\n",
            "environment/blob.bin": TaskFile(data=bytes(range(256)) + body.encode(), executable=False),
        },
    )
    if any(v is not None for v in (domain, family, difficulty, proposer)):
        task = task.with_provenance(domain=domain, family=family, difficulty=difficulty, proposer=proposer)
    return task


@pytest.fixture
def make_task() -> Callable[..., Task]:
    return build_task


def tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file under ``root``: relative path -> (bytes, executable)."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def file_tree() -> Callable[[Path], dict[str, tuple[bytes, bool]]]:
    return tree
