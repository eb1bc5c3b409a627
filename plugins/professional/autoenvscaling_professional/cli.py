"""``autoenvscaling professional ...``: commands of the professional domain plugin."""

from __future__ import annotations

from pathlib import Path

import click

from autoenvscaling.api import add_family_commands, lazy_domain


@click.group()
def professional() -> None:
    """The professional domain: office work on generated documents."""


add_family_commands(professional, lazy_domain(f"{__package__}.domain", "ProfessionalDomain"))


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
