"""``autoenvscaling computer-use ...``: list apps and families, generate tasks."""

from __future__ import annotations

import click

from autoenvscaling.api import add_family_commands, lazy_domain


@click.group("computer-use")
def computer_use() -> None:
    """Computer-use tasks: web apps driven in a real browser."""


add_family_commands(computer_use, lazy_domain(f"{__package__}.domain", "ComputerUseDomain"),
                    import_format="web-collection")


@computer_use.command("apps")
def apps() -> None:
    """List the web apps tasks run on."""
    from .render import app_names
    from .apps import app_module

    for name in app_names():
        doc = (app_module(name).__doc__ or "").strip().splitlines()[0]
        click.echo(f"{name:10} {doc}")


@computer_use.command("screenshots")
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--out", type=click.Path(file_okay=False), required=True, help="folder for the PNG files")
@click.option("--backend", default="bwrap", show_default=True, help="sandbox backend")
def screenshots(task_dir: str, out: str, backend: str) -> None:
    """Run the task's oracle in a sandbox and save its screenshots (start.png, end.png)."""
    import asyncio
    from pathlib import Path

    from autoenvscaling.api import AESError, read_task

    from .shots import oracle_screenshots

    try:
        task = read_task(task_dir)
        saved, reward = asyncio.run(oracle_screenshots(task, Path(out), backend=backend))
    except AESError as exc:
        raise click.ClickException(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
    for path in saved:
        click.echo(str(path))
    click.echo(f"oracle reward: {reward:g}")
    if not saved:
        raise click.ClickException("the oracle saved no screenshots (its solution calls uilib.shot(page, NAME))")
