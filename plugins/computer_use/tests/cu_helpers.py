"""Shared by the computer-use plugin's tests: tasks, one attempt or one validation in a real bwrap
sandbox, and a live sandbox to drive by hand."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from functools import lru_cache

import pytest

bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@lru_cache(maxsize=None)
def task_of(family: str, seed: int = 1, difficulty: str = "easy"):
    from autoenvscaling_computer_use.domain import ComputerUseDomain

    return ComputerUseDomain().generate(family, seed=seed, difficulty=difficulty)


def spec_of(task) -> dict:
    return json.loads(task.files["tests/spec.json"].text)


def params_of(task) -> dict:
    return json.loads(task.files["solution/params.json"].text)


def verifier_output(result) -> str:
    return result.steps[-1].verifier.output_tail if result.steps and result.steps[-1].verifier else ""


def trial(task, agent, *, host=None):
    """One attempt of ``agent`` on ``task`` in bwrap, verified with the protected view."""
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend

    async def go():
        backend = make_backend("bwrap")
        try:
            return await TrialRunner(backend, host=host or create_host()).run(task, agent)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def check_cheat(task, cheat):
    """``cheat`` on ``task`` (held: below 0.5) and on its positive control (fooled: 0.5 or more), in
    bwrap, tallied for the session's red-team counts; returns both outcomes."""
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend
    from autoenvscaling.testing.redteam import check_cheat as check

    async def go():
        backend = make_backend("bwrap")
        try:
            return await check(TrialRunner(backend, host=create_host()), task, cheat)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def validate(task, *, skip=()):
    from autoenvscaling.gates.base import GateSettings
    from autoenvscaling.gates.validate import Validator
    from autoenvscaling.plugins import create_host
    from autoenvscaling.sandbox.select import make_backend

    async def go():
        backend = make_backend("bwrap")
        try:
            validator = Validator(host=create_host(), backend=backend, settings=GateSettings(skip=tuple(skip)))
            return await validator.validate(task)
        finally:
            await backend.aclose()

    return asyncio.run(go())


@contextlib.asynccontextmanager
async def live_sandbox(task):
    """A started bwrap sandbox of ``task`` (its ENTRYPOINT running the app and the browser service)."""
    from autoenvscaling.sandbox.select import make_backend

    backend = make_backend("bwrap")
    sandbox = None
    try:
        prepared = await backend.prepare(task)
        sandbox = await backend.create(task, prepared)
        await sandbox.start()
        yield sandbox
    finally:
        if sandbox is not None:
            await sandbox.close()
        await backend.aclose()
