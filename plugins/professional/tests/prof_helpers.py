"""Shared by the professional plugin's tests: one attempt or one validation in a real sandbox."""

from __future__ import annotations

import json
import shutil
from functools import lru_cache

import pytest
from autoenvscaling.agents.base import Agent

bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")


@lru_cache(maxsize=None)
def task_of(family: str, seed: int = 1, difficulty: str = "medium"):
    from autoenvscaling_professional.domain import ProfessionalDomain

    return ProfessionalDomain().generate(family, seed=seed, difficulty=difficulty)


def outputs(task) -> dict[str, str]:
    return json.loads(task.files["tests/spec.json"].text)["outputs"]


def details(result) -> dict:
    """The checker's details.json is not kept; its printed requirement list is the verifier output."""
    return {"reward": result.reward, "output": result.steps[-1].verifier.output_tail if result.steps else ""}


def trial(task, agent):
    """One attempt of ``agent`` on ``task`` in bwrap, verified with the protected view."""
    from autoenvscaling.testing import run_trial

    return run_trial(task, agent)


def validate(task, *, skip=()):
    from autoenvscaling.testing import validate_task

    return validate_task(task, skip=skip)


def gate(report, name: str):
    return next(g for g in report.gates if g.name == name)


class OracleThen(Agent):
    """An agent that writes the reference answer (solution/ uploaded and run like the oracle's), then
    tampers with it by running ``commands``, which may read /solution/params.json."""

    name = "oracle-then"

    def __init__(self, *commands: str) -> None:
        self.commands = commands

    async def run(self, task, sandbox, *, step=None, limits=None):
        from autoenvscaling.agents.base import Action, Trajectory
        from autoenvscaling.agents.builtin import solution_files
        from autoenvscaling.runtime.paths import SOLUTION_DIR

        await sandbox.upload_files(solution_files(task, step), SOLUTION_DIR)
        actions = []
        for command in (f"bash {SOLUTION_DIR}/solve.sh", *self.commands, f"rm -rf {SOLUTION_DIR}"):
            result = await sandbox.exec(command, timeout=300)
            actions.append(Action(command=command, output=result.tail(4000), exit_code=result.exit_code,
                                  seconds=result.seconds, timed_out=result.timed_out))
        return Trajectory(agent=self.name, actions=actions[:-1], stop_reason="done")
