"""``autoenvscaling gpu-kernels ...``: commands of the gpu_kernels domain plugin."""

from __future__ import annotations

import json
from pathlib import Path

import click

from autoenvscaling.cli.domain_cmds import add_family_commands


@click.group("gpu-kernels")
def gpu_kernels() -> None:
    """The gpu_kernels domain: Triton kernels for PyTorch references."""


def _domain():  # noqa: ANN202 - imported when a command runs, not when the CLI loads
    from .domain import GpuKernelsDomain

    return GpuKernelsDomain()


add_family_commands(gpu_kernels, _domain)


@gpu_kernels.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write task directories into.")
def import_cmd(path: Path, out: Path) -> None:
    """Import KernelBench problem files (a file or a folder; answers in answers/<stem>.py) as tasks.
    Degenerate and broken problems are listed with their reason and skipped."""
    from autoenvscaling.errors import TaskFormatError
    from autoenvscaling.tasks import short_name, write_task

    from .kernelbench import KernelBenchFormat

    out.mkdir(parents=True, exist_ok=True)
    written = refused = 0
    for item in KernelBenchFormat().scan(path):
        if isinstance(item, TaskFormatError):
            refused += 1
            click.echo(f"refused  {item.message}")
            continue
        written += 1
        target = write_task(item, out / short_name(item.name))
        has_answer = "solution/solution.py" in item.files
        click.echo(f"written  {target}{'' if has_answer else '  (no answer: no oracle, not admissible)'}")
    click.echo(f"{written} written, {refused} refused", err=True)


@gpu_kernels.command("check")
@click.argument("task_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--solution", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A ModelNew file (default: the task's reference solution).")
@click.option("--json", "as_json", is_flag=True, help="Print the harness's details as JSON.")
def check(task_dir: Path, solution: Path | None, as_json: bool) -> None:
    """Run the task's verifier harness on this machine, outside a sandbox (trusted answers only):
    lint, correctness on fresh inputs, and timing when CUDA is here."""
    from .harness import run_harness

    result = run_harness(task_dir, solution)
    if as_json:
        click.echo(json.dumps({"reward": result.reward, **result.details}, indent=2))
    else:
        click.echo(result.output.strip().splitlines()[-1] if result.output.strip() else f"reward {result.reward:g}")
