"""The run database: a unit's rows go in together, a recomputed unit replaces them, tasks round-trip, and
a unit's phase A outcome is kept until the unit is recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

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


def test_a_phase_a_outcome_is_kept_until_its_unit_is_recorded(tmp_path: Path) -> None:
    """What a resumed run reads back is the outcome as phase A returned it: the proposal with its
    cost and task, the task named for the suite byte for byte, the report with every gate."""
    from autoenvscaling.flywheel.jobs import ProposeOutcome
    from autoenvscaling.gates.base import Evidence, GateResult, ValidationReport
    from autoenvscaling.proposers.base import Proposal

    proposed = ToyDomain().generate("count-lines", seed=4)
    named = proposed.renamed("toy-count-lines-r0-s0")
    gate = GateResult(name="oracle", status="pass", reason="oracle reward 1", seconds=1.25,
                      evidence=[Evidence(command="oracle: solution/solve.sh, then tests/test.sh",
                                         values={"reward": 1.0}, output_tail="1 passed")])
    report = ValidationReport(task="r00-s000", name=named.name, status="valid", reason="all gates passed",
                              gates=[gate], seconds=2.5, digest=named.digest())
    outcome = ProposeOutcome(proposal=Proposal(task=proposed, kind="prompt", model="m", tokens_in=10, tokens_out=20,
                                               attempts=2, seconds=3.0, transcript=[{"role": "user", "content": "x"}]),
                             task=named, report=report)
    db = RunDB(tmp_path / "run.sqlite")
    assert db.kept_outcome("r00-s000") is None and db.kept_count() == 0
    db.keep_outcome("r00-s000", *outcome.dump())
    kept = db.kept_outcome("r00-s000")
    assert kept is not None
    back = ProposeOutcome.load(*kept)
    assert back == outcome and back.task is not None and back.task.digest() == named.digest()
    assert back.proposal.task is not None and back.proposal.task.digest() == proposed.digest()
    nothing = ProposeOutcome(proposal=Proposal(task=None, kind="prompt", refused=True, error="the model refused"))
    db.keep_outcome("r00-s001", *nothing.dump())
    assert ProposeOutcome.load(*db.kept_outcome("r00-s001") or ("", None, None)) == nothing
    unit = UnitRecord(key="r00-s000", round=0, slot=0, seed=1, domain="toy", proposer="prompt", outcome="admitted")
    db.record_unit(unit, named, [])  # the unit's record takes its kept outcome with it, in one transaction
    assert db.kept_outcome("r00-s000") is None and db.kept_outcome("r00-s001") is not None and db.kept_count() == 1
    db.close()


def test_the_interrupt_message_counts_the_kept_outcomes(tmp_path: Path) -> None:
    from autoenvscaling.cli.flywheel_cmd import _kept
    from autoenvscaling.flywheel.jobs import ProposeOutcome
    from autoenvscaling.proposers.base import Proposal

    assert _kept(tmp_path) == f"nothing was recorded yet in {tmp_path}"
    db = RunDB(tmp_path / "run.sqlite")
    db.record_unit(UnitRecord(key="r00-s000", round=0, slot=0, seed=1, domain="toy", proposer="procedural",
                              outcome="admitted"), ToyDomain().generate("count-lines", seed=1), [])
    db.close()
    assert _kept(tmp_path).endswith("run.sqlite, 1 admitted; nothing in flight was kept")
    db = RunDB(tmp_path / "run.sqlite")
    db.keep_outcome("r00-s001", *ProposeOutcome(proposal=Proposal(task=None, kind="procedural")).dump())
    db.close()
    assert _kept(tmp_path).endswith(
        "1 admitted, 1 more proposed and validated (kept for --resume); nothing in flight was kept")


def test_an_unreadable_kept_outcome_is_proposed_and_validated_again(tmp_path: Path, backend: Any) -> None:
    """The kept outcome only saves work: one another version wrote (or a damaged row) is done again."""
    from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig
    from autoenvscaling.plugins import create_host
    from autoenvscaling.testing import toy

    from autoenvscaling.suite.store import SuiteStore

    out = tmp_path / "run"
    SuiteStore(out).close()  # the folder a killed run left: a suite beside run.sqlite
    db = RunDB(out / "run.sqlite")
    db.keep_outcome("r00-s000", '{"proposal": {"kind": "procedural"}, "report": null}', b"not a tar", None)
    db.keep_outcome("r00-s001", '{"proposal": {"kind": 7}', None, None)
    db.close()
    fw = Flywheel(FlywheelConfig(seed=1, rounds=1, per_round=2, mix={"toy": 1.0}), out,
                  host=create_host(entrypoints=False, plugins=[toy]), backend=backend, resume=True)

    async def go() -> None:
        try:
            await fw.run()
        finally:
            await fw.executor.aclose()

    try:
        asyncio.run(go())
    finally:
        fw.close()
    db = RunDB(out / "run.sqlite")
    assert [(u.key, u.outcome) for u in db.units()] == [("r00-s000", "admitted"), ("r00-s001", "admitted")]
    assert db.kept_count() == 0
    db.close()


def test_a_run_recorded_before_vouching_was_a_setting_resumes(tmp_path: Path) -> None:
    """The gate settings' ``redteam_vouched`` (default True) is left out of a run's identity, so a run
    recorded before the setting existed resumes with the same options; setting it False is a change."""
    from autoenvscaling.errors import UsageError
    from autoenvscaling.flywheel.loop import FlywheelConfig
    from autoenvscaling.gates.base import GateSettings

    config = FlywheelConfig(seed=1, mix={"toy": 1.0})
    older = config.identity()
    assert "redteam_vouched" not in older["settings"]
    db = RunDB(tmp_path / "run.sqlite")
    db.bind_config(older, resume=False)
    db.bind_config(config.identity(), resume=True)  # the same run
    judged = config.model_copy(update={"settings": GateSettings(redteam_vouched=False)}).identity()
    assert judged["settings"]["redteam_vouched"] is False
    try:
        db.bind_config(judged, resume=True)
    except UsageError as exc:
        assert "different settings (settings)" in exc.message
    else:
        raise AssertionError("a run judging every task resumed a run that vouched")
