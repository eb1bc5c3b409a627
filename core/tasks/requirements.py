"""What a task asks of the sandbox that runs it, read from task.toml and its files.

A backend declares what it can honour on this machine (``BackendCapabilities``,
sandbox/base.py); ``gates/requirements.py`` matches the two. Requirements are what a task cannot do
without (GPUs of a type, several services, a browser) plus what it would like (the internet, memory
and disk beyond the policy's caps), which the policy may clamp or deny.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .task import Task, compose_file

BROWSER_TOOL = "browser"  # a tools entry that asks for a browser, like browser = true


class TaskRequirements(BaseModel):
    """``gpus``/``gpu_types``: GPUs of one of those models (any model when empty); ``gpu_optional``:
    the task runs without them in a reduced mode (see ``EnvironmentConfig``). ``compose``: the
    compose file in environment/ (several services), or None. ``browser``: a browser the agent
    drives. ``internet``: allow_internet. ``memory_mb``/``storage_mb``: what the task asks for."""

    model_config = ConfigDict(frozen=True)

    gpus: int = 0
    gpu_types: tuple[str, ...] = ()
    gpu_optional: bool = False
    compose: str | None = None
    browser: bool = False
    internet: bool = False
    memory_mb: int = 0
    storage_mb: int = 0


def requirements_of(task: Task) -> TaskRequirements:
    """The requirements of ``task``, from ``[environment]``, ``tools`` ([metadata.autoenvscaling.agent]) (of the task and of its
    steps) and environment/."""
    env = task.config.environment
    agents = [task.config.agent, *(step.agent for step in task.steps if step.agent)]
    tools = {tool for agent in agents for tool in agent.tools or []}
    return TaskRequirements(gpus=max(0, env.gpus), gpu_types=tuple(env.gpu_types or ()),
                            gpu_optional=env.gpu_optional, compose=compose_file(task),
                            browser=env.browser or BROWSER_TOOL in tools, internet=task.config.wants_internet,
                            memory_mb=env.memory_mb, storage_mb=env.storage_mb)
