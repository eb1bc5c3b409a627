"""A plugin module for the pause tests (imported by worker processes by name): domain "crashy",
whose generator raises on every call, the same bug each time (the message names the seed, which
differs, as a real traceback's details would)."""

from __future__ import annotations

from autoenvscaling.domains.base import Domain, Family
from autoenvscaling.plugins import hookimpl
from autoenvscaling.tasks import Task


class CrashyDomain(Domain):
    name = "crashy"
    description = "A domain whose generator always crashes."
    sandbox_backend = "bwrap"

    def families(self) -> list[Family]:
        return [Family(name="broken", description="Raises.", skills=["shell"])]

    def generate(self, family: str, *, seed: int, difficulty: str = "medium") -> Task:
        raise RuntimeError(f"generator bug: no template for seed {seed}")


@hookimpl
def autoenvscaling_register_domains(registrar):  # noqa: ANN001 - hook signature
    registrar.add("crashy", CrashyDomain)
