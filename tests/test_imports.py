"""Start-up stays cheap: what the CLI and every plugin import pulls in no heavy library.

Checked in a fresh interpreter (this test process has imported plenty already): import the core,
build the CLI's help and every built-in command's help, load every installed plugin's top module and
collect its registrations, then look at sys.modules.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["torch", "transformers", "playwright", "docker", "ray", "triton", "pyarrow", "datasets", "openai"]

PROBE = r"""
import importlib, io, json, sys, contextlib
from importlib import metadata

import autoenvscaling
from autoenvscaling.cli.main import BUILTIN_COMMANDS, _module_exists, cli
from autoenvscaling.plugins import create_host

def help_of(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main(args=args, prog_name="autoenvscaling", standalone_mode=False)
        except SystemExit:
            pass
    return out.getvalue()

seen = {"top": help_of(["--help"]), "commands": [], "plugins": []}
for name, (path, _) in BUILTIN_COMMANDS.items():
    if _module_exists(path):
        help_of([name, "--help"])
        seen["commands"].append(name)
seen["load_errors"] = []
for ep in metadata.entry_points(group="autoenvscaling"):
    try:
        ep.load()
        seen["plugins"].append(ep.value)
    except Exception as exc:  # a plugin mid-change is its own tests' business, not this one's
        seen["load_errors"].append(f"{ep.value}: {exc}")
host = create_host(strict=False)
for kind in host.registries:
    host.registry(kind)
import autoenvscaling.testing.pytest_plugin
seen["heavy"] = sorted(m for m in HEAVY if m in sys.modules)
print(json.dumps(seen))
"""


def test_cli_and_plugins_import_no_heavy_library():
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={"AUTOENVSCALING_STRICT_PLUGINS": "0", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert "Commands:" in seen["top"]
    assert {"plugins", "domains", "doctor"} <= set(seen["commands"])
    assert seen["plugins"], "no plugin is installed: install the first-party plugins (plugins/*) to check them"
    assert seen["heavy"] == [], (f"start-up imported {seen['heavy']} (commands {seen['commands']}, "
                                 f"plugins {seen['plugins']}, plugins that failed to load: {seen['load_errors']})")


def test_the_pytest_plugin_imports_only_pytest():
    # pytest loads it in every project where autoenvscaling is installed.
    code = ("import sys; before = set(sys.modules); import pytest; mid = set(sys.modules); "
            "import autoenvscaling.testing.pytest_plugin; "
            "print(sorted(m for m in set(sys.modules) - mid if not m.startswith('autoenvscaling')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
