"""The ``autoenvscaling`` command line: noun-verb groups, loaded lazily so ``--help`` stays fast.

Expected failures (``AESError``) print one line and a hint and exit non-zero; anything else is a
bug and keeps its traceback.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ..errors import AESError

# command name -> "module:attribute" of a click command or group, imported only when invoked.
BUILTIN_COMMANDS: dict[str, tuple[str, str]] = {
    "plugins": ("autoenvscaling.cli.plugins_cmd:plugins", "List installed plugins; scaffold a new one."),
    "domains": ("autoenvscaling.cli.plugins_cmd:domains", "List installed domains."),
    "tasks": ("autoenvscaling.cli.tasks_cmd:tasks", "Validate task directories; run agents on them."),
    "suite": ("autoenvscaling.cli.suite_cmd:suite", "Import, export, list and summarise suites."),
    "doctor": ("autoenvscaling.cli.doctor_cmd:doctor", "Check this machine: sandboxes, engines, protections."),
    "generate": ("autoenvscaling.cli.flywheel_cmd:generate", "Generate a suite of admitted tasks."),
    "run": ("autoenvscaling.cli.flywheel_cmd:run", "Run the flywheel: propose, validate, calibrate."),
    "bench": ("autoenvscaling.cli.flywheel_cmd:bench", "Benchmarks (proposer comparison, ...)."),
    "serve": ("autoenvscaling.cli.serve_cmd:serve", "Serve a local model over the OpenAI API (llama.cpp)."),
}


class LazyGroup(click.Group):
    """A group whose built-in subcommands are imported on use and whose plugin commands come from
    the ``autoenvscaling_register_commands`` hook."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plugins_loaded = False

    def _load_plugin_commands(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from ..plugins import create_host

        create_host().register_commands(self)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_plugin_commands()
        available = [name for name in BUILTIN_COMMANDS if _module_exists(BUILTIN_COMMANDS[name][0])]
        return sorted(set(available) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in BUILTIN_COMMANDS and _module_exists(BUILTIN_COMMANDS[name][0]):
            module, _, attr = BUILTIN_COMMANDS[name][0].partition(":")
            return getattr(importlib.import_module(module), attr)
        self._load_plugin_commands()
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help without importing every command module.
        rows = []
        for name in self.list_commands(ctx):
            if name in BUILTIN_COMMANDS:
                rows.append((name, BUILTIN_COMMANDS[name][1]))
            else:
                cmd = self.commands[name]
                rows.append((name, cmd.get_short_help_str(60)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _module_exists(path: str) -> bool:
    import importlib.util

    module = path.partition(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="autoenvscaling")
def cli() -> None:
    """AutoEnvScaling: build, validate and train on RL environments (Harbor task directories)."""


def _plugin_warnings_as_lines() -> None:
    """Show a skipped plugin as one ``warning:`` line instead of Python's file/line/source format."""
    import warnings

    original = warnings.showwarning

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if category.__name__ == "PluginWarning":  # autoenvscaling.plugins.host, not imported here
            click.echo(f"warning: {message}", err=True)
        else:
            original(message, category, filename, lineno, file, line)

    warnings.showwarning = show


def main(argv: list[str] | None = None) -> None:
    _plugin_warnings_as_lines()
    try:
        cli.main(args=argv, prog_name="autoenvscaling", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except AESError as exc:
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"hint: {exc.hint}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
