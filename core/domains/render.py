"""Rendering a domain's draft into a Harbor task, written once for every domain.

``render_task`` builds the task.toml every generated task shares (schema 1.1, ``org/name``, the
domain's author line, difficulty/category/tags metadata, the verifier, agent and environment
tables the domain chooses) and records the provenance; ``package_reader`` reads the verifier and
solution files a plugin ships as package data; ``toml_safe`` drops the None values TOML cannot hold.

    from autoenvscaling.domains.render import package_reader, render_task

    package_text = package_reader(__package__)

    def render(family, draft, *, seed, level):
        return render_task(domain="my_domain", family=family, seed=seed, difficulty=label_of(level),
                           name=f"my-domain-{family}-l{level}-s{seed}", description=draft.summary,
                           instruction=draft.instruction, files={**draft.files, "tests/test.sh": package_text("verifier", "test.sh")},
                           tags=[family], verifier={"timeout_sec": 120.0}, agent={"timeout_sec": 600.0},
                           environment={"cpus": 1, "memory_mb": 1024}, parameters={"level": level})
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Mapping, Sequence

from ..tasks import Task, TaskFile, qualified_name

LABELS = {1: "easy", 2: "medium", 3: "hard"}


def label_of(level: int) -> str:
    """The difficulty label of a numeric level: easy at or below 1, hard at or above 3."""
    return LABELS[min(max(level, 1), 3)]


def grow(level: int, base: int, factor: float = 1.6) -> int:
    """A size that grows geometrically with the level (level 1 gives ``base``)."""
    return max(1, round(base * factor ** (level - 1)))


def package_reader(package: str) -> Callable[..., str]:
    """``read(*parts)``: the text of a file ``package`` ships (``read("verifier", "test.sh")``), cached."""

    @lru_cache(maxsize=None)
    def read(*parts: str) -> str:
        return resources.files(package).joinpath(*parts).read_text(encoding="utf-8")

    return read


def toml_safe(value: Any) -> Any:
    """``value`` without None entries, recursively (TOML has no null)."""
    if isinstance(value, dict):
        return {k: toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [toml_safe(v) for v in value if v is not None]
    return value


def render_task(*, domain: str, family: str, seed: int | None, difficulty: str, name: str, description: str,
                instruction: str, files: Mapping[str, bytes | str | TaskFile], tags: Sequence[str],
                verifier: Mapping[str, Any], agent: Mapping[str, Any], environment: Mapping[str, Any],
                keywords: Sequence[str] | None = None, category: str | None = None,
                metadata: Mapping[str, Any] | None = None, parameters: Mapping[str, Any] | None = None,
                **provenance: Any) -> Task:
    """A generated task of ``domain``: ``name`` is qualified as ``org/name``; ``keywords`` default to
    the tags; ``category`` to the domain; ``metadata`` adds tables beside difficulty/category/tags;
    ``parameters`` (None values dropped) and any other keyword (``asks``, ``public_files``) go to the
    provenance with the family, seed and difficulty."""
    qualified = qualified_name(name)
    config = {
        "schema_version": "1.1",
        "task": {"name": qualified, "description": description, "keywords": list(keywords if keywords is not None else tags),
                 "authors": [{"name": f"autoenvscaling-{domain.replace('_', '-')}"}]},
        "metadata": {"difficulty": difficulty, "category": category or domain, "tags": list(tags), **(metadata or {})},
        "verifier": dict(verifier),
        "agent": dict(agent),
        "environment": dict(environment),
    }
    task = Task.create(qualified, config, instruction, dict(files))
    return task.with_provenance(domain=domain, family=family, parameters=toml_safe(dict(parameters or {})),
                                seed=seed, difficulty=difficulty, **provenance)
