"""A plugin's registrations declared as data: ``declare(globals(), ...)`` in the module the entry
point names writes one hook implementation per table given, so a plugin states what it adds, by
import path, and imports none of it until it is used.

    from autoenvscaling.plugins import declare

    declare(
        globals(),
        domains={"my_domain": ("my_plugin.domain:MyDomain", "what its tasks are")},
        gates={"my-lint": "my_plugin.gate:MyLintGate"},
        cheats={"my_domain.empty-output": "my_plugin.cheats:EmptyOutput"},
        commands=["my_plugin.cli:my_domain"],
    )

A table maps a registered name to ``"pkg.module:Class"``, to ``(path, description)`` or to
``(path, description, extra)`` (the optional-dependency extra that provides it). ``commands`` are
click groups or commands, by path, added to ``autoenvscaling``'s command line. Hooks a table does
not cover (an observer, a computed registration) are written as usual with ``@hookimpl``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Mapping, MutableMapping, Sequence, Union

from ..errors import PluginError
from .hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from .registry import Registrar

Target = Union[str, tuple[str, str], tuple[str, str, Union[str, None]]]

#: declare()'s tables, each the suffix of a register hook (autoenvscaling_register_<table>)
TABLES = ("domains", "sandbox_backends", "agents", "llm_backends", "formats", "gates", "proposers", "executors",
          "tools", "verifier_runtimes", "cheats", "trainers", "prerequisites")


def _unpack(target: Target) -> tuple[str, str, str | None]:
    if isinstance(target, str):
        return target, "", None
    path, description, *extra = target
    return path, description, (extra[0] if extra else None)


def _register_hook(hook_name: str, entries: dict[str, Target]) -> Callable[..., None]:
    def register(registrar: Registrar[Any]) -> None:
        for name, target in entries.items():
            path, description, extra = _unpack(target)
            registrar.add(name, path, description=description, extra=extra)

    register.__name__ = register.__qualname__ = hook_name
    return hookimpl(register)


def _commands_hook(paths: tuple[str, ...]) -> Callable[..., None]:
    def autoenvscaling_register_commands(cli: click.Group) -> None:
        for path in paths:
            module, _, attr = path.partition(":")
            cli.add_command(getattr(importlib.import_module(module), attr))

    return hookimpl(autoenvscaling_register_commands)


def declare(namespace: MutableMapping[str, Any], *, commands: Sequence[str] = (),
            **tables: Mapping[str, Target]) -> None:
    """Write the hook implementations for ``tables`` (and ``commands``) into ``namespace``, a plugin
    module's ``globals()``."""
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise PluginError(f"declare() has no table {unknown[0]!r}", hint=f"tables: {', '.join(TABLES)}")
    for table, entries in tables.items():
        for name, target in entries.items():
            path = _unpack(target)[0]
            if ":" not in path:
                raise PluginError(f"{table} entry {name!r}: {path!r} is not a 'pkg.module:Class' path",
                                  hint="name the class after a colon, e.g. 'my_plugin.domain:MyDomain'")
        hook = f"autoenvscaling_register_{table}"
        namespace[hook] = _register_hook(hook, dict(entries))
    if commands:
        namespace["autoenvscaling_register_commands"] = _commands_hook(tuple(commands))
