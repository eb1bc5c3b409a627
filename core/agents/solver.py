"""The solver: a minimal LLM terminal agent, the one the flywheel calibrates against and trains.

The loop is deliberately small: the instruction goes in; the model answers with tool calls
``bash(command)`` and ``finish()``; each command runs in the sandbox and its output (head and tail
kept, the middle cut with a marker) goes back. Models without tool calling answer with one fenced
```bash block per reply and a line ``FINISH`` (or ``finish()``) when done (text_protocol.py); they get
a compact system prompt and one worked exchange, since small models copy an example far better than
they follow a description. Limits on turns, tokens and wall time end the attempt with a
``stop_reason``; everything (actions with outputs, the message list, tokens, cost) is recorded in the
trajectory, because the flywheel's assignments and the trainer read it.

Defaults depend on the model (``SolverProfile``): a local CPU model (the embedded 135M SmolLM2) gets
the fenced-block protocol and a small budget sized so a default flywheel run ends in minutes; a
served model gets tool calls and a working budget.

The same loop, with extra tools, drives the agentic proposer (``converse``).
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any, Awaitable, Callable, Sequence

from pydantic import BaseModel, ConfigDict

from ..llm.base import ChatMessage, ChatResponse, LLMBackend, ToolCall, ToolSpec
from ..llm.errors import LLMError, LLMRefusal
from ..sandbox.base import ExecResult, Sandbox
from ..tasks import StepConfig, Task
from .base import Action, Agent, AgentLimits, Trajectory
from .text_protocol import example_messages, parse_text_reply

BASH_TOOL = ToolSpec(
    name="bash",
    description="Run a bash command in the terminal and return its exit code and output.",
    parameters={"type": "object", "properties": {"command": {"type": "string", "description": "the command"}},
                "required": ["command"]},
)
FINISH_TOOL = ToolSpec(name="finish", description="Say that the task is complete. Ends your turn for good.")

# Consecutive replies without anything runnable before the attempt ends with "error".
MAX_MALFORMED_IN_A_ROW = 3
# Environment variables that point the default solver at an OpenAI-compatible server.
ENV_MODEL = "AUTOENVSCALING_SOLVER_MODEL"
ENV_BASE_URL = "AUTOENVSCALING_SOLVER_BASE_URL"


def prompt_text(package: str, name: str, **values: Any) -> str:
    """A prompt file shipped as package data, with ``$name`` placeholders filled in. Every
    placeholder must be given (a missing one raises KeyError rather than leaking ``$x`` to a model)."""
    template = resources.files(package).joinpath("prompts", name).read_text("utf-8")
    return Template(template).substitute({k: str(v) for k, v in values.items()}).strip()


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of long output: the command echo and the error usually live at
    the two ends, and a model needs both."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit * 2 // 5
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}"


def observation(result: ExecResult, limit: int) -> str:
    """What the model sees of one command."""
    output = (result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr).strip("\n")
    if result.timed_out:
        status = "timed out (the command was killed)"
    else:
        status = f"exit code {result.exit_code}"
    return f"[{status}]\n{truncate_middle(output, limit)}" if output else f"[{status}] (no output)"


ROLLOUT_TEMPERATURE = 0.7
"""What a rollout copy (``seeded``) samples at when the solver was given no temperature: above 0 so
the rollouts of a group differ (a group of identical attempts teaches GRPO nothing)."""


class SolverProfile(BaseModel):
    """The defaults that suit one kind of model; a SolverAgent argument given explicitly wins.
    ``limits`` None: the trial runner's limits apply."""

    model_config = ConfigDict(frozen=True)

    tool_calling: bool
    max_tokens_per_turn: int
    limits: AgentLimits | None = None
    rollout_concurrency: int | None = None


# The embedded SmolLM2-135M decodes ~10-15 tokens/s on one busy core. Two turns of 64 tokens is
# ~10 s per terminal rollout (measured: ~40 s per group of 4), so the default flywheel (4 proposals,
# 4-8 rollouts each, plus the pool review) stays within 10 minutes on 2 cores. An easy task's answer
# fits in one turn; the second lets the model react to an error (a third turn added no solves in
# 40 measured toy rollouts and cost ~50% more time). One rollout at a time: the model answers one
# request at a time, and a queued rollout would spend its wall-clock limit waiting.
LOCAL_LIMITS = AgentLimits(max_turns=2, max_tokens=6_000, timeout_sec=180, command_timeout_sec=20,
                           observation_chars=1200)
LOCAL_PROFILE = SolverProfile(tool_calling=False, max_tokens_per_turn=64, rollout_concurrency=1, limits=LOCAL_LIMITS)
SERVED_PROFILE = SolverProfile(tool_calling=True, max_tokens_per_turn=1024)


def solver_profile(llm: LLMBackend) -> SolverProfile:
    """LOCAL_PROFILE for a model decoded in this process (transformers), else SERVED_PROFILE."""
    return LOCAL_PROFILE if getattr(llm, "name", None) == "transformers" else SERVED_PROFILE


@dataclass(frozen=True)
class ExtraTool:
    """A tool beyond bash/finish (the agentic proposer's ``check``). The handler gets the call's
    arguments and returns the text the model sees."""

    spec: ToolSpec
    handler: Callable[[dict[str, Any]], Awaitable[str]]


@dataclass
class _Budget:
    """Tracks what the attempt has used against its limits."""

    limits: AgentLimits
    deadline: float
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    unpriced: bool = False
    malformed: int = 0
    tools_offered: bool = True
    actions: list[Action] = field(default_factory=list)

    def remaining_seconds(self) -> float:
        return self.deadline - time.monotonic()

    def remaining_tokens(self) -> int:
        return self.limits.max_tokens - self.tokens_in - self.tokens_out

    def add(self, response: ChatResponse) -> None:
        self.tokens_in += response.usage.prompt_tokens
        self.tokens_out += response.usage.completion_tokens
        if response.cost_usd is None:
            self.unpriced = True
        else:
            self.cost += response.cost_usd


class SolverAgent(Agent):
    """An LLM that acts in the sandbox through ``bash`` and says ``finish`` when done.

    ``llm``: any LLMBackend; without one, the solver uses the server named by
    AUTOENVSCALING_SOLVER_BASE_URL/AUTOENVSCALING_SOLVER_MODEL, else the embedded SmolLM2.
    Arguments left at None take the model's ``SolverProfile`` (``solver_profile``).
    ``tool_calling=False`` never offers tools (fenced-block protocol only). ``temperature``: None
    decodes greedily in a plain run and samples at ROLLOUT_TEMPERATURE in the copies ``seeded`` makes
    for rollouts; a value applies to both. Sampling with a ``seed`` makes rollouts differ from each
    other yet repeat exactly. ``limits``, when set (or set by the profile), are the solver's own and
    replace those of the trial runner (which also runs the oracle, whose limits should not be the
    solver's). ``rollout_concurrency``: how many rollouts may run at once (the served profile: no
    limit); 1 suits a local model that answers one request at a time, so that a rollout's wall-clock
    limit measures its own work rather than its queue.
    """

    name = "solver"

    def __init__(self, llm: LLMBackend | None = None, *, tool_calling: bool | None = None,
                 temperature: float | None = None, max_tokens_per_turn: int | None = None, seed: int | None = None,
                 system_prompt: str | None = None, limits: AgentLimits | None = None,
                 rollout_concurrency: int | None = None) -> None:
        self._llm = llm
        self._rollout_concurrency = rollout_concurrency
        self._limits = limits
        self._tool_calling = tool_calling
        self.temperature = temperature
        self._max_tokens_per_turn = max_tokens_per_turn
        self.seed = seed
        self.system_prompt = system_prompt

    @property
    def llm(self) -> LLMBackend:
        if self._llm is None:
            self._llm = default_solver_llm()
        return self._llm

    @property
    def profile(self) -> SolverProfile:
        return solver_profile(self.llm)

    @property
    def tool_calling(self) -> bool:
        return self.profile.tool_calling if self._tool_calling is None else self._tool_calling

    @property
    def max_tokens_per_turn(self) -> int:
        return self.profile.max_tokens_per_turn if self._max_tokens_per_turn is None else self._max_tokens_per_turn

    @property
    def limits(self) -> AgentLimits | None:
        """The solver's own limits (they replace the trial runner's), or None to take the runner's."""
        return self.profile.limits if self._limits is None else self._limits

    @property
    def rollout_concurrency(self) -> int | None:
        return self.profile.rollout_concurrency if self._rollout_concurrency is None else self._rollout_concurrency

    @property
    def model(self) -> str:
        return self.llm.model

    def seeded(self, seed: int) -> "SolverAgent":
        """A copy sharing the model that samples from ``seed``: rollout i of a calibration gets its
        own seed, so rollouts differ and a resumed run repeats them."""
        self._llm = self.llm  # resolve a default model now, so every copy shares the one backend
        twin = copy.copy(self)
        twin.seed = seed
        if twin.temperature is None:
            twin.temperature = ROLLOUT_TEMPERATURE
        return twin

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        limits = self.limits or limits or AgentLimits()
        instruction = task.step_instruction(step) if step is not None else (task.instruction or "")
        agent_cfg = step.agent if step is not None and step.agent is not None else task.config.agent
        limits = limits.model_copy(update={"timeout_sec": min(limits.timeout_sec, agent_cfg.timeout_sec)})
        user = prompt_text("autoenvscaling.agents", "solver_task.md", instruction=instruction.strip(),
                           workdir=sandbox.workdir)
        if self.tool_calling:
            return await self.converse(sandbox, user, limits=limits)
        system = self.system_prompt or prompt_text("autoenvscaling.agents", "solver_system_text.md")
        return await self.converse(sandbox, user, limits=limits, system=system, examples=example_messages())

    async def converse(self, sandbox: Sandbox, user_text: str, *, limits: AgentLimits,
                       system: str | None = None, extra_tools: Sequence[ExtraTool] = (),
                       examples: Sequence[ChatMessage] = ()) -> Trajectory:
        """Run the agent loop from one user message until it finishes or a limit ends it.
        ``examples``: turns shown between the system prompt and the user message (a worked example).
        Extra tools need tool calls, so they are offered unless tool calling was switched off."""
        start = time.monotonic()
        system = system or self.system_prompt or prompt_text("autoenvscaling.agents", "solver_system.md")
        messages = [ChatMessage.system(system), *examples, ChatMessage.user(user_text)]
        extras = {t.spec.name: t for t in extra_tools}
        use_tools = self._tool_calling if self._tool_calling is not None else (self.tool_calling or bool(extras))
        tools = [BASH_TOOL, FINISH_TOOL, *(t.spec for t in extra_tools)] if use_tools else None
        budget = _Budget(limits=limits, deadline=start + limits.timeout_sec, tools_offered=use_tools)
        stop, error = await self._loop(sandbox, messages, tools, extras, budget)
        return Trajectory(
            agent=self.name, actions=budget.actions, messages=[m.model_dump(mode="json") for m in messages],
            tokens_in=budget.tokens_in, tokens_out=budget.tokens_out,
            cost_usd=None if budget.unpriced else budget.cost, seconds=time.monotonic() - start,
            stop_reason=stop, error=error,
        )

    async def _loop(self, sandbox: Sandbox, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                    extras: dict[str, ExtraTool], budget: _Budget) -> tuple[str, str | None]:
        """The turns; returns (stop_reason, error)."""
        while True:
            if budget.turns >= budget.limits.max_turns:
                return "max_turns", None
            if budget.remaining_tokens() <= 0:
                return "max_tokens", None
            if budget.remaining_seconds() <= 0:
                return "timeout", None
            budget.turns += 1
            try:
                response = await asyncio.wait_for(self._chat(messages, tools, budget), budget.remaining_seconds())
            except (TimeoutError, asyncio.TimeoutError):
                return "timeout", f"no answer from the model within the {budget.limits.timeout_sec:g} s limit"
            except LLMRefusal as exc:
                return "refused", exc.message
            except LLMError as exc:
                if not exc.scored:  # unreachable server, config: not the model's doing
                    return "infrastructure", exc.message
                if not self._malformed(messages, budget, exc.message):
                    return "error", f"{MAX_MALFORMED_IN_A_ROW} malformed replies in a row; last: {exc.message}"
                continue
            budget.add(response)
            if response.refusal:
                messages.append(ChatMessage.assistant(response.message.content))
                return "refused", response.refusal
            done = await self._act(sandbox, response.message, messages, extras, budget,
                                   truncated=response.finish_reason == "length")
            if done is not None:
                return done

    async def _chat(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, budget: _Budget) -> ChatResponse:
        seed = None if self.seed is None else self.seed * 1000 + budget.turns
        max_tokens = max(1, min(self.max_tokens_per_turn, budget.remaining_tokens()))
        return await self.llm.chat(list(messages), tools=tools, temperature=self.temperature or 0.0,
                                   max_tokens=max_tokens, seed=seed)

    def _malformed(self, messages: list[ChatMessage], budget: _Budget, problem: str) -> bool:
        """Tell the model what was wrong; False once too many replies in a row were unusable."""
        budget.malformed += 1
        # The nudge goes into the conversation even when it ends it: the record shows every problem.
        template = "solver_malformed.md" if budget.tools_offered else "solver_malformed_text.md"
        messages.append(ChatMessage.user(prompt_text("autoenvscaling.agents", template, problem=problem)))
        return budget.malformed < MAX_MALFORMED_IN_A_ROW

    async def _act(self, sandbox: Sandbox, reply: ChatMessage, messages: list[ChatMessage],
                   extras: dict[str, ExtraTool], budget: _Budget, *,
                   truncated: bool = False) -> tuple[str, str | None] | None:
        """Carry out one reply; a (stop_reason, error) pair ends the attempt."""
        if reply.tool_calls:
            messages.append(reply)
            budget.malformed = 0
            finished = False
            for call in reply.tool_calls:
                if finished:  # calls after finish() are not run, but every call id gets its answer
                    messages.append(ChatMessage.tool(call, "not run: finish was called"))
                    continue
                text, finished = await self._tool(sandbox, call, reply.content, extras, budget)
                messages.append(ChatMessage.tool(call, text))
                if budget.remaining_seconds() <= 0:
                    return "timeout", None
            return ("finished", None) if finished else None
        messages.append(ChatMessage.assistant(reply.content))
        command, finish = parse_text_reply(reply.content, truncated=truncated)
        if command is None and not finish:
            problem = "an empty reply" if not reply.content.strip() else "no ```bash block and no FINISH line"
            if not self._malformed(messages, budget, problem):
                return "error", f"{MAX_MALFORMED_IN_A_ROW} replies in a row had nothing to run"
            return None
        budget.malformed = 0
        if command is not None:
            action = await self._bash(sandbox, command, reply.content, budget)
            if budget.remaining_seconds() <= 0:
                return "timeout", None
            if not finish:
                messages.append(ChatMessage.user(action.output))
        return ("finished", None) if finish else None

    async def _tool(self, sandbox: Sandbox, call: ToolCall, thought: str, extras: dict[str, ExtraTool],
                    budget: _Budget) -> tuple[str, bool]:
        """(the tool's answer, whether the agent finished)."""
        if call.name == "finish":
            return "ok", True
        if call.name == "bash":
            command = call.arguments.get("command")
            if not isinstance(command, str) or not command.strip():
                return "error: bash needs a non-empty string argument 'command'", False
            return (await self._bash(sandbox, command, thought, budget)).output, False
        if call.name in extras:
            started = time.monotonic()
            text = await extras[call.name].handler(call.arguments)
            budget.actions.append(Action(command=f"<{call.name}>", output=text, seconds=time.monotonic() - started,
                                         thought=thought or None))
            return text, False
        known = ", ".join(["bash", "finish", *extras])
        return f"error: unknown tool {call.name!r} (tools: {known})", False

    async def _bash(self, sandbox: Sandbox, command: str, thought: str, budget: _Budget) -> Action:
        timeout = max(0.1, min(budget.limits.command_timeout_sec, budget.remaining_seconds()))
        result = await sandbox.exec(command, timeout=timeout)
        action = Action(command=command, output=observation(result, budget.limits.observation_chars),
                        exit_code=result.exit_code, seconds=result.seconds, timed_out=result.timed_out,
                        thought=thought or None)
        budget.actions.append(action)
        return action


def default_solver_llm() -> LLMBackend:
    """The model a solver gets when none is given: an OpenAI-compatible server named by the
    environment, else the embedded SmolLM2-135M (weak but real, and it runs anywhere)."""
    base_url = os.environ.get(ENV_BASE_URL)
    if base_url:
        from ..llm.openai_backend import OpenAIBackend

        return OpenAIBackend(base_url, None, os.environ.get(ENV_MODEL) or "default")
    from ..llm.local_backend import TransformersBackend

    return TransformersBackend(os.environ.get(ENV_MODEL) or "embedded")
