"""Kill points of ``autoenvscaling run`` and ``generate`` (tests/killpoints.py) on the toy domain,
with real sandboxes and, for ``run``, the scripted solver over HTTP: the real command, SIGKILLed
right after each durable commit in turn and continued with ``--resume``, ends with what an
uninterrupted run of the same seed ends with: the same units, reviews and rollouts in run.sqlite,
the same pool (rows, task folders and dataset.toml byte for byte, the index matching the files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer

from ..killpoints import Chain, KillPoints, kind, suite_state

# run.sqlite's phase A outcome kept, the suite's commits of an admission (a pending row, the task
# folder, the row ready, dataset.toml) or of a task leaving the pool (its row deleted, dataset.toml),
# then run.sqlite's: a unit recorded, a review recorded, a round's metrics; and the report.
POINTS = ["pending", "index-insert", "task-dir", "index-ready", "index-delete", "manifest", "unit", "review",
          "metrics", "report"]


def _run_state(out: Path) -> dict[str, Any]:
    db = RunDB(out / "run.sqlite")
    try:
        return {
            "units": [(u.key, u.round, u.slot, u.seed, u.direction, u.parent, u.task_name, u.digest, u.outcome,
                       u.reason) for u in db.units()],
            "validations": db.db.execute("SELECT key, task_name, digest, status, reason FROM validations "
                                         "ORDER BY key").fetchall(),
            "reviews": db.reviews(),
            "rollouts": [(r.key, r.phase, r.idx, r.round, r.task_name, r.reward, r.status) for r in db.rollouts()],
            "metrics": sorted(db.metrics()),
        }
    finally:
        db.close()


def _chain(tmp_path: Path, args: list[str], *, each_kind_once: bool = False) -> tuple[Chain, Path, Path]:
    """The reference run of ``args`` in reference/out, and the kill chain in killed/out."""
    kp = KillPoints(tmp_path / "steps", POINTS, toy=True)
    reference = kp.reference([*args, "--out", str(tmp_path / "reference" / "out")])
    killed = [*args, "--out", str(tmp_path / "killed" / "out")]
    chain = kp.chain(killed, [*killed, "--resume"], reference, each_kind_once=each_kind_once)
    return chain, tmp_path / "reference" / "out", tmp_path / "killed" / "out"


def _kept_once(steps: Path) -> None:
    """Every phase A outcome was kept once in the whole chain: a resumed run took the kept ones from
    run.sqlite rather than proposing and validating them again (step 1 is the reference run)."""
    kept = [line.split(" ", 1)[1] for log in sorted(steps.glob("step-*.log")) if log.name != "step-1.log"
            for line in log.read_text().splitlines() if line.startswith("commit pending:")]
    assert kept and len(kept) == len(set(kept)), sorted(k for k in kept if kept.count(k) > 1)


def _same_run(expected: Path, got: Path) -> None:
    want = suite_state(expected)
    assert want.records and want.problems == [] and want.strays == []
    assert suite_state(got) == want
    assert _run_state(got) == _run_state(expected)
    # Every round that recorded a unit counted its wall time, even when killed right after its last
    # unit (the seconds are committed with the unit, so a resumed run has none left to redo).
    db = RunDB(got / "run.sqlite")
    try:
        for r in sorted({u.round for u in db.units()}):
            assert db.spent(r)["seconds"] > 0, f"round {r} lost its seconds"
    finally:
        db.close()
    for out in (expected, got):  # every kept outcome went with its unit's record
        db = RunDB(out / "run.sqlite")
        try:
            assert db.db.execute("SELECT COUNT(*) FROM pending").fetchone()[0] == 0
        finally:
            db.close()
    assert (got / "report.html").is_file() and not (got / "errors.log").exists()
    assert sorted(p.name for p in got.iterdir()) == sorted(p.name for p in expected.iterdir())


@pytest.mark.parametrize("each_kind_once", [
    # In the fast set, one kill per kind of commit; every commit in the slow set.
    pytest.param(True, id="each-kind"),
    pytest.param(False, id="every", marks=[pytest.mark.slow]),
])
def test_generate_killed_at_every_commit(tmp_path: Path, backend: Any, record_property: Any,
                                         each_kind_once: bool) -> None:
    chain, expected, got = _chain(tmp_path, ["generate", "--mix", "toy=1", "-n", "4", "--seed", "1"],
                                  each_kind_once=each_kind_once)
    record_property("kill_points", {"command": "generate", "kills": len(chain.kills)})
    if each_kind_once:  # every kind of commit the command makes was killed at, once
        assert {kind(k) for k in chain.kills} == {kind(c) for c in chain.reference}, chain
    else:
        assert len(chain.kills) >= 20, chain
    _same_run(expected, got)
    _kept_once(tmp_path / "steps")


@pytest.mark.parametrize(("rounds", "replaced", "each_kind_once"), [
    # Round 1's review takes a task out of the pool (a row deleted, dataset.toml rewritten). In the
    # fast set, one kill per kind of commit (12 runs of the command instead of 28); every commit in the
    # slow set.
    pytest.param(["--rounds", "2", "--per-round", "2", "--seed", "0"], False, True, id="2x2-each-kind"),
    pytest.param(["--rounds", "2", "--per-round", "2", "--seed", "0"], False, False, id="2x2",
                 marks=[pytest.mark.slow]),
    # Also a replacement slot in round 2 for the task that left in round 1, planned from the reviews.
    pytest.param(["--rounds", "3", "--per-round", "3", "--seed", "2"], True, False, id="3x3",
                 marks=[pytest.mark.slow, pytest.mark.timeout(3600)]),
])
def test_run_killed_at_every_commit(tmp_path: Path, backend: Any, seeded_toy_solver: Any, record_property: Any,
                                    rounds: list[str], replaced: bool, each_kind_once: bool) -> None:
    with ScriptedOpenAIServer(seeded_toy_solver) as srv:
        chain, expected, got = _chain(tmp_path, ["run", "--mix", "toy=1", *rounds, "--solver-base-url", srv.base_url,
                                                 "--solver-model", "scripted-solver", "--solver-turns", "3"],
                                      each_kind_once=each_kind_once)
    record_property("kill_points", {"command": "run", "kills": len(chain.kills)})
    if each_kind_once:  # every kind of commit the run makes was killed at, once
        assert {kind(k) for k in chain.kills} == {kind(c) for c in chain.reference}, chain
    else:
        assert len(chain.kills) >= 20, chain
    _same_run(expected, got)
    _kept_once(tmp_path / "steps")
    db = RunDB(expected / "run.sqlite")
    left = [r for r in db.reviews() if r.verdict == "left"]
    # (Reviews run concurrently: which of them a resumed run records first, and so is killed at, varies.)
    assert left and all(f"index-delete:{r.task_name}" in chain.reference for r in left)
    if replaced:
        assert len(db.units(round=2)) == 3 + sum(r.round == 1 for r in left)
    db.close()
