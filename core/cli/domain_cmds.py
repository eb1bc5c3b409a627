"""``families`` and ``generate`` for a domain plugin's own command group: what every procedural
domain offers at the command line, written once.

    @click.group("my-domain")
    def my_domain() -> None: ...

    add_family_commands(my_domain, MyDomain)   # a Domain class (or any callable returning one)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import click

from .seeds import parse_seeds

if TYPE_CHECKING:
    from ..domains.base import Domain

DIFFICULTY_CHOICES = ["easy", "medium", "hard", "all"]


def _short(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def add_family_commands(group: click.Group, make_domain: Callable[[], Domain], *,
                        import_format: str | None = None) -> None:
    """Add ``families`` and ``generate`` to ``group``; with ``import_format`` (a registered task
    format's name) also ``import SOURCE --out DIR [--check/--no-check] [--backend B]``."""
    if import_format is not None:
        add_import_command(group, import_format)

    @group.command("families")
    @click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
    def families(as_json: bool) -> None:
        """List the generator families with their skills (and what else the domain says of them)."""
        domain = make_domain()
        rows = [{"name": f.name, "description": f.description, "skills": list(f.skills),
                 "difficulties": ["easy", "medium", "hard"], **domain.family_info(f.name)} for f in domain.families()]
        if as_json:
            click.echo(json.dumps(rows, indent=2))
            return
        width = max((len(r["name"]) for r in rows), default=0)
        for r in rows:
            extra = "  ".join(_short(r[k]) for k in r if k not in {"name", "description", "skills", "difficulties", "neighbour"})
            click.echo(f"{r['name']:<{width}}  {extra + '  ' if extra else ''}{r['description']}")

    @group.command("generate")
    @click.option("--family", "family_names", multiple=True, help="A family (repeatable; default: every family).")
    @click.option("--difficulty", type=click.Choice(DIFFICULTY_CHOICES), default="all", show_default=True)
    @click.option("--seeds", default="0", show_default=True, help="Seeds: N, A-B or a comma list.")
    @click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
                  help="Folder to write task directories into (existing tasks are kept).")
    def generate(family_names: tuple[str, ...], difficulty: str, seeds: str, out: Path) -> None:
        """Write generated tasks as Harbor task directories, without admission (validate them with
        ``autoenvscaling tasks validate``; ``autoenvscaling generate --mix DOMAIN=1`` does both)."""
        from ..errors import UsageError
        from ..tasks import short_name, write_task

        domain = make_domain()
        known = [f.name for f in domain.families()]
        names = list(family_names) or known
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UsageError(f"unknown {domain.name} family {unknown[0]!r}", hint=f"families: {', '.join(known)}")
        levels = ["easy", "medium", "hard"] if difficulty == "all" else [difficulty]
        numbers = parse_seeds(seeds)
        out.mkdir(parents=True, exist_ok=True)
        for name in names:
            for seed in numbers:
                for label in levels:
                    task = domain.generate(name, seed=seed, difficulty=label)
                    target = out / short_name(task.name)
                    if not target.exists():
                        write_task(task, target)
                    click.echo(str(target))


def add_import_command(group: click.Group, format_name: str) -> None:
    @group.command("import")
    @click.argument("source", type=click.Path(exists=True, path_type=Path))
    @click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
                  help="Folder for the task directories and import-report.json.")
    @click.option("--check/--no-check", default=True, show_default=True,
                  help="Write only tasks that pass the lint, build, oracle and null gates (one sandbox at a time).")
    @click.option("--backend", default="bwrap", show_default=True, help="Sandbox backend for --check.")
    def import_cmd(source: Path, out: Path, check: bool, backend: str) -> None:
        from ..gates.importing import import_tasks, summary, verdict
        from ..plugins import create_host

        fmt = create_host().formats.get(format_name)()
        colours = {"admitted": "green", "written": "green", "rejected": "red", "error": "magenta"}

        def line(row: dict) -> None:
            took = f" ({row['seconds']:.0f}s)" if "seconds" in row else ""
            status = click.style(f"{row['status']:8}", fg=colours.get(row["status"]))
            click.echo(f"{status} {row['id']}{took}: {row['reason']}")

        items = list(fmt.labelled(source))  # a broken source fails here, before any sandbox starts
        if check:
            click.echo(f"checking each task with the lint, build, oracle and null gates on {backend} "
                       "(the first build of an image takes minutes)", err=True)
        rows = import_tasks(items, out, check=check, backend=backend, progress=line,
                            explain=lambda report: fmt.explain(report) or verdict(report),
                            report_fields={"format": format_name, "source": str(source.resolve())})
        click.echo(f"{summary(rows)}; tasks in {out}, report in {out / 'import-report.json'}")

    import_cmd.__doc__ = (f"Import SOURCE (the {format_name} format) as task directories. Unreadable items, and "
                          "with --check tasks that fail admission, are listed with their reason and not written.")
