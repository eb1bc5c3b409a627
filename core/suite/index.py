"""The suite index: one SQLite database (WAL mode) beside the task directories.

The ``tasks`` table is the suite's source of truth for what was admitted and why; the directories
hold the content. A row is inserted as ``state = 'pending'`` *before* its directory is written and
flipped to ``'ready'`` after, so a crash in between leaves a record of the intent (with the caller's
idempotency key) that ``SuiteStore`` resolves on the next open. Readers only ever see ready rows.

Other components may keep their own tables in the same database (the flywheel's run database lives
here): any name not starting with ``tasks`` or ``suite_`` is theirs.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Iterator

from .records import TaskFilter, TaskRecord

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS suite_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,      -- admission order (dataset.toml lists tasks in it)
    name TEXT NOT NULL UNIQUE,
    dir TEXT NOT NULL UNIQUE,
    digest TEXT NOT NULL UNIQUE,
    source_digest TEXT NOT NULL,
    key TEXT UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'ready')),
    status TEXT NOT NULL,
    domain TEXT, family TEXT, difficulty TEXT, category TEXT,
    tags TEXT NOT NULL DEFAULT '[]',            -- JSON array of strings
    proposer TEXT, round INTEGER, parent TEXT,
    instruction_chars INTEGER NOT NULL DEFAULT 0,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    added_at TEXT NOT NULL,
    source TEXT,
    report TEXT                                  -- JSON of the validation report, if any
);
CREATE INDEX IF NOT EXISTS tasks_source_digest ON tasks (source_digest);
"""

_COLUMNS = tuple(TaskRecord.model_fields)  # a record's fields are the columns of its row, in order
_SCALAR_FILTERS = ("domain", "family", "difficulty", "category", "status", "proposer")


@contextmanager
def immediate_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on a connection opened with
    ``isolation_level=None``: takes the write lock up front so a check followed by an insert cannot
    interleave with another writer (the suite index and the flywheel's run.sqlite)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class SuiteIndex:
    """Typed access to the index database. Not thread-safe by itself: ``SuiteStore`` serialises use."""

    def __init__(self, path: Path) -> None:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so a transaction spans exactly what we say.
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60.0)
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit is on disk before add() returns, so the index never lags the fsynced directories.
        self.db.execute("PRAGMA synchronous=FULL")
        with self.transaction():
            for statement in _statements(_SCHEMA):
                self.db.execute(statement)
            self.db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        self.db.close()

    def _query(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        # Row objects on our cursors only: the connection is shared with other components' tables.
        cursor = self.db.cursor()
        cursor.row_factory = sqlite3.Row
        return cursor.execute(sql, params)

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self.db)

    # -- metadata ---------------------------------------------------------------------------
    def meta(self, key: str) -> str | None:
        row = self._query("SELECT value FROM suite_meta WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self.db.execute("INSERT INTO suite_meta (key, value) VALUES (?, ?) "
                            "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    # -- lookups ----------------------------------------------------------------------------
    def find(self, *, key: str | None = None, digests: tuple[str, ...] = ()) -> TaskRecord | None:
        """The ready task stored under ``key``, or whose stored or given digest is one of ``digests``."""
        if key is not None:
            row = self._query("SELECT * FROM tasks WHERE key = ? AND state = 'ready'", (key,)).fetchone()
            if row:
                return _record(row)
        for digest in digests:
            row = self._query("SELECT * FROM tasks WHERE state = 'ready' AND (digest = ? OR source_digest = ?) "
                                  "ORDER BY seq LIMIT 1", (digest, digest)).fetchone()
            if row:
                return _record(row)
        return None

    def get(self, name: str) -> TaskRecord | None:
        row = self._query("SELECT * FROM tasks WHERE name = ? AND state = 'ready'", (name,)).fetchone()
        return _record(row) if row else None

    def name_taken(self, name: str) -> bool:
        return self._query("SELECT 1 FROM tasks WHERE name = ?", (name,)).fetchone() is not None

    def dir_taken(self, folder: str) -> bool:
        return self._query("SELECT 1 FROM tasks WHERE dir = ?", (folder,)).fetchone() is not None

    def has_pending(self) -> bool:
        return self._query("SELECT 1 FROM tasks WHERE state = 'pending' LIMIT 1").fetchone() is not None

    def count(self) -> int:
        return self._query("SELECT COUNT(*) FROM tasks WHERE state = 'ready'").fetchone()[0]

    def records(self, flt: TaskFilter | None = None) -> list[TaskRecord]:
        """Ready records matching ``flt``, in admission order."""
        where, params = ["state = 'ready'"], []
        for field in _SCALAR_FILTERS:
            values = getattr(flt, field) if flt else ()
            if values:
                where.append(f"{field} IN ({', '.join('?' * len(values))})")
                params.extend(values)
        for tag in flt.tags if flt else ():
            where.append("EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE json_each.value = ?)")
            params.append(tag)
        sql = f"SELECT * FROM tasks WHERE {' AND '.join(where)} ORDER BY seq"
        return [_record(row) for row in self._query(sql, params)]

    def manifest_entries(self) -> list[tuple[str, str]]:
        return [(r["name"], r["digest"]) for r in
                self._query("SELECT name, digest FROM tasks WHERE state = 'ready' ORDER BY seq")]

    def all_states(self) -> list[tuple[TaskRecord, str]]:
        """Every row with its state (pending ones included), for reconciliation."""
        return [(_record(row), row["state"]) for row in self._query("SELECT * FROM tasks ORDER BY seq")]

    # -- changes ----------------------------------------------------------------------------
    def insert(self, record: TaskRecord, *, state: str) -> None:
        values = record.model_dump(mode="json")
        values["tags"] = json.dumps(record.tags)
        values["report"] = json.dumps(record.report) if record.report is not None else None
        with self.transaction():
            self.db.execute(f"INSERT INTO tasks ({', '.join(_COLUMNS)}, state) VALUES ({', '.join('?' * len(_COLUMNS))}, ?)",
                            [values[c] for c in _COLUMNS] + [state])

    def mark_ready(self, name: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE tasks SET state = 'ready' WHERE name = ?", (name,))

    def set_status(self, name: str, status: str, report: dict[str, Any] | None) -> bool:
        with self.transaction():
            cur = self.db.execute("UPDATE tasks SET status = ?, report = COALESCE(?, report) WHERE name = ? AND state = 'ready'",
                                  (status, json.dumps(report) if report is not None else None, name))
        return cur.rowcount > 0

    def delete(self, name: str) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM tasks WHERE name = ?", (name,))


def _record(row: sqlite3.Row) -> TaskRecord:
    data = {c: row[c] for c in _COLUMNS}
    data["tags"] = json.loads(data["tags"] or "[]")
    data["report"] = json.loads(data["report"]) if data["report"] else None
    return TaskRecord.model_validate(data)


def _statements(script: str) -> list[str]:
    # sqlite3's executescript() would COMMIT our open transaction; run the statements one by one.
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
