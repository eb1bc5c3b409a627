"""The cheat interface: a scripted agent that tries to earn reward without doing the task.

A cheat is an ``Agent`` whose actions are fixed by the task (its instruction, declared outputs and
files), never by a model. It comes with a *positive control*: a copy of the task whose verifier is
naive in exactly the way the cheat exploits (it only checks that the output exists, it trusts what
the agent left on the image, ...). The control proves the cheat really does what it claims: it must
earn reward there, and nothing on the real verifier. Plugins register cheats through
``autoenvscaling_register_cheats``; the red-team gate runs the cheap ones (``gate = True``) on every
candidate task and ``autoenvscaling tasks redteam`` runs them all on any folder of tasks.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import ClassVar

from ..agents.base import Action, Agent, AgentLimits, Trajectory
from ..sandbox.base import Sandbox
from ..tasks import StepConfig, Task

REWARD_SH = "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"


class Cheat(Agent):
    """A scripted reward hack. Subclasses set ``name``, ``description`` and give ``commands``
    (shell lines run in order in the agent's sandbox, as the agent's user, in its workdir); a cheat
    that needs another tool overrides ``run``.

    ``domain``: the domain whose tasks it targets ([metadata.autoenvscaling] domain), None for a
    generic cheat that applies to any task. ``gate``: cheap enough to run at admission on every
    candidate (the red-team gate); others run only in ``tasks redteam``."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    domain: ClassVar[str | None] = None
    gate: ClassVar[bool] = True
    command_timeout: ClassVar[float] = 60.0

    @classmethod
    def summary(cls) -> str:
        """One line: ``description``, else the first paragraph of the class docstring."""
        if cls.description:
            return cls.description
        doc = (cls.__doc__ or "").strip().split("\n\n", 1)[0]
        return " ".join(doc.split())

    def applies(self, task: Task) -> bool:
        """Whether this cheat means anything on ``task`` (by default: the cheat's domain's tasks)."""
        return self.domain is None or task.provenance.domain == self.domain

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        """The shell commands of the hack, for ``task`` (or one of its steps)."""
        return []

    def control(self, task: Task) -> Task | None:
        """The positive control: a copy of ``task`` with a naive verifier this cheat fools, or None
        when the cheat needs no control (it is the null attempt)."""
        return None

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        start = time.monotonic()
        actions = []
        for command in self.commands(task, step):
            result = await sandbox.exec(command, timeout=self.command_timeout)
            actions.append(Action(command=command, output=result.tail(2000), exit_code=result.exit_code,
                                  seconds=result.seconds, timed_out=result.timed_out))
        return Trajectory(agent=f"cheat:{self.name}", actions=actions, seconds=time.monotonic() - start,
                          stop_reason="done")


# -- what a cheat can learn about a task without solving it -----------------------------------------
_PATH = re.compile(r"(?<![\w.~-])(/(?:app|root|home|srv|data|workspace|output|tmp|var|opt|etc)(?:/[\w.+@-]+)+)")


def mentioned_paths(task: Task, step: StepConfig | None = None) -> list[str]:
    """Absolute paths the instruction names (``/app/out.csv``), in order, trailing punctuation cut.
    What an agent that read only the instruction would write to."""
    text = task.step_instruction(step) if step is not None else (task.instruction or "")
    found = [m.group(1).rstrip(".,:;)") for m in _PATH.finditer(text)]
    return list(dict.fromkeys(p for p in found if p and not p.endswith("/")))


def declared_outputs(task: Task) -> list[str]:
    """What the task asks for (provenance ``asks``), else its declared outputs (verifier ``outputs``),
    else the paths its instruction names."""
    return list(task.provenance.asks or task.config.verifier.outputs) or mentioned_paths(task)


# -- positive controls the cheats share ---------------------------------------------------------------
def naive_control(task: Task, test_sh: str) -> Task:
    """``task`` with ``test_sh`` as its verifier, run on the agent's filesystem as it is (view
    "agent"): a naive verifier, as an LLM proposer writes one and Harbor runs it."""
    return agent_view_control(task.with_files({"tests/test.sh": test_sh}))


def reward_if(condition: str, setup: str = "") -> str:
    """A test.sh that runs the ``setup`` lines, then pays 1 when the shell ``condition`` holds, else 0."""
    return ("#!/bin/bash\nmkdir -p /logs/verifier\n" + setup
            + f"if {condition}; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n")


def exists_only_control(task: Task, paths: list[str]) -> Task:
    """``task`` with a test.sh that pays 1 when every one of ``paths`` exists: the weakest verifier an
    LLM proposer writes."""
    return naive_control(task, reward_if(" && ".join(f"test -e {shlex.quote(p)}" for p in paths) or "true"))


def agent_view_control(task: Task) -> Task:
    """``task`` verified on the agent's filesystem as it is (``view = "agent"``, Harbor's
    behaviour): what a plant that only the verifier view stops earns without it."""
    verifier = task.config.verifier.model_copy(update={"view": "agent"})
    return task.with_config(task.config.model_copy(update={"verifier": verifier}))
