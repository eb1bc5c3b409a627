"""Helpers shared by the trainer tests (a module with a name of its own: the test folders of
several distributions share one pytest session, and each puts its own folder on sys.path)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

SOLVES = "```bash\nwc -l < /app/input.txt > /app/answer.txt\n```"
IDLES = "```bash\ntrue\n```"


def count_task(seed: int) -> Any:
    """A toy count-lines task that asks for all lines (the form ``SOLVES`` answers)."""
    from autoenvscaling.testing.toy import ToyDomain

    domain = ToyDomain()
    for s in range(seed, seed + 200):
        task = domain.generate("count-lines", seed=s, difficulty="easy")
        text = task.instruction or ""
        if "non-empty" not in text and not re.search(r"contain the word", text):
            return task
    raise AssertionError("no plain count-lines task in 200 seeds")


def write_task(seed: int) -> Any:
    from autoenvscaling.testing.toy import ToyDomain

    return ToyDomain().generate("write-file", seed=seed, difficulty="easy")




def solver_messages(task: Any, backend: Any) -> list[Any]:
    """The solver's first request for ``task``, captured from a real trial on ``backend``."""
    from autoenvscaling.agents.solver import SolverAgent
    from autoenvscaling.llm.base import ChatMessage, ChatResponse, LLMBackend, Usage
    from autoenvscaling.plugins import create_host
    from autoenvscaling.runtime.trial import TrialRunner

    captured: list[ChatMessage] = []

    class Capture(LLMBackend):
        name = "capture"

        async def chat(self, messages: list[ChatMessage], **_: Any) -> ChatResponse:
            captured.extend(messages)
            return ChatResponse(message=ChatMessage.assistant("FINISH"), usage=Usage(), model="capture",
                                finish_reason="stop", seconds=0.0, cost_usd=0.0)

    agent = SolverAgent(Capture("capture"), tool_calling=False)
    asyncio.run(TrialRunner(backend, host=create_host()).run(task, agent))
    return captured


