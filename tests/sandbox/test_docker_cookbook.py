"""The four Harbor cookbook tasks on the docker backend: their environments build through the engine
from their own Dockerfiles (RUN apt-get with the build network, COPY of a skills directory), the
oracle leaves the files their tests look for, and full trials through the real trial runner (with the
offline verifier runtime, since containers have no network) score oracle 1 and nop 0."""

from __future__ import annotations

import asyncio

import pytest

from autoenvscaling.agents.builtin import NopAgent, OracleAgent
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.base import SandboxPolicy
from autoenvscaling.tasks import read_task

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures

pytestmark = [pytest.mark.docker, pytest.mark.slow]  # the first run builds four images with apt-get

# What each oracle must leave behind: a command whose output must equal the expected text.
EXPECTED = {
    "simple-task": [("cat /app/hello.txt", "Hello, world!")],
    "skills": [("cat /app/greeting.txt", "Hello from Harbor Skills!"),
               ("head -c 3 /skills/generate-greeting/SKILL.md", "---")],  # COPY skills/ /skills/
    "multi-reward": [("cd /app && python3 -c 'from deduplicate import deduplicate as d; "
                      "print(d([{\"id\": 1, \"email\": \"A@x\"}, {\"id\": 2, \"email\": \"a@x\"}]))'",
                      "[{'id': 2, 'email': 'a@x'}]")],
}
ORACLE_REWARDS = {
    "simple-task": {"reward": 1.0},
    "skills": {"reward": 1.0},
    "multi-reward": {"correctness": 1.0, "performance": 1.0},
    "multi-step": {"scaffold": 1.0, "implement": 1.0, "document": 1.0},
}


@pytest.fixture(scope="module")
def cookbook_docker(docker_engine):
    from autoenvscaling.sandbox.docker_backend import DockerBackend

    backend = DockerBackend(policy=SandboxPolicy())
    yield backend
    asyncio.run(backend.aclose())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_oracle_makes_the_expected_files(cookbook_docker, harbor_cookbook, name):
    task = read_task(harbor_cookbook / name)

    async def go():
        prepared = await cookbook_docker.prepare(task)
        async with await cookbook_docker.create(task, prepared) as sb:
            before = [await sb.exec(cmd) for cmd, _ in EXPECTED[name]]
            trajectory = await OracleAgent().run(task, sb)
            after = [await sb.exec(cmd) for cmd, _ in EXPECTED[name]]
            leftover = await sb.exec("ls /solution /tests")
        return prepared, before, trajectory, after, leftover

    prepared, before, trajectory, after, leftover = asyncio.run(go())
    assert prepared.workdir == "/app"
    assert trajectory.stop_reason == "done" and trajectory.actions[0].exit_code == 0, trajectory
    for (cmd, expected), was, now in zip(EXPECTED[name], before, after, strict=True):
        assert now.stdout.strip() == expected, (cmd, now.tail())
        if not cmd.startswith("head"):  # the oracle made it: it was not there before
            assert was.stdout.strip() != expected
    assert "No such file" in leftover.stderr  # neither solution/ nor tests/ stays in the sandbox


@pytest.mark.parametrize("name", sorted(ORACLE_REWARDS))
def test_trials_score_oracle_1_and_nop_0(cookbook_docker, harbor_cookbook, name):
    """The tasks' own test.sh files, unchanged, through TrialRunner: apt-get, curl | sh and uvx are
    served offline by the verifier runtime (multi-step's verifiers are plain bash)."""
    task = read_task(harbor_cookbook / name)
    runner = TrialRunner(cookbook_docker)

    async def go():
        prepared = await cookbook_docker.prepare(task)
        return await runner.run(task, OracleAgent(), prepared=prepared), await runner.run(task, NopAgent(), prepared=prepared)

    oracle, nop = asyncio.run(go())
    assert oracle.status == "ok", oracle.error
    assert oracle.rewards == ORACLE_REWARDS[name], oracle.steps[-1].verifier.output_tail
    assert nop.status == "ok" and nop.reward == 0.0, nop
