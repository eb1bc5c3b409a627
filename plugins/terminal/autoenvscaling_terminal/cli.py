"""``autoenvscaling terminal ...``: commands of the terminal domain plugin."""

from __future__ import annotations

import click

from autoenvscaling.api import add_family_commands, lazy_domain


@click.group()
def terminal() -> None:
    """The terminal domain: procedural shell-task generators."""


add_family_commands(terminal, lazy_domain(f"{__package__}.domain", "TerminalDomain"))
