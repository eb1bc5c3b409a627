"""AutoEnvScaling's terminal domain: procedurally generated shell tasks as Harbor task directories.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, the Endless Terminals format, the domain's cheats (red team) and the ``terminal`` command
group by import path or with lazily imported code, and imports no generator module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    import click

    from autoenvscaling.domains.base import Domain
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.redteam.cheat import Cheat
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


# The domain's cheats (cheats.py), by name: class names, imported when first used.
CHEATS = {
    "terminal.touch-outputs": "TouchOutputs", "terminal.format-skeleton": "FormatSkeleton",
    "terminal.copy-input": "CopyInput", "terminal.symlink-outputs": "SymlinkOutputs",
    "terminal.wrong-field-counts": "WrongFieldCounts", "terminal.cron-always": "CronAlways",
    "terminal.config-empty-values": "ConfigEmptyValues", "terminal.git-empty-commit": "GitEmptyCommit",
    "terminal.db-objects-only": "DbObjectsOnly", "terminal.exit-zero-script": "ExitZeroScript",
    "terminal.sample-hardcode": "SampleHardcode", "terminal.output-elsewhere": "OutputElsewhere",
    "terminal.script-forges-verdict": "ScriptForgesVerdict", "terminal.script-kills-verifier": "ScriptKillsVerifier",
}


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in CHEATS.items():
        registrar.add(name, f"autoenvscaling_terminal.cheats:{cls}")


@hookimpl
def autoenvscaling_register_commands(cli: click.Group) -> None:
    from .cli import terminal

    cli.add_command(terminal)
