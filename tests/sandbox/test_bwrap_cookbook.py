"""The four Harbor cookbook tasks on the bwrap backend: their environments build from their own
Dockerfiles (apt-get at build time, COPY of a skills directory), and the oracle produces the files the
tests look for, through the real trial runner."""

from __future__ import annotations

import asyncio

import pytest
from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.sandbox.base import SandboxPolicy
from autoenvscaling.tasks import read_task

pytestmark = pytest.mark.slow  # the first run builds four images with apt-get (~1 min); cached after

# What each oracle must leave behind: path -> a command whose output must equal the expected text.
EXPECTED = {
    "simple-task": [("cat /app/hello.txt", "Hello, world!")],
    "skills": [("cat /app/greeting.txt", "Hello from Harbor Skills!"),
               ("head -c 3 /skills/generate-greeting/SKILL.md", "---")],  # COPY skills/ /skills/
    "multi-reward": [("cd /app && python3 -c 'from deduplicate import deduplicate as d; "
                      "print(d([{\"id\": 1, \"email\": \"A@x\"}, {\"id\": 2, \"email\": \"a@x\"}]))'",
                      "[{'id': 2, 'email': 'a@x'}]")],
}


@pytest.fixture(scope="module")
def cookbook_backend(bwrap_cls):
    return bwrap_cls(policy=SandboxPolicy())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_oracle_makes_the_expected_files(cookbook_backend, harbor_cookbook, name):
    task = read_task(harbor_cookbook / name)

    async def go():
        prepared = await cookbook_backend.prepare(task)
        async with await cookbook_backend.create(task, prepared) as sb:
            before = [await sb.exec(cmd) for cmd, _ in EXPECTED[name]]
            trajectory = await OracleAgent().run(task, sb)
            after = [await sb.exec(cmd) for cmd, _ in EXPECTED[name]]
            leftover = await sb.exec("ls /solution /tests")
        return prepared, before, trajectory, after, leftover

    prepared, before, trajectory, after, leftover = asyncio.run(go())
    assert prepared.workdir == "/app"
    assert trajectory.stop_reason == "done" and trajectory.actions[0].exit_code == 0
    for (cmd, expected), was, now in zip(EXPECTED[name], before, after, strict=True):
        assert now.stdout.strip() == expected, (cmd, now.tail())
        if not cmd.startswith("head"):  # the oracle made it: it was not there before
            assert was.stdout.strip() != expected
    assert "No such file" in leftover.stderr  # neither solution/ nor tests/ stays in the sandbox


def test_multi_step_trial_scores_every_step(cookbook_backend, harbor_cookbook):
    """Its verifiers are plain bash, so the full trial (steps, workdir uploads, healthcheck, per-step
    verifier env) scores without any offline toolchain."""
    task = read_task(harbor_cookbook / "multi-step")
    result = asyncio.run(TrialRunner(cookbook_backend, runtimes=[]).run(task, OracleAgent()))
    assert result.status == "ok", result.error
    assert result.rewards == {"scaffold": 1.0, "implement": 1.0, "document": 1.0}


@pytest.mark.parametrize("name", ["simple-task", "multi-reward", "multi-step", "skills"])
def test_full_trial_scores_oracle_1_and_nop_0(cookbook_backend, harbor_cookbook, name):
    """End to end with the real verifiers, offline: tests/ uploaded after the agent, the offline
    verifier runtime standing in for apt-get/curl/uvx, rewards read from the reward files."""
    from autoenvscaling.agents.builtin import NopAgent

    task = read_task(harbor_cookbook / name)
    runner = TrialRunner(cookbook_backend)

    async def go():
        prepared = await cookbook_backend.prepare(task)
        return (await runner.run(task, OracleAgent(), prepared=prepared),
                await runner.run(task, NopAgent(), prepared=prepared))

    oracle, nop = asyncio.run(go())
    assert oracle.status == "ok" and set(oracle.rewards.values()) == {1.0}, (oracle.error, oracle.rewards)
    assert nop.status == "ok" and set(nop.rewards.values()) == {0.0}, (nop.error, nop.rewards)
