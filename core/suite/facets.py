"""The facets of a task that suites filter and count by.

Our own tasks carry them in ``[metadata.autoenvscaling]`` (the provenance); tasks written elsewhere
(Terminal-Bench, the Harbor cookbook) carry some of them as plain ``[metadata]`` keys
(``difficulty``, ``category``, ``tags``) or as ``[task] keywords``. Both are read so that an imported
Harbor dataset can be filtered the same way as a generated one. Provenance wins where both exist.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..tasks import Provenance, Task, render_config


class Facets(BaseModel):
    """What the index stores beside a task's digest (all optional: imported tasks may lack them)."""

    model_config = ConfigDict(frozen=True)

    domain: str | None = None
    family: str | None = None
    difficulty: str | None = None
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    proposer: str | None = None
    round: int | None = None
    parent: str | None = None
    instruction_chars: int = 0
    size_bytes: int = 0


def facets_of(task: Task) -> Facets:
    """The facets of ``task``, from its provenance first and its plain [metadata] second."""
    try:
        prov = task.provenance
    except ValidationError:  # malformed provenance: the lint gate reports it; here it just has no facets
        prov = Provenance()
    meta = task.config.metadata
    tags = list(dict.fromkeys([*_strings(meta.get("tags")), *task.config.task.keywords]))
    instruction = task.instruction or ""
    size = len(render_config(task).encode()) + len(instruction.encode()) + sum(len(f.data) for f in task.files.values())
    # A multi-step task may have no top-level instruction: its agent reads one per step.
    chars = len(instruction) if task.instruction is not None else sum(len(task.step_instruction(s)) for s in task.steps)
    return Facets(domain=prov.domain or _string(meta.get("domain")), family=prov.family or _string(meta.get("family")),
                  difficulty=prov.difficulty or _string(meta.get("difficulty")), category=_string(meta.get("category")),
                  tags=tags, proposer=prov.proposer, round=prov.round, parent=prov.parent, instruction_chars=chars,
                  size_bytes=size)


def _string(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float))]
    return []
