"""A trial's artifacts: the paths a task's ``artifacts`` (top-level and per step) name, collected from
the sandbox after verification into the trial's result.

Only regular files and directories are taken. The archive of each path is made by the backend and
read here in memory: a symbolic link (the source itself, or one inside a directory) is recorded as
skipped and never followed, so a link the agent planted to a host path (or anywhere) brings nothing
back. Sizes are capped per trial (``ARTIFACTS_LIMIT``); what does not fit is recorded as skipped.
``write_artifacts`` puts the collected files under a folder with a ``manifest.json``.
"""

from __future__ import annotations

import base64
import fnmatch
import io
import json
import os
import posixpath
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer, field_validator

from ..errors import AESError
from ..sandbox.base import Sandbox
from ..tasks.config import ArtifactConfig

ARTIFACTS_LIMIT = 8 << 20  # bytes of artifact content one trial keeps, all files together
ARTIFACT_ENTRIES = 1000  # files (and skipped entries) one trial records


class Artifact(BaseModel):
    """One collected file (``data``), or one entry that was not (``skipped`` says why). ``path`` is
    where it goes under the trial's artifacts (posix, relative); ``source`` the sandbox path."""

    model_config = ConfigDict(frozen=True)

    path: str
    source: str
    size: int = 0
    data: bytes | None = None
    skipped: str | None = None

    @field_serializer("data", when_used="json")
    def _data_b64(self, data: bytes | None) -> str | None:
        return None if data is None else base64.b64encode(data).decode("ascii")

    @field_validator("data", mode="before")
    @classmethod
    def _data_from_b64(cls, value: Any) -> Any:
        return base64.b64decode(value) if isinstance(value, str) else value


def destination_of(spec: ArtifactConfig) -> str:
    """Where a source goes: its ``destination``, else its path without the leading "/"."""
    return spec.destination.strip("/") if spec.destination else posixpath.normpath(spec.source).lstrip("/") or "root"


async def collect_artifacts(sandbox: Sandbox, specs: list[ArtifactConfig], *, prefix: str = "",
                            budget: int = ARTIFACTS_LIMIT) -> list[Artifact]:
    """The files of ``specs`` in the sandbox (relative sources from its workdir), each under
    ``prefix``/destination. Compose sidecars' artifacts (``service``) are recorded as skipped."""
    out: list[Artifact] = []
    for spec in specs:
        dest = posixpath.join(prefix, destination_of(spec)) if prefix else destination_of(spec)
        source = posixpath.normpath(posixpath.join(sandbox.workdir, spec.source))
        if not spec.main:
            out.append(Artifact(path=dest, source=source, skipped=f"service {spec.service!r}: compose sidecars' "
                                                                     "artifacts are not collected"))
            continue
        try:
            data = await sandbox.get_archive(source)
        except (FileNotFoundError, AESError) as exc:
            why = exc.message if isinstance(exc, AESError) else "missing"
            out.append(Artifact(path=dest, source=source, skipped=why))
            continue
        got = _members(data, source, dest, spec.exclude, budget)
        budget -= sum(a.size for a in got if a.data is not None)
        out += got
        if len(out) >= ARTIFACT_ENTRIES:
            return out[:ARTIFACT_ENTRIES]
    return out


def _members(data: bytes, source: str, dest: str, exclude: list[str], budget: int) -> list[Artifact]:
    """The regular files of one source's archive (its top member is the source's own name)."""
    out: list[Artifact] = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            rel = PurePosixPath(*parts[1:]).as_posix() if len(parts) > 1 else ""
            if any(p in ("..", "/") for p in parts):
                out.append(Artifact(path=dest, source=source, skipped=f"unsafe member name {member.name!r}"))
                continue
            if rel and any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(PurePosixPath(rel).name, pat)
                           for pat in exclude):
                continue
            path = posixpath.join(dest, rel) if rel else dest
            where = posixpath.join(source, rel) if rel else source
            if member.isdir():
                continue
            if not member.isfile():
                kind = "symbolic link" if member.issym() else "hard link" if member.islnk() else "not a regular file"
                out.append(Artifact(path=path, source=where, skipped=f"{kind}: not followed"))
                continue
            if member.size > budget:
                out.append(Artifact(path=path, source=where, size=member.size,
                                    skipped=f"over the artifacts size limit ({max(budget, 0)} bytes left)"))
                continue
            fh = tar.extractfile(member)
            content = fh.read() if fh is not None else b""
            budget -= len(content)
            out.append(Artifact(path=path, source=where, size=len(content), data=content))
            if len(out) >= ARTIFACT_ENTRIES:
                break
    return out


def write_artifacts(artifacts: list[Artifact], folder: Path) -> Path:
    """Write the collected files under ``folder`` and a ``manifest.json`` listing every entry
    (collected or skipped). Never writes through a link: a path whose parent is not a plain folder
    of ``folder``'s tree is left out. Returns the manifest's path."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    manifest: list[dict[str, Any]] = []
    for artifact in artifacts:
        entry = artifact.model_dump(mode="json", exclude={"data"})
        target = root / artifact.path
        if artifact.data is not None:
            if artifact.path == "manifest.json" or not _inside(root, target):
                entry["skipped"] = "unsafe destination"
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(artifact.data)
        manifest.append(entry)
    path = root / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2))
    return path


def _inside(root: Path, target: Path) -> bool:
    """Whether ``target`` lies under ``root`` with no link among its existing parents."""
    try:
        rel = target.relative_to(root)
    except ValueError:
        return False
    current = root
    for part in rel.parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            return False
    return ".." not in rel.parts and bool(rel.parts)
