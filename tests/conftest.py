"""Shared test settings: a persistent cache for base root filesystems and built layers (building the
Debian base takes ~20 s once), one torch thread, strict plugin loading; and the counts the robustness
suites print at the end of a run: fuzz cases (tests/fuzz), kill points survived (tests/killpoints.py),
attacks contained per backend (tests/sandbox/test_attack_suite.py) and the ``count`` lines tests record
(leak counts). They are added up here because under xdist only this conftest is loaded in the process
that prints the summary; each test's report (its outcome, its user properties) reaches it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")
os.environ.setdefault("AUTOENVSCALING_STRICT_PLUGINS", "1")

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
# Fixture tasks carry their own verifiers (tests/test_*.py run inside sandboxes), never ours to collect.
collect_ignore = ["fixtures"]
FUZZ_TALLY = "AUTOENVSCALING_FUZZ_TALLY"  # tests/fuzz/conftest.py appends one line per property
_OWN_TALLY = pytest.StashKey[str]()  # the tally file this session created (and removes)


def pytest_configure(config: pytest.Config) -> None:
    """One fuzz tally file per session; xdist workers inherit its path."""
    if not os.environ.get(FUZZ_TALLY) and not hasattr(config, "workerinput"):
        fd, path = tempfile.mkstemp(prefix="aes-fuzz-", suffix=".tsv")
        os.close(fd)
        os.environ[FUZZ_TALLY] = path
        config.stash[_OWN_TALLY] = path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """``fuzz: N cases run over M properties, K crashes`` when fuzz tests ran (K: properties that failed);
    ``kill points: ...`` when kill-point tests ran."""
    if not hasattr(config, "workerinput"):
        _kill_points_summary(terminalreporter)
        if _attack_outcomes:
            terminalreporter.write_line(_attack_summary())
        for line in _recorded(terminalreporter, "count"):
            terminalreporter.write_line(str(line))
    path = os.environ.get(FUZZ_TALLY)
    if hasattr(config, "workerinput") or not path or not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as fh:
        rows = [line.rstrip("\n").split("\t") for line in fh if line.count("\t") == 2]
    if rows:
        cases = sum(int(row[1]) for row in rows)
        crashes = sum(int(row[2]) for row in rows)
        terminalreporter.write_line(f"fuzz: {cases} cases run over {len(rows)} properties, {crashes} crashes")


def pytest_unconfigure(config: pytest.Config) -> None:
    own = config.stash.get(_OWN_TALLY, None)
    if own and os.path.exists(own):
        os.unlink(own)


def _kill_points_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """``kill points: run 24/24, ... survived``: per command, the kills of the tests that passed over
    all kills made. Each kill-point test records ``kill_points`` = {"command", "kills"} as a user
    property, which reaches this process in the test's report under xdist too."""
    made: dict[str, int] = {}
    survived: dict[str, int] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == "kill_points":
                    command, kills = value["command"], value["kills"]
                    made[command] = made.get(command, 0) + kills
                    survived[command] = survived.get(command, 0) + (kills if report.passed else 0)
    order = ["run", "generate", "suite import", "suite export"]
    commands = sorted(made, key=lambda c: (order.index(c) if c in order else len(order), c))
    if commands:
        terminalreporter.write_line("kill points: " + ", ".join(f"{c} {survived[c]}/{made[c]}" for c in commands)
                                    + " survived")



def _recorded(terminalreporter: pytest.TerminalReporter, name: str) -> list[object]:
    """The values tests recorded as user property ``name`` (``record_property``), in report order."""
    return [value for reports in terminalreporter.stats.values() for report in reports
            if getattr(report, "when", None) == "call"
            for key, value in getattr(report, "user_properties", ()) if key == name]


# The attack suite's count: each attack test's outcome per backend, from every test's report.
_ATTACK_TEST = "test_attack_suite.py::test_attack["
_attack_outcomes: dict[str, dict[str, str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if _ATTACK_TEST not in report.nodeid:
        return
    backend, _, name = report.nodeid.split(_ATTACK_TEST, 1)[1].rstrip("]").partition("-")
    if hasattr(report, "wasxfail") and report.skipped:
        outcome = "known hole"
    elif report.failed:
        outcome = "failed"
    elif report.skipped:
        outcome = "skipped"
    elif report.when == "call":
        outcome = "contained"
    else:
        return
    seen = _attack_outcomes.setdefault(backend, {})
    if seen.get(name) != "failed":  # a failing teardown after a pass counts as a failure
        seen[name] = outcome


def _attack_summary() -> str:
    """``attack suite: bwrap 35/35 contained, docker 33/35 contained (known hole: disk-fill, ...)``."""
    parts = []
    for backend, seen in sorted(_attack_outcomes.items()):
        contained = sum(outcome == "contained" for outcome in seen.values())
        others = [f"{kind}: {', '.join(sorted(n for n, o in seen.items() if o == kind))}"
                  for kind in ("known hole", "failed", "skipped") if kind in seen.values()]
        parts.append(f"{backend} {contained}/{len(seen)} contained" + (f" ({'; '.join(others)})" if others else ""))
    return "attack suite: " + ", ".join(parts)

@pytest.fixture(scope="session")
def harbor_cookbook() -> Path:
    """The four Harbor cookbook tasks from ../shared/corpora (skipped in a user's checkout)."""
    path = CORPORA / "harbor-cookbook"
    if not path.is_dir():
        pytest.skip("../shared/corpora/harbor-cookbook is not present in this checkout")
    return path
