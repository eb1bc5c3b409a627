"""A scripted agent for tests: runs fixed shell commands in the sandbox, like a policy that always
emits the same actions. Used for reward-hack attempts and for known-good or known-partial runs."""

from __future__ import annotations

import time

from autoenvscaling.agents.base import Action, Agent, AgentLimits, Trajectory
from autoenvscaling.sandbox.base import Sandbox
from autoenvscaling.tasks import StepConfig, Task


class ScriptedAgent(Agent):
    name = "scripted"

    def __init__(self, *commands: str) -> None:
        self.commands = commands

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        start = time.monotonic()
        actions = []
        for command in self.commands:
            result = await sandbox.exec(command, timeout=120)
            actions.append(Action(command=command, output=result.tail(2000), exit_code=result.exit_code,
                                  seconds=result.seconds, timed_out=result.timed_out))
        return Trajectory(agent=self.name, actions=actions, seconds=time.monotonic() - start, stop_reason="done")
