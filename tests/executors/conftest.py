"""Shared pieces of the executor tests: a host with the pid-file agent plugin (aes_pid_plugin.py, a
module the worker processes import by name; it also holds the helpers that watch for a worker's pid
and kill it) and a bwrap backend."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # worker processes get the driver's sys.path, so they import the plugin too
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def pid_host():
    import aes_pid_plugin

    from autoenvscaling.plugins import create_host

    return create_host(strict=True, entrypoints=False, plugins=[aes_pid_plugin])


@pytest.fixture(scope="session")
def bwrap():
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend()
