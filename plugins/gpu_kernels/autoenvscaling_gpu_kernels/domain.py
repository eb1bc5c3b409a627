"""``GpuKernelsDomain``: write a Triton kernel that beats a PyTorch reference."""

from __future__ import annotations

from typing import Any

from autoenvscaling.api import KitExample, LevelledDomain, Task

from .families import CATALOG, generate
from .families.base import MAX_LEVEL, MIN_LEVEL


class GpuKernelsDomain(LevelledDomain):
    """KernelBench-shaped problems (a PyTorch ``Model``; the answer is a ``ModelNew`` built on Triton
    kernels) from six procedural families with random shapes and dtypes. Tasks ask for a GPU but run
    without one: the verifier then checks correctness in the Triton interpreter and reports the timing
    as unmeasured."""

    name = "gpu_kernels"
    description = "Triton kernels for PyTorch references: fusions, norms, reductions, scans, matmul epilogues"
    catalog = CATALOG
    # every family: tests/test_cheats.py runs the red-team gate's every cheat on each one's tasks, unvouched
    redteam_tested_families = frozenset(CATALOG)
    min_level, max_level = MIN_LEVEL, MAX_LEVEL
    kit_examples = (KitExample("row_norm", 1, "medium"), KitExample("matmul_epilogue", 2, "easy"))

    def generate_level(self, family: str, *, seed: int, level: int, **options: Any) -> Task:
        """A task of ``family`` at ``level`` (easy 1, medium 2, hard 3); degenerate draws are redrawn.
        The families take no options."""
        from .render import render

        self.check_request(family, level, options)
        return render(generate(family, seed, level), seed=seed)
