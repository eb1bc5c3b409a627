"""Harbor's dataset.toml: a dataset's name and description and one ``[[tasks]]`` entry per task with
its name and a content digest ("sha256:<hex>").

Harbor 0.26's schema (``harbor.models.dataset.manifest.DatasetManifest``): an optional top-level
``schema_version`` ("1.0"); ``[dataset]`` with ``name`` (required, ``org/name``), optional ``version``,
``description``, ``authors`` and ``keywords``; ``[[tasks]]`` entries with ``name`` (``org/name``) and
``digest`` (both required); optional ``[[files]]`` (``path`` + ``digest``) and ``[metadata]``. Harbor
matches an entry to the task folder whose task.toml has that ``[task] name`` and pins Harbor's own
content hash of the folder (``harbor_digest`` in harbor_format.py).

Two writers use this file. ``suite export --format harbor`` writes Harbor's form and checks it with
``check_harbor`` first. A suite's own dataset.toml (store.py) pins ``Task.digest()`` and may name
tasks without an org; it and exports made before we pinned Harbor's digest are still read (the
reader accepts either digest). Both read the same: unknown tables and keys are ignored.
Rendering is done by hand (not tomlkit) because a suite rewrites this file after every admission:
it must stay cheap for tens of thousands of entries.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import TaskFormatError
from ..tasks.naming import is_harbor_name

MANIFEST = "dataset.toml"
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class ManifestEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    digest: str | None = None


class Manifest(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    tasks: list[ManifestEntry] = Field(default_factory=list)

    def render(self) -> str:
        lines = ['schema_version = "1.0"', "", "[dataset]", f"name = {_toml_str(self.name)}",
                 f"description = {_toml_str(self.description)}"]
        for entry in self.tasks:
            lines += ["", "[[tasks]]", f"name = {_toml_str(entry.name)}"]
            if entry.digest is not None:
                lines.append(f"digest = {_toml_str(entry.digest)}")
        return "\n".join(lines) + "\n"

    def check_harbor(self) -> None:
        """Raise TaskFormatError unless Harbor would load this manifest: the dataset and every task
        named ``org/name`` (no ``..``), and every task pinned by a well-formed digest."""
        if not harbor_name_ok(self.name):
            raise TaskFormatError(f"dataset name {self.name!r} is not org/name, which Harbor's dataset.toml requires",
                                  hint="name the dataset ORG/NAME (suite export: pass --org ORG)")
        for entry in self.tasks:
            if not harbor_name_ok(entry.name):
                raise TaskFormatError(f"{entry.name}: Harbor's dataset.toml lists tasks as org/name",
                                      hint="pass --org ORG to export it as ORG/<name>, or name the task org/name")
            if entry.digest is None or not _DIGEST.match(entry.digest):
                raise TaskFormatError(f"{entry.name}: no digest, which Harbor's dataset.toml requires",
                                      hint='pin every task with digest = "sha256:<64 hex digits>"')


def harbor_name_ok(name: str) -> bool:
    """Whether Harbor accepts ``name`` as a dataset or task name in dataset.toml (org/name, no "..")."""
    return is_harbor_name(name) and ".." not in name


def read_manifest(path: Path) -> Manifest:
    """Parse ``path`` (a dataset.toml). Raises TaskFormatError with a one-line reason."""
    where = f"{path.parent.name}/{path.name}"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{where}: malformed TOML: {exc}", hint="fix the TOML syntax") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise TaskFormatError(f"{where}: malformed TOML: nested too deeply", hint="fix the TOML syntax") from None
    dataset = raw.get("dataset", {})
    tasks = raw.get("tasks", [])
    if not isinstance(dataset, dict) or not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise TaskFormatError(f"{where}: expected a [dataset] table and [[tasks]] entries",
                              hint="see Harbor's dataset manifest format")
    entries = []
    for i, item in enumerate(tasks, 1):
        name, digest = item.get("name"), item.get("digest")
        if not isinstance(name, str) or not name:
            raise TaskFormatError(f"{where}: task entry {i} has no name", hint="each [[tasks]] entry needs name")
        if digest is not None and (not isinstance(digest, str) or not _DIGEST.match(digest)):
            raise TaskFormatError(f"{where}: task {name!r} has a malformed digest {digest!r}",
                                  hint='digests look like "sha256:<64 hex digits>"')
        entries.append(ManifestEntry(name=name, digest=digest))
    return Manifest(name=str(dataset.get("name") or path.parent.name),
                    description=str(dataset.get("description") or ""), tasks=entries)


def _toml_str(value: str) -> str:
    # A JSON string is a valid TOML basic string except that TOML also forbids a raw DEL.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
