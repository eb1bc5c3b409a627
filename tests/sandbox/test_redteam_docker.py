"""The core's view protections against the core's cheats on the docker backend (podman here): the
plants and the outputs view hold, and each cheat's positive control pays it
(tests/redteam/test_generic_cheats.py runs the whole library on bwrap)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from autoenvscaling.agents.builtin import OracleAgent
from autoenvscaling.plugins import create_host
from autoenvscaling.runtime.trial import TrialRunner
from autoenvscaling.tasks.harbor import read_task
from autoenvscaling.testing.redteam import check_cheat

from .conftest_docker import *  # noqa: F403 - the shared docker fixtures
from .conftest_docker import docker_task

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "redteam" / "count-errors"


def test_plants_and_the_outputs_view_hold_on_docker(docker_backend):
    host = create_host(strict=True)
    task = read_task(TASK)
    runner = TrialRunner(docker_backend, host=host)

    async def run():
        oracle = await runner.run(task, OracleAgent())
        assert oracle.reward == 1.0, oracle.error
        return {name: await check_cheat(runner, task, host.cheats.get(name)())
                for name in ("plant-optional-imports", "plant-startup-hooks", "shadow-tools", "prewrite-reward",
                             "copy-inputs")}

    results = asyncio.run(run())
    assert all(real.reward == 0.0 and ctrl is not None and ctrl.reward == 1.0 for real, ctrl in results.values())


def test_an_output_in_a_directory_the_agent_made_reaches_the_verifier_on_docker(docker_backend):
    """The engine's diff does not say which added paths are directories; a directory the agent made
    on the way to a declared output (computer_use's /run/aes-app for its state socket) must stay, or
    the output goes with it. The file beside it is still put back. The image lacks the working
    directory /app too: the engine makes it at start, and the verifier must still run in it."""
    check = ('#!/bin/bash\nmkdir -p /logs/verifier\n'
             'if [ "$(cat /srv/made/deep/out.txt)" = 42 ] && [ ! -e /srv/made/scratch.txt ]; '
             'then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n')
    task = docker_task("FROM debian:bookworm-slim\nWORKDIR /app\n", files={"tests/test.sh": check,
                              "solution/solve.sh": "#!/bin/bash\nmkdir -p /srv/made/deep\necho 42 > /srv/made/deep/out.txt\n"
                                                   "echo x > /srv/made/scratch.txt\n"},
                       verifier={"outputs": ["/srv/made/deep/out.txt"]}, name="made-dir-output")
    result = asyncio.run(TrialRunner(docker_backend, host=create_host(strict=True)).run(task, OracleAgent()))
    assert result.reward == 1.0, result.error
