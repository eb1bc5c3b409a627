"""Find copies of the code under test elsewhere in an image: a module or package with the same name as
one of the repository's that defines most of the same public names (a distribution's package of the
library, a copy another package vendors, a wheel's unpacked tree). An agent could copy one over the
bug. Standard library only; runs with the image's python3.

stdin: ``{"modules": {"name": ["public", "names", ...]}, "exclude": ["/app", ...]}``
stdout: one JSON list of ``{"module", "path", "shared", "of"}``, each found copy with the number of the
repository module's names it defines too.
"""

from __future__ import annotations

import ast
import json
import os
import sys

VIRTUAL = ("/proc", "/sys", "/dev", "/run")
MAX_FILES = 400  # .py files read per candidate package


def public_names(source: str) -> set[str]:
    """The public top-level functions and classes of a module's source."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not n.name.startswith("_")}


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def names_in(path: str) -> set[str]:
    """The public names a module file, or every module of a package directory, defines."""
    if not os.path.isdir(path):
        return public_names(_read(path))
    names: set[str] = set()
    count = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py") and count < MAX_FILES:
                count += 1
                names |= public_names(_read(os.path.join(root, name)))
    return names


def find(modules: dict[str, list[str]], exclude: list[str]) -> list[dict]:
    skip = {os.path.normpath(p) for p in (*VIRTUAL, *exclude)}
    found = []
    for root, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip and not os.path.islink(os.path.join(root, d))]
        candidates = [d for d in dirs if d in modules and os.path.isfile(os.path.join(root, d, "__init__.py"))]
        candidates += [f for f in files if f.endswith(".py") and f[:-3] in modules]
        for entry in candidates:
            module = entry[:-3] if entry.endswith(".py") else entry
            path = os.path.join(root, entry)
            wanted = set(modules[module])
            found.append({"module": module, "path": path, "shared": len(wanted & names_in(path)), "of": len(wanted)})
    return found


def main() -> int:
    request = json.load(sys.stdin)
    json.dump(find(request["modules"], request.get("exclude", [])), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
