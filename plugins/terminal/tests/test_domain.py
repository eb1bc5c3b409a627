"""The plugin as installed: registration through the entry point, a cheap import, the variation
operators, the proposer kit and the ``terminal`` command group."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from autoenvscaling.errors import UsageError
from autoenvscaling.plugins import create_host
from autoenvscaling.tasks import read_task
from autoenvscaling_terminal.domain import TerminalDomain
from autoenvscaling_terminal.families import CATALOG
from helpers import data_bytes, domain, solve_commands


def test_registered_through_the_entry_point():
    host = create_host(strict=True)
    assert host.domains.get("terminal") is TerminalDomain
    assert host.domains.entry("terminal").plugin == "terminal"
    fmt = host.formats.get("endless-terminals")
    assert fmt.name == "endless-terminals"
    info = next(p for p in host.plugins() if p.name == "terminal")
    assert info.distribution == "autoenvscaling-terminal"
    assert {"autoenvscaling_register_domains", "autoenvscaling_register_formats", "autoenvscaling_register_commands"} <= set(info.hooks)


def test_plugin_import_is_cheap():
    code = ("import sys, autoenvscaling_terminal; "
            "bad = [m for m in sys.modules if m.startswith('autoenvscaling_terminal.') or m in ('click', 'sqlite3', 'tarfile')]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", f"importing the plugin pulled in {out}"


def test_families_listed():
    families = TerminalDomain().families()
    assert [f.name for f in families] == list(CATALOG) and all(f.skills and f.description for f in families)


def test_unknown_inputs_are_usage_errors():
    with pytest.raises(UsageError):
        domain().generate("no_such_family", seed=1)
    with pytest.raises(UsageError):
        domain().generate("sqlite", seed=1, difficulty="impossible")
    with pytest.raises(UsageError):
        domain().generate("sqlite", seed=1, kind="nope")
    with pytest.raises(UsageError):
        domain().generate("sqlite", seed=1, reward_mode="sometimes")


def workload(task):
    return solve_commands(task), data_bytes(task)


@pytest.mark.parametrize("family", list(CATALOG))
def test_harder_and_simpler_children_change_the_workload(family):
    """A harder child takes measurably more oracle steps or data, a simpler one fewer, for every
    family: commands in solve.sh never go the wrong way, and at least one of the two measures moves."""
    d = domain()
    for seed in (1, 2):
        parent = d.generate(family, seed=seed, difficulty="medium")
        harder = d.vary(parent, direction="harder", seed=seed + 50)
        simpler = d.vary(parent, direction="simpler", seed=seed + 80)
        for child in (harder, simpler):
            assert child.provenance.family == family and child.provenance.parent == parent.name
            assert child.provenance.parameters["kind"] == parent.provenance.parameters["kind"]
        (pc, pd), (hc, hd), (sc, sd) = workload(parent), workload(harder), workload(simpler)
        assert harder.provenance.parameters["level"] == 3 and simpler.provenance.parameters["level"] == 1
        assert hc >= pc and hd > pd, f"{harder.name}: {hc} commands/{hd} bytes vs parent {pc}/{pd}"
        assert sc <= pc and sd < pd, f"{simpler.name}: {sc} commands/{sd} bytes vs parent {pc}/{pd}"


def test_vary_beyond_hard_and_below_easy():
    d = domain()
    hard = d.generate("log_analysis", seed=3, difficulty="hard")
    harder = d.vary(hard, direction="harder", seed=4)
    assert harder.provenance.difficulty == "hard" and harder.provenance.parameters["level"] == 4
    assert data_bytes(harder) > data_bytes(hard)
    easiest = d.generate_level("log_analysis", seed=3, level=0)
    floor = d.vary(easiest, direction="simpler", seed=1)  # below level 0: the one-command basics
    assert floor.provenance.family == "basics" and floor.provenance.parameters["level"] == 0
    assert floor.provenance.parent == easiest.name and solve_commands(floor) == 1
    with pytest.raises(UsageError):
        d.vary(floor, direction="simpler", seed=2)


def test_different_moves_to_the_neighbouring_family():
    d = domain()
    for family, info in CATALOG.items():
        parent = d.generate(family, seed=9, difficulty="hard")
        child = d.vary(parent, direction="different", seed=10)
        assert child.provenance.family == info.neighbour
        assert child.provenance.parameters["level"] == 3 and child.provenance.direction == "different"
    assert len({info.neighbour for info in CATALOG.values()}) >= 10, "'different' should reach most families"


def test_vary_is_deterministic():
    d = domain()
    parent = d.generate("sqlite", seed=1, difficulty="medium")
    assert d.vary(parent, direction="harder", seed=7) == d.vary(parent, direction="harder", seed=7)


def test_proposer_kit():
    kit = domain().kit()
    assert "# Writing terminal tasks" in kit.guide and "# The terminal task contract" in kit.contract
    assert "reward.json" in kit.contract and "test_initial_" in kit.contract
    assert sorted(read_task(p).provenance.family for p in kit.examples) == ["git_ops", "log_analysis", "shell_script"]


def test_cli_lists_families_as_json():
    from autoenvscaling.cli.main import cli

    result = CliRunner().invoke(cli, ["terminal", "families", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["name"] for r in rows] == list(CATALOG)
    assert all(r["kinds"] and r["skills"] and r["neighbour"] in CATALOG for r in rows)
    text = CliRunner().invoke(cli, ["terminal", "families"])
    assert text.exit_code == 0 and "git_ops" in text.output


def test_domains_list_shows_terminal():
    from autoenvscaling.cli.main import cli

    result = CliRunner().invoke(cli, ["domains", "list", "--json"])
    assert result.exit_code == 0, result.output
    row = next(r for r in json.loads(result.output) if r["name"] == "terminal")
    assert row["families"] == list(CATALOG) and row["sandbox_backend"] == "bwrap"
