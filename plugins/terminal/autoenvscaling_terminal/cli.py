"""``autoenvscaling terminal ...``: commands of the terminal domain plugin."""

from __future__ import annotations

import json

import click


@click.group()
def terminal() -> None:
    """The terminal domain: procedural shell-task generators."""


@terminal.command("families")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def families(as_json: bool) -> None:
    """List the generator families with their kinds and skills."""
    from .domain import TerminalDomain
    from .families import CATALOG

    domain = TerminalDomain()
    rows = [{"name": f.name, "description": f.description, "skills": list(f.skills), "kinds": domain.kinds(f.name),
             "difficulties": ["easy", "medium", "hard"], "neighbour": f.neighbour} for f in CATALOG.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        click.echo(f"{r['name']:<{width}}  {', '.join(r['kinds']):<38}  {r['description']}")
