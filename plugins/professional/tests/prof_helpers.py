"""Shared by the professional plugin's tests: one attempt or one validation in a real sandbox."""

from __future__ import annotations

import json
import re
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
    """One attempt of ``agent`` on ``task`` in bwrap, verified as training would (the outputs view)."""
    from autoenvscaling.testing import run_trial

    return run_trial(task, agent)


def trials(pairs, *, jobs: int = 2) -> list:
    """Attempts of several ``(task, agent)`` pairs in bwrap, ``jobs`` at a time on one backend (what
    one ``trial`` each would do, without starting the backend every time); results in order."""
    return on_runner([lambda runner, t=t, a=a: runner.run(t, a) for t, a in pairs], jobs=jobs)


def on_runner(calls, *, jobs: int = 2) -> list:
    """``call(runner)`` for each of ``calls`` (coroutine functions of a bwrap ``TrialRunner``),
    ``jobs`` at a time; their results in order."""
    import asyncio

    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner
    from autoenvscaling.sandbox.select import make_backend

    async def go():
        host = create_host()
        backend = make_backend("bwrap", host)
        runner, gate = TrialRunner(backend, host=host), asyncio.Semaphore(jobs)

        async def one(call):
            async with gate:
                return await call(runner)

        try:
            return await asyncio.gather(*(one(c) for c in calls))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def fraction_met(result) -> float:
    """The fraction of requirements met that profcheck prints: what the old scoring paid."""
    match = re.search(r"^fraction met ([0-9.]+)$", details(result)["output"], re.M)
    assert match, details(result)
    return float(match.group(1))


def with_spec(task, **changes):
    """``task`` with keys of its hidden spec changed (``scoring="fraction"``: the old scoring)."""
    spec = json.loads(task.files["tests/spec.json"].text)
    return task.with_files({"tests/spec.json": json.dumps({**spec, **changes}, indent=1, sort_keys=True) + "\n"})


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
