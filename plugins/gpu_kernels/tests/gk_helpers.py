"""Shared by the gpu_kernels tests: generated tasks, cached per process (generation runs the
reference on the host to filter degenerate problems)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from autoenvscaling.tasks import Task

FIXTURES = Path(__file__).parent / "fixtures"


@lru_cache(maxsize=None)
def generated(family: str, seed: int = 0, difficulty: str = "easy") -> Task:
    from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain

    return GpuKernelsDomain().generate(family, seed=seed, difficulty=difficulty)


def verifier_output(result) -> str:
    return result.steps[-1].verifier.output_tail if result.steps else ""
