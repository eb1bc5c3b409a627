"""Every hook in hookspecs.py is documented in docs/hooks.md with exactly its signature."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from autoenvscaling.plugins import hookspecs

DOCS = Path(__file__).resolve().parents[2] / "docs" / "hooks.md"
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
