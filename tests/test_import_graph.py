"""The layering of the core, the plugins and the trainer, and the import graphs that check it.

The core's packages in layers, lowest first (``LAYERS`` below, checked): a package imports only
from layers below its own.

  1. ``autoenvscaling`` (the package itself), ``errors``, ``config``, ``archive``, ``verifier`` (the
     standard-library verifier library tasks ship): nothing of the core
  2. ``tasks``: the Harbor task model, its on-disk format, its layout in a sandbox (``tasks/paths.py``)
  3. ``plugins``: the host and its registries, which hold import paths ("module:Name"), not objects
  4. ``sandbox``, ``llm``, ``domains``, ``suite``
  5. ``agents``
  6. ``runtime``, ``redteam``
  7. ``executors``: run any ``Job`` (executors/jobs.py); each kind of job lives with what it runs
  8. ``gates``: the pipeline and its ``ValidateJob``
  9. ``proposers``, ``trainers``
 10. ``flywheel``: the loop, its ``ProposeJob`` (flywheel/jobs.py), run.sqlite
 11. ``report``: draws a run (the flywheel is handed it: ``Flywheel(report_writer=...)``)
 12. ``testing``, then 13. ``cli``

A plugin (``plugins/*/autoenvscaling_<name>``) or the trainer (``trainer/autoenvscaling_trainer``)
may import any package of the core; the core imports none of them (it finds them through entry
points) and none of them imports another.

Two graphs, both from the AST:

- modules of the core, edges from *module-level* imports only (including those in module-level
  ``if``/``try`` blocks): a cycle there breaks at import time, with a partially initialised module;
- packages (each module collapsed to its package of the core, ``autoenvscaling.sandbox``; a
  top-level module such as ``autoenvscaling.errors`` is its own node; a plugin or the trainer is one
  node), edges from *every* import, those inside functions too: an import deferred into a function
  still depends on what it imports, so it cannot hide a cycle here. Only imports under
  ``if TYPE_CHECKING:`` are left out: they never run. Where a low layer needs a high layer's
  behaviour it is handed it: as an argument (the report writer), through a registry by import path
  (the plugin host), or as a job whose own ``run`` the executors call.

``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``; a
module's own parent package is not an edge in the module graph (Python imports it first anyway).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
PACKAGE = "autoenvscaling"

LAYERS: list[tuple[str, ...]] = [  # lowest first; names relative to autoenvscaling ("" is the package itself)
    ("", "errors", "config", "archive", "verifier"),
    ("tasks",),
    ("plugins",),
    ("sandbox", "llm", "domains", "suite"),
    ("agents",),
    ("runtime", "redteam"),
    ("executors",),
    ("gates",),
    ("proposers", "trainers"),
    ("flywheel",),
    ("report",),
    ("testing",),
    ("cli", "api"),
]


def extensions() -> dict[str, Path]:
    """The import packages of the plugins and the trainer: name -> folder."""
    found = {p.name: p for p in sorted((ROOT / "plugins").glob("*/autoenvscaling_*")) if (p / "__init__.py").is_file()}
    found["autoenvscaling_trainer"] = ROOT / "trainer" / "autoenvscaling_trainer"
    return found


def module_name(path: Path, root: Path = CORE, package: str = PACKAGE) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_under(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    return {module_name(p, root, package): p for p in sorted(root.rglob("*.py"))}


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


def every_import(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree``, in functions and classes too, except those in the body of an
    ``if TYPE_CHECKING:`` (its ``else`` runs, so it counts)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If) and _is_type_checking(node):
            stack += node.orelse
        else:
            stack += ast.iter_child_nodes(node)


def _targets(node: ast.Import | ast.ImportFrom, name: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """What the import in module ``name`` (at ``path``) names: modules where they are modules."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        base = base.rpartition(".")[0]
    origin = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
    return [f"{origin}.{a.name}" if f"{origin}.{a.name}" in modules else origin for a in node.names]


def import_graph(root: Path = CORE) -> dict[str, set[str]]:
    """The core's modules, with an edge for each module-level import of another core module."""
    modules = modules_under(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in module_level_imports(ast.parse(path.read_text(), str(path)).body):
            edges |= {t for t in _targets(node, name, path, modules)
                      if t in modules and t != name and not name.startswith(t + ".")}
        graph[name] = edges
    return graph


def node_of(module: str) -> str:
    """The package-graph node of ``module``: its package of the core, or the plugin's (trainer's) package."""
    top, _, rest = module.partition(".")
    return f"{PACKAGE}.{rest.split('.')[0]}" if top == PACKAGE and rest else top


def package_graph(roots: dict[str, Path] | None = None) -> dict[str, dict[str, list[str]]]:
    """Node -> imported node -> where ("path:line" of each import), from every import but those under
    ``if TYPE_CHECKING:``. ``roots``: import package -> folder (default: the core, every plugin and
    the trainer)."""
    roots = roots if roots is not None else {PACKAGE: CORE, **extensions()}
    modules: dict[str, Path] = {}
    for package, folder in roots.items():
        modules.update(modules_under(folder, package))
    graph: dict[str, dict[str, list[str]]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(node_of(name), {})
        for node in every_import(ast.parse(path.read_text(), str(path))):
            for target in _targets(node, name, path, modules):
                while target and target not in modules:  # a name in a module: the module
                    target = target.rpartition(".")[0]
                if target and node_of(target) != node_of(name):
                    edges.setdefault(node_of(target), []).append(f"{_shown(path)}:{node.lineno}")
    for edges in graph.values():
        for target, sites in edges.items():
            edges[target] = sorted(set(sites), key=lambda site: (site.rpartition(":")[0], int(site.rpartition(":")[2])))
    return graph


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def find_cycle(graph: dict[str, set[str]] | dict[str, dict[str, list[str]]]) -> list[str] | None:
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
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def cycle_message(cycle: list[str], graph: dict[str, dict[str, list[str]]]) -> str:
    """The cycle, then for each of its edges the imports that make it."""
    lines = ["package-level import cycle: " + " -> ".join(cycle)]
    for a, b in zip(cycle, cycle[1:]):
        lines.append(f"  {a} -> {b}: {', '.join(graph[a][b])}")
    lines.append("move the shared code down a layer, or hand the low layer the behaviour (an argument, a "
                 "registry entry by import path); an import inside a function counts all the same")
    return "\n".join(lines)


def layer_of(node: str) -> int:
    """The 1-based layer of a core package (0: in no layer, or not the core's)."""
    rel = node[len(PACKAGE) + 1:] if node.startswith(PACKAGE + ".") else "" if node == PACKAGE else None
    return next((i for i, layer in enumerate(LAYERS, start=1) if rel in layer), 0)


# -- the module graph of the core ---------------------------------------------------------------
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
                           + " (move the shared code into a module both can import)")


# -- the package graph of the core, the plugins and the trainer ---------------------------------
def test_the_package_graph_counts_lazy_imports_and_reports_their_cycle(tmp_path):
    core, plugin = tmp_path / "core", tmp_path / "plugin"
    for folder in (core / "low", core / "high", plugin):
        folder.mkdir(parents=True)
        (folder / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "errors.py").write_text("class Oops(Exception): ...\n")
    (core / "low" / "base.py").write_text("from ..errors import Oops\n"
                                          "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                          "    from ..high.top import Top\n"
                                          "else:\n    import json\n")
    (core / "high" / "top.py").write_text("from ..low import base\n")
    (plugin / "ext.py").write_text("import autoenvscaling.high.top\n")
    roots = {PACKAGE: core, "aes_plugin": plugin}
    graph = package_graph(roots)
    assert {a: set(b) for a, b in graph.items() if b} == {
        "autoenvscaling.low": {"autoenvscaling.errors"}, "autoenvscaling.high": {"autoenvscaling.low"},
        "aes_plugin": {"autoenvscaling.high"}}
    assert find_cycle(graph) is None
    # The same upward import, deferred into a function, is still an edge and closes a cycle.
    (core / "low" / "base.py").write_text("def later():\n    from ..high.top import Top\n")
    graph = package_graph(roots)
    cycle = find_cycle(graph)
    assert cycle == ["autoenvscaling.high", "autoenvscaling.low", "autoenvscaling.high"]
    message = cycle_message(cycle, graph)
    assert "autoenvscaling.high -> autoenvscaling.low -> autoenvscaling.high" in message
    assert f"autoenvscaling.low -> autoenvscaling.high: {core / 'low' / 'base.py'}:2" in message


def test_the_package_graph_covers_core_plugins_and_trainer():
    graph = package_graph()
    assert set(extensions()) <= set(graph) and len(extensions()) >= 6
    assert {n for n in graph if n.startswith(PACKAGE + ".")} == {f"{PACKAGE}.{name}" for layer in LAYERS
                                                                  for name in layer if name}
    # An edge made only by an import inside a function (the CLI hands the flywheel the report writer).
    assert "autoenvscaling.report" in graph["autoenvscaling.cli"]
    assert "autoenvscaling.report" not in {node_of(t) for m, e in import_graph().items()
                                           if m.startswith("autoenvscaling.cli") for t in e}
    # The trainer, like every plugin, reaches the core through its public API (tests/test_public_api.py).
    assert set(graph["autoenvscaling_trainer"]) == {"autoenvscaling.api"}


def test_no_package_level_import_cycle():
    graph = package_graph()
    cycle = find_cycle(graph)
    assert cycle is None, cycle_message(cycle or [], graph)


def test_the_core_imports_no_plugin_and_plugins_import_only_the_core():
    graph = package_graph()
    ext = set(extensions())
    wrong = [f"{a} -> {b}: {', '.join(sites)}" for a, edges in sorted(graph.items()) for b, sites in sorted(edges.items())
             if b in ext]
    assert not wrong, "the core never imports a plugin or the trainer, and they never import each other:\n" + "\n".join(wrong)


def test_the_core_follows_its_layering():
    graph = package_graph()
    core = sorted(n for n in graph if n == PACKAGE or n.startswith(PACKAGE + "."))
    assert not [n for n in core if not layer_of(n)], "a package in no layer: add it to LAYERS and the docstring"
    wrong = [f"{a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)}): {', '.join(sites)}"
             for a in core for b, sites in sorted(graph[a].items()) if layer_of(b) >= layer_of(a)]
    assert not wrong, "imports that do not go down a layer (see this module's docstring):\n" + "\n".join(wrong)
