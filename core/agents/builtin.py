"""The two built-in agents: ``oracle`` runs the reference solution, ``nop`` does nothing."""

from __future__ import annotations

import time

from ..sandbox.base import Sandbox
from ..tasks import StepConfig, Task
from ..tasks.paths import SOLUTION_DIR
from .base import Action, Agent, AgentLimits, Trajectory


def solution_files(task: Task, step: StepConfig | None) -> dict[str, tuple[bytes, bool]]:
    """The solution/ files for the task or step (a step's own solution/ replaces the top one)."""
    prefix = f"steps/{step.name}/solution" if step is not None else "solution"
    files = task.subtree(prefix)
    return {rel: (f.data, f.executable) for rel, f in files.items()}


class OracleAgent(Agent):
    """Uploads solution/ to /solution (only now, never before) and runs solve.sh in the workdir, with
    ``[solution] env`` added to its environment."""

    name = "oracle"

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        limits = limits or AgentLimits()
        start = time.monotonic()
        files = solution_files(task, step)
        if "solve.sh" not in files:
            return Trajectory(agent=self.name, stop_reason="error", error="no solution/solve.sh",
                              seconds=time.monotonic() - start)
        await sandbox.upload_files(files, SOLUTION_DIR)
        timeout = (step.agent.timeout_sec if step is not None and step.agent else task.config.agent.timeout_sec)
        timeout = min(timeout, limits.timeout_sec)
        result = await sandbox.exec(f"bash {SOLUTION_DIR}/solve.sh", timeout=timeout,
                                    env=dict(task.config.solution.env) or None)
        # The solution leaves with the attempt's agent phase: the verifier must not depend on it.
        await sandbox.exec(f"rm -rf {SOLUTION_DIR}", timeout=30)
        action = Action(command=f"bash {SOLUTION_DIR}/solve.sh", output=result.tail(limits.observation_chars),
                        exit_code=result.exit_code, seconds=result.seconds, timed_out=result.timed_out)
        return Trajectory(agent=self.name, actions=[action], seconds=time.monotonic() - start,
                          stop_reason="timeout" if result.timed_out else "done")


class NopAgent(Agent):
    """Does nothing: the null attempt that a task's tests must not reward."""

    name = "nop"

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        return Trajectory(agent=self.name, stop_reason="done")
