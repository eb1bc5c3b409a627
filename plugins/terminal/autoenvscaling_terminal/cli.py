"""``autoenvscaling terminal ...``: commands of the terminal domain plugin."""

from __future__ import annotations

import click

from autoenvscaling.api import add_family_commands


@click.group()
def terminal() -> None:
    """The terminal domain: procedural shell-task generators."""


def _domain():  # noqa: ANN202 - imported when a command runs, not when the CLI loads
    from .domain import TerminalDomain

    return TerminalDomain()


add_family_commands(terminal, _domain)
