"""The solver: a minimal LLM terminal agent, the one the flywheel calibrates against and trains.

The loop is deliberately small: the instruction goes in; the model answers with tool calls
``bash(command)`` and ``finish()``; each command runs in the sandbox and its output (head and tail
kept, the middle cut with a marker) goes back. A task's ``tools`` ([metadata.autoenvscaling.agent]) may name other registered
tools (agents/tools.py), resolved through the ``Toolbox`` the solver was built with. Models without
tool calling answer with one fenced ```bash block per reply (or a block labelled with another
offered tool's name) and a line ``FINISH`` (or ``finish()``) when done (text_protocol.py); they get
a compact system prompt and one worked exchange, since small models copy an example far better than
they follow a description. Limits on turns, tokens and wall time end the attempt with a
``stop_reason``; everything (actions with outputs, the message list, tokens, cost) is recorded in the
trajectory, because the flywheel's assignments and the trainer read it.

Defaults depend on the model (``SolverProfile``): a local CPU model (the embedded 135M SmolLM2) gets
the fenced-block protocol and a small budget sized so a default flywheel run ends in minutes; a
served model gets tool calls and a working budget.

The same loop, with its own tools (``check``), drives the agentic proposer (``converse``).
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import AESError
from ..llm.base import ChatMessage, ChatResponse, LLMBackend, ToolCall, ToolSpec
from ..llm.errors import BudgetExceeded, LLMError, LLMRefusal
from ..sandbox.base import Sandbox
from ..tasks import StepConfig, Task
from .base import Action, Agent, AgentLimits, StopReason, Trajectory
from .text_protocol import example_messages, parse_text_turn
from .tools import Arguments, BashTool, Tool, ToolArgumentError, ToolContext, Toolbox
from .tools import truncate_middle  # noqa: F401 - its home before tools.py; prompt.py and tests import it here

# finish is the loop's own: it ends the attempt, so every agent has it whatever its task's tools.
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
    """LOCAL_PROFILE for a model decoded on this machine (transformers, a local llama.cpp server),
    else SERVED_PROFILE."""
    return LOCAL_PROFILE if getattr(getattr(llm, "inner", llm), "runs_here", False) else SERVED_PROFILE


@dataclass
class _Budget:
    """Tracks what the attempt has used against its limits."""

    limits: AgentLimits
    deadline: float
    tools: dict[str, Tool] = field(default_factory=dict)
    task: Task | None = None
    step: StepConfig | None = None
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

    def context(self, sandbox: Sandbox) -> ToolContext:
        timeout = max(0.1, min(self.limits.command_timeout_sec, self.remaining_seconds()))
        return ToolContext(sandbox=sandbox, task=self.task, step=self.step, limits=self.limits, timeout=timeout)

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
    limit measures its own work rather than its queue. ``tools``: what a task's ``tools`` ([metadata.autoenvscaling.agent])
    names are resolved against (``Toolbox.from_host(host)`` for every registered tool; default: the
    core's own, ``bash``).
    """

    name = "solver"

    def __init__(self, llm: LLMBackend | None = None, *, tool_calling: bool | None = None,
                 temperature: float | None = None, max_tokens_per_turn: int | None = None, seed: int | None = None,
                 system_prompt: str | None = None, limits: AgentLimits | None = None,
                 rollout_concurrency: int | None = None, tools: Toolbox | None = None) -> None:
        self._llm = llm
        self.toolbox = tools or Toolbox.builtin()
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
        try:
            tools = self.toolbox.resolve(agent_cfg.tools)
        except AESError as exc:  # a task this solver cannot equip: data for the report, not a crash
            hint = f" ({exc.hint})" if exc.hint else ""
            return Trajectory(agent=self.name, stop_reason="error", error=f"{exc.message}{hint}")
        user = prompt_text("autoenvscaling.agents", "solver_task.md", instruction=instruction.strip(),
                           workdir=sandbox.workdir)
        if self.tool_calling:
            return await self.converse(sandbox, user, limits=limits, tools=tools, task=task, step=step)
        if not any(t.name == "bash" for t in tools):  # the text prompts and the example teach bash blocks
            return await self.converse(sandbox, user, limits=limits, tools=tools, task=task, step=step)
        system = self.system_prompt or prompt_text("autoenvscaling.agents", "solver_system_text.md")
        return await self.converse(sandbox, user, limits=limits, system=system, examples=example_messages(),
                                   tools=tools, task=task, step=step)

    async def converse(self, sandbox: Sandbox, user_text: str, *, limits: AgentLimits,
                       system: str | None = None, tools: Sequence[Tool] | None = None,
                       examples: Sequence[ChatMessage] = (), task: Task | None = None,
                       step: StepConfig | None = None) -> Trajectory:
        """Run the agent loop from one user message until it finishes or a limit ends it.
        ``tools``: what the agent may call besides ``finish`` (default: ``bash``); with tool calling
        their schemas are offered, without it the system prompt explains every tool but bash (which
        the text prompts already teach). ``examples``: turns shown between the system prompt and the
        user message (a worked example). ``task``/``step`` reach the tools through their context."""
        start = time.monotonic()
        offered = {t.name: t for t in (tools if tools is not None else [BashTool()])}
        use_tools = self.tool_calling
        if use_tools:
            system = system or self.system_prompt or prompt_text("autoenvscaling.agents", "solver_system.md")
        else:
            others = [t for name, t in offered.items() if name != "bash"]
            if "bash" in offered or system or self.system_prompt:
                system = _with_text_tools(system or self.system_prompt
                                          or prompt_text("autoenvscaling.agents", "solver_system_text.md"), others)
            else:  # no shell: a prompt that teaches only the tool blocks
                system = prompt_text("autoenvscaling.agents", "solver_system_tools_only.md",
                                     tools="\n".join(t.text_usage() for t in others))
        messages = [ChatMessage.system(system), *examples, ChatMessage.user(user_text)]
        # bash and finish lead, in the order the prompts and earlier transcripts have them.
        ordered = sorted(offered.values(), key=lambda t: t.name != "bash")
        specs = [*(t.spec() for t in ordered[:1]), FINISH_TOOL, *(t.spec() for t in ordered[1:])] if use_tools else None
        budget = _Budget(limits=limits, deadline=start + limits.timeout_sec, tools=offered, task=task, step=step,
                         tools_offered=use_tools)
        stop, error = await self._loop(sandbox, messages, specs, budget)
        return Trajectory(
            agent=self.name, actions=budget.actions, messages=[m.model_dump(mode="json") for m in messages],
            tokens_in=budget.tokens_in, tokens_out=budget.tokens_out,
            cost_usd=None if budget.unpriced else budget.cost, seconds=time.monotonic() - start,
            stop_reason=stop, error=error,
        )

    async def _loop(self, sandbox: Sandbox, messages: list[ChatMessage], tools: list[ToolSpec] | None,
                    budget: _Budget) -> tuple[StopReason, str | None]:
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
            except BudgetExceeded as exc:
                return "budget", exc.message
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
            done = await self._act(sandbox, response.message, messages, budget,
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

    async def _act(self, sandbox: Sandbox, reply: ChatMessage, messages: list[ChatMessage], budget: _Budget, *,
                   truncated: bool = False) -> tuple[StopReason, str | None] | None:
        """Carry out one reply; a (stop_reason, error) pair ends the attempt."""
        if reply.tool_calls:
            messages.append(reply)
            budget.malformed = 0
            finished = False
            for call in reply.tool_calls:
                if finished:  # calls after finish() are not run, but every call id gets its answer
                    messages.append(ChatMessage.tool(call, "not run: finish was called"))
                    continue
                text, finished = await self._tool(sandbox, call, reply.content, budget)
                messages.append(ChatMessage.tool(call, text))
                if budget.remaining_seconds() <= 0:
                    return "timeout", None
            return ("finished", None) if finished else None
        messages.append(ChatMessage.assistant(reply.content))
        turn = parse_text_turn(reply.content, truncated=truncated, tools=list(budget.tools))
        if turn.tool is None and not turn.finish:
            labels = " or ".join(f"```{name}" for name in budget.tools) or "tool"
            problem = "an empty reply" if not reply.content.strip() else f"no {labels} block and no FINISH line"
            if not self._malformed(messages, budget, problem):
                return "error", f"{MAX_MALFORMED_IN_A_ROW} replies in a row had nothing to run"
            return None
        budget.malformed = 0
        if turn.tool is not None and turn.body is not None:
            tool = budget.tools[turn.tool]
            try:
                arguments = tool.arguments_from_block(turn.body)
            except ToolArgumentError as exc:
                text = f"error: {exc.message}"
                budget.actions.append(tool.action({}, text, exit_code=2))
            else:
                text = await self._call(sandbox, tool, arguments, reply.content, budget)
            if budget.remaining_seconds() <= 0:
                return "timeout", None
            if not turn.finish:
                messages.append(ChatMessage.user(text))
        return ("finished", None) if turn.finish else None

    async def _tool(self, sandbox: Sandbox, call: ToolCall, thought: str, budget: _Budget) -> tuple[str, bool]:
        """(the tool's answer, whether the agent finished)."""
        if call.name == "finish":
            return "ok", True
        tool = budget.tools.get(call.name)
        if tool is None:
            known = ", ".join([*budget.tools, "finish"])
            return f"error: unknown tool {call.name!r} (tools: {known})", False
        return await self._call(sandbox, tool, call.arguments, thought, budget), False

    async def _call(self, sandbox: Sandbox, tool: Tool, arguments: Arguments, thought: str,
                    budget: _Budget) -> str:
        """Run one tool call and record it; returns what the model sees."""
        outcome = await tool.call(budget.context(sandbox), arguments)
        action = outcome.action.model_copy(update={"thought": thought or None}) if thought else outcome.action
        budget.actions.append(action)
        return outcome.text


def _with_text_tools(system: str, tools: Sequence[Tool]) -> str:
    """The text protocol's system prompt plus how to call each tool beyond bash (none: unchanged)."""
    if not tools:
        return system
    usage = "\n".join(t.text_usage() for t in tools)
    return f"{system}\n\n{prompt_text('autoenvscaling.agents', 'solver_tools_text.md', tools=usage)}"


def default_solver_llm() -> LLMBackend:
    """The model a solver gets when none is given: an OpenAI-compatible server named by the
    environment, else the embedded SmolLM2-135M (weak but real, and it runs anywhere)."""
    base_url = os.environ.get(ENV_BASE_URL)
    if base_url:
        from ..llm.openai_backend import OpenAIBackend

        return OpenAIBackend(base_url, None, os.environ.get(ENV_MODEL) or "default")
    from ..llm.local_backend import TransformersBackend

    return TransformersBackend(os.environ.get(ENV_MODEL) or "embedded")
