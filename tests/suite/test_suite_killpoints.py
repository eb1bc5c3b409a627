"""Kill points of ``autoenvscaling suite import`` and ``suite export`` (tests/killpoints.py): the
real command, SIGKILLed right after each durable commit in turn and run again, ends exactly as an
uninterrupted run: the same suite (rows, task folders and dataset.toml byte for byte, the index
matching the files), the same export byte for byte, and nothing left beside it."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

from autoenvscaling.cli.main import main
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.tasks import write_task

from ..killpoints import KillPoints, suite_state, tree
from .conftest import build_task

# Per task: a pending row, its folder half written (task.toml in the staging folder), the folder in
# place, the row ready; and dataset.toml (the suite's creation, and once at the end of the batch).
IMPORT_POINTS = ["index-insert", "file", "task-dir", "index-ready", "manifest"]
# Harbor: per task, its folder half written and written in the staging folder; dataset.toml staged;
# the dataset renamed into place. JSONL: per task, its row; the file renamed into place.
EXPORT_POINTS = ["file", "export-task", "row", "export"]


def test_suite_import_killed_at_every_commit(tmp_path: Path, record_property: Any) -> None:
    source = tmp_path / "source"
    # Six task folders, two of them named "dup" (the second is stored as dup-2).
    for i, (name, body) in enumerate([("alpha", "a"), ("beta", "b"), ("dup", "one"), ("gamma", "c"),
                                      ("dup", "two"), ("delta", "d")]):
        write_task(build_task(name, body, domain="toy", tags=[f"g{i % 2}"]).renamed(name), source / f"{i}-{name}")
    kp = KillPoints(tmp_path / "steps", IMPORT_POINTS)
    args = lambda into: ["suite", "import", str(source), "--into", str(tmp_path / into / "suite")]  # noqa: E731
    reference = kp.reference(args("reference"))
    chain = kp.chain(args("killed"), args("killed"), reference)
    record_property("kill_points", {"command": "suite import", "kills": len(chain.kills)})
    assert len(chain.kills) >= 20, chain
    expected, got = suite_state(tmp_path / "reference" / "suite"), suite_state(tmp_path / "killed" / "suite")
    assert [r[0] for r in expected.records] == ["alpha", "beta", "dup", "gamma", "dup-2", "delta"]
    assert expected.problems == [] and expected.strays == []
    assert got == expected


def test_suite_export_killed_at_every_commit(tmp_path: Path, record_property: Any) -> None:
    with SuiteStore(tmp_path / "suite") as suite:
        for i in range(10):
            suite.add(build_task(f"acme/t{i}", f"body {i}", domain="toy", tags=["x"]).renamed(f"acme/t{i}"))
    kp = KillPoints(tmp_path / "steps", EXPORT_POINTS)
    outputs = {"harbor": "dataset", "jsonl": "rows.jsonl"}
    chains = {}
    for fmt, name in outputs.items():
        args = lambda parent: ["suite", "export", str(tmp_path / "suite"), "--format", fmt,  # noqa: E731
                               "--out", str(tmp_path / parent / name)]
        reference = kp.reference(args(f"reference-{fmt}"))
        killed = tmp_path / f"killed-{fmt}" / name
        # A Harbor export refuses an existing output: once a kill came after its rename, it is done.
        chains[fmt] = kp.chain(args(f"killed-{fmt}"), args(f"killed-{fmt}"), reference,
                               finished=lambda: fmt == "harbor" and killed.exists())
    record_property("kill_points", {"command": "suite export", "kills": sum(len(c.kills) for c in chains.values())})
    for fmt, name in outputs.items():
        assert chains[fmt].kills == chains[fmt].reference, chains[fmt]  # an export redoes everything: all reached
        expected, killed = tmp_path / f"reference-{fmt}" / name, tmp_path / f"killed-{fmt}" / name
        assert (tree(killed) == tree(expected)) if fmt == "harbor" else killed.read_bytes() == expected.read_bytes()
        # Each killed run staged the output beside it under a new name: a later run removed those.
        assert os.listdir(killed.parent) == [name]
    assert sum(len(c.kills) for c in chains.values()) >= 20


def test_an_export_clears_only_what_killed_exports_of_its_output_left(tmp_path: Path) -> None:
    with SuiteStore(tmp_path / "suite") as suite:
        suite.add(build_task("acme/one", "1"))
    out = tmp_path / "exports" / "rows.jsonl"
    out.parent.mkdir()
    stale, moved_aside = out.parent / ".rows.jsonl.tmp-0123abcd", out.parent / ".rows.jsonl.old-4567cdef"
    others = [out.parent / ".other.jsonl.tmp-0123abcd", out.parent / ".rows.jsonl.tmp-notours"]
    for path in (stale, *others):
        path.write_text("half an export")
    moved_aside.mkdir()
    (moved_aside / "task.toml").write_text("")

    def export() -> None:
        try:
            main(["suite", "export", str(tmp_path / "suite"), "--format", "jsonl", "--out", str(out)])
        except SystemExit as exc:
            assert not exc.code

    # While another export writes into the folder (it holds the folder's lock shared), its staging may be live.
    fd = os.open(out.parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        export()
        assert stale.exists() and moved_aside.exists()
    finally:
        os.close(fd)
    export()
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(p.name for p in [out, *others])
