"""What a domain plugin's ``families`` package and ``cli.py`` share: the catalog's entries, the
loader of generator modules, and the domain factory of the plugin's commands.

    CATALOG = {info.name: info for info in [FamilyInfo("memo_docx", "write a memo", ("docx",), "mail_merge"), ...]}

    def load(name: str) -> ModuleType:
        return family_module(__name__, CATALOG, name)
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    from .base import Domain


@dataclass(frozen=True)
class FamilyInfo:
    """One family of a domain's catalog (``LevelledDomain.catalog``), said without importing its
    generator."""

    name: str
    description: str
    skills: tuple[str, ...]
    #: the family a "different" variation moves to: related in tools, new in skill
    neighbour: str


def family_module(package: str, catalog: Mapping[str, Any], name: str) -> ModuleType:
    """The generator module ``<package>.<name>`` of the ``catalog``'s family ``name``, imported on
    first use; KeyError when the catalog has no such family."""
    if name not in catalog:
        raise KeyError(name)
    return importlib.import_module(f"{package}.{name}")


def lazy_domain(module: str, class_name: str) -> Callable[[], Domain]:
    """A factory of the domain ``class_name`` of ``module``, which it imports when first called: a
    plugin's command group hands it to ``add_family_commands`` so that loading the command line
    imports no generator (it happens when a command runs)."""

    def make() -> Domain:
        domain: Domain = getattr(importlib.import_module(module), class_name)()
        return domain

    return make
