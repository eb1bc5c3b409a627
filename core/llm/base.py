"""The data that crosses the LLM boundary, and the one class every backend implements.

Agents, proposers and the trainer talk to any model (a hosted API, vLLM, a local transformers
model, a scripted test server) through `LLMBackend.chat`, so none of them knows which one it has.
"""

from __future__ import annotations

import abc
import dataclasses
from types import TracebackType
from typing import Any, ClassVar, Literal, TypedDict, Unpack

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["system", "user", "assistant", "tool"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """One function call the model asked for."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolSpec(_Frozen):
    """A tool offered to the model: its name, what it does, and a JSON schema of its arguments."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ChatMessage(_Frozen):
    """One turn of a conversation, in the OpenAI chat shape (the lingua franca of servers)."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    """For role "tool": the id of the call this message answers."""
    name: str | None = None

    @model_validator(mode="after")
    def _tool_messages_answer_a_call(self) -> ChatMessage:
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool message needs tool_call_id (the id of the call it answers)")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant messages carry tool_calls")
        return self

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str) -> ChatMessage:
        return cls(role="user", content=content)

    @classmethod
    def assistant(cls, content: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tool_calls)

    @classmethod
    def tool(cls, call: ToolCall, content: str) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=call.id, name=call.name)


class Usage(_Frozen):
    """Token counts of one call, as reported by the provider (or counted by the local tokenizer)."""

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatResponse(_Frozen):
    """The outcome of one successful `chat` call."""

    message: ChatMessage
    usage: Usage
    model: str
    """The model that answered, as the provider names it (may differ from the one requested)."""
    finish_reason: str
    """"stop", "length", "tool_calls", or a refusal reason when the backend returns refusals as data."""
    seconds: float
    """Wall time of the call, retries and backoff included."""
    cost_usd: float | None
    """Price of the tokens from the price table; None when the model's price is unknown (never guessed)."""
    refusal: str | None = None
    """Set only by a backend built with raise_on_refusal=False; otherwise refusals raise LLMRefusal."""
    attempts: int = 1
    """HTTP attempts it took (1 = no retry)."""
    timeouts: int = 0
    """Attempts among them that timed out before a later one answered."""


@dataclasses.dataclass
class UsageTotals:
    """Running totals over every call of one backend: what a run spent, for reports and cost metrics."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    """Calls whose model has no price: cost_usd is then a lower bound, and reports should say so."""
    retries: int = 0
    timeouts: int = 0
    """Attempts that timed out (each was retried, or ended its call)."""
    failed_calls: int = 0

    def add(self, response: ChatResponse) -> None:
        self.calls += 1
        self.timeouts += response.timeouts
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.retries += response.attempts - 1
        if response.cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += response.cost_usd

    def add_failure(self, retries: int, timeouts: int = 0) -> None:
        self.failed_calls += 1
        self.retries += retries
        self.timeouts += timeouts


class ChatOptions(TypedDict, total=False):
    """The keyword arguments of `LLMBackend.chat`: the tools offered to the model, the sampling
    temperature, the most tokens the reply may have, and a sampling seed (None: the backend's own)."""

    tools: list[ToolSpec] | None
    temperature: float
    max_tokens: int
    seed: int | None


CHAT_DEFAULTS: ChatOptions = {"tools": None, "temperature": 0.0, "max_tokens": 512, "seed": None}
"""What `chat` uses for an option not given (``{**CHAT_DEFAULTS, **options}``)."""


class LLMBackend(abc.ABC):
    """A chat model. Subclasses implement `chat`; they add each response to `self.usage`.

    Backends hold connections or model weights, so close them (`await backend.aclose()` or
    `async with backend:`) when done.
    """

    name: ClassVar[str]
    """Registry name of the backend kind, e.g. "openai"."""
    runs_here: ClassVar[bool] = False
    """Whether the model decodes on this machine, one request at a time (a small model in this
    process or a local server): agents then use their local profile (a short budget, no queueing)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.usage = UsageTotals()

    @classmethod
    def from_target(cls, model: str | None, base_url: str | None) -> LLMBackend:
        """The backend for a model named on the command line (``--llm``/``--base-url`` and the
        per-role options of ``autoenvscaling run``), which picks the class through the host's LLM
        backend registry. A backend that can be built from those two overrides this."""
        from ..errors import UsageError

        raise UsageError(f"the {cls.name} LLM backend cannot be built from a model name and a base URL",
                         hint="use --llm-backend openai (with --base-url) or transformers")

    @classmethod
    def check_target(cls, model: str | None, base_url: str | None) -> None:
        """Raise our error if ``from_target(model, base_url)`` could not work, without connecting or
        loading anything: the CLI checks this before workers try to build the model."""
        if cls.from_target.__func__ is LLMBackend.from_target.__func__:  # type: ignore[attr-defined]
            cls.from_target(model, base_url)

    @abc.abstractmethod
    async def chat(self, messages: list[ChatMessage], **options: Unpack[ChatOptions]) -> ChatResponse:
        """Answer the conversation, with the `ChatOptions` given (`CHAT_DEFAULTS` for the others).
        Raises an `LLMError` subclass for expected failures."""

    async def aclose(self) -> None:  # noqa: B027 - optional: backends that hold nothing need no cleanup
        """Release connections or memory. Safe to call twice."""

    async def __aenter__(self) -> LLMBackend:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"
