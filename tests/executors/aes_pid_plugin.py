"""A plugin module for the executor tests (imported by worker processes by name, so it lives in a
file on sys.path): agent "pidfile" writes its worker's pid into the folder its task's instruction
names, then waits for a file "go" there, so a test can kill the worker mid-job. The helpers below are the tests' side of that."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from typing import Literal

from pydantic import BaseModel

from autoenvscaling.agents.base import Agent, AgentLimits, Trajectory
from autoenvscaling.executors.jobs import Job
from autoenvscaling.plugins import hookimpl

DEFECTS = Path(__file__).resolve().parents[1] / "fixtures" / "defects"


class PidfileAgent(Agent):
    name = "pidfile"

    async def run(self, task, sandbox, *, step=None, limits: AgentLimits | None = None) -> Trajectory:  # noqa: ANN001
        folder = Path((task.instruction or "").strip())
        (folder / f"pid-{os.getpid()}").write_text(str(os.getpid()))
        deadline = time.monotonic() + 120
        while not (folder / "go").exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return Trajectory(agent=self.name, stop_reason="done")


@hookimpl
def autoenvscaling_register_agents(registrar):  # noqa: ANN001
    registrar.add("pidfile", PidfileAgent)


def pid_task(folder: Path):
    """The defects' good task whose instruction names ``folder`` (the pid-file agent writes there)."""
    from autoenvscaling.tasks.harbor import read_task

    folder.mkdir(parents=True, exist_ok=True)
    return read_task(DEFECTS / "good").model_copy(update={"instruction": str(folder)})


def wait_for_pid(folder: Path, *, exclude: set[int] = frozenset(), timeout: float = 120.0) -> int:
    """The pid of the first worker (not in ``exclude``) that wrote its pid file into ``folder``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for f in folder.glob("pid-*"):
            pid = int(f.name.split("-", 1)[1])
            if pid not in exclude:
                return pid
        time.sleep(0.05)
    raise AssertionError(f"no new worker wrote its pid into {folder} within {timeout:.0f} s")


class Pid(BaseModel):
    pid: int


class HangJob(Job):
    """A job that hangs as a buggy plugin hook would: ``blocking`` in a loop that never yields (only
    killing its process stops it), else in an await that never ends; ``hang=False``: its pid."""

    kind: Literal["hang"] = "hang"
    hang: bool = True
    blocking: bool = True

    async def run(self, context) -> Pid:  # noqa: ANN001
        while self.hang and self.blocking:
            time.sleep(3600)
        if self.hang:
            await asyncio.Event().wait()
        return Pid(pid=os.getpid())


def kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
