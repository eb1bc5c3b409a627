"""The suite store: Harbor task directories, Harbor's dataset.toml and our SQLite index, kept
consistent across crashes.

Layout::

    <suite>/tasks/<folder>/   one Harbor task directory per task (written atomically by write_task)
    <suite>/dataset.toml      Harbor's manifest, regenerated from the index (temp + fsync + rename)
    <suite>/index.sqlite      the index (WAL); other components may add their own tables
    <suite>/.lock             flock'd by every writer; the kernel drops it when a writer dies
    <suite>/quarantine/       task folders found unreadable on open, moved out of the suite

An add runs, under the lock: (1) commit an index row in state "pending" carrying the caller's key,
(2) write the task directory atomically, (3) flip the row to "ready", (4) rewrite dataset.toml.
Opening the store resolves whatever a kill left behind: temporary folders are deleted, a pending
row whose directory made it becomes ready (else it is dropped, and the caller's retry adds the task
again), ready rows without a directory are dropped, directories without a row are indexed (or moved
to quarantine when unreadable, or deleted when they duplicate a stored task), and a stale
dataset.toml is rewritten. So a writer can be killed at any instruction and simply rerun: keys and
digests make every add idempotent, and nothing is lost or stored twice.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
import shutil
import sqlite3
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import SuiteError, TaskFormatError
from ..tasks import Task, read_task, write_task
from .facets import facets_of
from .index import SuiteIndex
from .layout import atomic_write, dir_name, placed, unique
from .manifest import MANIFEST, Manifest, ManifestEntry
from .records import UNVALIDATED, AddResult, SuiteStats, TaskFilter, TaskRecord
from .stats import suite_stats

INDEX = "index.sqlite"
TASKS = "tasks"
LOCK = ".lock"
QUARANTINE = "quarantine"
# Temporary names: write_task's ".<name>.tmp-*" and ".<name>.old-*", our ".<name>.trash-*".
_TEMP_MARKERS = (".tmp-", ".old-", ".trash-")
# What a folder may already hold for a suite to be created in it (a suite whose index was lost).
_ADOPTABLE = {TASKS, MANIFEST, INDEX, LOCK, QUARANTINE}


class SuiteStore:
    """A suite on disk. ``SuiteStore(path)`` creates the suite if needed and opens it;
    ``SuiteStore.open(path)`` only opens an existing one (SuiteError otherwise)."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, name: str | None = None,
                 description: str | None = None) -> None:
        self.root = Path(path).resolve()
        # A suite whose index was lost (tasks/ and dataset.toml remain) still opens: the index is rebuilt.
        if not (self.root / INDEX).is_file() and not ((self.root / TASKS).is_dir() and (self.root / MANIFEST).is_file()):
            if not create:
                raise SuiteError(f"no suite at {self.root}",
                                 hint=f"create one with `autoenvscaling suite import SRC --into {path}`")
            _check_creatable(self.root)
        self.tasks_dir = self.root / TASKS
        self.tasks_dir.mkdir(parents=True, exist_ok=True)
        self._mutex = threading.RLock()
        self._lock_fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        self._depth = 0  # nesting of _locked() in this process (flock itself is not counted)
        self._batching = 0
        self._manifest_dirty = False
        try:
            # Under the suite's lock: two processes creating the index at once can meet while one
            # switches it to WAL, and that fails with "database is locked" without waiting.
            with self._locked():
                self.index = SuiteIndex(self.root / INDEX)
        except sqlite3.DatabaseError as exc:
            os.close(self._lock_fd)
            raise SuiteError(f"{self.root / INDEX}: unreadable index ({exc})",
                             hint="move it aside: the index is rebuilt from the task folders on the next open") from None
        with self._locked():
            for key, given, default in (("name", name, self.root.name), ("description", description, "")):
                if given is not None or self.index.meta(key) is None:
                    self.index.set_meta(key, given or default)
            self._reconcile()

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "SuiteStore":
        return cls(path, create=False)

    def close(self) -> None:
        with self._mutex:
            if self._lock_fd >= 0:
                self.index.close()
                os.close(self._lock_fd)
                self._lock_fd = -1

    def __enter__(self) -> "SuiteStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.index.meta("name") or self.root.name

    @property
    def description(self) -> str:
        return self.index.meta("description") or ""

    @property
    def db(self) -> Any:
        """The index's sqlite3 connection, for components that keep their own tables beside ours."""
        return self.index.db

    # -- writing ----------------------------------------------------------------------------
    def add(self, task: Task, report: Any = None, *, key: str | None = None, status: str | None = None,
            source: str | None = None) -> AddResult:
        """Store ``task`` unless it is already here (same ``key``, or same digest as given or as
        stored). A name already used by another task gets a suffix ("name-2"). ``report`` (a
        ValidationReport or any JSON-able mapping) is kept in the index; ``status`` defaults to the
        report's status, else "unvalidated"."""
        report_json = _report_json(report)
        status = status or (report_json or {}).get("status") or UNVALIDATED
        given = task.digest()
        with self._locked():
            if self.index.has_pending():
                # Under the lock a pending row can only be a dead writer's: repair before adding.
                self._reconcile()
            existing = self.index.find(key=key, digests=(given,))
            if existing is not None:
                return AddResult(record=existing, new=False)
            name = unique(task.name, self.index.name_taken)
            folder = unique(dir_name(name), lambda d: self.index.dir_taken(d) or os.path.lexists(self.tasks_dir / d))
            stored = placed(task if name == task.name else task.renamed(name), folder)
            digest = stored.digest()
            if digest != given and (existing := self.index.find(digests=(digest,))) is not None:
                return AddResult(record=existing, new=False)
            facets = facets_of(stored)
            record = TaskRecord(name=name, dir=folder, digest=digest, source_digest=given, key=key, status=status,
                                added_at=_now(), source=source or task.source, report=report_json,
                                **facets.model_dump())
            self.index.insert(record, state="pending")
            try:
                write_task(stored, self.tasks_dir / folder)
            except BaseException:
                self.index.delete(name)
                raise
            self.index.mark_ready(name)
            self._changed()
            return AddResult(record=record, new=True)

    def remove(self, name: str) -> bool:
        """Delete task ``name``; False when there is no such task."""
        with self._locked():
            record = self.index.get(name)
            if record is None:
                return False
            folder = self.tasks_dir / record.dir
            trash = self.tasks_dir / f".{record.dir}.trash-{uuid.uuid4().hex[:8]}"
            if folder.exists():
                folder.rename(trash)  # atomic: after this the task is gone whatever happens next
            self.index.delete(name)
            shutil.rmtree(trash, ignore_errors=True)
            self._changed()
            return True

    def set_status(self, name: str, status: str, report: Any = None) -> None:
        """Record a new verdict for a stored task (e.g. after re-validation or calibration)."""
        with self._locked():
            if not self.index.set_status(name, status, _report_json(report)):
                raise SuiteError(f"no task {name!r} in suite {self.root}", hint="`autoenvscaling suite list` shows the names")

    @contextmanager
    def batch(self) -> Iterator["SuiteStore"]:
        """Rewrite dataset.toml once at the end of many adds instead of after each (a bulk import
        would otherwise rewrite it once per task). The lock is still taken per add, so other
        processes are not held up. A crash inside leaves dataset.toml stale until the next open."""
        with self._mutex:
            self._batching += 1
        try:
            yield self
        finally:
            with self._locked():
                self._batching -= 1
                if not self._batching and self._manifest_dirty:
                    self._write_manifest()

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        with self._mutex:
            return self.index.count()

    def __contains__(self, name: object) -> bool:
        with self._mutex:
            return isinstance(name, str) and self.index.get(name) is not None

    def __iter__(self) -> Iterator[Task]:
        return self.tasks()

    def record(self, name: str) -> TaskRecord:
        with self._mutex:
            record = self.index.get(name)
        if record is None:
            raise SuiteError(f"no task {name!r} in suite {self.root}", hint="`autoenvscaling suite list` shows the names")
        return record

    def get(self, name: str) -> Task:
        return read_task(self.path_of(self.record(name)))

    def path_of(self, record: TaskRecord) -> Path:
        return self.tasks_dir / record.dir

    def filter(self, flt: TaskFilter | None = None, **fields: Any) -> list[TaskRecord]:
        """Records matching ``flt`` or the keyword fields of TaskFilter (domain=, difficulty=,
        family=, category=, status=, proposer=, tags=), in admission order."""
        flt = flt or TaskFilter(**fields)
        with self._mutex:
            return self.index.records(flt)

    def tasks(self, flt: TaskFilter | None = None, **fields: Any) -> Iterator[Task]:
        """The matching tasks, read from disk one at a time."""
        for record in self.filter(flt, **fields):
            yield read_task(self.path_of(record))

    def stats(self, flt: TaskFilter | None = None, **fields: Any) -> SuiteStats:
        return suite_stats(self.filter(flt, **fields))

    def manifest(self) -> Manifest:
        """dataset.toml as it should read now (generated from the index)."""
        with self._mutex:
            entries = [ManifestEntry(name=n, digest=d) for n, d in self.index.manifest_entries()]
        return Manifest(name=self.name, description=self.description, tasks=entries)

    def verify(self) -> list[str]:
        """Problems found by re-reading every task and dataset.toml (empty when consistent). Opening
        the store only checks what exists; this also recomputes every digest."""
        problems = []
        for record in self.filter():
            try:
                task = read_task(self.path_of(record))
            except TaskFormatError as exc:
                problems.append(f"{record.name}: {exc.message}")
                continue
            if task.digest() != record.digest:
                problems.append(f"{record.name}: files give {task.digest()}, index says {record.digest}")
            if task.name != record.name:
                problems.append(f"{record.name}: reads back as {task.name!r}")
        manifest_path = self.root / MANIFEST
        if not manifest_path.is_file() or manifest_path.read_text(encoding="utf-8") != self.manifest().render():
            problems.append(f"{MANIFEST} does not match the index")
        return problems

    # -- internals --------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Exclusive access across threads (mutex) and processes (flock), re-entrant in-process."""
        with self._mutex:
            if self._lock_fd < 0:
                raise SuiteError(f"suite {self.root} is closed")
            if self._depth == 0:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def _changed(self) -> None:
        self._manifest_dirty = True
        if not self._batching:
            self._write_manifest()

    def _write_manifest(self) -> None:
        text = self.manifest().render()
        path = self.root / MANIFEST
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write(path, text.encode())
        self._manifest_dirty = False

    def _reconcile(self) -> None:
        """Bring directories, index and dataset.toml back in line after a crash (see module doc)."""
        for parent in (self.root, self.tasks_dir):
            for entry in os.scandir(parent):
                if entry.name.startswith(".") and any(m in entry.name for m in _TEMP_MARKERS):
                    _delete(Path(entry.path))
        on_disk = {e.name for e in os.scandir(self.tasks_dir) if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")}
        indexed: set[str] = set()
        for record, state in self.index.all_states():
            if record.dir not in on_disk:
                self.index.delete(record.name)
            elif state == "pending" and not self._holds(record):
                self.index.delete(record.name)  # the folder is not this row's task: index it below
            else:
                if state == "pending":
                    self.index.mark_ready(record.name)
                indexed.add(record.dir)
        for folder in sorted(on_disk - indexed):
            self._adopt(folder)
        self._write_manifest()

    def _holds(self, record: TaskRecord) -> bool:
        try:
            return read_task(self.tasks_dir / record.dir).digest() == record.digest
        except TaskFormatError:
            return False

    def _adopt(self, folder: str) -> None:
        """Index a task folder that has no row (left by a crash, or copied in by hand)."""
        path = self.tasks_dir / folder
        try:
            task = read_task(path)
        except TaskFormatError:
            quarantine = self.root / QUARANTINE
            quarantine.mkdir(exist_ok=True)
            path.rename(quarantine / unique(folder, lambda d: os.path.lexists(quarantine / d)))
            return
        digest = task.digest()
        if self.index.find(digests=(digest,)) is not None:
            _delete(path)  # a second copy of a stored task
            return
        name = unique(task.name, self.index.name_taken)
        if name != task.name:
            task = task.renamed(name)
            write_task(task, path, overwrite=True)
            digest = task.digest()
        facets = facets_of(task)
        self.index.insert(TaskRecord(name=name, dir=folder, digest=digest, source_digest=digest, added_at=_now(),
                                     source=str(path), **facets.model_dump()), state="ready")


def _check_creatable(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise SuiteError(f"{root} is a file, not a suite", hint="choose a directory path for the suite")
    if root.is_dir():
        foreign = sorted(e.name for e in root.iterdir() if e.name not in _ADOPTABLE)
        if foreign:
            raise SuiteError(f"{root} exists and is not a suite (it holds {', '.join(foreign[:3])})",
                             hint="choose a new or empty directory for the suite")


def _report_json(report: Any) -> dict[str, Any] | None:
    if report is None:
        return None
    if hasattr(report, "to_json"):
        return report.to_json()
    if hasattr(report, "model_dump"):
        return report.model_dump(mode="json")
    return dict(report)


def _delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
