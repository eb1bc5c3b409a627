"""SuiteStore on a real filesystem and a real SQLite index: idempotent adds, clashes, filters,
statistics, and the repairs done on open (each crash leftover is built by hand here; the SIGKILL
test in test_suite_crash.py produces them for real)."""

from __future__ import annotations

import json
import os
import sqlite3
import tomllib

import pytest

from autoenvscaling.errors import SuiteError
from autoenvscaling.gates.base import GateResult, ValidationReport
from autoenvscaling.suite.records import TaskFilter
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import read_task, write_task


def manifest(root):  # noqa: ANN001, ANN201
    return tomllib.loads((root / "dataset.toml").read_text())


def test_add_writes_dir_index_and_manifest(tmp_path, make_task) -> None:
    task = make_task("alpha", domain="terminal", family="grep", difficulty="easy", tags=["text", "files"])
    report = ValidationReport(task="alpha", name="alpha", status="valid", reason="all gates passed",
                              gates=[GateResult(name="lint", status="pass")])
    with SuiteStore(tmp_path / "s", name="org/demo", description="a demo") as store:
        result = store.add(task, report, key="proposal-1")
        assert result.new and result.record.name == "alpha" and result.record.status == "valid"
        assert result.record.report["gates"][0]["name"] == "lint"
        assert result.record.domain == "terminal" and result.record.tags == ["text", "files"]
        assert store.get("alpha") == task and store.get("alpha").digest() == task.digest()
        assert len(store) == 1 and "alpha" in store and list(store) == [task]
    data = manifest(tmp_path / "s")
    assert data["dataset"] == {"name": "org/demo", "description": "a demo"}
    assert data["tasks"] == [{"name": "alpha", "digest": task.digest()}]
    # The index is a plain SQLite database in WAL mode that other tools can read.
    db = sqlite3.connect(tmp_path / "s" / "index.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT name, key, state FROM tasks").fetchall() == [("alpha", "proposal-1", "ready")]


def test_adds_are_idempotent_by_key_and_by_digest(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")
    task = make_task("alpha")
    assert store.add(task, key="k1").new
    again = store.add(task)  # same content, no key
    assert not again.new and again.record.name == "alpha"
    other_content = make_task("beta")
    by_key = store.add(other_content, key="k1")  # the key was used: the first task stored under it wins
    assert not by_key.new and by_key.record.name == "alpha"
    reopened = SuiteStore(tmp_path / "s")
    assert not reopened.add(task, key="k2").new
    assert [r.name for r in reopened.filter()] == ["alpha"]


def test_name_clash_gets_a_suffix_and_stays_idempotent(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")
    first, second = make_task("dup", "one"), make_task("dup", "two")
    store.add(first)
    clash = store.add(second)
    assert clash.new and clash.record.name == "dup-2" and clash.record.dir == "dup-2"
    assert clash.record.source_digest == second.digest() != clash.record.digest
    stored = store.get("dup-2")
    assert stored.name == "dup-2" and stored.files == second.files and stored.instruction == second.instruction
    # Adding the clashing task again (as given, or as stored) finds it instead of making dup-3.
    assert store.add(second).record.name == "dup-2"
    assert store.add(stored).record.name == "dup-2"
    assert [r.name for r in store.filter()] == ["dup", "dup-2"]
    assert store.verify() == []


def test_org_names_and_unsafe_names_read_back_the_same(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")
    org = make_task("acme/hello").renamed("acme/hello")  # [task] name = "acme/hello"
    loose = make_task("needs quoting: yes")  # no [task] name, and not a safe folder name
    assert store.add(org).record.dir == "hello"
    rec = store.add(loose).record
    assert rec.dir == "needs-quoting-yes" and rec.name == "needs quoting: yes"
    assert store.get("acme/hello") == org
    assert store.get(rec.name).name == rec.name  # the name went into task.toml so it survives
    assert store.verify() == []


def test_remove(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")
    store.add(make_task("a"))
    store.add(make_task("b"))
    assert store.remove("a") and not store.remove("a")
    assert not (tmp_path / "s" / "tasks" / "a").exists()
    assert [t["name"] for t in manifest(tmp_path / "s")["tasks"]] == ["b"]
    with pytest.raises(SuiteError, match="no task 'a'"):
        store.get("a")


def test_filter_and_stats(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")
    store.add(make_task("t1", domain="terminal", family="grep", difficulty="easy", tags=["text"], proposer="procedural",
                        instruction="x" * 10))
    store.add(make_task("t2", domain="terminal", family="sed", difficulty="hard", tags=["text", "regex"],
                        proposer="agentic", instruction="x" * 20))
    store.add(make_task("w1", domain="computer_use", family="form", difficulty="easy", tags=["web"],
                        proposer="agentic", instruction="x" * 30))
    store.add(make_task("plain", instruction="x" * 40))
    names = lambda **kw: [r.name for r in store.filter(**kw)]  # noqa: E731
    assert names(domain="terminal") == ["t1", "t2"]
    assert names(difficulty="easy") == ["t1", "w1"]
    assert names(difficulty=["easy", "hard"], domain="terminal") == ["t1", "t2"]
    assert names(tags=["text"]) == ["t1", "t2"] and names(tags=["text", "regex"]) == ["t2"]
    assert names(family="form") == ["w1"] and names(status="valid") == []
    assert names(status="unvalidated") == ["t1", "t2", "w1", "plain"]
    assert [t.name for t in store.tasks(TaskFilter(domain="computer_use"))] == ["w1"]
    store.set_status("t2", "invalid", {"status": "invalid", "reason": "oracle scored 0"})
    assert store.record("t2").report == {"status": "invalid", "reason": "oracle scored 0"}
    assert names(status="invalid") == ["t2"]

    stats = store.stats()
    assert stats.tasks == 4
    assert stats.by_domain == {"terminal": 2, "(none)": 1, "computer_use": 1}
    assert stats.by_difficulty == {"easy": 2, "(none)": 1, "hard": 1}
    assert stats.by_tag == {"text": 2, "regex": 1, "web": 1}
    assert stats.by_proposer == {"agentic": 2, "(none)": 1, "procedural": 1}
    assert stats.by_status == {"unvalidated": 3, "invalid": 1}
    assert stats.instruction_chars == {"min": 10, "p50": 20, "p90": 40, "p99": 40, "max": 40, "mean": 25.0}
    on_disk = sum(p.stat().st_size for p in (tmp_path / "s" / "tasks").rglob("*") if p.is_file())
    assert stats.total_bytes == on_disk
    assert store.stats(domain="terminal").tasks == 2


def test_open_requires_an_existing_suite_and_create_refuses_foreign_dirs(tmp_path) -> None:
    with pytest.raises(SuiteError) as exc:
        SuiteStore.open(tmp_path / "missing")
    assert "no suite at" in exc.value.message and "suite import" in exc.value.hint
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(SuiteError, match="is not a suite"):
        SuiteStore(tmp_path / "busy")


def test_other_components_keep_tables_in_the_index(tmp_path, make_task) -> None:
    with SuiteStore(tmp_path / "s") as store:
        store.add(make_task("a"))
        store.db.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY, note TEXT)")
        store.db.execute("INSERT INTO runs (note) VALUES ('round 1')")  # autocommit connection
    with SuiteStore.open(tmp_path / "s") as store:
        assert store.db.execute("SELECT note FROM runs").fetchall() == [("round 1",)]
        assert len(store) == 1


def test_reconcile_repairs_every_crash_leftover(tmp_path, make_task) -> None:
    root = tmp_path / "s"
    store = SuiteStore(root)
    kept, gone, pending_done, pending_lost = (make_task(n) for n in ("kept", "gone", "pending-done", "pending-lost"))
    store.add(kept, key="k-kept")
    store.add(gone)
    # Leftovers of kills at different points:
    store.index.insert(_record(store, pending_done, "k-done"), state="pending")      # dir written, not marked ready
    write_task(pending_done, root / "tasks" / "pending-done")
    store.index.insert(_record(store, pending_lost, "k-lost"), state="pending")      # killed before the dir landed
    (root / "tasks" / ".pending-lost.tmp-1234abcd").mkdir()                           # write_task's temp dir
    (root / "tasks" / ".pending-lost.tmp-1234abcd" / "task.toml").write_text("half")
    (root / ".dataset.toml.tmp-0badf00d").write_text("half a manifest")               # atomic_write's temp file
    orphan = make_task("orphan")
    write_task(orphan, root / "tasks" / "orphan")                                     # dir written, row never committed
    write_task(kept, root / "tasks" / "kept-copy")                                    # a second copy of a stored task
    (root / "tasks" / "broken").mkdir()                                               # not a task: no task.toml
    (root / "tasks" / "broken" / "notes.txt").write_text("x")
    os.rename(root / "tasks" / "gone", tmp_path / "elsewhere")                        # row whose dir vanished
    (root / "dataset.toml").write_text('[dataset]\nname = "stale"\n')
    store.close()

    store = SuiteStore.open(root)
    assert [r.name for r in store.filter()] == ["kept", "pending-done", "orphan"]
    assert store.record("pending-done").key == "k-done"  # the key survived the crash
    assert store.add(pending_lost, key="k-lost").new     # the lost one is added again by the caller's retry
    assert sorted(p.name for p in (root / "tasks").iterdir()) == ["kept", "orphan", "pending-done", "pending-lost"]
    assert sorted(p.name for p in (root / "quarantine").iterdir()) == ["broken"]
    assert not list(root.glob(".*.tmp-*"))
    assert [t["name"] for t in manifest(root)["tasks"]] == ["kept", "pending-done", "orphan", "pending-lost"]
    assert store.verify() == []


def test_index_lost_is_rebuilt_from_the_directories(tmp_path, make_task) -> None:
    root = tmp_path / "s"
    with SuiteStore(root) as store:
        for name in ("a", "b", "c"):
            store.add(make_task(name))
    for suffix in ("", "-wal", "-shm"):
        (root / f"index.sqlite{suffix}").unlink(missing_ok=True)
    with SuiteStore(root) as store:
        assert sorted(r.name for r in store.filter()) == ["a", "b", "c"]
        assert store.verify() == []


def test_verify_reports_a_task_edited_behind_the_index(tmp_path, make_task) -> None:
    with SuiteStore(tmp_path / "s") as store:
        store.add(make_task("a"))
        (tmp_path / "s" / "tasks" / "a" / "instruction.md").write_text("changed by hand\n")
        (problem,) = store.verify()
        assert problem.startswith("a: files give sha256:")


def _record(store, task, key):  # noqa: ANN001, ANN202
    from autoenvscaling.suite.facets import facets_of
    from autoenvscaling.suite.records import TaskRecord

    return TaskRecord(name=task.name, dir=task.name, digest=task.digest(), source_digest=task.digest(), key=key,
                      added_at="2026-01-01T00:00:00+00:00", **facets_of(task).model_dump())


def test_report_json_is_stored_verbatim(tmp_path, make_task) -> None:
    with SuiteStore(tmp_path / "s") as store:
        store.add(make_task("a"), {"status": "valid", "reason": "ok", "gates": []})
        raw = store.db.execute("SELECT report FROM tasks WHERE name = 'a'").fetchone()[0]
    assert json.loads(raw) == {"status": "valid", "reason": "ok", "gates": []}
    assert read_task(tmp_path / "s" / "tasks" / "a").name == "a"


def test_a_dead_writers_pending_row_is_repaired_by_the_next_add(tmp_path, make_task) -> None:
    store = SuiteStore(tmp_path / "s")  # opened before the other writer died, so its open saw nothing
    task = make_task("a")
    store.index.insert(_record(store, task, "k-a"), state="pending")  # the other writer died mid-add
    result = store.add(task, key="k-a")
    assert result.new and [r.key for r in store.filter()] == ["k-a"] and store.verify() == []


def test_corrupt_index_is_one_clear_error(tmp_path, make_task) -> None:
    with SuiteStore(tmp_path / "s") as store:
        store.add(make_task("a"))
    for suffix in ("-wal", "-shm"):
        (tmp_path / "s" / f"index.sqlite{suffix}").unlink(missing_ok=True)
    (tmp_path / "s" / "index.sqlite").write_bytes(b"not a database, just bytes" * 100)
    with pytest.raises(SuiteError, match="unreadable index") as exc:
        SuiteStore.open(tmp_path / "s")
    assert "rebuilt" in exc.value.hint
    (tmp_path / "s" / "index.sqlite").rename(tmp_path / "index.bad")
    with SuiteStore.open(tmp_path / "s") as store:
        assert [r.name for r in store.filter()] == ["a"]
