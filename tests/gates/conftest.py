"""Fixtures for the gate tests: the defect task directories and a real bwrap backend."""

from __future__ import annotations

from pathlib import Path

import pytest

DEFECTS = Path(__file__).resolve().parents[1] / "fixtures" / "defects"


@pytest.fixture(scope="session")
def defects() -> Path:
    return DEFECTS


@pytest.fixture()
def host():
    from autoenvscaling.plugins import create_host

    return create_host(strict=True)


@pytest.fixture()
def bwrap_backend(host):
    """The real bubblewrap backend over the shared test cache (skipped where it cannot run)."""
    from autoenvscaling.errors import AESError
    from autoenvscaling.sandbox.select import make_backend

    try:
        backend = make_backend("bwrap", host)
    except AESError as exc:
        pytest.skip(f"bwrap backend unavailable: {exc.message}")
    yield backend
