"""The plugin host: a typed facade over pluggy's PluginManager.

Create one with ``create_host()``; never at import time. Tests build a fresh host each, register
plugins in-process with ``host.register(obj)``, and run strict so a broken plugin fails the test.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, cast

import pluggy

from ..errors import PluginError
from . import hookspecs
from .registry import Registry

if TYPE_CHECKING:
    import click
    from pluggy import HookImpl

    from ..agents.base import Agent
    from ..agents.tools import Tool
    from ..domains.base import Domain
    from ..executors.base import Executor
    from ..flywheel.summary import RoundSummary
    from ..gates.base import Gate, ValidationReport
    from ..llm.base import LLMBackend
    from ..proposers.base import Proposer
    from ..redteam.cheat import Cheat
    from ..runtime.verifier_runtime import VerifierRuntime
    from ..sandbox.base import SandboxBackend
    from ..suite.formats import TaskFormat
    from ..trainers.base import Trainer
    from .prerequisites import Prerequisite

ENTRY_POINT_GROUP = "autoenvscaling"
ENV_ALLOW = "AUTOENVSCALING_LOAD_PLUGINS"
ENV_DENY = "AUTOENVSCALING_DISABLE_PLUGINS"

# kind -> (register hook, base class checked for registered classes)
KINDS: dict[str, tuple[str, str | None]] = {
    "domain": ("autoenvscaling_register_domains", "autoenvscaling.domains.base:Domain"),
    "sandbox backend": ("autoenvscaling_register_sandbox_backends", "autoenvscaling.sandbox.base:SandboxBackend"),
    "agent": ("autoenvscaling_register_agents", "autoenvscaling.agents.base:Agent"),
    "llm backend": ("autoenvscaling_register_llm_backends", "autoenvscaling.llm.base:LLMBackend"),
    "format": ("autoenvscaling_register_formats", "autoenvscaling.suite.formats:TaskFormat"),
    "gate": ("autoenvscaling_register_gates", "autoenvscaling.gates.base:Gate"),
    "proposer": ("autoenvscaling_register_proposers", "autoenvscaling.proposers.base:Proposer"),
    "executor": ("autoenvscaling_register_executors", "autoenvscaling.executors.base:Executor"),
    "tool": ("autoenvscaling_register_tools", "autoenvscaling.agents.tools:Tool"),
    "verifier runtime": ("autoenvscaling_register_verifier_runtimes",
                         "autoenvscaling.runtime.verifier_runtime:VerifierRuntime"),
    "cheat": ("autoenvscaling_register_cheats", "autoenvscaling.redteam.cheat:Cheat"),
    "trainer": ("autoenvscaling_register_trainers", "autoenvscaling.trainers.base:Trainer"),
    "prerequisite": ("autoenvscaling_register_prerequisites", "autoenvscaling.plugins.prerequisites:Prerequisite"),
}

BUILTIN_PLUGINS = ["autoenvscaling.plugins.builtin"]


class PluginWarning(UserWarning):
    """A plugin was skipped (fail-soft loading) or an observer failed; its own category so callers
    (the CLI, tests) can filter or escalate it."""


@dataclass
class PluginInfo:
    name: str
    distribution: str | None
    version: str | None
    hooks: list[str] = field(default_factory=list)
    builtin: bool = False


@dataclass
class LoadProblem:
    plugin: str
    distribution: str | None
    message: str


class PluginHost:
    """Holds the plugin manager and one registry per kind of thing plugins register."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        # Keyed by kind name, so the element type is only known per kind: the typed properties below
        # say which (``host.domains`` is a Registry[Domain]).
        self.registries: dict[str, Registry[object]] = {k: Registry(k, base) for k, (_, base) in KINDS.items()}
        self.problems: list[LoadProblem] = []
        self._infos: dict[str, PluginInfo] = {}
        self._collected = False

    # -- loading ----------------------------------------------------------------------------
    def register(self, plugin: object, name: str | None = None, *, distribution: str | None = None,
                 version: str | None = None, builtin: bool = False) -> str:
        """Register a plugin object or module in-process (tests, notebooks)."""
        if self._collected:
            raise PluginError("plugins must be registered before the host collects registrations")
        try:
            plugin_name = self.pm.register(plugin, name=name)
        except ValueError as exc:  # pluggy: the name or the object is already registered
            raise PluginError(f"plugin {name or plugin!r} cannot be registered: {exc}",
                              hint="register each plugin once, under a unique name") from None
        except pluggy.PluginValidationError as exc:  # a hook whose arguments its spec does not have
            detail = " ".join(line.strip() for line in str(exc).splitlines()[1:])
            raise PluginError(f"plugin {name or plugin!r} cannot be registered: {detail}",
                              hint="a hook takes only the arguments of its spec; see docs/hooks.md") from None
        if plugin_name is None:
            raise PluginError(f"plugin {name or plugin!r} is blocked or already registered")
        self._infos[plugin_name] = PluginInfo(plugin_name, distribution, version, builtin=builtin)
        return plugin_name

    def load_builtins(self) -> None:
        import importlib

        for module_name in BUILTIN_PLUGINS:
            self.register(importlib.import_module(module_name), name=module_name, builtin=True,
                          distribution="autoenvscaling", version=_version("autoenvscaling"))

    def load_entrypoints(self) -> None:
        allow = _env_list(ENV_ALLOW)
        deny = set(_env_list(ENV_DENY) or [])
        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            dist = ep.dist.name if ep.dist else None
            names = {ep.name, dist}  # either the entry-point name or the distribution selects a plugin
            if allow is not None and not names & set(allow):
                continue
            if names & deny:
                continue
            try:
                module = ep.load()
                self.register(module, name=ep.name, distribution=dist, version=ep.dist.version if ep.dist else None)
            except Exception as exc:  # a broken third-party plugin must not take the tool down
                self._problem(ep.name, dist, f"failed to load: {type(exc).__name__}: {exc}")

    def check(self) -> None:
        """Catch hook implementations that match no spec (a misspelt hook name). Strict: raise.
        Fail-soft: unregister that plugin, record the problem and warn, so one broken third-party
        plugin does not take the tool down."""
        while True:
            try:
                self.pm.check_pending()
                return
            except pluggy.PluginValidationError as exc:
                name = self.pm.get_name(exc.plugin) or repr(exc.plugin)
                unknown = sorted(c.name for c in self.pm.get_hookcallers(exc.plugin) or [] if not c.has_spec())
                message = f"implements unknown hooks: {', '.join(unknown)}"
                if self.strict:
                    raise PluginError(f"plugin {name} {message}",
                                      hint="hook names start with autoenvscaling_; see docs/hooks.md") from None
                info = self._infos.pop(name, None)
                self.pm.unregister(plugin=exc.plugin)
                self._problem(name, info.distribution if info else None, message)

    def collect(self) -> None:
        """Call every register hook once per plugin, each with a registrar bound to that plugin."""
        if self._collected:
            return
        self._collected = True
        for kind, (hook_name, _) in KINDS.items():
            caller = getattr(self.pm.hook, hook_name)
            # Registration order (built-ins first), so a plugin that reuses a taken name is the one
            # blamed and skipped.
            for impl in caller.get_hookimpls():
                registry = self.registries[kind]
                registrar = registry.registrar(impl.plugin_name)
                info = self._infos.get(impl.plugin_name)
                if info is not None and hook_name not in info.hooks:
                    info.hooks.append(hook_name)
                before = registry.snapshot()
                try:
                    _call(impl, registrar=registrar)
                except Exception as exc:
                    if self.strict:
                        if isinstance(exc, PluginError):
                            raise
                        raise PluginError(f"plugin {impl.plugin_name} failed in {hook_name}: {exc}") from exc
                    registry.restore(before)  # all of this hook's entries or none, never half
                    message = (exc.message if isinstance(exc, PluginError)
                               else f"{hook_name} raised {type(exc).__name__}: {exc}")
                    self._problem(impl.plugin_name, info.distribution if info else None, message)
        for name, info in self._infos.items():
            for impl_hook in ("autoenvscaling_register_commands", "autoenvscaling_task_validated", "autoenvscaling_round_ended"):
                impls = getattr(self.pm.hook, impl_hook).get_hookimpls()
                if impl_hook not in info.hooks and any(i.plugin_name == name for i in impls):
                    info.hooks.append(impl_hook)

    def _problem(self, plugin: str, dist: str | None, message: str) -> None:
        message = (message.strip().splitlines() or ["failed"])[0]  # an exception's text may span lines
        if self.strict:
            raise PluginError(f"plugin {plugin} ({dist or 'in-process'}): {message}")
        self.problems.append(LoadProblem(plugin, dist, message))
        warnings.warn(f"autoenvscaling: plugin {plugin} ({dist or 'in-process'}) skipped: {message}",
                      PluginWarning, stacklevel=2)

    # -- lookups ----------------------------------------------------------------------------
    def registry(self, kind: str) -> Registry[object]:
        """The registry of ``kind`` (a key of KINDS), registrations collected. Prefer the typed
        properties (``host.gates``), which know the kind's base class."""
        self.collect()
        return self.registries[kind]

    @property
    def domains(self) -> Registry[Domain]:
        return cast("Registry[Domain]", self.registry("domain"))

    @property
    def sandbox_backends(self) -> Registry[SandboxBackend]:
        return cast("Registry[SandboxBackend]", self.registry("sandbox backend"))

    @property
    def agents(self) -> Registry[Agent]:
        return cast("Registry[Agent]", self.registry("agent"))

    @property
    def llm_backends(self) -> Registry[LLMBackend]:
        return cast("Registry[LLMBackend]", self.registry("llm backend"))

    @property
    def formats(self) -> Registry[TaskFormat]:
        return cast("Registry[TaskFormat]", self.registry("format"))

    @property
    def gates(self) -> Registry[Gate]:
        return cast("Registry[Gate]", self.registry("gate"))

    @property
    def proposers(self) -> Registry[Proposer]:
        return cast("Registry[Proposer]", self.registry("proposer"))

    @property
    def executors(self) -> Registry[Executor]:
        return cast("Registry[Executor]", self.registry("executor"))

    @property
    def tools(self) -> Registry[Tool]:
        return cast("Registry[Tool]", self.registry("tool"))

    @property
    def verifier_runtimes(self) -> Registry[VerifierRuntime]:
        return cast("Registry[VerifierRuntime]", self.registry("verifier runtime"))

    @property
    def cheats(self) -> Registry[Cheat]:
        return cast("Registry[Cheat]", self.registry("cheat"))

    @property
    def trainers(self) -> Registry[Trainer]:
        return cast("Registry[Trainer]", self.registry("trainer"))

    @property
    def prerequisites(self) -> Registry[Prerequisite]:
        return cast("Registry[Prerequisite]", self.registry("prerequisite"))

    def plugins(self) -> list[PluginInfo]:
        self.collect()
        return [self._infos[n] for n in sorted(self._infos)]

    def register_commands(self, cli: click.Group) -> None:
        """Let every plugin add its commands to the click group ``cli``. A plugin whose hook raises
        is skipped with a warning (strict: PluginError), so it cannot take the whole CLI down."""
        for impl in self.pm.hook.autoenvscaling_register_commands.get_hookimpls():
            try:
                _call(impl, cli=cli)
            except Exception as exc:
                info = self._infos.get(impl.plugin_name)
                if self.strict:
                    raise PluginError(f"plugin {impl.plugin_name} failed in autoenvscaling_register_commands: "
                                      f"{type(exc).__name__}: {exc}") from exc
                self._problem(impl.plugin_name, info.distribution if info else None,
                              f"autoenvscaling_register_commands raised {type(exc).__name__}: {exc}")

    # -- events -----------------------------------------------------------------------------
    def announce_task_validated(self, report: ValidationReport) -> None:
        self._announce("autoenvscaling_task_validated", report=report)

    def announce_round_ended(self, summary: RoundSummary) -> None:
        self._announce("autoenvscaling_round_ended", summary=summary)

    def _announce(self, hook_name: str, **kwargs: object) -> None:
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            try:
                _call(impl, **kwargs)
            except Exception as exc:  # an observer must not break the work it observes
                if self.strict:
                    raise
                first = (str(exc).splitlines() or [type(exc).__name__])[0]
                warnings.warn(f"autoenvscaling: plugin {impl.plugin_name} failed in {hook_name}: {first}",
                              PluginWarning, stacklevel=2)


def create_host(*, strict: bool | None = None, entrypoints: bool = True, plugins: list[object] | None = None) -> PluginHost:
    """A ready host: built-ins, installed plugins (unless ``entrypoints=False``), extra in-process
    ``plugins``, pending hooks checked. ``strict`` defaults to the AUTOENVSCALING_STRICT_PLUGINS env var."""
    if strict is None:
        strict = os.environ.get("AUTOENVSCALING_STRICT_PLUGINS", "") not in ("", "0")
    host = PluginHost(strict=strict)
    host.load_builtins()
    if entrypoints:
        host.load_entrypoints()
    for plugin in plugins or []:
        host.register(plugin, name=getattr(plugin, "__name__", None) or type(plugin).__name__)
    host.check()
    return host


def _call(impl: HookImpl, **kwargs: object) -> object:
    """Call one hook implementation with the arguments it declares (pluggy lets an implementation
    take a subset of the spec's arguments, so newer optional arguments never break old plugins)."""
    return impl.function(*[kwargs[name] for name in impl.argnames])


def _env_list(var: str) -> list[str] | None:
    value = os.environ.get(var)
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
