"""The run database: ``<out>/run.sqlite`` beside the suite, recording every finished unit of work.

Tables: proposals (with what each spent, its HTTP retries and timeouts, and what budget ended it),
validations (the admission report of each proposal that reached the gates), rollouts (calibration
and pool-review attempts), reviews, trainings (the solver spec, and any proposer model, each round's
training returned, with its metrics), metrics (per round) and meta (the run's configuration, the
wall time of each round's finished batches and why a budget stopped a round). A unit is one proposal slot (propose, validate, calibrate, admit) or one pool review
of a task. A unit's rows are written in one transaction after its effects on the suite are made, so
after a SIGKILL a unit is either recorded in full or not at all; an unrecorded unit is recomputed on
``--resume`` (deterministic from its key and seed), and the suite's keyed, idempotent ``add`` makes
a repeated admission a no-op. What a proposal slot's phase A (propose, the phase A gates) returned is
kept in pending as soon as it arrives, until the unit is recorded: a resumed run takes it from there
rather than proposing (model calls) and validating (sandboxes) again.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError
from ..executors.jobs import LLMSpec, SolverSpec
from ..proposers.base import ProposalCost
from ..suite.index import immediate_transaction
from ..tasks import Task
from ..tasks.harbor import task_from_blob, task_to_blob

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS proposals (
    key TEXT PRIMARY KEY, round INTEGER NOT NULL, slot INTEGER NOT NULL, seed INTEGER NOT NULL,
    domain TEXT NOT NULL, proposer TEXT NOT NULL, model TEXT, direction TEXT, parent TEXT,
    task_name TEXT, digest TEXT, outcome TEXT NOT NULL, reason TEXT,
    tokens_in INTEGER NOT NULL DEFAULT 0, tokens_out INTEGER NOT NULL DEFAULT 0, cost_usd REAL,
    attempts INTEGER NOT NULL DEFAULT 0, revisions INTEGER NOT NULL DEFAULT 0, seconds REAL NOT NULL DEFAULT 0,
    task BLOB, retries INTEGER NOT NULL DEFAULT 0, timeouts INTEGER NOT NULL DEFAULT 0, budget_stop TEXT
);
CREATE TABLE IF NOT EXISTS validations (
    key TEXT PRIMARY KEY, task_name TEXT NOT NULL, digest TEXT, status TEXT NOT NULL, reason TEXT NOT NULL,
    seconds REAL NOT NULL DEFAULT 0, report TEXT NOT NULL          -- the ValidationReport as JSON (gates, evidence)
);
CREATE TABLE IF NOT EXISTS rollouts (
    key TEXT NOT NULL, phase TEXT NOT NULL, idx INTEGER NOT NULL, round INTEGER NOT NULL,
    domain TEXT NOT NULL, task_name TEXT NOT NULL, reward REAL, status TEXT NOT NULL,
    stop_reason TEXT, failure TEXT, seconds REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (key, phase, idx)
);
CREATE TABLE IF NOT EXISTS reviews (
    round INTEGER NOT NULL, key TEXT NOT NULL, task_name TEXT NOT NULL, mean REAL,
    verdict TEXT NOT NULL, reason TEXT, PRIMARY KEY (round, key)
);
CREATE TABLE IF NOT EXISTS metrics (round INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trainings (
    round INTEGER PRIMARY KEY, trainer TEXT NOT NULL,
    before TEXT NOT NULL, solver TEXT NOT NULL, metrics TEXT NOT NULL,  -- SolverSpec JSON, metrics JSON
    proposer TEXT                                                       -- LLMSpec JSON: a trained proposer
);
CREATE TABLE IF NOT EXISTS training_steps (                             -- a training's per-step figures
    round INTEGER NOT NULL, idx INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (round, idx)
);
CREATE TABLE IF NOT EXISTS pending (                                    -- phase A outcomes of unrecorded units
    key TEXT PRIMARY KEY, outcome TEXT NOT NULL, proposed BLOB, task BLOB
);
"""

_ADDED_COLUMNS = {"proposals": {"retries": "INTEGER NOT NULL DEFAULT 0", "timeouts": "INTEGER NOT NULL DEFAULT 0",
                                "budget_stop": "TEXT"},
                  "trainings": {"proposer": "TEXT"}}


class UnitSlot(BaseModel):
    """Which proposal slot a unit is: its key, round and slot, its seed, and the domain and proposer
    kind it was given."""

    model_config = ConfigDict(frozen=True)

    key: str
    round: int
    slot: int
    seed: int
    domain: str
    proposer: str


class UnitRecord(ProposalCost, UnitSlot):
    """One finished proposal slot: the slot, what its proposal cost, and how it ended. ``outcome``
    is a metrics Outcome; ``task_name`` is the name the task has in the suite when admitted (the
    proposal's name otherwise)."""

    model: str | None = None
    direction: str | None = None
    parent: str | None = None
    task_name: str | None = None
    digest: str | None = None
    outcome: str
    reason: str | None = None
    seconds: float = 0.0
    report: dict[str, Any] | None = None


class RolloutRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    phase: str  # "calibration" or "review-<round>"
    idx: int
    round: int
    domain: str
    task_name: str
    reward: float | None  # None: the rollout's infrastructure failed
    status: str
    stop_reason: str | None = None
    failure: str | None = None
    seconds: float = 0.0


class ReviewRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    round: int
    key: str
    task_name: str
    mean: float | None
    verdict: str  # "stays", "left" or "unmeasured"
    reason: str | None = None


class TrainingRecord(BaseModel):
    """One round's training: the solver spec it started from and the one it returned (and the
    proposer model it returned, when it trained one)."""

    model_config = ConfigDict(frozen=True)

    round: int
    trainer: str
    before: SolverSpec
    solver: SolverSpec
    metrics: dict[str, float]
    proposer: LLMSpec | None = None
    history: list[dict[str, float]] = Field(default_factory=list)  # TrainResult.history


class RunDB:
    """Typed access to run.sqlite."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=60.0)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        for table, columns in _ADDED_COLUMNS.items():  # a run recorded before these existed
            have = {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}
            for column, declared in columns.items():
                if column not in have:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declared}")

    def close(self) -> None:
        self.db.close()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self.db)

    # -- the run's identity -----------------------------------------------------------------
    def bind_config(self, config: dict[str, Any], *, resume: bool) -> None:
        """Record the run's configuration, or check that a resumed run uses the same one (a resume
        with other settings would mix two runs in one suite)."""
        text = json.dumps(config, sort_keys=True)
        row = self.db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        if row is None:
            with self.transaction() as db:
                db.execute("INSERT INTO meta (key, value) VALUES ('config', ?)", (text,))
            return
        if not resume:
            raise UsageError(f"{self.path.parent} already holds a run",
                             hint="pass --resume to continue it, or choose another --out")
        if row["value"] != text:
            stored = json.loads(row["value"])
            changed = sorted(k for k in set(stored) | set(config) if stored.get(k) != config.get(k))
            raise UsageError(f"--resume with different settings ({', '.join(changed)}) than the run in {self.path.parent}",
                             hint="resume with the original options, or start a new run in another --out")

    def config(self) -> dict[str, Any]:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()
        return json.loads(row["value"]) if row else {}

    # -- budgets ----------------------------------------------------------------------------
    def spent(self, round: int | None = None) -> dict[str, float]:
        """Tokens, dollars and batch wall time of ``round`` (None: the whole run) so far."""
        where, params = (" WHERE round = ?", (round,)) if round is not None else ("", ())
        row = self.db.execute("SELECT COALESCE(SUM(tokens_in + tokens_out), 0) AS tokens, "
                              f"COALESCE(SUM(cost_usd), 0) AS usd FROM proposals{where}", params).fetchone()
        like = f"seconds:{round}" if round is not None else "seconds:%"
        seconds = self.db.execute("SELECT COALESCE(SUM(CAST(value AS REAL)), 0) FROM meta WHERE key LIKE ?",
                                  (like,)).fetchone()[0]
        return {"tokens": int(row["tokens"]), "usd": float(row["usd"]), "seconds": float(seconds)}

    def set_budget_stop(self, round: int, reason: str | None) -> None:
        """Record (or, with None, clear) why the budget stopped ``round``'s proposals."""
        with self.transaction() as db:
            if reason is None:
                db.execute("DELETE FROM meta WHERE key = ?", (f"budget_stop:{round}",))
            else:
                _insert(db, "meta", {"key": f"budget_stop:{round}", "value": reason})

    def budget_stop(self, round: int) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"budget_stop:{round}",)).fetchone()
        return row["value"] if row else None

    # -- units ------------------------------------------------------------------------------
    def done(self, key: str) -> bool:
        return self.db.execute("SELECT 1 FROM proposals WHERE key = ?", (key,)).fetchone() is not None

    def keep_outcome(self, key: str, outcome: str, proposed: bytes | None, task: bytes | None) -> None:
        """A unit's phase A outcome (``ProposeOutcome.dump``), kept until the unit is recorded: a run
        killed before then resumes from it instead of proposing and validating again."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO pending (key, outcome, proposed, task) VALUES (?, ?, ?, ?)",
                       (key, outcome, proposed, task))

    def kept_count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM pending").fetchone()[0])

    def kept_outcome(self, key: str) -> tuple[str, bytes | None, bytes | None] | None:
        row = self.db.execute("SELECT outcome, proposed, task FROM pending WHERE key = ?", (key,)).fetchone()
        return (row["outcome"], row["proposed"], row["task"]) if row else None

    def record_unit(self, unit: UnitRecord, task: Task | None, rollouts: list[RolloutRow], *,
                    seconds: float = 0.0) -> None:
        """The unit's proposal, its validation report and its rollouts, in one transaction, with the
        ``seconds`` of wall time its round spent since the last record: a run killed right after the
        unit has then counted every second up to it."""
        data = unit.model_dump(exclude={"report"})
        data["task"] = task_to_blob(task) if task is not None else None
        with self.transaction() as db:
            if seconds:
                _add_seconds(db, unit.round, seconds)
            _insert(db, "proposals", data)
            db.execute("DELETE FROM pending WHERE key = ?", (unit.key,))
            if unit.report is not None:
                report = unit.report
                _insert(db, "validations", {"key": unit.key, "task_name": report.get("name") or unit.task_name or "",
                                            "digest": report.get("digest"), "status": report["status"],
                                            "reason": report.get("reason", ""), "seconds": report.get("seconds", 0.0),
                                            "report": json.dumps(report)})
            for r in rollouts:
                _insert(db, "rollouts", r.model_dump())

    def units(self, round: int | None = None) -> list[UnitRecord]:
        sql = ("SELECT p.*, v.report AS report FROM proposals p LEFT JOIN validations v ON v.key = p.key"
               + (" WHERE p.round = ?" if round is not None else "") + " ORDER BY p.round, p.slot")
        out = []
        for row in self.db.execute(sql, () if round is None else (round,)).fetchall():
            data = {k: row[k] for k in row.keys() if k != "task"}
            data["report"] = json.loads(data["report"]) if data["report"] else None
            out.append(UnitRecord.model_validate(data))
        return out

    def task(self, key: str) -> Task | None:
        row = self.db.execute("SELECT task FROM proposals WHERE key = ?", (key,)).fetchone()
        return task_from_blob(row["task"]) if row is not None and row["task"] is not None else None

    # -- rollouts and reviews ---------------------------------------------------------------
    def rollouts(self, *, key: str | None = None, phase: str | None = None, round: int | None = None) -> list[RolloutRow]:
        clauses, params = [], []
        for column, value in (("key", key), ("phase", phase), ("round", round)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        sql = f"SELECT * FROM rollouts{where} ORDER BY round, key, phase, idx"
        return [RolloutRow.model_validate(dict(row)) for row in self.db.execute(sql, params).fetchall()]

    def reviewed(self, round: int, key: str) -> bool:
        return self.db.execute("SELECT 1 FROM reviews WHERE round = ? AND key = ?", (round, key)).fetchone() is not None

    def record_review(self, review: ReviewRecord, rollouts: list[RolloutRow]) -> None:
        with self.transaction() as db:
            _insert(db, "reviews", review.model_dump())
            for r in rollouts:
                _insert(db, "rollouts", r.model_dump())

    def reviews(self, round: int | None = None) -> list[ReviewRecord]:
        sql = "SELECT * FROM reviews" + (" WHERE round = ?" if round is not None else "") + " ORDER BY round, key"
        return [ReviewRecord.model_validate(dict(row))
                for row in self.db.execute(sql, () if round is None else (round,)).fetchall()]

    # -- trainings --------------------------------------------------------------------------
    def record_training(self, training: TrainingRecord) -> None:
        with self.transaction() as db:
            _insert(db, "trainings", {"round": training.round, "trainer": training.trainer,
                                      "before": training.before.model_dump_json(),
                                      "solver": training.solver.model_dump_json(),
                                      "metrics": json.dumps(training.metrics),
                                      "proposer": training.proposer.model_dump_json() if training.proposer else None})
            for i, row in enumerate(training.history):
                _insert(db, "training_steps", {"round": training.round, "idx": i, "data": json.dumps(row)})

    def trainings(self) -> list[TrainingRecord]:
        rows = self.db.execute("SELECT * FROM trainings ORDER BY round").fetchall()
        steps: dict[int, list[dict[str, float]]] = {}
        for row in self.db.execute("SELECT round, data FROM training_steps ORDER BY round, idx").fetchall():
            steps.setdefault(row["round"], []).append(json.loads(row["data"]))
        return [TrainingRecord(round=row["round"], trainer=row["trainer"],
                               before=SolverSpec.model_validate_json(row["before"]),
                               solver=SolverSpec.model_validate_json(row["solver"]),
                               metrics=json.loads(row["metrics"]), history=steps.get(row["round"], []),
                               proposer=LLMSpec.model_validate_json(row["proposer"]) if row["proposer"] else None)
                for row in rows]

    def training(self, round: int) -> TrainingRecord | None:
        return next((t for t in self.trainings() if t.round == round), None)

    # -- metrics ----------------------------------------------------------------------------
    def set_metrics(self, round: int, data: dict[str, Any]) -> None:
        with self.transaction() as db:
            _insert(db, "metrics", {"round": round, "data": json.dumps(data)})

    def metrics(self) -> dict[int, dict[str, Any]]:
        return {row["round"]: json.loads(row["data"])
                for row in self.db.execute("SELECT round, data FROM metrics ORDER BY round").fetchall()}


def _insert(db: sqlite3.Connection, table: str, data: dict[str, Any]) -> None:
    """INSERT OR REPLACE: recording a unit again (a recomputed unit) overwrites, never duplicates."""
    db.execute(f"INSERT OR REPLACE INTO {table} ({', '.join(data)}) VALUES ({', '.join('?' * len(data))})",
               tuple(data.values()))


def _add_seconds(db: sqlite3.Connection, round: int, seconds: float) -> None:
    db.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
               "value = CAST(CAST(value AS REAL) + CAST(excluded.value AS REAL) AS TEXT)",
               (f"seconds:{round}", str(seconds)))
