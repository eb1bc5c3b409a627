"""``autoenvscaling plugins new``: the scaffolded package installs, registers, and its tests pass."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from autoenvscaling.errors import UsageError
from autoenvscaling.testing.scaffold import plugin_fields, render, scaffold_plugin


def test_names_map_to_distribution_package_and_domain():
    fields = plugin_fields("my-dom")
    assert (fields["name"], fields["package"], fields["distribution"], fields["class_name"]) == (
        "my_dom", "autoenvscaling_my_dom", "autoenvscaling-my-dom", "MyDomDomain")
    for bad in ("My", "1x", "x y", "x-", "", "a" * 41, "x/../y"):
        with pytest.raises(UsageError):
            plugin_fields(bad)


def test_an_unknown_template_field_is_an_error():
    with pytest.raises(KeyError, match="nmae"):
        render("{{nmae}}", plugin_fields("demo"))


def test_an_existing_folder_is_never_overwritten(tmp_path):
    scaffold_plugin("demo", tmp_path)
    marker = tmp_path / "autoenvscaling-demo" / "README.md"
    marker.write_text("mine")
    with pytest.raises(UsageError, match="already exists"):
        scaffold_plugin("demo", tmp_path)
    assert marker.read_text() == "mine"


def test_the_scaffold_installs_and_its_own_tests_pass(tmp_path, throwaway_env):
    created = subprocess.run([sys.executable, "-c", "from autoenvscaling.cli.main import main; main()",
                              "plugins", "new", "demo-kit", "--dir", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr
    package = tmp_path / "autoenvscaling-demo-kit"
    # the layout of the first-party domains (docs/plugin-authors.md)
    assert sorted(p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()) == [
        "README.md", *(f"autoenvscaling_demo_kit/{f}" for f in (
            "__init__.py", "cli.py", "domain.py", "families/__init__.py", "families/base.py",
            "families/reverse_words.py", "gate.py", "kit/contract.md", "kit/guide.md", "render.py", "tools.py",
            "verifier/test.sh")),
        "pyproject.toml", "tests/test_domain.py"]
    assert not re.search(r"\{\{.*\}\}", "".join(p.read_text() for p in package.rglob("*") if p.is_file()))

    env = throwaway_env()
    env.install(package)  # not editable: pip builds the wheel and installs it
    elsewhere = tmp_path / "elsewhere"  # not the source folder, so the tests import the installed wheel
    elsewhere.mkdir()
    where = env.run("-c", "import autoenvscaling_demo_kit as m; print(m.__file__)", cwd=elsewhere)
    assert "site-packages" in where.stdout and str(package) not in where.stdout, where.stdout + where.stderr
    tests = env.run("-m", "pytest", "-q", "-p", "no:cacheprovider", str(package / "tests"),
                    env={"AUTOENVSCALING_STRICT_PLUGINS": "1"}, cwd=elsewhere, timeout=600)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    summary = tests.stdout.strip().splitlines()[-1]
    assert re.search(r"\b[78] passed", summary), summary  # 7, plus the gates test where bwrap runs
    assert "failed" not in summary and "error" not in summary

    listed = env.cli("domains", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="1",
                     AUTOENVSCALING_LOAD_PLUGINS="demo_kit")
    assert listed.returncode == 0, listed.stderr
    assert [(d["name"], d["plugin"], d["families"]) for d in json.loads(listed.stdout)] == [
        ("demo_kit", "demo_kit", ["reverse_words"])]
