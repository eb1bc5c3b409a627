"""The run database: a unit's rows go in together, a recomputed unit replaces them, tasks round-trip."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.flywheel.rundb import RolloutRow, RunDB, UnitRecord, task_from_blob, task_to_blob
from autoenvscaling.testing import ToyDomain


def test_task_blobs_round_trip() -> None:
    task = ToyDomain().generate("write-file", seed=2, difficulty="hard").with_provenance(round=3)
    back = task_from_blob(task_to_blob(task))
    assert back == task and back.digest() == task.digest() and back.files["solution/solve.sh"].executable


def test_units_validations_and_rollouts(tmp_path: Path) -> None:
    db = RunDB(tmp_path / "run.sqlite")
    task = ToyDomain().generate("count-lines", seed=1)
    report = {"task": "r00-s000", "name": task.name, "status": "valid", "reason": "all gates passed", "seconds": 1.5,
              "digest": task.digest(), "gates": [{"name": "lint", "status": "pass", "seconds": 0.0, "evidence": []}]}
    unit = UnitRecord(key="r00-s000", round=0, slot=0, seed=9, domain="toy", proposer="procedural", task_name=task.name,
                      digest=task.digest(), outcome="admitted", reason="all gates passed", report=report)
    rows = [RolloutRow(key=unit.key, phase="calibration", idx=i, round=0, domain="toy", task_name=task.name,
                       reward=float(i % 2), status="ok") for i in range(4)]
    assert not db.done(unit.key)
    db.record_unit(unit, task, rows)
    db.record_unit(unit, task, rows)  # a recomputed unit replaces its rows, never duplicates them
    assert db.done(unit.key) and db.units() == [unit] and db.units(round=1) == []
    assert db.task(unit.key) == task
    assert [r.reward for r in db.rollouts(key=unit.key, phase="calibration")] == [0.0, 1.0, 0.0, 1.0]
    assert [tuple(r) for r in db.db.execute("SELECT status, reason FROM validations")] == [("valid", "all gates passed")]
    failed = UnitRecord(key="r00-s001", round=0, slot=1, seed=3, domain="toy", proposer="prompt", outcome="refused",
                        reason="the model refused")
    db.record_unit(failed, None, [], seconds=2.5)  # the round's wall time goes in with the unit
    assert db.task(failed.key) is None and db.units()[1].report is None
    assert db.spent(0)["seconds"] == 2.5 and db.spent(1)["seconds"] == 0 and db.spent()["seconds"] == 2.5
    db.close()
