"""``autoenvscaling plugins ...`` and ``autoenvscaling domains list``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import click


class _PluginRow(TypedDict):
    """One row of ``plugins list`` (its --json objects)."""

    name: str
    distribution: str | None
    version: str | None
    builtin: bool
    hooks: list[str]
    loaded: bool
    problems: list[str]


@click.group()
def plugins() -> None:
    """Installed plugins and the plugin scaffold."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def plugins_list(as_json: bool) -> None:
    """List plugins with their distribution, version and hooks, and the ones that were skipped."""
    import warnings

    from ..plugins import create_host
    from ..plugins.host import PluginWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # problems are listed below instead
        host = create_host()
        infos = host.plugins()
    rows: dict[str, _PluginRow] = {
        p.name: {"name": p.name, "distribution": p.distribution, "version": p.version, "builtin": p.builtin,
                 "hooks": sorted(p.hooks), "loaded": True, "problems": []} for p in infos}
    for problem in host.problems:
        row = rows.setdefault(problem.plugin, {"name": problem.plugin, "distribution": problem.distribution,
                                               "version": None, "builtin": False, "hooks": [], "loaded": False,
                                               "problems": []})
        row["problems"].append(problem.message)
    ordered = [rows[name] for name in sorted(rows)]
    if as_json:
        click.echo(json.dumps(ordered, indent=2))
        return
    for r in ordered:
        hooks = ", ".join(h.removeprefix("autoenvscaling_") for h in r["hooks"]) if r["loaded"] else "not loaded"
        click.echo(f"{r['name']:<36} {r['distribution'] or '-':<28} {r['version'] or '-':<10} {hooks}")
    for r in ordered:
        for message in r["problems"]:
            click.echo(f"problem: {r['name']} ({r['distribution'] or 'in-process'}): {message}", err=True)


@plugins.command("new")
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where to create the package folder.")
def plugins_new(name: str, directory: Path) -> None:
    """Scaffold a domain plugin package NAME (autoenvscaling-NAME) whose tests pass straight away."""
    from ..testing.scaffold import plugin_fields, scaffold_plugin

    dest = scaffold_plugin(name, directory)
    fields = plugin_fields(name)
    click.echo(f"created {dest} (distribution {fields['distribution']}, package {fields['package']}, "
               f"domain {fields['name']})")
    click.echo("next:")
    click.echo(f"  pip install -e {dest}")
    click.echo(f"  pytest {dest}")
    click.echo("  autoenvscaling domains list")


@click.group()
def domains() -> None:
    """Installed domains."""


@domains.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def domains_list(as_json: bool) -> None:
    """List domains with their families and the plugin that provides each."""
    from ..plugins import create_host

    host = create_host()
    rows = []
    for entry in host.domains.entries():
        domain_cls = host.domains.get(entry.name)
        domain = domain_cls()
        rows.append({"name": entry.name, "plugin": entry.plugin, "description": domain.description or entry.description,
                     "sandbox_backend": domain.sandbox_backend, "families": [f.name for f in domain.families()]})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("no domains installed (pip install autoenvscaling-terminal, or see `autoenvscaling plugins new`)")
    for r in rows:
        click.echo(f"{r['name']:<16} {len(r['families']):>3} families  [{r['plugin']}]  {r['description']}")
