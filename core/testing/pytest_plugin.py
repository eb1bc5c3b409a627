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
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest


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
