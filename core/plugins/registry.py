"""Typed registrars: what register hooks receive.

A ``Registry`` holds one kind of thing (domains, sandbox backends, ...). Entries are classes or
"package.module:Name" import paths, so a plugin can register a heavy backend without importing it;
the path is resolved on first use and a missing optional dependency becomes one clear error naming
the pip extra that provides it. Every entry remembers which plugin registered it, and a second
registration of the same name fails naming both plugins.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import Generic, Iterator, TypeVar, cast

from ..errors import PluginError

T = TypeVar("T")
_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,62}$")
_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_IMPORT_PATH = re.compile(rf"^{_DOTTED}:{_DOTTED}$")  # "pkg.mod:Name" (absolute: nothing to be relative to)


@dataclass
class Entry(Generic[T]):
    name: str
    target: type[T] | str  # the class, or an import path "pkg.mod:Name"
    plugin: str
    extra: str | None = None
    description: str = ""
    _resolved: type[T] | None = field(default=None, repr=False)

    def load(self) -> type[T]:
        """The class: the target itself, or the object its import path names (imported once)."""
        if self._resolved is not None:
            return self._resolved
        if not isinstance(self.target, str):
            self._resolved = self.target
            return self.target
        module_name, _, attr = self.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            hint = f"pip install 'autoenvscaling[{self.extra}]'" if self.extra else "check the plugin's installation"
            raise PluginError(
                f"{self.name!r} (from plugin {self.plugin}) needs a missing module: {exc.name or exc}", hint=hint
            ) from None
        obj: object = module
        for part in attr.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                raise PluginError(f"{self.name!r} (from plugin {self.plugin}): {self.target} does not exist")
        # Checked against the kind's base class by Registry.get; here it is whatever the path names.
        self._resolved = cast("type[T]", obj)
        return self._resolved


class Registry(Generic[T]):
    """Named entries of one kind, with the plugin that registered each."""

    def __init__(self, kind: str, base: str | None = None) -> None:
        self.kind = kind
        self._base_path = base  # "pkg.mod:Class", imported only when a class is checked
        self._entries: dict[str, Entry[T]] = {}

    @property
    def base(self) -> type[T] | None:
        if self._base_path is None:
            return None
        module, _, attr = self._base_path.partition(":")
        return cast("type[T]", getattr(importlib.import_module(module), attr))

    def registrar(self, plugin: str) -> "Registrar[T]":
        return Registrar(self, plugin)

    def _add(self, entry: Entry[T]) -> None:
        if not _NAME.match(entry.name):
            raise PluginError(
                f"plugin {entry.plugin} registered {self.kind} with invalid name {entry.name!r}",
                hint="use lowercase letters, digits, '_', '-' or '.'",
            )
        if entry.name in self._entries:
            other = self._entries[entry.name].plugin
            raise PluginError(f"{self.kind} {entry.name!r} registered twice: by {other} and by {entry.plugin}",
                              hint="disable one of them with AUTOENVSCALING_DISABLE_PLUGINS")
        if not isinstance(entry.target, str):
            base = self.base
            if base is not None and not (isinstance(entry.target, type) and issubclass(entry.target, base)):
                raise PluginError(
                    f"plugin {entry.plugin} registered {self.kind} {entry.name!r} as {entry.target!r}, "
                    f"which is not a {base.__name__} subclass",
                    hint="register the class itself, or its import path 'pkg.mod:Class'",
                )
        elif not _IMPORT_PATH.match(entry.target):
            raise PluginError(f"plugin {entry.plugin}: import path {entry.target!r} must look like 'pkg.mod:Name'")
        self._entries[entry.name] = entry

    def snapshot(self) -> dict[str, Entry[T]]:
        """The current entries, for ``restore`` (the host drops a failed plugin's partial work)."""
        return dict(self._entries)

    def restore(self, snapshot: dict[str, Entry[T]]) -> None:
        self._entries = dict(snapshot)

    def get(self, name: str) -> type[T]:
        """The registered class (imported on first use)."""
        entry = self.entry(name)
        obj = entry.load()
        if self.base is not None and isinstance(obj, type) and not issubclass(obj, self.base):
            raise PluginError(f"{self.kind} {name!r} from {entry.plugin} is not a {self.base.__name__}")
        return obj

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "none"
            raise PluginError(f"unknown {self.kind} {name!r} (known: {known})",
                              hint="`autoenvscaling plugins list` shows what is installed") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[Entry[T]]:
        return [self._entries[n] for n in self.names()]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)


class Registrar(Generic[T]):
    """The object a register hook receives: adds entries on behalf of one plugin."""

    def __init__(self, registry: Registry[T], plugin: str) -> None:
        self._registry = registry
        self.plugin = plugin
        self.kind = registry.kind

    def add(self, name: str, target: type[T] | str, *, extra: str | None = None, description: str = "") -> None:
        """Register ``target`` (a class of this kind, or its "pkg.mod:Class" path) as ``name``."""
        if not description and not isinstance(target, str):
            doc = (getattr(target, "__doc__", None) or "").strip()
            description = doc.splitlines()[0] if doc else ""
        self._registry._add(Entry(name=name, target=target, plugin=self.plugin, extra=extra, description=description))
