"""Choosing a sandbox backend by name, and what each registered backend can honour here.

``make_backend``: the registry entry, an availability check, one clear error. ``BackendCatalog``:
the registered backends' capabilities on this machine, computed on first ask (probing docker means
asking its engine), so lint can name a backend that honours what a task needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import AESError, MissingPrerequisite
from .base import BackendCapabilities, SandboxBackend, SandboxPolicy

if TYPE_CHECKING:
    from ..plugins.host import PluginHost


def plugin_host(host: PluginHost | None = None) -> PluginHost:
    """``host``, or (None) a new plugin host with the installed plugins."""
    from ..plugins import create_host

    return host if host is not None else create_host()


def make_backend(name: str, host: PluginHost | None = None, policy: SandboxPolicy | None = None, *,
                 cache_dir: Path | None = None) -> SandboxBackend:
    """An instance of the backend registered as ``name``. Raises PluginError for an unknown name or a
    missing extra, MissingPrerequisite when the backend cannot run on this machine."""
    backend_cls = plugin_host(host).sandbox_backends.get(name)
    ok, why = backend_cls.available()
    if not ok:
        raise MissingPrerequisite(f"sandbox backend {name!r} cannot run here: {why}",
                                  hint="`autoenvscaling doctor` checks this machine; try another --backend")
    return backend_cls(policy=policy or SandboxPolicy(), cache_dir=cache_dir)


class BackendCatalog:
    """The sandbox backends registered with ``host``: their declared support (class flags), whether
    they run here, and their capabilities here under ``policy``. Every answer is cached; a backend
    already started (``attach``) answers for itself."""

    def __init__(self, host: PluginHost, policy: SandboxPolicy | None = None) -> None:
        self.host = host
        self.policy = policy or SandboxPolicy()
        self._capabilities: dict[str, BackendCapabilities | None] = {}
        self._available: dict[str, bool] = {}

    def names(self) -> list[str]:
        return self.host.sandbox_backends.names()

    def backend_class(self, name: str) -> type[SandboxBackend] | None:
        """The registered class, or None when it is unknown or cannot be loaded (a missing extra)."""
        try:
            return self.host.sandbox_backends.get(name)
        except AESError:
            return None

    def attach(self, backend: SandboxBackend) -> None:
        """Use a live backend's own capabilities (its policy) for its name."""
        self._capabilities[backend.name] = backend.capabilities()
        self._available[backend.name] = True

    def available(self, name: str) -> bool:
        """Whether backend ``name`` can run on this machine (asked once)."""
        if name not in self._available:
            cls = self.backend_class(name)
            try:
                self._available[name] = cls is not None and bool(cls.available()[0])
            except AESError:
                self._available[name] = False
        return self._available[name]

    def capabilities(self, name: str) -> BackendCapabilities | None:
        """What backend ``name`` would honour here (None: unknown, or it cannot be loaded). Whether it
        can run here at all is ``available``: a lint-only run judges for a backend it never starts."""
        if name not in self._capabilities:
            cls = self.backend_class(name)
            try:
                self._capabilities[name] = cls(policy=self.policy).capabilities() if cls is not None else None
            except AESError:
                self._capabilities[name] = None
        return self._capabilities[name]
