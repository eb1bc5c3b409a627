"""AutoEnvScaling's professional domain: office work in document workspaces.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain and its two gates by import path, and imports no generator or document library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    from autoenvscaling.domains.base import Domain
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins.registry import Registrar

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    registrar.add("professional", "autoenvscaling_professional.domain:ProfessionalDomain",
                  description="office work on generated documents: spreadsheets, Word, PDF, CSV, calendars")


@hookimpl
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    registrar.add("professional-lint", "autoenvscaling_professional.gate:ProfessionalLintGate",
                  description="professional tasks: checker, hidden spec and solution present and consistent; nothing hidden in the image")
    registrar.add("professional-controls", "autoenvscaling_professional.gate:ProfessionalControlsGate",
                  description="professional tasks: valid empty outputs score 0, the plausible wrong answer scores below 1")


@hookimpl
def autoenvscaling_register_commands(cli) -> None:  # noqa: ANN001 - a click.Group
    from .cli import professional

    cli.add_command(professional)
