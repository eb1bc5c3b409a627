"""The agent interface: given a task and a live sandbox, act, and return a trajectory."""

from __future__ import annotations

import abc
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..sandbox.base import Sandbox
from ..tasks import StepConfig, Task


class Action(BaseModel):
    """One command (or other tool call) the agent made and what came back."""

    model_config = ConfigDict(frozen=True)

    command: str
    output: str = ""
    exit_code: int | None = None
    seconds: float = 0.0
    timed_out: bool = False
    thought: str | None = None  # the model's text around the tool call, if any
    tool: str = "bash"  # the tool that took the action (agents/tools.py); a shell command is "bash"


StopReason = Literal["finished", "done", "max_turns", "max_tokens", "timeout", "budget", "error", "refused",
                     "infrastructure"]


class Trajectory(BaseModel):
    """Everything an agent did in one attempt. ``stop_reason`` is one of: "finished" (the agent said
    so), "done" (a scripted agent ran its script), "max_turns", "max_tokens", "timeout", "budget"
    (a budget the model runs under, ``llm.budget``, was spent), "error",
    "refused" (the model's provider refused) or "infrastructure" (the model could not be reached:
    such an attempt says nothing about the task and is left out of calibration)."""

    model_config = ConfigDict(frozen=True)

    agent: str
    actions: list[Action] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)  # the LLM conversation, if any
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    seconds: float = 0.0
    stop_reason: StopReason = "done"
    error: str | None = None

    @property
    def n_commands(self) -> int:
        return len(self.actions)


class AgentLimits(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_turns: int = 30
    max_tokens: int = 32_000
    timeout_sec: float = 600.0
    command_timeout_sec: float = 120.0
    observation_chars: int = 4000


class Agent(abc.ABC):
    """Acts inside a sandbox. Agents never see tests/; only the oracle sees solution/."""

    name: ClassVar[str]

    @abc.abstractmethod
    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        """Work on ``task`` (or one step of it) in ``sandbox`` and return what was done."""

    def seeded(self, seed: int) -> "Agent":
        """This agent for one rollout drawn from ``seed``. Agents that sample return a copy that
        samples from it (so rollouts differ, yet a rerun repeats them); others return themselves."""
        return self
