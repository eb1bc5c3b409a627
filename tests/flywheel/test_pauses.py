"""Pausing a domain, a proposer or their pair after identical failures in a row: who is blamed,
and a real generate run whose second domain's generator always crashes (real workers, real bwrap)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import crashy_plugin
from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig
from autoenvscaling.flywheel.pauses import PAUSE_AFTER, pauses, signature
from autoenvscaling.flywheel.rundb import UnitRecord
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.plugins import create_host
from autoenvscaling.testing import toy

MIX = {"terminal": 1.0, "swe": 1.0}
KINDS = {"procedural": 1.0, "prompt": 1.0}


def _unit(slot: int, domain: str, proposer: str, outcome: str = "infrastructure",
          reason: str | None = "crashed: RuntimeError: boom at seed 1234") -> UnitRecord:
    return UnitRecord(key=f"r00-s{slot:03d}", round=0, slot=slot, seed=slot, domain=domain, proposer=proposer,
                      outcome=outcome, reason=reason)


def test_the_failing_dimension_is_the_one_paused() -> None:
    # One proposer failing in two domains: the proposer (a model server down), not the domains.
    units = [_unit(i, ("terminal", "swe")[i % 2], "prompt", reason=f"crashed: connection refused (port {9000 + i})")
             for i in range(PAUSE_AFTER)]
    found = pauses(units, mix=MIX, proposers=KINDS)
    assert list(found.proposers) == ["prompt"] and not found.domains and not found.pairs
    assert found.allows("terminal", "procedural") and not found.allows("swe", "prompt")
    assert found.proposers_for("swe", KINDS) == {"procedural": 1.0}
    # One domain failing under two proposers: the domain (its generator), not the proposers.
    units = [_unit(i, "swe", ("procedural", "prompt")[i % 2]) for i in range(PAUSE_AFTER)]
    found = pauses(units, mix=MIX, proposers=KINDS)
    assert list(found.domains) == ["swe"] and not found.proposers
    assert found.open_domains(MIX, KINDS) == {"terminal": 1.0}
    assert found.lines() == [f"domain swe: {PAUSE_AFTER} identical failures in a row: crashed: RuntimeError: boom at seed 1234"]
    # Failures of one pair only: just the pair.
    units = [_unit(i, "swe", "prompt") for i in range(PAUSE_AFTER)]
    found = pauses(units, mix=MIX, proposers=KINDS)
    assert found.pairs == {("swe", "prompt"): found.pairs[("swe", "prompt")]} and not found.domains and not found.proposers
    assert found.open_domains(MIX, KINDS) == MIX  # procedural still works on swe


def test_different_failures_or_a_success_between_them_pause_nothing() -> None:
    assert signature("crashed: boom at seed 12 (pid 99, id 0a1b2c3d4e)") == signature("crashed: boom at seed 7 (pid 5, id ffeeddccbb)")
    assert signature("crashed: KeyError") != signature("crashed: ValueError")
    differ = [_unit(i, "swe", "prompt", reason=r) for i, r in enumerate(["crashed: KeyError", "crashed: ValueError",
                                                                         "crashed: KeyError"])]
    assert not pauses(differ, mix=MIX, proposers=KINDS)
    recovered = [_unit(0, "swe", "prompt"), _unit(1, "swe", "prompt", outcome="admitted", reason=None),
                 _unit(2, "swe", "prompt"), _unit(3, "swe", "prompt")]
    assert not pauses(recovered, mix=MIX, proposers=KINDS)
    scored = [_unit(i, "swe", "prompt", outcome="failed_validation", reason="gate oracle: reward 0") for i in range(5)]
    assert not pauses(scored, mix=MIX, proposers=KINDS)  # a model's own failures are scored, never paused
    # A positive control: the same units, made identical, do pause.
    assert pauses([_unit(i, "swe", "prompt") for i in range(4)], mix=MIX, proposers=KINDS)


def test_generate_pauses_a_domain_whose_generator_always_crashes_and_admits_the_rest(tmp_path: Path, backend: Any) -> None:
    host = create_host(entrypoints=False, plugins=[toy, crashy_plugin])
    config = FlywheelConfig(seed=3, mix={"toy": 1.0, "crashy": 1.0}, calibrate=False, review=False, difficulty="easy",
                            settings=GateSettings(flaky_runs=1), target=4, batch=1)
    fw = Flywheel(config, tmp_path / "suite", host=host, backend=backend)
    try:
        summary = asyncio.run(fw.generate())
        units = fw.db.units()
    finally:
        fw.close()
    crashy = [u for u in units if u.domain == "crashy"]
    assert len(crashy) == PAUSE_AFTER  # tried until the pause, never again
    assert all(u.outcome == "infrastructure" and "generator bug" in (u.reason or "") for u in crashy)
    assert summary.admitted == 2 and {u.domain for u in units if u.outcome == "admitted"} == {"toy"}
    assert summary.metrics["paused"] == [f"domain crashy: {PAUSE_AFTER} identical failures in a row: "
                                         + (crashy[-1].reason or "").splitlines()[0]]
    assert fw.pause_stop is not None and "domain crashy" in fw.pause_stop
