"""AutoEnvScaling's swe domain: bug-fix tasks in Python repositories.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path (``declare``), and no generator or sandbox code is imported here.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

# The domain's cheats (cheats.py), registered by path: nothing is imported until one is used.
CHEATS = {"junit-rewrite": "JunitRewrite", "forge-reports": "ForgeReports", "swallow-failures": "SwallowFailures",
          "skip-at-import": "SkipAtImport", "exit-at-import": "ExitAtImport", "exit-zero-at-exit": "ExitZeroAtExit",
          "kill-verifier": "KillVerifier", "skip-conftest": "SkipConftest", "weaken-tests": "WeakenTests",
          "delete-failing-tests": "DeleteFailingTests", "git-history": "GitHistory", "copy-installed": "CopyInstalled",
          "special-case-visible": "SpecialCaseVisible"}

declare(
    globals(),
    domains={"swe": ("autoenvscaling_swe.domain:SweDomain",
                     "bug-fix tasks in Python repositories: injected bugs, issue text, hidden tests")},
    formats={"swe-bench": ("autoenvscaling_swe.formats:SweBenchFormat",
                           "SWE-bench instances as JSONL (instance_id, repo, base_commit, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS)")},
    gates={"swe-lint": ("autoenvscaling_swe.gate:SweLintGate",
                        "swe tasks: test lists match the hidden bundle; no git metadata, caches or fixed code in the image"),
           "swe-validation": ("autoenvscaling_swe.gate:SweValidationGate",
                              "swe tasks: rerun the suite with and without the fix; FAIL_TO_PASS/PASS_TO_PASS must match")},
    cheats={f"swe.{name}": f"autoenvscaling_swe.cheats:{cls}" for name, cls in CHEATS.items()},
    commands=["autoenvscaling_swe.cli:swe"],
)
