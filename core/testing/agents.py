"""A scripted agent for tests: it runs fixed shell commands in the sandbox, like a policy that always
emits the same actions. Reward-hack attempts, known-good and known-partial runs are written with it."""

from __future__ import annotations

import time

from ..agents.base import Action, Agent, AgentLimits, Trajectory
from ..sandbox.base import Sandbox
from ..tasks import StepConfig, Task


class ScriptedAgent(Agent):
    """Runs ``commands`` in order, each with ``timeout`` seconds, whatever their outcome."""

    name = "scripted"

    def __init__(self, *commands: str, timeout: float = 120.0) -> None:
        self.commands = commands
        self.timeout = timeout

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        start = time.monotonic()
        actions = []
        for command in self.commands:
            result = await sandbox.exec(command, timeout=self.timeout)
            actions.append(Action(command=command, output=result.tail(2000), exit_code=result.exit_code,
                                  seconds=result.seconds, timed_out=result.timed_out))
        return Trajectory(agent=self.name, actions=actions, seconds=time.monotonic() - start, stop_reason="done")
