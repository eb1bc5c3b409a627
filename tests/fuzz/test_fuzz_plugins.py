"""Fuzzing plugins through the real plugin host (``create_host``, as every command builds it): plugins
whose hooks raise, return junk, have the wrong signature or register junk (names, targets, import
paths, classes of the wrong kind, duplicates of built-ins), and gates and observers that raise or
answer junk during a validation batch. Loading fail-soft keeps the tool up with one warning line per
skipped plugin; strict loading raises one PluginError line; a broken gate makes its task's report
"error" with one line while the batch goes on."""

from __future__ import annotations

import asyncio
import itertools
import sys
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import click
import pytest
from hypothesis import strategies as st

from autoenvscaling.errors import AESError, PluginError
from autoenvscaling.executors.base import LocalExecutor
from autoenvscaling.gates.base import Gate, GateContext, GateResult, GateSettings, ValidationReport
from autoenvscaling.gates.validate import Validator, load_gates, validate_many
from autoenvscaling.plugins import create_host, hookimpl
from autoenvscaling.plugins.host import KINDS, PluginHost
from autoenvscaling.tasks import Task
from autoenvscaling.testing.toy import ToyDomain

from .conftest import Fuzz
from .strategies import nasty_strings, one_line_error, single_line, words

REGISTER_HOOKS = sorted(hook for hook, _ in KINDS.values())
OTHER_HOOKS = ["autoenvscaling_register_commands", "autoenvscaling_task_validated", "autoenvscaling_round_ended",
               "autoenvscaling_register_domainz", "autoenvscaling_nothing", "pytest_configure"]
EXCEPTIONS: list[Callable[[], BaseException]] = [
    lambda: ValueError("bad\nvalue"), lambda: KeyError("k"), lambda: TypeError(), lambda: RuntimeError("boom"),
    lambda: RecursionError("deep"), lambda: PluginError("plugin said no", hint="h"), lambda: ZeroDivisionError(),
    lambda: ImportError("No module named nope", name="nope"), lambda: OSError(2, "gone"), lambda: AESError("\n"),
    lambda: UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), lambda: AttributeError("x"), lambda: StopIteration(),
]
TARGETS: list[Any] = [
    "autoenvscaling.gates.lint:LintGate", "autoenvscaling.gates.lint:LintGate.nope", "autoenvscaling.gates.lint:",
    "nope.module:Thing", ":Thing", "..relative:X", ".x:Y", "os:path", "json:loads", "os", "a b:c", "", "\x00:x",
    "autoenvscaling.errors:AESError", "autoenvscaling.testing.toy:ToyDomain", 42, None, object(), int, Gate, ToyDomain,
    click.Group, lambda: None, "autoenvscaling.executors.base:LocalExecutor", "autoenvscaling.llm.openai_backend:OpenAIBackend",
]
names = st.one_of(words, nasty_strings, st.sampled_from(["lint", "bwrap", "oracle", "local", "harbor", "jsonl", "bash",
                                                          "fuzz", "fuzz.x", "Fuzz", "9x"]),
                  st.sampled_from([1, None, b"x", ("a",)]))


@dataclass
class HookPlan:
    """What one hook implementation does: its registrations, then maybe raise or return junk."""

    hook: str
    registrations: list[tuple[Any, Any, Any, Any]] = field(default_factory=list)
    raises: int | None = None
    returns: Any = None
    extra_argument: bool = False  # a parameter the hook's spec does not have


hook_plans = st.builds(
    HookPlan, hook=st.sampled_from(REGISTER_HOOKS + OTHER_HOOKS),
    registrations=st.lists(st.tuples(names, st.sampled_from(TARGETS), st.one_of(st.none(), words, st.just(3)),
                                     st.one_of(st.just(""), nasty_strings, st.just(None))), max_size=3),
    raises=st.one_of(st.none(), st.none(), st.integers(0, len(EXCEPTIONS) - 1)),
    returns=st.sampled_from([None, 1, "x", [None]]), extra_argument=st.booleans())


def make_plugin(plans: list[HookPlan]) -> SimpleNamespace:
    """A plugin object whose hooks carry out ``plans`` (later plans for the same hook win)."""
    plugin = SimpleNamespace()
    for plan in plans:
        setattr(plugin, plan.hook, _hook(plan))
    return plugin


def _hook(plan: HookPlan) -> Callable[..., Any]:
    def act(first: Any) -> Any:
        for name, target, extra, description in plan.registrations:
            if hasattr(first, "add"):
                first.add(name, target, extra=extra, description=description)
            elif isinstance(first, click.Group):
                first.add_command(target if isinstance(target, click.Command) else click.Command(str(name)))
        if plan.raises is not None:
            raise EXCEPTIONS[plan.raises]()
        return plan.returns

    # pluggy passes arguments by the names of the hook's spec.
    def with_registrar(registrar: Any) -> Any:
        return act(registrar)

    def with_cli(cli: Any) -> Any:
        return act(cli)

    def with_report(report: Any) -> Any:
        return act(report)

    def with_summary(summary: Any) -> Any:
        return act(summary)

    def with_unknown(registrar: Any, unknown: Any) -> Any:
        return act(registrar)

    impl = with_unknown if plan.extra_argument else {
        "autoenvscaling_register_commands": with_cli, "autoenvscaling_task_validated": with_report,
        "autoenvscaling_round_ended": with_summary}.get(plan.hook, with_registrar)
    return hookimpl(impl)


def exercise(host: PluginHost) -> None:
    """What commands do with a host: list the plugins, look up every registered thing, add commands."""
    host.plugins()
    for kind in KINDS:
        registry = host.registry(kind)
        for name in registry.names():
            try:
                registry.get(name)
            except Exception as exc:
                one_line_error(exc, PluginError)
    host.register_commands(click.Group("fuzz"))
    for problem in host.problems:
        assert single_line(problem.message), problem


def test_plugins_fail_soft(fuzz: Fuzz) -> None:
    @fuzz.given(st.lists(hook_plans, min_size=1, max_size=4))
    def check(plans: list[HookPlan]) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                host = create_host(strict=False, entrypoints=False, plugins=[make_plugin(plans)])
            except Exception as exc:  # only a plugin that cannot be registered at all may stop the host
                one_line_error(exc, PluginError)
                return
            exercise(host)
            assert "lint" in host.gates and "bwrap" in host.sandbox_backends  # the built-ins survive

    check()


def test_plugins_strict(fuzz: Fuzz) -> None:
    @fuzz.given(st.lists(hook_plans, min_size=1, max_size=4))
    def check(plans: list[HookPlan]) -> None:
        try:
            exercise(create_host(strict=True, entrypoints=False, plugins=[make_plugin(plans)]))
        except Exception as exc:
            one_line_error(exc, PluginError)

    check()


# -- gates and observers that misbehave during a validation batch ----------------------------------------
ANSWERS: list[Callable[[Gate], Any]] = [
    lambda g: g.result("pass"), lambda g: g.result("fail", "two\nlines"), lambda g: g.result("error", ""),
    lambda g: None, lambda g: "pass", lambda g: 1, lambda g: GateResult(name="other", status="skip"),
    lambda g: ValidationReport(task="t", name="n", status="valid", reason="ok"),
]


def gate_class(name: str, order: int, answer: int | None, raises: int | None, domain: str | None) -> type[Gate]:
    async def check(self: Gate, task: Task, ctx: GateContext) -> GateResult:
        if raises is not None:
            raise EXCEPTIONS[raises]()
        return ANSWERS[answer or 0](self)  # type: ignore[no-any-return]

    return type(f"FuzzGate{order}", (Gate,), {"name": name, "order": order, "domain": domain, "check": check})


gate_specs = st.lists(st.tuples(st.integers(1, 120), st.one_of(st.none(), st.integers(0, len(ANSWERS) - 1)),
                                st.one_of(st.none(), st.integers(0, len(EXCEPTIONS) - 1)),
                                st.sampled_from([None, None, "toy", "other"])), min_size=1, max_size=3)


def test_misbehaving_gates_and_observers(fuzz: Fuzz, tmp_path: Path) -> None:
    tasks = [ToyDomain().generate(family, seed=5) for family in ("write-file", "count-lines")]
    counter = itertools.count()

    @fuzz.given(gate_specs, st.one_of(st.none(), st.integers(0, len(EXCEPTIONS) - 1)), fast=10, full=300)
    def check(specs: list[tuple[int, int | None, int | None, str | None]], observer_raises: int | None) -> None:
        gates = [gate_class(f"fuzz-gate-{i}", order, answer, raises, domain)
                 for i, (order, answer, raises, domain) in enumerate(specs)]

        @hookimpl
        def autoenvscaling_register_gates(registrar: Any) -> None:
            for gate in gates:
                registrar.add(gate.name, gate)

        @hookimpl
        def autoenvscaling_task_validated(report: ValidationReport) -> None:
            if observer_raises is not None:
                raise EXCEPTIONS[observer_raises]()

        # A module, as installed plugins are: validation jobs load the plugins by module name.
        plugin = types.ModuleType(f"aes_fuzz_gates_{next(counter)}")
        plugin.autoenvscaling_register_gates = autoenvscaling_register_gates  # type: ignore[attr-defined]
        plugin.autoenvscaling_task_validated = autoenvscaling_task_validated  # type: ignore[attr-defined]
        sys.modules[plugin.__name__] = plugin
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                host = create_host(strict=False, entrypoints=False, plugins=[plugin])
                skip = tuple(g.name for g in load_gates(host) if g.needs_sandbox or g.needs_solver)
                validator = Validator(host=host, settings=GateSettings(skip=skip))
                reports = asyncio.run(_validate(tasks, validator))
        finally:
            del sys.modules[plugin.__name__]
        assert len(reports) == len(tasks)
        for report in reports:
            assert report.status in ("valid", "invalid", "error"), report
            assert single_line(report.reason), report.reason

    check()


async def _validate(tasks: list[Task], validator: Validator) -> list[ValidationReport]:
    executor = LocalExecutor(concurrency=2, in_process=True)
    try:
        return [r async for r in validate_many(tasks, validator=validator, executor=executor)]
    finally:
        await executor.aclose()


@pytest.mark.parametrize("hook", REGISTER_HOOKS)
def test_a_hook_with_an_unknown_argument_is_one_plugin_error(hook: str) -> None:
    """pluggy refuses such a hook when the plugin is registered; the host says so in its own words."""
    plan = HookPlan(hook=hook, extra_argument=True)
    with pytest.raises(PluginError):
        create_host(strict=True, entrypoints=False, plugins=[make_plugin([plan])])
