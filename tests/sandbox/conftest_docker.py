"""Fixtures for the docker backend's tests, imported by each test_docker*.py; one podman service
serves them all for the whole session.

The engine is DOCKER_HOST when it answers, else a private ``podman system service`` started for the
session. Where neither exists the tests skip with the reason, except under
AUTOENVSCALING_REQUIRE_DOCKER=1 (CI), where they fail: CI must never pass by skipping them.
"""

from __future__ import annotations

import asyncio
import http.server
import os
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from autoenvscaling.errors import MissingPrerequisite
from autoenvscaling.sandbox.base import PreparedEnvironment, SandboxPolicy
from autoenvscaling.tasks import Task, read_task

__all__ = ["docker_engine", "docker_backend", "docker_basic_task", "docker_basic_env", "in_docker",
           "docker_fixture_env"]  # the fixtures

# The probes run python3, which ubuntu:24.04 lacks (as our stand-in does): installed as a real task would.
BASIC_DOCKERFILE = ("FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y --no-install-recommends python3 "
                    "&& rm -rf /var/lib/apt/lists/*\nWORKDIR /app\nENV GREETING=hello\n")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"  # compose-* and docker-* tasks
# Small limits so that the resource tests hit them quickly.
TIGHT = SandboxPolicy(memory_mb=192, storage_mb=64, pids=96)


def docker_task(dockerfile: str | None = BASIC_DOCKERFILE, files: dict[str, Any] | None = None,
                environment: dict[str, Any] | None = None, name: str = "docker-test", **config: Any) -> Task:
    all_files: dict[str, Any] = {"environment/Dockerfile": dockerfile} if dockerfile is not None else {}
    all_files.update(files or {})
    return Task.create(name, {"environment": environment or {}, **config}, "do the thing", all_files)


_shared: dict[str, Any] = {"users": 0}  # one engine for every module that imports these fixtures


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[str]:
    """The URL of a live Docker-API engine, exported as DOCKER_HOST while any docker test runs."""
    pytest.importorskip("docker")
    from autoenvscaling.sandbox.podman import podman_service

    if "url" not in _shared and "failure" not in _shared:
        service = podman_service()
        try:
            _shared["url"] = service.__enter__()
            _shared.update(service=service, previous=os.environ.get("DOCKER_HOST"))
            os.environ["DOCKER_HOST"] = _shared["url"]
        except MissingPrerequisite as exc:
            _shared["failure"] = f"no Docker-API engine for the docker backend tests: {exc.message}; {exc.hint}"
    if "failure" in _shared:
        if os.environ.get("AUTOENVSCALING_REQUIRE_DOCKER") == "1":
            pytest.fail(_shared["failure"] + " [AUTOENVSCALING_REQUIRE_DOCKER=1]")
        pytest.skip(_shared["failure"])
    _shared["users"] += 1
    try:
        yield _shared["url"]
    finally:
        _shared["users"] -= 1
        if _shared["users"] == 0:
            previous = _shared.pop("previous")
            if previous is None:
                os.environ.pop("DOCKER_HOST", None)
            else:
                os.environ["DOCKER_HOST"] = previous
            _shared.pop("url")
            _shared.pop("service").__exit__(None, None, None)


@pytest.fixture(scope="session")
def docker_backend(docker_engine: str) -> Iterator[Any]:
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(policy=TIGHT)
    yield backend
    asyncio.run(backend.aclose())


@pytest.fixture(scope="session")
def docker_basic_task() -> Task:
    return docker_task()


@pytest.fixture(scope="session")
def docker_basic_env(docker_backend: Any, docker_basic_task: Task) -> PreparedEnvironment:
    return asyncio.run(docker_backend.prepare(docker_basic_task))


@pytest.fixture
def in_docker(docker_backend: Any, docker_basic_task: Task, docker_basic_env: PreparedEnvironment) -> Callable[..., Any]:
    """``in_docker(coro_fn)`` runs ``await coro_fn(sandbox)`` in a fresh started container."""

    def run(fn: Callable[..., Any], task: Task | None = None, prepared: PreparedEnvironment | None = None) -> Any:
        async def go() -> Any:
            sandbox = await docker_backend.create(task or docker_basic_task, prepared or docker_basic_env)
            async with sandbox:
                return await fn(sandbox)

        return asyncio.run(go())

    return run


@pytest.fixture(scope="session")
def docker_fixture_env(docker_backend: Any) -> Callable[[str], tuple[Task, PreparedEnvironment]]:
    """``docker_fixture_env(name)``: (task, prepared environment) of tests/fixtures/harbor/<name>,
    built once per session for every module that uses it."""
    prepared: dict[str, tuple[Task, PreparedEnvironment]] = {}

    def get(name: str) -> tuple[Task, PreparedEnvironment]:
        if name not in prepared:
            task = read_task(FIXTURES / name)
            prepared[name] = (task, asyncio.run(docker_backend.prepare(task)))
        return prepared[name]

    return get


class HostSecretHandler(http.server.BaseHTTPRequestHandler):
    """A host-side HTTP server's handler: a container that reaches it reads "host-secret"."""

    def do_GET(self):  # noqa: N802 - http.server API
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host-secret")

    def log_message(self, *args):
        pass
