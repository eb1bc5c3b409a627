"""Every hook in hookspecs.py is documented in docs/hooks.md with exactly its signature, and
docs/hooks.md is exactly what scripts/hookdoc.py renders from hookspecs.py (not stale)."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path

import pytest

from autoenvscaling.plugins import hookspecs

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "hooks.md"
GENERATOR = ROOT / "scripts" / "hookdoc.py"
HEADING = re.compile(r"^#{2,4} (autoenvscaling_\w+)\((.*)\)\s*$", re.MULTILINE)


def spec_signatures() -> dict[str, str]:
    """hook name -> "arg, arg=default" from the hook specifications themselves."""
    out = {}
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if getattr(fn, f"{hookspecs.PROJECT}_spec", None) is None:
            continue
        params = inspect.signature(fn).parameters.values()
        out[name] = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in params)
    return out


def documented_signatures() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in HEADING.finditer(DOCS.read_text())}


def test_hookspecs_are_found():
    # Guards the test itself: if spec detection broke, the parametrised checks below would vanish.
    assert len(spec_signatures()) >= 11
    assert "autoenvscaling_register_domains" in spec_signatures()


@pytest.mark.parametrize("hook", sorted(spec_signatures()))
def test_hook_is_documented_with_its_signature(hook):
    documented = documented_signatures()
    assert hook in documented, f"{hook} is missing from docs/hooks.md (add a '### {hook}(...)' heading)"
    assert documented[hook] == spec_signatures()[hook], (
        f"docs/hooks.md documents {hook}({documented[hook]}), the spec is {hook}({spec_signatures()[hook]})")


def test_docs_describe_no_hook_that_does_not_exist():
    stale = sorted(set(documented_signatures()) - set(spec_signatures()))
    assert not stale, f"docs/hooks.md documents hooks that hookspecs.py does not define: {stale}"


def _generator():
    spec = importlib.util.spec_from_file_location("hookdoc", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hooks_md_is_generated_and_fresh():
    rendered = _generator().render(hookspecs)
    assert DOCS.read_text() == rendered, (
        "docs/hooks.md is stale: it must be exactly what scripts/hookdoc.py renders from "
        "core/plugins/hookspecs.py (edit the hook docstrings, then run .venv/bin/python scripts/hookdoc.py --write)")


def test_every_hook_has_a_docstring_with_a_summary_line():
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if getattr(fn, f"{hookspecs.PROJECT}_spec", None) is not None:
            doc = inspect.getdoc(fn) or ""
            assert doc.strip(), f"{name} has no docstring: docs/hooks.md would have an empty section"
