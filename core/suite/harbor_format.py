"""Harbor task directories as an import/export format.

Reads one task directory, a folder of them (task folders at depth one or two, so ``<repo>/tasks/*``
and a suite's own ``tasks/`` are found), or a Harbor dataset: a folder with dataset.toml, whose
``[[tasks]]`` entries say which tasks belong to it and pin their digests. A listed task whose files
no longer match its digest is an error naming the task; folders not listed are not part of the
dataset and are ignored. A pin may be Harbor's content hash (``harbor_digest``: what Harbor and our
exports pin) or our ``Task.digest()`` (a suite's own dataset.toml, and exports made before).

Writes a Harbor dataset that Harbor 0.26 loads (``harbor sync``, ``harbor dataset add``,
``harbor publish``; ``harbor run -p DIR`` runs its task folders): one folder per task plus
dataset.toml in Harbor's schema, every task and the dataset named ``org/name`` and pinned by Harbor's
content hash. It is built in a temporary folder and renamed into place when complete.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import tomllib
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from ..errors import TaskFormatError, UsageError
from ..tasks import Task, is_task_dir, read_task, write_task
from ..tasks.harbor import directory_files, staged_dir, write_synced
from ..tasks.naming import qualified_name, task_org
from .formats import TaskFormat
from .layout import dir_name, placed, unique
from .manifest import MANIFEST, Manifest, ManifestEntry, harbor_name_ok, read_manifest


class HarborFormat(TaskFormat):
    """Harbor task directories / Harbor dataset (dataset.toml)."""

    name = "harbor"
    description = "Harbor task directories, folders of them, and Harbor datasets with dataset.toml"

    def __init__(self, dataset_name: str | None = None, dataset_description: str = "", *,
                 org: str | None = None) -> None:
        # Used when writing dataset.toml; the output folder's name when not given. Harbor wants it as
        # org/name: a bare name is put under ``org``, else the tasks' one org, else ``task_org()``.
        self.dataset_name = dataset_name
        self.dataset_description = dataset_description
        # Tasks named without an org are exported as ``org/<name>``; without ``org`` they are an error.
        self.org = org

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
        yield from map(_read_or_error, folders)

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
            other = None if entry.digest is None else _unlike(entry.digest, folder, task)
            if other is None:
                used.add(folder)
                return task
            seen.append(other)
        return TaskFormatError(
            f"{entry.name}: digest mismatch: dataset.toml pins {entry.digest}, its files give {seen[0]}",
            hint="the task changed after the dataset was written: restore it, re-export the dataset, "
                 "run `harbor sync` on it to pin the files as they are, or import the task directories themselves")

    def write(self, tasks: Iterable[Task], dest: Path) -> Path:
        """Write a Harbor dataset at ``dest`` (which must not exist, or be empty)."""
        dest = Path(dest)
        if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
            raise UsageError(f"{dest}: already exists", hint="choose a new output directory")
        dest.parent.mkdir(parents=True, exist_ok=True)
        with staged_dir(dest) as tmp:
            entries: list[ManifestEntry] = []
            folders: set[str] = set()
            for task in tasks:
                task = self._harbor_named(task, {e.name for e in entries})
                folder = unique(dir_name(task.name), folders.__contains__)
                folders.add(folder)
                stored = placed(task, folder)
                write_task(stored, tmp / folder)
                entries.append(ManifestEntry(name=stored.name, digest=harbor_digest(stored)))
            manifest = Manifest(name=self._dataset_name(dest, entries), description=self.dataset_description,
                                tasks=entries)
            manifest.check_harbor()
            write_synced(tmp / MANIFEST, manifest.render().encode())
        return dest

    def _harbor_named(self, task: Task, taken: set[str]) -> Task:
        """``task`` under the org/name Harbor's dataset.toml needs: its own name, or with ``self.org``
        put in front of a bare one. A name that stays invalid, or that two tasks end up with, is an error."""
        name = task.name
        if not harbor_name_ok(name) and self.org is not None:
            name = qualified_name(name, org=self.org)
        if not harbor_name_ok(name):
            raise TaskFormatError(f"{task.name}: Harbor's dataset.toml lists tasks as org/name",
                                  hint="pass --org ORG to export it as ORG/<name>, "
                                       "or give the task an org/name [task] name")
        if name in taken:
            raise TaskFormatError(f"{task.name}: another exported task is already named {name}",
                                  hint="rename one of them, or export them with different --org values")
        return task if name == task.name else task.renamed(name)

    def _dataset_name(self, dest: Path, entries: list[ManifestEntry]) -> str:
        """The dataset's org/name: as given when it has an org, else put under ``self.org``, the one org
        all tasks share, or ``task_org()``."""
        name = self.dataset_name or dest.name
        if harbor_name_ok(name):
            return name
        orgs = {e.name.split("/", 1)[0] for e in entries}
        return qualified_name(name, org=self.org or (orgs.pop() if len(orgs) == 1 else task_org()))


# -- Harbor's task digest -----------------------------------------------------------------------------
# Harbor 0.26 pins a task by a content hash (harbor/publisher/packager.py, Packager): of task.toml,
# instruction.md, README.md and trajectory.json at the top and every file under environment/, tests/,
# solution/ and steps/, less ignored files, in order of their POSIX path: sha256 over the lines
# "<path>\0<sha256 hex of the file>\n", written "sha256:<hex>". It differs from Task.digest(), which
# covers every file with its executable bit, so both exist.
_HARBOR_TOP = ("task.toml", "instruction.md", "README.md", "trajectory.json")
_HARBOR_TREES = ("environment", "tests", "solution", "steps")
# Harbor's ignores when the task has no .gitignore: these match any part of a path ...
_HARBOR_IGNORED = ("*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")
# ... and this one only a folder on the way to the file.
_HARBOR_IGNORED_DIR = "__pycache__"
_HARBORIGNORE = ".harborignore"
# Where Harbor applies .harborignore rules (also steps/<step>/tests/ and steps/<step>/solution/).
_HARBOR_SCOPED = ("tests", "solution")


def harbor_digest(task: Task) -> str:
    """Harbor's digest ("sha256:<hex>") of ``task`` written as a directory by ``write_task``: what
    Harbor computes for that folder, so Harbor verifies the pins of a dataset we export."""
    return _harbor_hash(task.name, {path: _reader(data) for path, (data, _) in directory_files(task).items()})


def _reader(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def harbor_dir_digest(folder: Path) -> str:
    """Harbor's digest of the task directory ``folder`` as it is on disk (files a task never holds,
    such as links, included as Harbor includes them), for checking the pins of a dataset."""
    folder = Path(folder)
    files: dict[str, Callable[[], bytes]] = {}
    for name in _HARBOR_TOP:
        if (folder / name).is_file():
            files[name] = (folder / name).read_bytes
    for tree in _HARBOR_TREES:
        for dirpath, _dirnames, filenames in os.walk(folder / tree):  # like Harbor: no linked folders
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_file():
                    files[path.relative_to(folder).as_posix()] = path.read_bytes
    if (folder / ".gitignore").is_file():
        files[".gitignore"] = (folder / ".gitignore").read_bytes
    return _harbor_hash(folder.name, files)


def _harbor_hash(where: str, files: Mapping[str, Callable[[], bytes]]) -> str:
    """Harbor's content hash over ``files`` (task-relative POSIX path -> its bytes, read on demand)."""
    defaults = _default_ignores_apply(where, files)
    outer = hashlib.sha256()
    for path in sorted(p for p in files if _harbor_hashes(p, defaults)):
        outer.update(f"{path}\0{hashlib.sha256(files[path]()).hexdigest()}\n".encode())
    return "sha256:" + outer.hexdigest()


def _harbor_hashes(path: str, defaults: bool) -> bool:
    """Whether Harbor's digest covers the task file at ``path``; ``defaults``: Harbor's default ignores apply."""
    parts = path.split("/")
    if len(parts) == 1:
        selected = path in _HARBOR_TOP
    else:
        selected = parts[0] in _HARBOR_TREES and _HARBORIGNORE not in parts
    ignored = defaults and (_HARBOR_IGNORED_DIR in parts[:-1] or any(
        fnmatch.fnmatchcase(part, pattern) for part in parts for pattern in _HARBOR_IGNORED))
    return selected and not ignored


def _default_ignores_apply(where: str, files: Mapping[str, Callable[[], bytes]]) -> bool:
    """Whether Harbor's default ignores apply (the task has no .gitignore; an empty one turns them off).
    Tasks whose own ignore rules would change the digest are refused: a top-level .gitignore with rules,
    or a .harborignore with rules under tests/ or solution/. Harbor applies them with gitignore matching,
    which we do not reproduce, and a wrong digest is worse than none."""
    for path, read in files.items():
        parts = path.split("/")
        scoped = parts[0] in _HARBOR_SCOPED or (parts[0] == "steps" and len(parts) > 3 and parts[2] in _HARBOR_SCOPED)
        if _HARBORIGNORE in parts[:-1] and scoped:
            raise TaskFormatError(f"{where}/{path}: inside a folder named {_HARBORIGNORE}, which Harbor refuses",
                                  hint=f"rename the folder: {_HARBORIGNORE} must be a file of ignore rules")
        if parts[-1] == _HARBORIGNORE and scoped and _has_rules(read()):
            raise TaskFormatError(f"{where}/{path}: .harborignore rules change Harbor's digest of the task",
                                  hint="delete the files it excludes and empty the .harborignore")
    if ".gitignore" not in files:
        return True
    if _has_rules(files[".gitignore"]()):
        raise TaskFormatError(f"{where}: has a .gitignore, whose rules change Harbor's digest of the task",
                              hint="delete the task's .gitignore (Harbor then ignores only editor and cache files)")
    return False


def _has_rules(data: bytes) -> bool:
    """Whether gitignore-style text has a pattern (a line neither blank nor a # comment)."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    return any(line.strip() and not line.startswith("#") for line in lines)


def _unlike(pin: str, folder: Path, task: Task) -> str | None:
    """None when ``pin`` is a digest ``folder`` may be pinned with: Harbor's (what Harbor and our exports
    pin) or ``Task.digest()`` (a suite's own dataset.toml, older exports). Else the digest to report
    (Harbor's, when it can be computed)."""
    try:
        harbor: str | None = harbor_dir_digest(folder)
    except TaskFormatError:
        harbor = None  # its own ignore rules: ours may still be the pin
    if pin == harbor:
        return None
    own = task.digest()
    return None if pin == own else harbor or own


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
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError, OSError, RecursionError):
        name = None
    return name if isinstance(name, str) and name else folder.name


def _read_or_error(folder: Path) -> Task | TaskFormatError:
    try:
        return read_task(folder)
    except TaskFormatError as exc:
        return exc
