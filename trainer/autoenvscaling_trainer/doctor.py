"""The doctor's check for what training needs: torch, transformers and TRL importable, and what
generation will use on this machine (vLLM on CUDA, else transformers)."""

from __future__ import annotations

import importlib.util
from importlib.metadata import PackageNotFoundError, version
from typing import ClassVar

from autoenvscaling.api import Prerequisite, PrerequisiteStatus


class TRLPrerequisite(Prerequisite):
    needed_for: ClassVar[str] = "GRPO training (autoenvscaling train, run --train)"

    def check(self) -> PrerequisiteStatus:
        missing = [m for m in ("torch", "transformers", "trl") if importlib.util.find_spec(m) is None]
        if missing:
            return PrerequisiteStatus(ok=False, detail=f"missing: {', '.join(missing)}",
                                      hint="pip install -e trainer/ (torch==2.13.0 first on a CPU machine)")
        try:
            found = ", ".join(f"{m} {version(m)}" for m in ("torch", "transformers", "trl"))
        except PackageNotFoundError as exc:
            return PrerequisiteStatus(ok=False, detail=f"{exc.name} has no package metadata",
                                      hint="reinstall it with pip")
        vllm = importlib.util.find_spec("vllm") is not None
        generation = "vLLM available (used on CUDA)" if vllm else "generation with transformers (no vllm)"
        return PrerequisiteStatus(ok=True, detail=f"{found}; {generation}")
