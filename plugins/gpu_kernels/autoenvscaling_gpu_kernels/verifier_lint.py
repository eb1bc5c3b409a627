"""The harness's kernel lint (verifier/kernellint.py), loaded from the package for use on the host:
the lint gate runs it on reference solutions, the KernelBench importer on shipped answers."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from importlib import resources
from types import ModuleType


@lru_cache(maxsize=None)
def verifier_module(name: str) -> ModuleType:
    """verifier/<name>.py as a module (that directory is package data, not a package)."""
    path = resources.files(__package__).joinpath("verifier", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_aes_gk_verifier_{name}", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lint_source(source: str, spec: dict) -> list[str]:
    return list(verifier_module("kernellint").lint(source, spec))
