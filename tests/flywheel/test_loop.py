"""The flywheel loop on the toy domain with a scripted solver (real HTTP, real bubblewrap): rounds,
assignments, pool review, the run database, the round hook, generate, and SIGKILL + --resume."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig, allocate
from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer
from autoenvscaling.plugins import create_host
from autoenvscaling.suite.store import SuiteStore
from autoenvscaling.testing import toy

CHILD = Path(__file__).with_name("flywheel_child.py")


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


def _units_done(out: Path) -> int:
    if not (out / "run.sqlite").exists():
        return 0
    db = RunDB(out / "run.sqlite")
    try:
        return len(db.units()) + len(db.reviews())
    finally:
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


@pytest.mark.slow
def test_sigkill_at_ten_points_resumes_to_the_same_pool(tmp_path: Path, backend: Any, seeded_toy_solver: Any) -> None:
    with ScriptedOpenAIServer(seeded_toy_solver) as srv:
        reference = tmp_path / "reference"
        done = subprocess.run([sys.executable, str(CHILD), str(reference), srv.base_url], capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        total = _units_done(reference)
        # Ten kill points spread over the run: wait until the resumed child has recorded a random
        # number of units, then a random fraction of a unit more (so kills land inside units too).
        rng = random.Random(20240611)
        targets = sorted(rng.randrange(0, max(1, int(total * 0.7))) for _ in range(10))
        killed = tmp_path / "killed"
        progress_at_kills: list[int] = []
        log_path = tmp_path / "child.log"
        for target in targets:
            with open(log_path, "ab") as log:
                proc = subprocess.Popen([sys.executable, str(CHILD), str(killed), srv.base_url], stdout=log, stderr=log)
            deadline = time.monotonic() + 300
            while _units_done(killed) < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 1.0))
            assert proc.poll() is None, f"the child ended before its kill point: {log_path.read_text()[-2000:]}"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            progress_at_kills.append(_units_done(killed))
        final = subprocess.run([sys.executable, str(CHILD), str(killed), srv.base_url], capture_output=True,
                               text=True, timeout=600)
        assert final.returncode == 0, final.stderr[-2000:]
    assert len(progress_at_kills) == 10 and len(set(progress_at_kills)) >= 3, progress_at_kills
    assert _pool(reference), "the reference run admitted nothing: the comparison would be empty"
    assert _pool(killed) == _pool(reference)
    ref_db, killed_db = RunDB(reference / "run.sqlite"), RunDB(killed / "run.sqlite")
    # Each task that left the pool in a review got a replacement slot in the next round.
    left_in_1 = sum(r.verdict == "left" for r in ref_db.reviews(round=1))
    assert left_in_1 >= 1 and len(ref_db.units(round=2)) == 3 + left_in_1
    summary = lambda db: [(u.key, u.outcome, u.digest, u.task_name) for u in db.units()]  # noqa: E731
    assert summary(killed_db) == summary(ref_db)
    assert killed_db.reviews() == ref_db.reviews()
    assert [(r.key, r.phase, r.idx, r.reward) for r in killed_db.rollouts()] == \
        [(r.key, r.phase, r.idx, r.reward) for r in ref_db.rollouts()]
