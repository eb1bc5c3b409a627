"""AutoEnvScaling's swe domain: bug-fix tasks in Python repositories, SWE-bench style.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: it registers the
domain, the SWE-bench format, the two swe gates, the domain's cheats and the ``swe`` command group by
import path or with lazily imported code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    import click

    from autoenvscaling.domains.base import Domain
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.redteam.cheat import Cheat
    from autoenvscaling.suite.formats import TaskFormat

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    registrar.add("swe", "autoenvscaling_swe.domain:SweDomain",
                  description="bug-fix tasks in Python repositories: injected bugs, issue text, hidden tests")


@hookimpl
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    registrar.add("swe-bench", "autoenvscaling_swe.formats:SweBenchFormat",
                  description="SWE-bench instances as JSONL (instance_id, repo, base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS)")


@hookimpl
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    registrar.add("swe-lint", "autoenvscaling_swe.gate:SweLintGate",
                  description="swe tasks: test lists match the hidden bundle; no git metadata, caches or fixed code in the image")
    registrar.add("swe-validation", "autoenvscaling_swe.gate:SweValidationGate",
                  description="swe tasks: rerun the suite with and without the fix; FAIL_TO_PASS/PASS_TO_PASS must match")


# The domain's cheats (cheats.py), registered by path: nothing is imported until one is used.
CHEATS = {"junit-rewrite": "JunitRewrite", "forge-reports": "ForgeReports", "swallow-failures": "SwallowFailures",
          "skip-at-import": "SkipAtImport", "exit-at-import": "ExitAtImport", "exit-zero-at-exit": "ExitZeroAtExit",
          "kill-verifier": "KillVerifier", "skip-conftest": "SkipConftest", "weaken-tests": "WeakenTests",
          "delete-failing-tests": "DeleteFailingTests", "git-history": "GitHistory", "copy-installed": "CopyInstalled",
          "special-case-visible": "SpecialCaseVisible"}


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in CHEATS.items():
        registrar.add(f"swe.{name}", f"autoenvscaling_swe.cheats:{cls}")


@hookimpl
def autoenvscaling_register_commands(cli: click.Group) -> None:
    from .cli import swe

    cli.add_command(swe)
