"""Plugins and the trainer reach the core only through ``autoenvscaling.api``, and that module is
what it claims: every name resolves, lazily, and type checkers see the same names."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import autoenvscaling.api as api

ROOT = Path(__file__).resolve().parents[1]


def private_imports(source: str, filename: str = "<source>") -> list[str]:
    """``file:line module`` for every import of the core other than autoenvscaling.api, wherever it
    stands (module level, a function, a TYPE_CHECKING block)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        for module in modules:
            if (module == "autoenvscaling" or module.startswith("autoenvscaling.")) and module != "autoenvscaling.api":
                found.append(f"{filename}:{node.lineno} {module}")
    return found


def extension_files() -> list[Path]:
    roots = sorted((ROOT / "plugins").glob("*/autoenvscaling_*")) + [ROOT / "trainer" / "autoenvscaling_trainer"]
    return [p for root in roots for p in sorted(root.rglob("*.py"))]


def test_the_checker_flags_an_import_of_a_core_module():
    source = "from autoenvscaling.api import Task\n\ndef f():\n    from autoenvscaling.tasks.harbor import read_task\n"
    assert private_imports(source, "x.py") == ["x.py:4 autoenvscaling.tasks.harbor"]
    assert private_imports("import autoenvscaling.gates.base\n", "y.py") == ["y.py:1 autoenvscaling.gates.base"]


def test_plugins_and_the_trainer_import_only_the_public_api():
    files = extension_files()
    assert len(files) > 50
    offenders = [hit for path in files for hit in private_imports(path.read_text(), str(path.relative_to(ROOT)))]
    assert offenders == [], "import these through autoenvscaling.api (add the name to core/api.py):\n" + "\n".join(offenders)


def test_every_public_name_resolves_to_the_module_that_defines_it():
    import importlib

    for name, module in api.EXPORTS.items():
        assert getattr(api, name) is getattr(importlib.import_module(module), name), name
    assert api.__all__ == sorted(api.EXPORTS)


def test_an_unknown_name_is_a_clear_attribute_error():
    try:
        api.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "autoenvscaling.api has no 'NoSuchThing'" in str(exc)
    else:
        raise AssertionError("no error")


def test_type_checkers_see_the_same_names():
    tree = ast.parse((ROOT / "core" / "api.py").read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen = {(node.module, a.name) for node in guarded.body for a in node.names}
    assert seen == {(m, n) for n, m in api.EXPORTS.items()}


def test_importing_the_api_loads_nothing_else_of_the_core():
    code = ("import sys, autoenvscaling.api; "
            "print(sorted(m for m in sys.modules if m.startswith('autoenvscaling') and m != 'autoenvscaling.api'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['autoenvscaling']"
