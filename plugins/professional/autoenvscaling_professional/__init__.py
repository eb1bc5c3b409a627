"""AutoEnvScaling's professional domain: office work in document workspaces.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, its two gates and its cheats by import path (``declare``), and imports no generator or
document library.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

# The domain's cheats (cheats.py), by name: registered by path, imported when first used.
CHEATS = {"resave-input": "ResaveInput", "skeleton": "Skeleton", "wrong-format": "WrongFormat",
          "typed-values": "TypedValues", "constant-formulas": "ConstantFormulas", "balanced-books": "BalancedBooks",
          "text-dump": "TextDump", "instruction-docx": "InstructionDocx", "dump-sources": "DumpSources",
          "wrong-times": "WrongTimes", "example-phone": "ExamplePhone", "format-everything": "FormatEverything",
          "every-letter": "EveryLetter"}

declare(
    globals(),
    domains={"professional": ("autoenvscaling_professional.domain:ProfessionalDomain",
                              "office work on generated documents: spreadsheets, Word, PDF, CSV, calendars")},
    gates={"professional-lint": ("autoenvscaling_professional.gate:ProfessionalLintGate",
                                 "professional tasks: checker, hidden spec and solution present and consistent; nothing hidden in the image"),
           "professional-controls": ("autoenvscaling_professional.gate:ProfessionalControlsGate",
                                     "professional tasks: doing nothing scores at most 0.1, valid empty outputs 0, the plausible wrong answer at most 0.5")},
    verifier_runtimes={"profcheck": ("autoenvscaling_professional.runtime:ProfcheckRuntime",
                                     "professional tasks: their checker in a warm interpreter that imported the document libraries once")},
    cheats={f"professional.{name}": f"autoenvscaling_professional.cheats:{cls}" for name, cls in CHEATS.items()},
    commands=["autoenvscaling_professional.cli:professional"],
)
