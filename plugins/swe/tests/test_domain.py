"""The swe domain as the flywheel sees it: seed repositories that are real libraries with real
suites and fix histories, deterministic generation and variation, the proposer kit, the CLI, and
(slow) the plugin author's contract and admitted instances from every seed."""

from __future__ import annotations

import ast
import json

import pytest
from autoenvscaling.cli.main import cli
from autoenvscaling.plugins import create_host
from autoenvscaling.testing import assert_domain_contract
from autoenvscaling_swe.domain import SweDomain
from autoenvscaling_swe.repos import open_repository, seed_fixes, seed_files, seed_names
from click.testing import CliRunner
from swe_helpers import bwrap, generate, validate


def test_four_seed_repositories_with_thorough_suites_and_fix_histories():
    names = seed_names()
    assert len(names) >= 4
    for name in names:
        files = seed_files(name)
        tests = [n for path, data in files.items() if path.startswith("tests/") and path.endswith(".py")
                 for n in ast.walk(ast.parse(data)) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        code = sum(d.count(b"\n") for p, d in files.items() if p.startswith("src/") and p.endswith(".py"))
        assert len(tests) >= 60, f"{name}: {len(tests)} tests"
        assert code >= 300, f"{name}: {code} lines of code"
        fixes = seed_fixes(files)
        assert len(fixes) >= 3, name
        repository = open_repository(name)
        snapshot = repository.snapshot()
        commits = repository.fix_commits(snapshot.commit)
        assert [c.message for c in commits] == [f["message"] for f in reversed(fixes)], name
        assert "fixes.toml" not in snapshot.files, "the history file is metadata, not part of the repository"


def test_the_domain_is_registered_with_its_format_gates_and_command():
    host = create_host()
    assert "swe" in host.domains.names() and "swe-bench" in host.formats.names()
    assert {"swe-lint", "swe-validation"} <= set(host.gates.names())
    domain = host.domains.get("swe")()
    assert [f.name for f in domain.families()] == seed_names()
    kit = domain.kit()
    assert "# The swe domain" in kit.guide and "FAIL_TO_PASS" in kit.contract
    assert kit.examples and all((e / "task.toml").is_file() for e in kit.examples)


@bwrap
def test_generate_and_vary_give_admissible_deterministic_tasks():
    domain = SweDomain()
    family = seed_names()[0]
    task = domain.generate(family, seed=4, difficulty="easy")
    again = domain.generate(family, seed=4, difficulty="easy")
    assert task == again and task.digest() == again.digest()
    assert task.provenance.domain == "swe" and task.provenance.family == family
    assert task.provenance.parameters["level"] == 1 and len(task.provenance.parameters["strategy"]["operators"]) == 1
    report = validate(task)
    assert report.valid, report.reason
    harder = domain.vary(task, direction="harder", seed=5)
    assert harder.provenance.parameters["level"] == 2 and harder.provenance.parent == task.name
    other = domain.vary(task, direction="different", seed=5)
    assert other.provenance.family != family
    from autoenvscaling.errors import UsageError

    simpler = domain.vary(task, direction="simpler", seed=5)
    params = simpler.provenance.parameters
    assert params["level"] == 0 and params["strategy"]["operators"][0] in ("comparison_flip", "off_by_one",
                                                                          "wrong_operator", "change_return")
    swe = simpler.config.metadata["swe"]
    assert set(swe["FAIL_TO_PASS"]) - set(swe["held_back"]), "level 0 keeps a failing test visible"
    with pytest.raises(UsageError, match="already the simplest"):
        domain.vary(simpler, direction="simpler", seed=6)


def test_the_repos_command_lists_the_seeds():
    result = CliRunner().invoke(cli, ["swe", "repos", "--json"], catch_exceptions=False)
    rows = json.loads(result.output)
    assert [r["name"] for r in rows] == seed_names()
    assert all(r["tests"] >= 60 and r["fix_commits"] >= 3 and sum(r["mutation_sites"].values()) > 50 for r in rows)


def test_bad_repositories_fail_in_one_line_with_a_hint(tmp_path):
    missing = CliRunner().invoke(cli, ["swe", "generate", "--repo", str(tmp_path / "nope"), "-n", "1", "--out",
                                       str(tmp_path / "out")])
    assert missing.exit_code != 0 and "no repository at" in str(missing.exception)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "lib.py").write_text("X = 1\n")
    with pytest.raises(Exception, match="--commit abc cannot be read"):
        open_repository(str(tmp_path / "plain")).snapshot("abc")


@bwrap
def test_a_repository_whose_suite_fails_when_clean_is_rejected_with_its_cause(tmp_path):
    repo = tmp_path / "broken"
    (repo / "tests").mkdir(parents=True)
    (repo / "lib.py").write_text("def one():\n    return 2\n")
    (repo / "tests" / "test_lib.py").write_text("from lib import one\n\ndef test_one():\n    assert one() == 1\n")
    from autoenvscaling.errors import UsageError

    with pytest.raises(UsageError, match="no test passes on the clean repository"):
        generate(repo, seed=0)


@pytest.mark.slow
@bwrap
def test_the_domain_keeps_the_plugin_contract():
    assert_domain_contract(SweDomain(), difficulties=("easy", "medium"))


@pytest.mark.slow
@bwrap
@pytest.mark.parametrize("seed_repo", seed_names())
def test_every_seed_yields_admitted_instances(seed_repo):
    for seed in (0, 1):
        instance, _ = generate(seed_repo, seed=seed)
        assert instance is not None
        from autoenvscaling_swe.render import render

        report = validate(render(instance))
        assert report.valid, report.reason
