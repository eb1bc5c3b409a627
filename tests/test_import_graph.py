"""The core's modules import each other without cycles.

The graph is built from the AST of every module under core/ (the import package
``autoenvscaling``), with an edge A -> B when A imports B *at module level*: top-level ``import`` and
``from ... import`` statements, including those nested in module-level ``if``/``try`` blocks, but not:

- imports under ``if TYPE_CHECKING:``: they never run, they only give type checkers names;
- imports inside functions: those run after every module has finished importing, which is exactly
  how a genuine runtime dependency against the layering (a task reading the sandbox layer's compose
  file names, the host loading the built-in plugin) is kept from forming an import-time cycle.

A module-level cycle is what breaks at import time (a partially initialised module, depending on
which module a user happens to import first), so that is what fails here. ``from pkg import name``
is an edge to ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``); a submodule's
own parent package is not an edge (Python imports it first anyway).
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"
PACKAGE = "autoenvscaling"


def module_name(path: Path, root: Path = CORE) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            out += module_level_imports(node.body) + module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            out += module_level_imports(node.body) + module_level_imports(node.orelse)
            for handler in node.handlers:
                out += module_level_imports(handler.body)
            out += module_level_imports(node.finalbody)
    return out


def import_graph(root: Path = CORE) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in module_level_imports(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package
                for _ in range(max(node.level - 1, 0)):
                    base = base.rpartition(".")[0]
                origin = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]
            edges |= {t for t in targets if t in modules and t != name and not name.startswith(t + ".")}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path: list[str] = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_graph_covers_the_core():
    graph = import_graph()
    assert len(graph) > 50
    # Known module-level edges: if these vanished, the parser would be missing imports.
    assert "autoenvscaling.tasks" in graph["autoenvscaling.gates.base"]
    assert "autoenvscaling.plugins.registry" in graph["autoenvscaling.plugins.host"]
    assert "autoenvscaling.plugins.hookspecs" in graph["autoenvscaling.plugins.host"]  # from . import hookspecs


def test_find_cycle_reports_a_cycle(tmp_path):
    pkg = tmp_path / "core"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from . import y\n")
    (pkg / "a" / "y.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .z import Z\n"
                                    "from .x import X\n")
    (pkg / "a" / "z.py").write_text("def f():\n    from .x import X\n")  # lazy: no edge
    graph = import_graph(pkg)
    assert graph["autoenvscaling.a.z"] == set()
    assert find_cycle(graph) == ["autoenvscaling.a.x", "autoenvscaling.a.y", "autoenvscaling.a.x"]
    (pkg / "a" / "y.py").write_text("def g():\n    from .x import X\n")
    assert find_cycle(import_graph(pkg)) is None


def test_core_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, ("module-level import cycle: " + " -> ".join(cycle or [])
                           + " (move the shared type down a layer, or import inside the function that needs it)")
