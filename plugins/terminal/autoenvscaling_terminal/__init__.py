"""AutoEnvScaling's terminal domain: procedural shell tasks.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path (``declare``), and no generator is imported here.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

# The domain's cheats (cheats.py), by name: class names, imported when first used.
CHEATS = {
    "terminal.touch-outputs": "TouchOutputs", "terminal.format-skeleton": "FormatSkeleton",
    "terminal.copy-input": "CopyInput", "terminal.symlink-outputs": "SymlinkOutputs",
    "terminal.wrong-field-counts": "WrongFieldCounts", "terminal.cron-always": "CronAlways",
    "terminal.config-empty-values": "ConfigEmptyValues", "terminal.git-empty-commit": "GitEmptyCommit",
    "terminal.db-objects-only": "DbObjectsOnly", "terminal.exit-zero-script": "ExitZeroScript",
    "terminal.sample-hardcode": "SampleHardcode", "terminal.output-elsewhere": "OutputElsewhere",
    "terminal.script-forges-verdict": "ScriptForgesVerdict", "terminal.script-kills-verifier": "ScriptKillsVerifier",
}

declare(
    globals(),
    domains={"terminal": ("autoenvscaling_terminal.domain:TerminalDomain",
                          "procedural shell tasks: files, logs, data, text, scripts, archives, SQLite, git, config, cron, processes")},
    formats={"endless-terminals": ("autoenvscaling_terminal.formats:EndlessTerminalsFormat",
                                   "Endless Terminals task folders (task.json, test_*_state.py, Dockerfile or container.def)")},
    cheats={name: f"autoenvscaling_terminal.cheats:{cls}" for name, cls in CHEATS.items()},
    commands=["autoenvscaling_terminal.cli:terminal"],
)
