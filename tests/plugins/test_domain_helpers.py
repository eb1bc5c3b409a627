"""What the core gives domain plugins beyond the hooks: ``LevelledDomain``, ``--seeds`` parsing,
the ``families``/``generate`` commands, and proposer kits stored as package data."""

from __future__ import annotations

import json
import sys

import click
import pytest
from click.testing import CliRunner

from autoenvscaling.cli.domain_cmds import add_family_commands
from autoenvscaling.cli.seeds import parse_seeds
from autoenvscaling.domains.base import LevelledDomain
from autoenvscaling.domains.kit import package_kit, write_examples
from autoenvscaling.errors import UsageError
from autoenvscaling.tasks import Task, read_task, short_name
from autoenvscaling.testing import ToyDomain

LABELS = {1: "easy", 2: "medium", 3: "hard"}


class Levelled(LevelledDomain):
    """The toy domain's tasks, with the level recorded as LevelledDomain expects."""

    name = "toy"
    max_level = 3

    def families(self):
        return ToyDomain().families()

    def generate_level(self, family: str, *, seed: int, level: int) -> Task:
        self.check_level(level)
        task = ToyDomain().generate(family, seed=seed, difficulty=LABELS[level])
        return task.with_provenance(parameters={**task.provenance.parameters, "level": level})

    def neighbour(self, family: str) -> str:
        names = [f.name for f in self.families()]
        return names[(names.index(family) + 1) % len(names)]


def test_levelled_domains_generate_and_vary_by_level():
    domain = Levelled()
    family = domain.families()[0].name
    parent = domain.generate(family, seed=1, difficulty="medium")
    assert parent.provenance.parameters["level"] == 2
    harder = domain.vary(parent, direction="harder", seed=2)
    assert harder.provenance.parameters["level"] == 3 and harder.provenance.parent == parent.name
    assert domain.vary(parent, direction="different", seed=2).provenance.family == domain.neighbour(family)
    with pytest.raises(UsageError, match="already the hardest"):
        domain.vary(harder, direction="harder", seed=3)
    with pytest.raises(UsageError, match="unknown difficulty 'extreme'"):
        domain.generate(family, seed=1, difficulty="extreme")
    with pytest.raises(UsageError, match="level 9 is out of range"):
        domain.generate_level(family, seed=1, level=9)


def test_seeds_read_ranges_and_lists():
    assert parse_seeds("0-3,9") == [0, 1, 2, 3, 9]
    assert parse_seeds("5") == [5]
    for bad in ("a-b", ",", "1,x"):
        with pytest.raises(UsageError):
            parse_seeds(bad)


def test_family_commands_list_and_write_tasks(tmp_path):
    @click.group()
    def toy() -> None:
        """A toy domain's commands."""

    add_family_commands(toy, Levelled)
    listed = CliRunner().invoke(toy, ["families", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.output)
    assert [r["name"] for r in rows] == [f.name for f in Levelled().families()] and "neighbour" in rows[0]
    family = rows[0]["name"]
    written = CliRunner().invoke(toy, ["generate", "--family", family, "--difficulty", "easy", "--seeds", "0-1",
                                       "--out", str(tmp_path)])
    assert written.exit_code == 0, written.output
    assert len(written.output.split()) == 2 and all(read_task(p).provenance.family == family for p in written.output.split())
    bad = CliRunner().invoke(toy, ["generate", "--family", "nope", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "unknown toy family 'nope'" in str(bad.exception)


def test_kits_are_read_from_package_data_and_examples_rewritten(tmp_path, monkeypatch):
    package = tmp_path / "toy_kit_pkg"
    (package / "kit").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "kit" / "guide.md").write_text("how to write toy tasks\n")
    (package / "kit" / "contract.md").write_text("what admission needs\n")
    task = Levelled().generate(Levelled().families()[0].name, seed=4)
    write_examples([task], package / "kit" / "examples")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("toy_kit_pkg", None)
    kit = package_kit("toy_kit_pkg")
    assert kit.guide == "how to write toy tasks\n" and kit.contract == "what admission needs\n"
    assert [p.name for p in kit.examples] == [short_name(task.name)] and read_task(kit.examples[0]).digest() == task.digest()
