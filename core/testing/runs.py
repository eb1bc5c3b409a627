"""One attempt or one validation in a real sandbox, from synchronous test code: what a domain
plugin's tests do most (attacks scored 0, tasks admitted). Each call starts the backend and closes
it; the plugins found installed are loaded, so verifier runtimes and gates are the real ones."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..gates.base import ValidationReport
    from ..runtime.trial import TrialResult
    from ..tasks import Task


def run_trial(task: Task, agent: Agent, *, backend: str = "bwrap") -> TrialResult:
    """One attempt of ``agent`` on ``task``, verified as training would (the protected view)."""
    from ..plugins import create_host
    from ..runtime.trial import TrialRunner
    from ..sandbox.select import make_backend

    async def go() -> TrialResult:
        host = create_host()
        sandboxes = make_backend(backend, host)
        try:
            return await TrialRunner(sandboxes, host=host).run(task, agent)
        finally:
            await sandboxes.aclose()

    return asyncio.run(go())


def validate_task(task: Task, *, backend: str = "bwrap", skip: Sequence[str] = ()) -> ValidationReport:
    """``task`` through every registered gate (except ``skip``) on ``backend``."""
    from ..gates.base import GateSettings
    from ..gates.validate import Validator
    from ..plugins import create_host
    from ..sandbox.select import make_backend

    async def go() -> ValidationReport:
        host = create_host()
        sandboxes = make_backend(backend, host)
        try:
            return await Validator(host=host, backend=sandboxes, settings=GateSettings(skip=tuple(skip))).validate(task)
        finally:
            await sandboxes.aclose()

    return asyncio.run(go())
