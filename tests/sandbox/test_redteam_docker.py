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
