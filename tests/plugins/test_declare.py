"""``declare``: a plugin's registrations written as tables become real hook implementations."""

from __future__ import annotations

import types

import click
import pytest

from autoenvscaling.errors import PluginError
from autoenvscaling.plugins import declare


def _module(**tables) -> types.ModuleType:
    module = types.ModuleType("declared_plugin")
    declare(vars(module), **tables)
    return module


def test_each_table_becomes_a_registration_with_its_description_and_extra(aes_host, aes_register):
    aes_register(_module(
        domains={"toy2": ("autoenvscaling.testing.toy:ToyDomain", "toy tasks again")},
        gates={"toy2-lint": "autoenvscaling.gates.lint:LintGate"},
        executors={"toy2-exec": ("autoenvscaling.executors.base:LocalExecutor", "local again", "ray")},
    ))
    from autoenvscaling.testing import ToyDomain

    assert aes_host.domains.get("toy2") is ToyDomain
    assert aes_host.domains.entry("toy2").description == "toy tasks again"
    assert aes_host.domains.entry("toy2").plugin == "declared_plugin"
    assert aes_host.gates.entry("toy2-lint").target == "autoenvscaling.gates.lint:LintGate"
    assert aes_host.executors.entry("toy2-exec").extra == "ray"


def test_commands_are_added_to_the_command_line(aes_host, aes_register):
    aes_register(_module(commands=["autoenvscaling_terminal.cli:terminal"]))
    group = click.Group("cli")
    aes_host.pm.hook.autoenvscaling_register_commands(cli=group)
    assert "terminal" in group.commands and "families" in group.commands["terminal"].commands


def test_a_misspelt_table_or_a_path_without_a_class_is_one_clear_error():
    with pytest.raises(PluginError) as bad_table:
        _module(domain={"x": "a.b:C"})
    assert "no table 'domain'" in bad_table.value.message and "domains" in bad_table.value.hint
    with pytest.raises(PluginError) as bad_path:
        _module(gates={"x": "my_plugin.gate"})
    assert "'my_plugin.gate' is not a 'pkg.module:Class' path" in bad_path.value.message


def test_the_first_party_plugins_declare_their_hooks():
    import autoenvscaling_professional

    assert {n for n in vars(autoenvscaling_professional) if n.startswith("autoenvscaling_register_")} == {
        "autoenvscaling_register_domains", "autoenvscaling_register_gates", "autoenvscaling_register_cheats",
        "autoenvscaling_register_commands", "autoenvscaling_register_verifier_runtimes"}
