"""AutoEnvScaling's terminal domain: procedurally generated shell tasks as Harbor task directories.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, the Endless Terminals format and the ``terminal`` command group by import path or with
lazily imported code, and imports no generator module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    import click

    from autoenvscaling.domains.base import Domain
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.suite.formats import TaskFormat

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    registrar.add("terminal", "autoenvscaling_terminal.domain:TerminalDomain",
                  description="procedural shell tasks: files, logs, data, text, scripts, archives, SQLite, git, config, cron, processes")


@hookimpl
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    registrar.add("endless-terminals", "autoenvscaling_terminal.formats:EndlessTerminalsFormat",
                  description="Endless Terminals task folders (task.json, test_*_state.py, Dockerfile or container.def)")


@hookimpl
def autoenvscaling_register_commands(cli: click.Group) -> None:
    from .cli import terminal

    cli.add_command(terminal)
