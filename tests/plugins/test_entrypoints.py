"""Loading installed plugins through entry points, with real distributions.

Three tiny distributions are built in a temporary folder and pip-installed into a throwaway virtual
environment that sees this checkout's environment (see conftest.py): one good
plugin (a domain and a CLI command), one that raises at import, one with a misspelt hook. The CLI
then runs in that environment as a user would run it.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

GOOD_INIT = '''
"""A good toy plugin: registers a domain by import path and one CLI command."""
from autoenvscaling.plugins import hookimpl


@hookimpl
def autoenvscaling_register_domains(registrar):
    registrar.add("goodtoy", "aes_toy_good.domain:GoodDomain")


@hookimpl
def autoenvscaling_register_commands(cli):
    import click

    @cli.command("toy-hello")
    def toy_hello():
        """Say hello from the toy plugin."""
        click.echo("hello from aes-toy-good")
'''

GOOD_DOMAIN = '''
from autoenvscaling.testing.toy import ToyDomain


class GoodDomain(ToyDomain):
    """The kit's toy domain under another name."""

    name = "goodtoy"
'''

BROKEN_INIT = 'raise RuntimeError("deliberately broken at import")\n'

TYPO_INIT = '''
from autoenvscaling.plugins import hookimpl


@hookimpl
def autoenvscaling_register_domain(registrar):  # misspelt: the hook is register_domains
    pass
'''


def _distribution(root: Path, dist: str, ep_name: str, files: dict[str, str]) -> Path:
    package = dist.replace("-", "_")
    src = root / dist
    (src / package).mkdir(parents=True)
    (src / "pyproject.toml").write_text(textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=68"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "0.0.1"

        [project.entry-points.autoenvscaling]
        {ep_name} = "{package}"
    """))
    for name, text in files.items():
        (src / package / name).write_text(textwrap.dedent(text))
    return src


@pytest.fixture(scope="module")
def env(throwaway_env, tmp_path_factory):
    root = tmp_path_factory.mktemp("entrypoints")
    env = throwaway_env()
    env.install(_distribution(root, "aes-toy-good", "toygood", {"__init__.py": GOOD_INIT, "domain.py": GOOD_DOMAIN}),
                _distribution(root, "aes-toy-broken", "toybroken", {"__init__.py": BROKEN_INIT}),
                _distribution(root, "aes-toy-typo", "toytypo", {"__init__.py": TYPO_INIT}))
    return env


def plugin_rows(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


# Only our three toy plugins: what else is installed in the checkout's environment must not matter.
TOYS = "toygood,toybroken,toytypo"


def test_fail_soft_loading_warns_with_the_distribution_and_continues(env):
    result = env.cli("domains", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="0",
                 AUTOENVSCALING_LOAD_PLUGINS=TOYS)
    assert result.returncode == 0, result.stderr
    assert [d["name"] for d in json.loads(result.stdout)] == ["goodtoy"]
    assert "plugin toybroken (aes-toy-broken) skipped: failed to load: RuntimeError: deliberately broken" in result.stderr
    assert "plugin toytypo (aes-toy-typo) skipped: implements unknown hooks: autoenvscaling_register_domain" in result.stderr

    rows = plugin_rows(env.cli("plugins", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="0",
                           AUTOENVSCALING_LOAD_PLUGINS=TOYS))
    good = rows["toygood"]
    assert (good["distribution"], good["version"], good["loaded"], good["problems"]) == ("aes-toy-good", "0.0.1", True, [])
    assert good["hooks"] == ["autoenvscaling_register_commands", "autoenvscaling_register_domains"]
    assert rows["toybroken"]["loaded"] is False
    assert rows["toybroken"]["problems"] == ["failed to load: RuntimeError: deliberately broken at import"]
    assert rows["toytypo"]["loaded"] is False and rows["toytypo"]["distribution"] == "aes-toy-typo"
    assert rows["autoenvscaling.plugins.builtin"]["builtin"] is True


def test_strict_mode_fails_with_one_line(env):
    result = env.cli("plugins", "list", AUTOENVSCALING_STRICT_PLUGINS="1", AUTOENVSCALING_LOAD_PLUGINS=TOYS)
    assert result.returncode != 0
    assert result.stderr.splitlines()[0] == (
        "error: plugin toybroken (aes-toy-broken): failed to load: RuntimeError: deliberately broken at import")
    assert "Traceback" not in result.stderr


def test_allow_list_loads_only_the_named_plugins(env):
    for selector in ("toygood", "aes-toy-good"):  # the entry-point name or the distribution name
        rows = plugin_rows(env.cli("plugins", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="1",
                               AUTOENVSCALING_LOAD_PLUGINS=selector))
        assert set(rows) == {"autoenvscaling.plugins.builtin", "toygood"}
    # Empty allow-list: no installed plugin at all, the built-ins still work.
    rows = plugin_rows(env.cli("plugins", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="1",
                           AUTOENVSCALING_LOAD_PLUGINS=""))
    assert set(rows) == {"autoenvscaling.plugins.builtin"}


def test_deny_list_skips_the_named_plugins(env):
    result = env.cli("plugins", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="1",
                 AUTOENVSCALING_LOAD_PLUGINS=TOYS, AUTOENVSCALING_DISABLE_PLUGINS="toybroken, aes-toy-typo")
    assert set(plugin_rows(result)) == {"autoenvscaling.plugins.builtin", "toygood"}
    assert result.stderr == ""
    # Without an allow-list: every installed plugin but the disabled ones (fail-soft, so a plugin
    # of the checkout's environment that is mid-change cannot fail this test).
    rows = plugin_rows(env.cli("plugins", "list", "--json", AUTOENVSCALING_STRICT_PLUGINS="0",
                           AUTOENVSCALING_DISABLE_PLUGINS="toybroken,aes-toy-typo"))
    assert "toygood" in rows and not {"toybroken", "toytypo"} & set(rows)


def test_a_plugin_adds_a_domain_and_a_command(env):
    only_good = {"AUTOENVSCALING_STRICT_PLUGINS": "1", "AUTOENVSCALING_LOAD_PLUGINS": "toygood"}
    domains = json.loads(env.cli("domains", "list", "--json", **only_good).stdout)
    assert domains == [{"name": "goodtoy", "plugin": "toygood",
                        "description": "Two tiny file tasks (write a file, count lines) for tests and examples.",
                        "sandbox_backend": "bwrap", "families": ["write-file", "count-lines"]}]
    help_text = env.cli("--help", **only_good)
    assert "toy-hello" in help_text.stdout and "Say hello from the toy plugin." in help_text.stdout
    hello = env.cli("toy-hello", **only_good)
    assert (hello.returncode, hello.stdout) == (0, "hello from aes-toy-good\n")
