"""Binary wheels from PyPI (or a local wheelhouse) for what the sandboxes provide offline: the
verifier runtime's packages (runtime/offline.py) and the well-known tool images (tool_images.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ENV_WHEELHOUSE = "AUTOENVSCALING_WHEELHOUSE"


def pip_download(specs: tuple[str, ...] | list[str], dest: Path, wheelhouse: Path | None, *,
                 platforms: tuple[str, ...], python: str, deps: bool = True) -> subprocess.CompletedProcess[str]:
    """``pip download`` of binary wheels for ``platforms`` (in order of preference) into a fresh
    ``dest``: from PyPI, or from ``wheelhouse`` alone (``--no-index``). Used by the offline verifier
    runtime (runtime/offline.py) and the tool images (tool_images.py)."""
    shutil.rmtree(dest, ignore_errors=True)
    source = ["--no-index", "--find-links", str(wheelhouse)] if wheelhouse else []
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", "download",
                           "--quiet", "--progress-bar", "off", "--dest", str(dest), "--only-binary=:all:",
                           *(f"--platform={p}" for p in platforms), "--implementation", "py", "--abi", "none",
                           "--python-version", python, *([] if deps else ["--no-deps"]), *source, *specs],
                          capture_output=True, text=True)


def pip_failure(proc: subprocess.CompletedProcess[str]) -> str:
    """The first error line of a failed pip run."""
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")] or proc.stderr.splitlines()[-1:]
    return errors[0] if errors else "pip failed"


def configured_wheelhouse(wheelhouse: Path | None = None) -> Path | None:
    """``wheelhouse``, else AUTOENVSCALING_WHEELHOUSE when set: where wheels come from instead of PyPI."""
    if wheelhouse is None and os.environ.get(ENV_WHEELHOUSE):
        return Path(os.environ[ENV_WHEELHOUSE])
    return wheelhouse
