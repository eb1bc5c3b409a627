"""Choosing a sandbox backend by name: the registry entry, an availability check, one clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import MissingPrerequisite
from .base import SandboxBackend, SandboxPolicy


def make_backend(name: str, host: Any = None, policy: SandboxPolicy | None = None, *,
                 cache_dir: Path | None = None) -> SandboxBackend:
    """An instance of the backend registered as ``name``. Raises PluginError for an unknown name or a
    missing extra, MissingPrerequisite when the backend cannot run on this machine."""
    if host is None:
        from ..plugins import create_host

        host = create_host()
    backend_cls = host.sandbox_backends.get(name)
    ok, why = backend_cls.available()
    if not ok:
        raise MissingPrerequisite(f"sandbox backend {name!r} cannot run here: {why}",
                                  hint="`autoenvscaling doctor` checks this machine; try another --backend")
    return backend_cls(policy=policy or SandboxPolicy(), cache_dir=cache_dir)
