"""The plugin host: misspelt hooks, in-process registration, events."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from autoenvscaling.errors import PluginError
from autoenvscaling.gates.base import GateResult, ValidationReport
from autoenvscaling.plugins import create_host, hookimpl
from autoenvscaling.plugins.host import PluginHost
from autoenvscaling.testing import toy


def misspelt_plugin() -> SimpleNamespace:
    @hookimpl
    def autoenvscaling_register_domain(registrar):  # noqa: ANN001 - the missing "s" is the point
        registrar.add("toy", toy.ToyDomain)

    return SimpleNamespace(autoenvscaling_register_domain=autoenvscaling_register_domain)


def report(status: str = "valid") -> ValidationReport:
    return ValidationReport(task="tasks/t1", name="t1", status=status, reason="all gates passed",
                            gates=[GateResult(name="lint", status="pass", seconds=0.01)])


def test_misspelt_hook_fails_strict(aes_register):
    with pytest.raises(PluginError) as err:
        aes_register(misspelt_plugin(), name="typo-plugin")
    assert "typo-plugin" in err.value.message and "autoenvscaling_register_domain" in err.value.message
    assert "docs/hooks.md" in err.value.hint


def test_misspelt_hook_fail_soft_drops_only_that_plugin():
    host = PluginHost(strict=False)
    host.load_builtins()
    host.register(misspelt_plugin(), name="typo-plugin")
    host.register(toy, name="kit-toy")
    with pytest.warns(UserWarning, match="typo-plugin .*unknown hooks: autoenvscaling_register_domain"):
        host.check()
    assert [p.plugin for p in host.problems] == ["typo-plugin"]
    assert host.domains.names() == ["toy"]
    assert "typo-plugin" not in {p.name for p in host.plugins()}


def test_create_host_registers_in_process_plugins_and_checks_them():
    host = create_host(strict=True, entrypoints=False, plugins=[toy])
    assert host.domains.entry("toy").plugin == "autoenvscaling.testing.toy"
    with pytest.raises(PluginError, match="unknown hooks"):
        create_host(strict=True, entrypoints=False, plugins=[misspelt_plugin()])


def test_registering_late_or_twice_is_an_error(aes_host, aes_register):
    aes_register(toy, name="kit-toy")
    with pytest.raises(PluginError, match="cannot be registered"):
        aes_register(toy, name="kit-toy-again")
    aes_host.domains.names()
    with pytest.raises(PluginError, match="before the host collects"):
        aes_register(SimpleNamespace(), name="late")


def test_a_register_hook_that_raises_is_reported_with_its_plugin():
    @hookimpl
    def autoenvscaling_register_gates(registrar):  # noqa: ANN001
        raise RuntimeError("boom")

    plugin = SimpleNamespace(autoenvscaling_register_gates=autoenvscaling_register_gates)
    strict = create_host(strict=True, entrypoints=False, plugins=[plugin])
    with pytest.raises(PluginError, match="failed in autoenvscaling_register_gates: boom"):
        strict.gates.names()
    soft = create_host(strict=False, entrypoints=False, plugins=[plugin])
    with pytest.warns(UserWarning, match="RuntimeError: boom"):
        assert "lint" in soft.gates.names()  # the built-in gates are still there


class Observer:
    """A plugin that records the events it sees."""

    def __init__(self) -> None:
        self.reports: list[ValidationReport] = []
        self.summaries: list[object] = []

    @hookimpl
    def autoenvscaling_task_validated(self, report):  # noqa: ANN001
        self.reports.append(report)

    @hookimpl
    def autoenvscaling_round_ended(self, summary):  # noqa: ANN001
        self.summaries.append(summary)


class Crasher:
    @hookimpl
    def autoenvscaling_task_validated(self, report):  # noqa: ANN001
        raise RuntimeError(f"observer crashed on {report.name}")


def test_events_reach_plugins(aes_host, aes_register):
    from autoenvscaling.flywheel.metrics import rate
    from autoenvscaling.flywheel.summary import RoundSummary

    observer = Observer()
    aes_register(observer, name="observer")
    first = report()
    summary = RoundSummary(round=3, proposals=4, admitted=2, left_pool=0, pool_size=2, valid_rate=rate(2, 4),
                           metrics={})
    aes_host.announce_task_validated(first)
    aes_host.announce_round_ended(summary)
    assert observer.reports == [first]
    assert observer.summaries == [summary]
    assert set(next(p for p in aes_host.plugins() if p.name == "observer").hooks) == {
        "autoenvscaling_task_validated", "autoenvscaling_round_ended"}


def test_an_observer_that_raises_does_not_break_the_caller():
    observer = Observer()
    host = create_host(strict=False, entrypoints=False, plugins=[Crasher(), observer])
    with pytest.warns(UserWarning, match="plugin Crasher failed in autoenvscaling_task_validated: observer crashed on t1"):
        host.announce_task_validated(report())
    assert len(observer.reports) == 1  # the other observer still heard it
    strict = create_host(strict=True, entrypoints=False, plugins=[Crasher()])
    with pytest.raises(RuntimeError, match="observer crashed"):
        strict.announce_task_validated(report())


def test_an_implementation_may_take_fewer_arguments_than_the_spec(aes_host, aes_register):
    calls = []

    @hookimpl
    def autoenvscaling_task_validated():
        calls.append("seen")

    aes_register(SimpleNamespace(autoenvscaling_task_validated=autoenvscaling_task_validated), name="terse")
    aes_host.announce_task_validated(report("invalid"))
    assert calls == ["seen"]


def test_a_command_hook_that_raises_does_not_take_the_cli_down():
    import click

    @hookimpl
    def autoenvscaling_register_commands(cli):  # noqa: ANN001
        from aes_module_that_is_not_there import command  # noqa: F401

    class Good:
        @hookimpl
        def autoenvscaling_register_commands(self, cli):  # noqa: ANN001
            cli.add_command(click.Command("hello", help="Say hello."))

    broken = SimpleNamespace(autoenvscaling_register_commands=autoenvscaling_register_commands)
    group = click.Group("autoenvscaling")
    soft = create_host(strict=False, entrypoints=False, plugins=[broken, Good()])
    with pytest.warns(UserWarning, match="autoenvscaling_register_commands raised ModuleNotFoundError"):
        soft.register_commands(group)
    assert list(group.commands) == ["hello"]
    strict = create_host(strict=True, entrypoints=False, plugins=[broken, Good()])
    with pytest.raises(PluginError, match="failed in autoenvscaling_register_commands: ModuleNotFoundError"):
        strict.register_commands(click.Group("autoenvscaling"))
