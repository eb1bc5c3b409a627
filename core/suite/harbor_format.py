"""Harbor task directories as an import/export format.

Reads one task directory, a folder of them (task folders at depth one or two, so ``<repo>/tasks/*``
and a suite's own ``tasks/`` are found), or a Harbor dataset: a folder with dataset.toml, whose
``[[tasks]]`` entries say which tasks belong to it and pin their digests. A listed task whose files
no longer match its digest is an error naming the task; folders not listed are not part of the
dataset and are ignored. Writes a Harbor dataset: one folder per task plus dataset.toml, the layout
``harbor run -p DIR`` consumes, built in a temporary folder and renamed into place when complete.
"""

from __future__ import annotations

import os
import shutil
import tomllib
import uuid
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import TaskFormatError, UsageError
from ..tasks import Task, is_task_dir, read_task, write_task
from .formats import TaskFormat
from .layout import dir_name, fsync_dir, placed, unique
from .manifest import MANIFEST, Manifest, ManifestEntry, read_manifest


class HarborFormat(TaskFormat):
    """Harbor task directories / Harbor dataset (dataset.toml)."""

    name = "harbor"
    description = "Harbor task directories, folders of them, and Harbor datasets with dataset.toml"

    def __init__(self, dataset_name: str | None = None, dataset_description: str = "") -> None:
        # Used when writing dataset.toml; the output folder's name when not given.
        self.dataset_name = dataset_name
        self.dataset_description = dataset_description

    def detect(self, path: Path) -> bool:
        path = Path(path)
        return path.is_dir() and (is_task_dir(path) or (path / MANIFEST).is_file() or bool(task_folders(path)))

    def count(self, path: Path) -> int | None:
        path = Path(path)
        if is_task_dir(path):
            return 1
        if (path / MANIFEST).is_file():
            try:
                return len(read_manifest(path / MANIFEST).tasks)
            except TaskFormatError:
                return None
        return len(task_folders(path))

    def read(self, path: Path) -> Iterator[Task]:
        for item in self.scan(path):
            if isinstance(item, TaskFormatError):
                raise item
            yield item

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        path = Path(path)
        if not path.is_dir():
            yield TaskFormatError(f"{path}: not a directory", hint="pass a Harbor task directory or a folder of them")
            return
        if is_task_dir(path):
            yield _read_or_error(path)
            return
        if (path / MANIFEST).is_file():
            yield from self._scan_dataset(path)
            return
        folders = task_folders(path)
        if not folders:
            yield TaskFormatError(f"{path}: no Harbor task directories found",
                                  hint="a task directory has task.toml at its top")
        for folder in folders:
            yield _read_or_error(folder)

    def _scan_dataset(self, path: Path) -> Iterator[Task | TaskFormatError]:
        try:
            manifest = read_manifest(path / MANIFEST)
        except TaskFormatError as exc:
            yield exc
            return
        # Map names to folders from task.toml alone, then read in full only the listed tasks.
        by_name: dict[str, list[Path]] = {}
        for folder in task_folders(path):
            by_name.setdefault(_declared_name(folder), []).append(folder)
        used: set[Path] = set()
        for entry in manifest.tasks:
            candidates = [f for f in by_name.get(entry.name, []) if f not in used]
            if not candidates:
                yield TaskFormatError(f"{entry.name}: listed in {path.name}/{MANIFEST} but no task directory has that name",
                                      hint="restore the task directory or remove its [[tasks]] entry")
                continue
            yield self._matching(entry, candidates, used)

    @staticmethod
    def _matching(entry: ManifestEntry, candidates: list[Path], used: set[Path]) -> Task | TaskFormatError:
        """The candidate whose digest is the one pinned (several folders may share a name)."""
        seen: list[str] = []
        for folder in candidates:
            try:
                task = read_task(folder)
            except TaskFormatError as exc:
                return exc
            digest = task.digest()
            if entry.digest is None or digest == entry.digest:
                used.add(folder)
                return task
            seen.append(digest)
        return TaskFormatError(
            f"{entry.name}: digest mismatch: dataset.toml pins {entry.digest}, its files give {seen[0]}",
            hint="the task changed after the dataset was written, or another tool hashed it differently: "
                 "restore it, re-export the dataset, or import the task directories themselves")

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        """Write a Harbor dataset at ``dest`` (which must not exist, or be empty)."""
        dest = Path(dest)
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise UsageError(f"{dest}: already exists", hint="choose a new output directory")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.parent / f".{dest.name}.tmp-{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir()
            entries: list[ManifestEntry] = []
            folders: set[str] = set()
            for task in tasks:
                folder = unique(dir_name(task.name), folders)
                folders.add(folder)
                stored = placed(task, folder)
                write_task(stored, tmp / folder)
                entries.append(ManifestEntry(name=stored.name, digest=stored.digest()))
            manifest = Manifest(name=self.dataset_name or dest.name, description=self.dataset_description, tasks=entries)
            with open(tmp / MANIFEST, "w", encoding="utf-8") as fh:
                fh.write(manifest.render())
                fh.flush()
                os.fsync(fh.fileno())
            fsync_dir(tmp)
            if dest.exists():
                dest.rmdir()
            tmp.rename(dest)
            fsync_dir(dest.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return dest


def task_folders(path: Path) -> list[Path]:
    """Task directories at depth one or two under ``path`` (hidden folders skipped), sorted."""
    found: list[Path] = []
    for child in _subdirs(path):
        if is_task_dir(child):
            found.append(child)
        else:
            found.extend(grandchild for grandchild in _subdirs(child) if is_task_dir(grandchild))
    return found


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith("."))
    except OSError:
        return []


def _declared_name(folder: Path) -> str:
    """The name ``read_task`` will give the folder's task ([task] name, else the folder's name)."""
    try:
        name = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8")).get("task", {}).get("name")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError, OSError):
        name = None
    return name if isinstance(name, str) and name else folder.name


def _read_or_error(folder: Path) -> Task | TaskFormatError:
    try:
        return read_task(folder)
    except TaskFormatError as exc:
        return exc
