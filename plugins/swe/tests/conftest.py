"""Fixtures of the swe plugin's tests: a third-party repository with history, and instances generated
from it in real bubblewrap sandboxes (built once per session; the image build is cached)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # swe_helpers
# The cache every test suite of this project shares: the swe image is built once for all of them.
os.environ.setdefault("AUTOENVSCALING_CACHE", "/tmp/autoenvscaling-test-cache")

from swe_helpers import generate, third_party_repo  # noqa: E402


@pytest.fixture(scope="session")
def numtools(tmp_path_factory) -> Path:
    return third_party_repo(tmp_path_factory.mktemp("third-party"))


@pytest.fixture(scope="session")
def history_task(numtools):
    """The fix commit of the third-party repository reverted: to_roman's ``>=`` becomes ``>`` again."""
    from autoenvscaling_swe.render import render

    instance, _ = generate(numtools, seed=0, strategy="history")
    assert instance is not None
    return render(instance)
