"""Harbor's dataset.toml: a dataset's name and description and one ``[[tasks]]`` entry per task with
its name and content digest ("sha256:<hex>", from ``Task.digest()``).

Harbor's manifest also has a top-level ``schema_version``; we write "1.0" and accept files without it.
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


def read_manifest(path: Path) -> Manifest:
    """Parse ``path`` (a dataset.toml). Raises TaskFormatError with a one-line reason."""
    where = f"{path.parent.name}/{path.name}"
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"{where}: malformed TOML: {exc}", hint="fix the TOML syntax") from None
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
