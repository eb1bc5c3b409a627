"""A Harbor-style verifier on an image without python3 (ubuntu:24.04, as in the Harbor cookbook) keeps
its verdict offline on both backends: `apt-get install curl; curl ... | sh; uvx --with pytest pytest`
runs on the offline runtime's own Python, as uv online runs on the Python it downloads. The control:
the same runtime without that Python scores the oracle 0, saying the image has no python3."""

from __future__ import annotations

import asyncio

import pytest
from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.runtime.offline import runtime_files
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.runtime.verifier_runtime import OfflineRuntime, materialise_files
from autoenvscaling.tasks import Task

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures

pytestmark = pytest.mark.slow  # builds the ubuntu:24.04 stand-in and the runtime's Python once

TEST_SH = """#!/bin/bash
command -v python3 && echo "the image has python3"
apt-get update
apt-get install -y curl
curl -LsSf https://astral.sh/uv/0.9.7/install.sh | sh
source $HOME/.local/bin/env
uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 pytest --ctrf /logs/verifier/ctrf.json /tests/test_state.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
TEST_STATE = """import subprocess, sys
from pathlib import Path


def test_hello():
    assert Path("/app/hello.txt").read_text().strip() == "Hello, world!"


def test_python_runs_as_under_uv():
    assert sys.version_info[:2] >= (3, 9)
    assert subprocess.check_output(["python3", "-c", "print(2 + 2)"], text=True).strip() == "4"
"""


def python_less_task() -> Task:
    return Task.create("no-python3-uvx", {}, "Write Hello, world! to /app/hello.txt.", {
        "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\necho 'Hello, world!' > /app/hello.txt\n",
        "tests/test.sh": TEST_SH, "tests/test_state.py": TEST_STATE})


class WithoutOwnPython(OfflineRuntime):
    """The offline runtime as it was before it carried a Python: the control."""

    def materialise(self):
        return materialise_files(runtime_files(python=False, cache_dir=self.cache_dir), self.name, self.cache_dir)


def verdicts(backend, runtime_cls=OfflineRuntime):
    """(oracle result, nop result) of one trial each through the real trial runner."""
    task = python_less_task()
    runner = TrialRunner(backend, runtimes=[runtime_cls(cache_dir=backend.cache_dir)])

    async def go():
        prepared = await backend.prepare(task)
        return (await runner.run(task, OracleAgent(), prepared=prepared),
                await runner.run(task, NopAgent(), prepared=prepared))

    return asyncio.run(go())


def check(oracle, nop):
    tail = oracle.steps[-1].verifier.output_tail
    assert oracle.status == "ok" and oracle.reward == 1.0, (oracle.error, tail)
    assert "the image has python3" not in tail and "2 passed" in tail
    assert nop.status == "ok" and nop.reward == 0.0, nop.error


def check_control(oracle):
    tail = oracle.steps[-1].verifier.output_tail
    assert oracle.status == "ok" and oracle.reward == 0.0, tail
    assert "this image has no python3" in tail


@pytest.fixture(scope="module")
def bwrap(bwrap_cls):
    from autoenvscaling.sandbox.base import SandboxPolicy

    return bwrap_cls(policy=SandboxPolicy())


def test_bwrap_oracle_1_nop_0_on_the_runtimes_python(bwrap):
    check(*verdicts(bwrap))


def test_bwrap_control_without_it_the_oracle_fails(bwrap):
    check_control(verdicts(bwrap, WithoutOwnPython)[0])


@pytest.fixture(scope="module")
def docker(docker_engine):  # noqa: F811 - the fixture imported above
    from autoenvscaling.sandbox.base import SandboxPolicy
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(policy=SandboxPolicy())
    yield backend
    asyncio.run(backend.aclose())


@pytest.mark.docker
def test_docker_oracle_1_nop_0_on_the_runtimes_python(docker):
    check(*verdicts(docker))


@pytest.mark.docker
def test_docker_control_without_it_the_oracle_fails(docker):
    check_control(verdicts(docker, WithoutOwnPython)[0])
