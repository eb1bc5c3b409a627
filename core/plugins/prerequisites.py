"""Prerequisites: what a plugin needs on the machine, checked by ``autoenvscaling doctor``.

A plugin registers ``Prerequisite`` subclasses through ``autoenvscaling_register_prerequisites``, so
the core's doctor reports a browser binary, a Ray installation or a GPU without knowing about any of
them. A check is cheap and side-effect free: it looks (a file, a module spec, a socket), it never
installs, downloads or starts anything long-lived.
"""

from __future__ import annotations

import abc
import shutil
from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class PrerequisiteStatus(BaseModel):
    """The outcome of one check: ``ok``, what was found (``detail``) and, when not ok, how to get it
    (``hint``, one line naming something that works)."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    detail: str = ""
    hint: str | None = None


class _CheckIdentity(BaseModel):
    """Which check a `PrerequisiteReport` is about (only its base: the report is frozen like its
    other base, `PrerequisiteStatus`)."""

    name: str
    plugin: str
    needed_for: str


class PrerequisiteReport(PrerequisiteStatus, _CheckIdentity):
    """One row of the doctor's ``prerequisites`` list: the check's identity and its status (in that
    order: Pydantic puts the fields of the last base first)."""


class Prerequisite(abc.ABC):
    """One thing the machine must have. The doctor reports it under its registered name;
    ``needed_for`` says which feature needs it ("the docker sandbox backend")."""

    needed_for: ClassVar[str] = ""

    @abc.abstractmethod
    def check(self) -> PrerequisiteStatus:
        """Look, without side effects, and say whether the prerequisite is met."""


class ProgramOnPath(Prerequisite):
    """A program that must be on PATH: a subclass names the ``program`` and the ``install_hint``."""

    program: ClassVar[str]
    install_hint: ClassVar[str]

    def check(self) -> PrerequisiteStatus:
        path = shutil.which(self.program)
        if path:
            return PrerequisiteStatus(ok=True, detail=path)
        return PrerequisiteStatus(ok=False, detail=f"{self.program} is not on PATH", hint=self.install_hint)


def run_check(name: str, plugin: str, cls: type[Prerequisite]) -> PrerequisiteReport:
    """Run one registered check. A check that raises is a failed check naming the exception and the
    plugin to blame, never a crash of the doctor."""
    needed_for = cls.needed_for
    try:
        status = cls().check()
        if not isinstance(status, PrerequisiteStatus):
            raise TypeError(f"check() returned {type(status).__name__}, not PrerequisiteStatus")
    except Exception as exc:  # a broken check is a finding about that plugin
        line = f"{type(exc).__name__}: {exc}".splitlines()[0]
        status = PrerequisiteStatus(ok=False, detail=f"the check raised {line}",
                                    hint=f"a bug in plugin {plugin}'s check; report it to its authors")
    return PrerequisiteReport(name=name, plugin=plugin, needed_for=needed_for, ok=status.ok, detail=status.detail,
                              hint=None if status.ok else status.hint)
