"""``autoenvscaling plugins ...`` and ``autoenvscaling domains list``."""

from __future__ import annotations

import json

import click


@click.group()
def plugins() -> None:
    """Installed plugins and the plugin scaffold."""


@plugins.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def plugins_list(as_json: bool) -> None:
    """List plugins with their distribution, version and hooks."""
    from ..plugins import create_host

    host = create_host()
    infos = host.plugins()
    rows = [{"name": p.name, "distribution": p.distribution, "version": p.version, "builtin": p.builtin,
             "hooks": sorted(p.hooks)} for p in infos]
    problems = [{"plugin": p.plugin, "distribution": p.distribution, "message": p.message} for p in host.problems]
    if as_json:
        click.echo(json.dumps(rows + ([{"problems": problems}] if False else []), indent=2))
        return
    for r in rows:
        click.echo(f"{r['name']:<36} {r['distribution'] or '-':<28} {r['version'] or '-':<10} {', '.join(h.removeprefix('autoenvscaling_') for h in r['hooks'])}")
    for p in problems:
        click.echo(f"skipped {p['plugin']} ({p['distribution']}): {p['message']}", err=True)


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
