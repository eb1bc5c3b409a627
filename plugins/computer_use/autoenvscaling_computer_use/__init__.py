"""AutoEnvScaling's computer-use domain: tasks done in a web browser on local web apps.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path, and neither Playwright nor any generator is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    from autoenvscaling.agents.tools import Tool
    from autoenvscaling.domains.base import Domain
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins.prerequisites import Prerequisite
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.redteam.cheat import Cheat
    from autoenvscaling.suite.formats import TaskFormat

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    registrar.add("computer_use", "autoenvscaling_computer_use.domain:ComputerUseDomain",
                  description="web apps in a real browser (Playwright + Debian's Chromium), verified on the app's state")


@hookimpl
def autoenvscaling_register_tools(registrar: Registrar[Tool]) -> None:
    registrar.add("browser", "autoenvscaling_computer_use.tool:BrowserTool",
                  description="drive the attempt's Chromium: goto, click, fill, select, press, scroll, back, observe")


@hookimpl
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    registrar.add("computer-use-lint", "autoenvscaling_computer_use.gate:ComputerUseLintGate",
                  description="computer-use tasks: spec, seed, key and solution present and consistent; nothing hidden in the image")
    registrar.add("computer-use-state", "autoenvscaling_computer_use.gate:ComputerUseStateGate",
                  description="computer-use tasks: every attempt starts from the seeded state; reset restores it")


@hookimpl
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    registrar.add("web-collection", "autoenvscaling_computer_use.external:WebCollectionFormat",
                  description="external web-task collections: collection.toml, app/, tasks.jsonl, verify(url) functions")


@hookimpl
def autoenvscaling_register_prerequisites(registrar: Registrar[Prerequisite]) -> None:
    registrar.add("chromium", "autoenvscaling_computer_use.prereq:Chromium")


# The domain's cheats (cheats.py), registered by path: nothing is imported until one is used.
CHEATS = {"mirror-sql": "MirrorSql", "mirror-swap": "MirrorSwap", "restart-app": "RestartApp",
          "patch-app-client": "PatchAppClient", "api-order": "ApiOrder", "api-order-review": "ApiOrderThenReview",
          "forged-review-token": "ForgedReviewToken", "shotgun-edit": "ShotgunEdit",
          "wishlist-everything": "WishlistEverything", "success-url": "SuccessUrl", "lookalike-page": "LookalikePage"}


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in CHEATS.items():
        registrar.add(f"computer_use.{name}", f"autoenvscaling_computer_use.cheats:{cls}")


@hookimpl
def autoenvscaling_register_commands(cli) -> None:  # noqa: ANN001 - a click.Group
    from .cli import computer_use

    cli.add_command(computer_use)
