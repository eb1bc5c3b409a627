"""The seams carry types: no ``Any`` where plugins and the core meet.

The rule, checked on annotation strings (every module here uses ``from __future__ import
annotations``, so the strings are what the author wrote, and names imported under TYPE_CHECKING need
not be importable):

- Covered: every hook specification; every public method and property of ``Registry``,
  ``Registrar`` and ``PluginHost`` (plus ``create_host``); every public method (``__init__``
  included) of the base classes ``SandboxBackend``, ``Sandbox``, ``Agent``, ``Executor``,
  ``LLMBackend``, ``Domain``, ``Gate`` and ``Proposer``, inherited ones from other core bases too.
- Each parameter other than ``self``/``cls`` and each return must be annotated (an unannotated
  parameter is an implicit ``Any``).
- No annotation may mention ``Any``, except as the value type of free-form JSON data:
  ``dict[str, Any]`` and ``Mapping[str, Any]`` (metadata, details, JSON rows) are allowed, anywhere
  inside an annotation. ``object`` is the honest type of "anything" (a plugin module, ``*exc``).

``core/executors/base.py`` is being rewritten in parallel; its ``Executor`` is covered all the same.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, Callable, Iterator, Mapping

import pytest

from autoenvscaling.plugins import hookspecs

FREE_FORM_JSON = re.compile(r"\b(?:dict|Mapping)\[str, Any\]")
ANY = re.compile(r"\bAny\b")
BASES = [
    "autoenvscaling.plugins.registry:Registry", "autoenvscaling.plugins.registry:Registrar",
    "autoenvscaling.plugins.host:PluginHost", "autoenvscaling.sandbox.base:SandboxBackend",
    "autoenvscaling.sandbox.base:Sandbox", "autoenvscaling.agents.base:Agent",
    "autoenvscaling.executors.base:Executor", "autoenvscaling.llm.base:LLMBackend",
    "autoenvscaling.domains.base:Domain", "autoenvscaling.gates.base:Gate",
    "autoenvscaling.proposers.base:Proposer",
]


def annotation_problems(where: str, fn: Callable[..., object]) -> Iterator[str]:
    """Each parameter or return of ``fn`` that breaks the rule, as "where(param): why"."""
    signature = inspect.signature(fn)  # strings, as written (postponed evaluation)
    for param in signature.parameters.values():
        if param.name in ("self", "cls"):
            continue
        yield from _check(f"{where}({param.name})", param.annotation)
    yield from _check(f"{where} -> return", signature.return_annotation)


def _check(label: str, annotation: object) -> Iterator[str]:
    if annotation is inspect.Parameter.empty:
        yield f"{label}: not annotated"
        return
    text = annotation if isinstance(annotation, str) else repr(annotation)
    if ANY.search(FREE_FORM_JSON.sub("", text)):
        yield f"{label}: {text}"


def _load(path: str) -> type:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def public_members(cls: type) -> Iterator[tuple[str, Callable[..., object]]]:
    """Public methods, ``__init__`` and property getters of ``cls`` and its core base classes."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("autoenvscaling."):
            continue  # object, abc.ABC, typing.Generic: not ours to type
        for name, value in vars(klass).items():
            if name in seen or (name.startswith("_") and name != "__init__"):
                continue
            seen.add(name)
            if isinstance(value, property) and value.fget is not None:
                yield name, value.fget
            elif isinstance(value, (staticmethod, classmethod)):
                yield name, value.__func__
            elif inspect.isfunction(value):
                yield name, value


def hookspec_functions() -> list[tuple[str, Callable[..., object]]]:
    return [(name, fn) for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
            if getattr(fn, f"{hookspecs.PROJECT}_spec", None) is not None]


def test_the_rule_catches_what_it_should():
    # The checker itself: it must flag these, or the tests below prove nothing.
    def bad(a: Any, b, c: list[Any], d: dict[str, Any]) -> Any:  # noqa: ANN001 - b is the unannotated case
        ...

    problems = list(annotation_problems("bad", bad))
    assert problems == ["bad(a): Any", "bad(b): not annotated", "bad(c): list[Any]", "bad -> return: Any"]

    def good(a: object, d: dict[str, Any], m: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        ...

    assert list(annotation_problems("good", good)) == []


def test_every_hookspec_parameter_is_typed():
    specs = hookspec_functions()
    assert len(specs) >= 15  # guards the discovery itself
    problems = [p for name, fn in specs for p in annotation_problems(name, fn)]
    assert not problems, "hook specifications with untyped parameters:\n" + "\n".join(problems)


def test_register_hooks_take_a_registrar_of_their_kind():
    from autoenvscaling.plugins.host import KINDS

    specs = dict(hookspec_functions())
    for kind, (hook, base) in KINDS.items():
        assert base is not None, kind
        expected = f"Registrar[{base.rpartition(':')[2]}]"
        annotation = inspect.signature(specs[hook]).parameters["registrar"].annotation
        assert annotation == expected, f"{hook}(registrar: {annotation}), expected {expected}"


@pytest.mark.parametrize("path", BASES)
def test_public_methods_of_seam_classes_are_typed(path):
    cls = _load(path)
    members = list(public_members(cls))
    assert members, f"{path}: no public members found"
    problems = [p for name, fn in members for p in annotation_problems(f"{cls.__name__}.{name}", fn)]
    assert not problems, f"{path}: annotations with Any or none:\n" + "\n".join(problems)


def test_create_host_is_typed():
    from autoenvscaling.plugins.host import create_host

    assert list(annotation_problems("create_host", create_host)) == []


def test_host_properties_name_their_kind():
    from autoenvscaling.plugins.host import PluginHost

    assert inspect.signature(PluginHost.gates.fget).return_annotation == "Registry[Gate]"
    assert inspect.signature(PluginHost.sandbox_backends.fget).return_annotation == "Registry[SandboxBackend]"
    assert inspect.signature(PluginHost.prerequisites.fget).return_annotation == "Registry[Prerequisite]"
