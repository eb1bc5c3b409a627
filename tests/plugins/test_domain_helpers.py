"""What the core gives domain plugins beyond the hooks: ``LevelledDomain``, ``--seeds`` parsing,
the ``families``/``generate`` commands, and proposer kits stored as package data."""

from __future__ import annotations

import json
import random
import sys

import click
import pytest
from click.testing import CliRunner

from autoenvscaling.cli.domain_cmds import add_family_commands
from autoenvscaling.cli.seeds import parse_seeds
from autoenvscaling.domains import kit as kit_module
from autoenvscaling.domains.base import KitExample, LevelledDomain
from autoenvscaling.domains.catalog import FamilyInfo
from autoenvscaling.domains.kit import write_examples
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


class Drawn(LevelledDomain):
    """A domain that gives only build_task: the toy's task, with the first draw of the rng it was handed
    recorded, so the test sees what the default generate_level seeded."""

    name = "drawn_domain"
    max_level = 3
    catalog = {f.name: FamilyInfo(f.name, f.description, tuple(f.skills), f.name) for f in ToyDomain().families()}

    def build_task(self, family, rng, *, seed, level):  # noqa: ANN001, ANN201
        task = ToyDomain().generate(family, seed=seed, difficulty=LABELS[level])
        return task.with_provenance(parameters={"level": level, "draw": rng.random()})


def test_the_default_generate_level_checks_the_request_and_seeds_build_task_per_family_seed_and_level():
    domain, family = Drawn(), next(iter(Drawn.catalog))
    task = domain.generate(family, seed=4, difficulty="hard")
    expected = random.Random(f"autoenvscaling-drawn-domain/{family}/4/3").random()
    assert task.provenance.parameters == {"level": 3, "draw": expected}
    assert domain.generate_level(family, seed=5, level=3).provenance.parameters["draw"] != expected
    with pytest.raises(UsageError, match="unknown"):
        domain.generate_level("no_such_family", seed=1, level=1)
    with pytest.raises(UsageError, match="level 9 is out of range"):
        domain.generate_level(family, seed=1, level=9)
    with pytest.raises(UsageError):
        domain.generate_level(family, seed=1, level=1, kind="any")  # no options in this domain


def test_a_levelled_domain_with_neither_generator_says_so():
    class Empty(LevelledDomain):
        name = "empty"
        catalog = Drawn.catalog

    with pytest.raises(NotImplementedError, match="Empty gives neither generate_level nor build_task"):
        Empty().generate_level(next(iter(Drawn.catalog)), seed=1, level=1)


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


KIT_DOMAIN = """
from autoenvscaling.domains.base import KitExample
from autoenvscaling.testing import ToyDomain


class KitToy(ToyDomain):
    kit_examples = (KitExample("write-file", 4), KitExample("count-lines", 2, "hard"))
"""


def _toy_kit_package(tmp_path, monkeypatch, *, guide: bool = True):
    package = tmp_path / "toy_kit_pkg"
    (package / "kit").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "domain.py").write_text(KIT_DOMAIN)
    if guide:
        (package / "kit" / "guide.md").write_text("how to write toy tasks\n")
        (package / "kit" / "contract.md").write_text("what admission needs\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("AUTOENVSCALING_CACHE", str(tmp_path / "cache"))
    for name in ("toy_kit_pkg", "toy_kit_pkg.domain"):
        sys.modules.pop(name, None)
    kit_module._source_digests.pop("toy_kit_pkg", None)
    from toy_kit_pkg.domain import KitToy

    return package, KitToy


def test_kits_read_the_guide_from_package_data_and_build_their_examples_once(tmp_path, monkeypatch):
    package, KitToy = _toy_kit_package(tmp_path, monkeypatch)
    kit = KitToy().kit()
    assert kit.guide == "how to write toy tasks\n" and kit.contract == "what admission needs\n"
    fresh = KitToy().kit_tasks()
    assert [p.name for p in kit.examples] == sorted(short_name(t.name) for t in fresh)
    assert {read_task(p).digest() for p in kit.examples} == {t.digest() for t in fresh}
    assert all(p.is_relative_to(tmp_path / "cache" / "kits" / "toy") for p in kit.examples)
    # built once: a second kit (another process would see the same folder) reuses the files
    (kit.examples[0] / "marker").write_text("kept")
    kit_module._kits.clear()
    assert (KitToy().kit().examples[0] / "marker").read_text() == "kept"


def test_a_change_to_the_domain_code_or_the_example_list_gives_new_examples(tmp_path, monkeypatch):
    package, KitToy = _toy_kit_package(tmp_path, monkeypatch)
    first = KitToy().kit().examples
    # the package's code changes (a generator fixed): a new key, so the examples are built again
    (package / "domain.py").write_text(KIT_DOMAIN + "\n# a generator changed\n")
    kit_module._source_digests.pop("toy_kit_pkg", None)
    second = KitToy().kit().examples
    assert second[0].parent != first[0].parent and [p.name for p in second] == [p.name for p in first]
    # another example list: other tasks
    class Other(KitToy):
        kit_examples = (KitExample("write-file", 9),)

    assert [read_task(p).provenance.seed for p in Other().kit().examples] == [9]


def test_a_domain_without_a_guide_has_no_kit(tmp_path, monkeypatch):
    _, KitToy = _toy_kit_package(tmp_path, monkeypatch, guide=False)
    assert KitToy().kit() is None


def test_write_examples_replaces_the_folder(tmp_path):
    task = Levelled().generate(Levelled().families()[0].name, seed=4)
    (tmp_path / "ex" / "stale").mkdir(parents=True)
    written = write_examples([task], tmp_path / "ex")
    assert [p.name for p in (tmp_path / "ex").iterdir()] == [short_name(task.name)] == [p.name for p in written]


def test_examples_that_cannot_be_generated_leave_the_guide_and_a_warning(tmp_path, monkeypatch):
    package, KitToy = _toy_kit_package(tmp_path, monkeypatch)

    class Broken(KitToy):
        def kit_tasks(self):
            raise UsageError("no sandbox here", hint="install bubblewrap")

    with pytest.warns(RuntimeWarning, match="could not be generated .*no sandbox here"):
        kit = Broken().kit()
    assert kit.guide == "how to write toy tasks\n" and kit.examples == []
    assert list((tmp_path / "cache" / "kits" / "toy").iterdir()) == []  # nothing half-built is kept


def test_a_domain_remembers_what_it_generated_in_this_process_by_content():
    """``remember_generated`` / ``generated_here``, for a domain that cannot afford to regenerate a
    task to vouch for it: the same content renamed and stamped is recognised, by its domain only;
    an edited file, an edited setting or content nobody recorded is not."""
    from autoenvscaling.domains.base import content_digest, generated_here, remember_generated

    made = ToyDomain().generate("write-file", seed=31, difficulty="medium")
    other = ToyDomain().generate("write-file", seed=32, difficulty="medium")
    assert remember_generated("toy-memory", made) is made
    assert generated_here("toy-memory", made)
    assert generated_here("toy-memory", made.renamed("org/elsewhere").with_provenance(round=3, proposer="procedural"))
    assert not generated_here("toy", made)  # another domain's record
    assert not generated_here("toy-memory", other)
    assert not generated_here("toy-memory", made.with_files({"tests/test.sh": "#!/bin/bash\nexit 0\n"}))
    slower = made.config.verifier.model_copy(update={"timeout_sec": made.config.verifier.timeout_sec + 1})
    assert not generated_here("toy-memory", made.with_config(made.config.model_copy(update={"verifier": slower})))
    assert content_digest(made) != content_digest(other) and content_digest(made).startswith("sha256:")
