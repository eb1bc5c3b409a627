"""The flywheel loop on the toy domain with a scripted solver (real HTTP, real bubblewrap): rounds,
assignments, pool review, the run database, the round hook, generate (SIGKILL + --resume: test_killpoints.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig, allocate
from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.plugins import create_host
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.testing import toy


def _pool(out: Path) -> list[tuple[str, str, str | None]]:
    with SuiteStore.open(out) as suite:
        assert suite.verify() == []
        return sorted((r.name, r.digest, r.key) for r in suite.filter())


def test_rounds_assign_review_and_record(toy_run: Any) -> None:
    out, summaries = toy_run.out, toy_run.summaries
    db = RunDB(out / "run.sqlite")
    units = db.units()
    r0 = [u for u in units if u.round == 0]
    r1 = [u for u in units if u.round == 1]
    assert len(r0) == 2 and all(u.direction == "new" and u.parent is None for u in r0)
    # Round 0's calibrated tasks are round 1's parents, and each direction follows its pass rate.
    calibrated = [u for u in r0 if db.rollouts(key=u.key, phase="calibration")]
    assert calibrated and len(r1) == 2
    for i, child in enumerate(r1):
        parent = calibrated[i % len(calibrated)]
        rewards = [x.reward for x in db.rollouts(key=parent.key, phase="calibration") if x.reward is not None]
        mean = sum(rewards) / len(rewards)
        expected = "simpler" if mean < 0.25 else "harder" if mean > 0.75 else "different"
        assert (child.parent, child.direction) == (parent.task_name, expected)
    # Every admitted task passed calibration with a spread of rewards, and its rollouts are stored.
    admitted = [u for u in units if u.outcome == "admitted"]
    assert {u.outcome for u in units} == {"admitted", "failed_calibration"}, [(u.key, u.outcome, u.reason) for u in units]
    for u in admitted:
        rewards = [x.reward for x in db.rollouts(key=u.key, phase="calibration")]
        assert 0.25 <= sum(rewards) / len(rewards) <= 0.75 and len(set(rewards)) > 1
        assert u.report is not None and [g["name"] for g in u.report["gates"]][-1] == "calibration"
    # The pool review of round 1 reran round 0's admissions; tasks that left are gone from the suite,
    # and round 1 got one replacement slot per task that left in earlier reviews (none before round 1).
    reviews = db.reviews(round=1)
    assert {r.key for r in reviews} == {u.key for u in r0 if u.outcome == "admitted"}
    assert all(db.rollouts(key=r.key, phase="review-1") for r in reviews)
    left = {r.key for r in reviews if r.verdict == "left"}
    assert {r.verdict for r in reviews} == {"left", "stays"}
    assert _pool(out) == sorted((u.task_name, db_digest(out, u.task_name), u.key) for u in admitted if u.key not in left)
    # Metrics per round are stored, announced through the hook, and drawn in the report.
    assert [s.round for s in summaries] == [0, 1] == [s.round for s in toy_run.announced]
    stored = db.metrics()
    assert stored[0]["proposals"] == 2 and stored[1]["left_pool"] == len(left) == 1
    assert stored[0]["metrics"]["valid_rate"]["n"] == 2
    # Every unit that reached the gates has its validation report stored.
    assert db.db.execute("SELECT COUNT(*) FROM validations").fetchone()[0] == len(units)
    assert (out / "report.html").stat().st_size > 2000
    db.close()


def db_digest(out: Path, name: str) -> str:
    with SuiteStore.open(out) as suite:
        return suite.record(name).digest


def test_a_second_run_in_the_same_folder_needs_resume_and_the_same_settings(tmp_path: Path, backend: Any,
                                                                            seeded_toy_solver: Any,
                                                                            toy_flywheel: Any) -> None:
    config = FlywheelConfig(seed=5, rounds=1, per_round=1, review=False)
    toy_flywheel(config, tmp_path / "run", backend, seeded_toy_solver)
    with pytest.raises(UsageError, match="already holds a run"):
        toy_flywheel(config, tmp_path / "run", backend, seeded_toy_solver)
    with pytest.raises(UsageError, match="different settings \\(per_round\\)"):
        toy_flywheel(config.model_copy(update={"per_round": 2}), tmp_path / "run", backend, seeded_toy_solver, resume=True)
    before = RunDB(tmp_path / "run" / "run.sqlite").units()
    toy_flywheel(config, tmp_path / "run", backend, seeded_toy_solver, resume=True)  # nothing left to do
    assert RunDB(tmp_path / "run" / "run.sqlite").units() == before


def test_generate_admits_n_tasks_over_the_mix_without_a_solver(tmp_path: Path, backend: Any) -> None:
    assert allocate(5, {"terminal": 0.4, "swe": 0.2}) == {"swe": 2, "terminal": 3}
    assert allocate(3, {"a": 1, "b": 1}) == {"a": 2, "b": 1}
    host = create_host(entrypoints=False, plugins=[toy])
    config = FlywheelConfig(seed=2, mix={"toy": 1.0}, calibrate=False, review=False, difficulty="medium",
                            settings=GateSettings(flaky_runs=2), target=3)
    fw = Flywheel(config, tmp_path / "suite", host=host, backend=backend)
    try:
        summary = asyncio.run(fw.generate())
    finally:
        fw.close()
    pool = _pool(tmp_path / "suite")
    assert summary.admitted == 3 and len(pool) == 3
    assert (tmp_path / "suite" / "dataset.toml").read_text().count("[[tasks]]") == 3
    with pytest.raises(UsageError, match="unknown domain"):
        Flywheel(config.model_copy(update={"mix": {"swe": 1.0}}), tmp_path / "other", host=host, backend=backend)
