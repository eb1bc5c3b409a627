"""``autoenvscaling professional ...``: commands of the professional domain plugin."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.group()
def professional() -> None:
    """The professional domain: office work on generated documents."""


@professional.command("families")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array.")
def families(as_json: bool) -> None:
    """List the generator families with their skills."""
    from .families import CATALOG

    rows = [{"name": f.name, "description": f.description, "skills": list(f.skills),
             "difficulties": ["easy", "medium", "hard"], "neighbour": f.neighbour} for f in CATALOG.values()]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        click.echo(f"{r['name']:<{width}}  {r['description']}")


@professional.command("generate")
@click.option("--family", "family_names", multiple=True, help="A family (repeatable; default: every family).")
@click.option("--difficulty", type=click.Choice(["easy", "medium", "hard", "all"]), default="all", show_default=True)
@click.option("--seeds", default="0", show_default=True, help="Seeds: N, A-B or a comma list.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write task directories into (existing tasks are kept).")
def generate(family_names: tuple[str, ...], difficulty: str, seeds: str, out: Path) -> None:
    """Write generated tasks as Harbor task directories, without admission (validate them with
    ``autoenvscaling tasks validate``; ``autoenvscaling generate --mix professional=1`` does both)."""
    from autoenvscaling.errors import UsageError
    from autoenvscaling.tasks import write_task

    from .domain import ProfessionalDomain
    from .families import CATALOG

    names = list(family_names) or list(CATALOG)
    unknown = [n for n in names if n not in CATALOG]
    if unknown:
        raise UsageError(f"unknown professional family {unknown[0]!r}", hint=f"families: {', '.join(CATALOG)}")
    levels = ["easy", "medium", "hard"] if difficulty == "all" else [difficulty]
    domain = ProfessionalDomain()
    out.mkdir(parents=True, exist_ok=True)
    for name in names:
        for seed in _seeds(seeds):
            for label in levels:
                task = domain.generate(name, seed=seed, difficulty=label)
                target = out / task.name
                if not target.exists():
                    write_task(task, target)
                click.echo(str(target))


@professional.command("render")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Folder for the PNG files.")
@click.option("--pages", type=click.IntRange(1, 20), default=1, show_default=True, help="Pages per document.")
@click.option("--dpi", type=click.IntRange(30, 300), default=80, show_default=True)
def render_cmd(paths: tuple[Path, ...], out: Path, pages: int, dpi: int) -> None:
    """Render documents to PNG (LibreOffice headless + pdftoppm). A task directory renders its
    workspace (environment/app/); a file renders itself."""
    from .preview import documents, to_png

    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            app = path / "environment" / "app"
            files += documents(app if app.is_dir() else path)
        else:
            files.append(path)
    for document in files:
        for image in to_png(document, out, pages=pages, dpi=dpi):
            click.echo(str(image))


def _seeds(text: str) -> list[int]:
    from autoenvscaling.errors import UsageError

    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part.strip()[1:]:
                a, b = part.split("-", 1)
                out += list(range(int(a), int(b) + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise UsageError(f"cannot read seeds {text!r}", hint="use N, A-B or a comma list such as 0,3,7") from None
    return out
