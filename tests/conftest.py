"""Shared test settings: a persistent cache for base root filesystems and built layers (building the
Debian base takes ~20 s once), one torch thread, strict plugin loading."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")
os.environ.setdefault("AUTOENVSCALING_STRICT_PLUGINS", "1")

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
# Fixture tasks carry their own verifiers (tests/test_*.py run inside sandboxes), never ours to collect.
collect_ignore = ["fixtures"]


@pytest.fixture(scope="session")
def harbor_cookbook() -> Path:
    """The four Harbor cookbook tasks from ../shared/corpora (skipped in a user's checkout)."""
    path = CORPORA / "harbor-cookbook"
    if not path.is_dir():
        pytest.skip("../shared/corpora/harbor-cookbook is not present in this checkout")
    return path
