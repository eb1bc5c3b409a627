"""AUTOENVSCALING_REQUIRE_BWRAP=1 (CI) turns a skip because bubblewrap cannot run into a failure, so
CI never passes by skipping the sandbox tests; other skips stay skips, and without the switch it is
a skip as before (the positive control). The red-team tally prints its section at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TEST = '''
import pytest

def test_needs_the_sandbox():
    pytest.skip("bubblewrap is unavailable here: bwrap: setting up uid map: Permission denied")

def test_needs_something_else():
    pytest.skip("no GPU here")
'''


def _pytest(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_skips.py").write_text(TEST)
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOENVSCALING_REQUIRE_BWRAP", "AUTOENVSCALING_REDTEAM_TALLY")}
    if require is not None:
        env["AUTOENVSCALING_REQUIRE_BWRAP"] = require
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def test_a_sandbox_skip_fails_under_require_bwrap(tmp_path):
    required = _pytest(tmp_path, "1")
    assert required.returncode == 1, required.stdout
    assert "1 failed, 1 skipped" in required.stdout, required.stdout
    assert "AUTOENVSCALING_REQUIRE_BWRAP=1: the sandbox tests must run here" in required.stdout
    plain = _pytest(tmp_path, None)
    assert plain.returncode == 0 and "2 skipped" in plain.stdout, plain.stdout


def test_the_tally_counts_per_domain(tmp_path, monkeypatch):
    from autoenvscaling.redteam.run import TALLY_ENV, CheatOutcome, read_tally, tally

    path = tmp_path / "tally.jsonl"
    monkeypatch.setenv(TALLY_ENV, str(path))
    tally("terminal", CheatOutcome(cheat="terminal.a", reward=0.0))
    tally("terminal", CheatOutcome(cheat="terminal.a", reward=1.0, status="beaten", control=True))
    tally("terminal", CheatOutcome(cheat="terminal.b", reward=1.0, status="beaten"))
    tally("swe", CheatOutcome(cheat="swe.x", status="error", error="sandbox"))
    assert read_tally(str(path)) == [
        "swe: 1 cheats, 1 attempts, 0 held, 0 beaten, 1 errors; positive controls 0/0 fooled",
        "terminal: 2 cheats, 2 attempts, 1 held, 1 beaten, 0 errors; positive controls 1/1 fooled"]
