"""AutoEnvScaling's professional domain: office work in document workspaces.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, its two gates and its cheats by import path, and imports no generator or document library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    from autoenvscaling.domains.base import Domain
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.redteam.cheat import Cheat

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
                  description="professional tasks: doing nothing scores at most 0.1, valid empty outputs 0, the plausible wrong answer at most 0.5")


# The domain's cheats (cheats.py), by name: registered by path, imported when first used.
CHEATS = {"resave-input": "ResaveInput", "skeleton": "Skeleton", "wrong-format": "WrongFormat",
          "typed-values": "TypedValues", "constant-formulas": "ConstantFormulas", "balanced-books": "BalancedBooks",
          "text-dump": "TextDump", "instruction-docx": "InstructionDocx", "dump-sources": "DumpSources",
          "wrong-times": "WrongTimes", "example-phone": "ExamplePhone", "format-everything": "FormatEverything",
          "every-letter": "EveryLetter"}


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in CHEATS.items():
        registrar.add(f"professional.{name}", f"autoenvscaling_professional.cheats:{cls}")


@hookimpl
def autoenvscaling_register_commands(cli) -> None:  # noqa: ANN001 - a click.Group
    from .cli import professional

    cli.add_command(professional)
