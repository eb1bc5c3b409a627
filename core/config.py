"""Process-wide settings read from the environment (no config file is required)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where built environments, base root filesystems, models and the verifier runtime are cached.
    ``AUTOENVSCALING_CACHE`` overrides ``~/.cache/autoenvscaling``."""
    root = os.environ.get("AUTOENVSCALING_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "autoenvscaling")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
