"""AutoEnvScaling's terminal domain: procedurally generated shell tasks as Harbor task directories.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, the Endless Terminals format and the ``terminal`` command group by import path or with
lazily imported code, and imports no generator module.
"""

from __future__ import annotations

from typing import Any

from autoenvscaling.plugins import hookimpl

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Any) -> None:
    registrar.add("terminal", "autoenvscaling_terminal.domain:TerminalDomain",
                  description="procedural shell tasks: files, logs, data, text, scripts, archives, SQLite, git, config, cron, processes")


@hookimpl
def autoenvscaling_register_formats(registrar: Any) -> None:
    registrar.add("endless-terminals", "autoenvscaling_terminal.formats:EndlessTerminalsFormat",
                  description="Endless Terminals task folders (task.json, test_*_state.py, Dockerfile or container.def)")


@hookimpl
def autoenvscaling_register_commands(cli: Any) -> None:
    from .cli import terminal

    cli.add_command(terminal)
