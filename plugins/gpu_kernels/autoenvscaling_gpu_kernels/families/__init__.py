"""The procedural kernel-problem families: a catalog, a loader and the filtered generator."""

from __future__ import annotations

import random
from types import ModuleType

from autoenvscaling.api import FamilyInfo, family_module

from .base import Problem

#: each family's neighbour shares its memory pattern or its math, so a variation stays related
_NEIGHBOURS = {
    "elementwise_chain": "bias_activation",
    "bias_activation": "elementwise_chain",
    "row_norm": "reduction",
    "reduction": "row_norm",
    "scan": "reduction",
    "matmul_epilogue": "bias_activation",
}


def load(name: str) -> ModuleType:
    """The family module ``name``; KeyError when there is no such family."""
    return family_module(__name__, _NEIGHBOURS, name)


CATALOG: dict[str, FamilyInfo] = {
    name: FamilyInfo(name, module.DESCRIPTION, tuple(module.SKILLS), neighbour)
    for name, neighbour in _NEIGHBOURS.items()
    for module in [load(name)]
}

_ATTEMPTS = 20


def generate(family: str, seed: int, level: int) -> Problem:
    """A problem of ``family`` at ``level`` for ``seed``, redrawn while the reference is degenerate."""
    from .checks import degenerate_reason

    module = load(family)
    reason = None
    for attempt in range(_ATTEMPTS):
        suffix = "" if attempt == 0 else f"/retry{attempt}"
        problem = module.build(random.Random(f"autoenvscaling-gpu-kernels/{family}/{seed}/{level}{suffix}"), level)
        if (reason := degenerate_reason(problem)) is None:
            return problem
    raise ValueError(f"{family} seed {seed} level {level}: no usable problem in {_ATTEMPTS} draws ({reason})")
