"""``autoenvscaling gpu-kernels ...``: commands of the gpu_kernels domain plugin."""

from __future__ import annotations

import json
from pathlib import Path

import click

from autoenvscaling.api import add_family_commands, lazy_domain


@click.group("gpu-kernels")
def gpu_kernels() -> None:
    """The gpu_kernels domain: Triton kernels for PyTorch references."""


add_family_commands(gpu_kernels, lazy_domain(f"{__package__}.domain", "GpuKernelsDomain"), import_format="kernelbench")


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
