"""``autoenvscaling computer-use import``: an external web-task collection as Harbor tasks (external.py)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("import")
@click.argument("collection", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="folder for the task directories and import-report.json")
@click.option("--check/--no-check", default=True, show_default=True,
              help="admit only tasks that pass the lint, build, oracle and null gates (one sandbox at a time)")
@click.option("--backend", default="bwrap", show_default=True, help="sandbox backend for --check")
def import_cmd(collection: Path, out: Path, check: bool, backend: str) -> None:
    """Import COLLECTION (collection.toml, app/, tasks.jsonl, verifiers) as computer-use tasks."""
    from autoenvscaling.errors import AESError

    from .external import import_collection, read_collection, summary

    colours = {"admitted": "green", "written": "green", "rejected": "red", "error": "magenta"}

    def line(row: dict) -> None:
        took = f" ({row['seconds']:.0f}s)" if "seconds" in row else ""
        status = click.style(f"{row['status']:8}", fg=colours.get(row["status"]))
        click.echo(f"{status} {row['id']}{took}: {row['reason']}")

    try:
        read_collection(collection)  # a broken collection.toml fails before anything starts
    except AESError as exc:
        raise click.ClickException(exc.message + (f" ({exc.hint})" if exc.hint else "")) from None
    if check:
        click.echo(f"checking each task with the lint, build, oracle and null gates on {backend} "
                   "(the first build of the image takes minutes)", err=True)
    try:
        rows = import_collection(collection, out, check=check, backend=backend, progress=line)
    except AESError as exc:
        raise click.ClickException(exc.message + (f" ({exc.hint})" if exc.hint else "")) from None
    click.echo(f"{summary(rows)}; tasks in {out}, report in {out / 'import-report.json'}")
