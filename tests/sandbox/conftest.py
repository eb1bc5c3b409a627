"""Fixtures for the bwrap backend tests: a real backend (skipped where bwrap cannot run) and small
tasks built from a Dockerfile string. Prepared environments are cached in the shared test cache."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import pytest
from autoenvscaling.sandbox.base import PreparedEnvironment, SandboxPolicy
from autoenvscaling.tasks import Task

# The probes run python3, which ubuntu:24.04 lacks (as our stand-in does): installed as a real task would.
BASIC_DOCKERFILE = ("FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y --no-install-recommends python3 "
                    "&& rm -rf /var/lib/apt/lists/*\nWORKDIR /app\n")
# Small limits so that the resource attacks hit them quickly.
TIGHT = SandboxPolicy(memory_mb=192, storage_mb=48, pids=96)


def make_task(dockerfile: str = BASIC_DOCKERFILE, files: dict[str, Any] | None = None,
              environment: dict[str, Any] | None = None, name: str = "bwrap-test", **config: Any) -> Task:
    all_files: dict[str, Any] = {"environment/Dockerfile": dockerfile}
    all_files.update(files or {})
    return Task.create(name, {"environment": environment or {}, **config}, "do the thing", all_files)


@pytest.fixture(scope="session")
def bwrap_cls():
    from autoenvscaling.sandbox.bwrap import BwrapBackend

    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend


@pytest.fixture(scope="session")
def backend(bwrap_cls):
    return bwrap_cls(policy=TIGHT)


@pytest.fixture(scope="session")
def basic_task() -> Task:
    return make_task()


@pytest.fixture(scope="session")
def basic_env(backend, basic_task) -> PreparedEnvironment:
    return asyncio.run(backend.prepare(basic_task))


@pytest.fixture
def in_sandbox(backend, basic_task, basic_env) -> Callable[..., Any]:
    """``in_sandbox(coro_fn)`` runs ``await coro_fn(sandbox)`` in a fresh started sandbox."""

    def run(fn: Callable[..., Any], task: Task | None = None, prepared: PreparedEnvironment | None = None,
            using=None) -> Any:
        async def go() -> Any:
            b = using or backend
            sandbox = await b.create(task or basic_task, prepared or basic_env)
            async with sandbox:
                return await fn(sandbox)

        return asyncio.run(go())

    return run

