"""pytest fixtures for plugin authors (loaded automatically through the ``pytest11`` entry point).

pytest imports this module in every project where autoenvscaling is installed, so it imports only
pytest at module level; each fixture imports what it needs when it is used.

Fixtures:

- ``aes_host``: a fresh, strict ``PluginHost`` with the built-ins and no installed plugins.
- ``aes_register``: ``aes_register(plugin, name=None)`` registers a plugin object or module into
  ``aes_host`` in-process and checks its hooks (a misspelt hook fails the test).
- ``toy_domain``: the kit's ``ToyDomain`` (two tiny real families).
- ``bwrap_backend``: a ``BwrapBackend`` using the shared build cache; skips when bubblewrap cannot
  run here.

With ``AUTOENVSCALING_REQUIRE_BWRAP=1`` (CI sets it) a test skipped because bubblewrap cannot run
fails instead: CI must never pass by skipping the sandbox tests. The red-team tally: cheats that tests
run through ``autoenvscaling.testing.redteam`` (and the red-team gate) are counted per domain and the
counts are printed at the end of the session.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterator

import pytest

REQUIRE_BWRAP = "AUTOENVSCALING_REQUIRE_BWRAP"
TALLY_ENV = "AUTOENVSCALING_REDTEAM_TALLY"  # autoenvscaling.redteam.run.TALLY_ENV (not imported at start-up)
_SANDBOX_WORDS = ("bubblewrap", "bwrap")


@pytest.fixture
def aes_host() -> Any:
    """A fresh strict plugin host: built-ins only, so installed plugins cannot change the test."""
    from autoenvscaling.plugins.host import PluginHost

    host = PluginHost(strict=True)
    host.load_builtins()
    host.check()
    return host


@pytest.fixture
def aes_register(aes_host: Any) -> Callable[..., str]:
    """Register plugins into ``aes_host`` before its first lookup; returns the plugin's name."""

    def register(plugin: Any, name: str | None = None) -> str:
        plugin_name = aes_host.register(plugin, name=name or getattr(plugin, "__name__", None))
        aes_host.check()
        return plugin_name

    return register


@pytest.fixture
def toy_domain() -> Any:
    """The kit's toy domain: small valid Harbor tasks whose oracle scores 1 and nop 0."""
    from autoenvscaling.testing.toy import ToyDomain

    return ToyDomain()


@pytest.fixture
def bwrap_backend() -> Iterator[Any]:
    """A bubblewrap sandbox backend with the build cache (AUTOENVSCALING_CACHE); skipped, with the
    reason, where bubblewrap cannot run."""
    import asyncio

    try:
        from autoenvscaling.sandbox.bwrap import BwrapBackend
    except ImportError as exc:
        pytest.skip(f"the bwrap sandbox backend cannot be imported: {exc}")
    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(f"bubblewrap is unavailable here: {why}")
    backend = BwrapBackend()
    try:
        yield backend
    finally:
        asyncio.run(backend.aclose())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    """Under AUTOENVSCALING_REQUIRE_BWRAP=1, a skip because bubblewrap cannot run is a failure."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if not report.skipped or os.environ.get(REQUIRE_BWRAP) != "1" or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(word in reason.lower() for word in _SANDBOX_WORDS):
        report.outcome = "failed"
        report.longrepr = f"{reason} [{REQUIRE_BWRAP}=1: the sandbox tests must run here, not skip]"


def pytest_configure(config: Any) -> None:
    """One tally file per session (workers and subprocesses inherit its path)."""
    if not os.environ.get(TALLY_ENV) and not hasattr(config, "workerinput"):
        import tempfile

        fd, path = tempfile.mkstemp(prefix="aes-redteam-", suffix=".jsonl")
        os.close(fd)
        os.environ[TALLY_ENV] = path
        config._aes_redteam_tally = path  # removed at the end of the session


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    from autoenvscaling.redteam.run import read_tally

    path = os.environ.get(TALLY_ENV)
    lines = read_tally(path) if path else []
    if lines:
        terminalreporter.section("red team")
        for line in lines:
            terminalreporter.write_line(line)
    own = getattr(config, "_aes_redteam_tally", None)
    if own:
        try:
            os.unlink(own)
        except OSError:
            pass
