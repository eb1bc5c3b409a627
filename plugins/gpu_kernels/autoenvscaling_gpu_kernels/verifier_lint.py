"""The harness's kernel lint (verifier/kernellint.py) for use on the host: the lint gate runs it on
reference solutions, the KernelBench importer on shipped answers."""

from __future__ import annotations

from .verifier import kernellint


def lint_source(source: str, spec: dict) -> list[str]:
    return list(kernellint.lint(source, spec))
