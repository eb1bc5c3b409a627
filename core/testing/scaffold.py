"""``autoenvscaling plugins new``: write a pip-installable domain plugin whose tests pass at once.

The files come from package data (templates/plugin/, every file ending in ``.tmpl``) with
``{{placeholder}}`` fields; a path segment ``_package_`` becomes the import package's name.
"""

from __future__ import annotations

import re
import shutil
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ..errors import UsageError

_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def plugin_fields(name: str) -> dict[str, str]:
    """The template fields for a plugin called ``name`` ("my-domain" -> domain and entry point
    "my_domain", distribution "autoenvscaling-my-domain", package "autoenvscaling_my_domain")."""
    if not _NAME.match(name) or name.endswith(("-", "_")):
        raise UsageError(f"invalid plugin name {name!r}",
                         hint="use lowercase letters, digits, '-' or '_', starting with a letter (e.g. 'chess')")
    ident = name.replace("-", "_")
    from .. import __version__

    return {
        "name": ident,
        "package": f"autoenvscaling_{ident}",
        "distribution": f"autoenvscaling-{ident.replace('_', '-')}",
        "class_name": "".join(part.capitalize() for part in ident.split("_")) + "Domain",
        "core_version": __version__,
    }


def scaffold_plugin(name: str, directory: Path | str = ".") -> Path:
    """Write the plugin package for ``name`` under ``directory``; returns its folder. Refuses to
    overwrite an existing folder."""
    fields = plugin_fields(name)
    dest = Path(directory) / fields["distribution"]
    if dest.exists():
        raise UsageError(f"{dest} already exists", hint="choose another name or --dir, or remove the folder")
    files = {rel: render(source.read_text(encoding="utf-8"), fields)
             for rel, source in _templates(resources.files("autoenvscaling.testing") / "templates" / "plugin", "")}
    staging = dest.with_name(f".{dest.name}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for rel, text in files.items():
            target = staging / rel.replace("_package_", fields["package"])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        staging.rename(dest)  # all or nothing: no half-written package on a failure
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def render(text: str, fields: dict[str, str]) -> str:
    """Replace every ``{{field}}``; an unknown field is a bug in the template, so it raises."""

    def value(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in fields:
            raise KeyError(f"template field {{{{{key}}}}} is not one of {sorted(fields)}")
        return fields[key]

    return _PLACEHOLDER.sub(value, text)


def _templates(folder: Traversable, prefix: str) -> list[tuple[str, Traversable]]:
    out: list[tuple[str, Traversable]] = []
    for item in sorted(folder.iterdir(), key=lambda t: t.name):
        rel = f"{prefix}{item.name}"
        if item.is_dir():
            out.extend(_templates(item, rel + "/"))
        elif item.name.endswith(".tmpl"):
            out.append((rel.removesuffix(".tmpl"), item))
    return out
