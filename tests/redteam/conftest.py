"""Fixtures for the red-team tests: the fixture tasks and real sandbox backends."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture()
def host():
    from autoenvscaling.plugins import create_host

    return create_host(strict=True)


@pytest.fixture()
def bwrap(host):
    from autoenvscaling.errors import AESError
    from autoenvscaling.sandbox.select import make_backend

    try:
        backend = make_backend("bwrap", host)
    except AESError as exc:
        pytest.skip(f"bwrap backend unavailable: {exc.message}")
    yield backend
