"""Task names in the form Harbor requires: ``org/name``.

Harbor's config check refuses a ``[task] name`` that is not ``<org>/<name>`` (each part a letter or
digit, then letters, digits, ``.``, ``_`` and ``-``), and without a valid config ``harbor run`` and
``harbor lint`` refuse the task. Every task we generate is named with ``qualified_name``; the org is
``autoenvscaling`` unless ``AUTOENVSCALING_TASK_ORG`` names another (a lab publishing its own
datasets sets its own). Tasks we import keep the name they came with.
"""

from __future__ import annotations

import os
import re

from ..errors import ConfigError

DEFAULT_ORG = "autoenvscaling"
ORG_ENV = "AUTOENVSCALING_TASK_ORG"
_PART = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")


def is_harbor_name(name: str) -> bool:
    """Whether Harbor accepts ``name`` as a task's ``[task] name``."""
    org, slash, short = name.partition("/")
    return bool(slash) and bool(_PART.match(org)) and bool(_PART.match(short))


def task_org() -> str:
    """The org generated tasks are named under (``AUTOENVSCALING_TASK_ORG``, default ``autoenvscaling``)."""
    org = os.environ.get(ORG_ENV, "").strip() or DEFAULT_ORG
    if not _PART.match(org):
        raise ConfigError(f"{ORG_ENV}={org!r} is not a valid org for Harbor task names",
                          hint="use letters, digits, '.', '_' and '-', starting with a letter or digit, "
                               f"e.g. {ORG_ENV}=my-lab")
    return org


def qualified_name(name: str, *, org: str | None = None) -> str:
    """``name`` as ``org/name``: kept as it is when it already has an org, else put under ``org``
    (default ``task_org()``), with characters Harbor refuses replaced by ``-``."""
    if is_harbor_name(name):
        return name
    short = _UNSAFE.sub("-", name.rsplit("/", 1)[-1]).strip("-._") or "task"
    return f"{org or task_org()}/{short}"


def short_name(name: str) -> str:
    """The part of a task name after its org (the whole name when it has none)."""
    return name.rsplit("/", 1)[-1]
