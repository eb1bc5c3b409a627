"""Test settings of the terminal plugin: the shared build cache and strict plugin loading, as in the
core's tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")
os.environ.setdefault("AUTOENVSCALING_STRICT_PLUGINS", "1")
sys.path.insert(0, str(Path(__file__).parent))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def bwrap_backend():
    """The real bubblewrap backend over the shared build cache (skipped where it cannot run)."""
    from autoenvscaling.errors import AESError
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    try:
        return make_backend("bwrap", create_host(strict=True))
    except (AESError, ImportError) as exc:
        pytest.skip(f"bwrap backend unavailable: {getattr(exc, 'message', exc)}")
