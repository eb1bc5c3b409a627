"""A backend for any server speaking the OpenAI chat API: hosted providers, vLLM, SGLang, Ollama.

The retry loop is ours (the client's own retries are off) so that every attempt, every backoff and
the final classification of a failure (infrastructure vs. refusal vs. malformed answer) is visible,
counted and testable; the metrics depend on that classification.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import random
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import urlparse

from autoenvscaling.llm.base import (
    CHAT_DEFAULTS, ChatMessage, ChatOptions, ChatResponse, LLMBackend, ToolCall, ToolSpec, Usage,
)
from autoenvscaling.llm.errors import (
    LLMBadResponse,
    LLMConfigError,
    LLMError,
    LLMRefusal,
    LLMRequestError,
    LLMTimeout,
    LLMUnavailable,
)
from autoenvscaling.llm.live import LiveCall
from autoenvscaling.llm.pricing import PriceTable

if TYPE_CHECKING:
    from openai import AsyncOpenAI

_RETRYABLE_STATUS = {408, 409, 429}
_CONFIG_STATUS = {
    401: "check the API key",
    403: "check the API key's permissions",
    404: "check base_url and the model name",
}
_MAX_RETRY_AFTER = 60.0
MAX_REPLY_BYTES = 64 << 20
"""The most bytes one answer may take, streamed or not (a server that sends more is broken or hostile:
without a cap a fast one fills the memory before the timeout)."""


def is_loopback(base_url: str) -> bool:
    """Whether the server runs on this machine (such servers usually ignore the API key)."""
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def to_openai_message(message: ChatMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None and message.role != "tool":
        out["name"] = message.name
    return out


def to_openai_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    }


def _parse_tool_call(raw: Any) -> ToolCall:
    if getattr(raw, "function", None) is None:
        raise LLMBadResponse(f"unsupported tool call type {getattr(raw, 'type', None)!r}; only function calls are")
    name = raw.function.name
    text = raw.function.arguments or "{}"
    try:
        arguments = json.loads(text)
    except (ValueError, TypeError, RecursionError):  # not JSON, not a string, or nested past the parser
        arguments = None
    if not isinstance(arguments, dict):
        snippet = str(text).replace("\n", " ")[:80]
        raise LLMBadResponse(
            f"tool call {name!r} has arguments that are not a JSON object: {snippet}",
            hint="the model produced malformed tool arguments; this counts as its own failed attempt",
        )
    return ToolCall(id=raw.id or f"call_{name}", name=name, arguments=arguments)


class OpenAIBackend(LLMBackend):
    """Chat over the OpenAI API with our own retries, a concurrency limit and a per-request timeout.

    api_key falls back to OPENAI_API_KEY; a loopback server without a key gets a dummy one.
    timeout (seconds) bounds each attempt; max_retries counts retries after the first attempt, for
    429/408/409/5xx answers, connection errors and timeouts. max_concurrency bounds the requests in
    flight across all callers of this backend. Refusals raise LLMRefusal unless
    raise_on_refusal=False, which returns them as data (ChatResponse.refusal).
    """

    name = "openai"

    @classmethod
    def from_target(cls, model: str | None, base_url: str | None) -> OpenAIBackend:
        cls.check_target(model, base_url)
        assert base_url is not None
        return cls(base_url, None, model or "default")

    @classmethod
    def check_target(cls, model: str | None, base_url: str | None) -> None:
        if not base_url:
            raise LLMConfigError(f"the {cls.name} LLM backend needs the server's base URL",
                                 hint="pass --base-url URL (or the role's --solver-base-url / --proposer-base-url)")

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        max_concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff_base: float = 0.5,
        prices: PriceTable | None = None,
        raise_on_refusal: bool = True,
        max_tokens_field: str = "max_tokens",
        stream: bool = False,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        super().__init__(model)
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not is_loopback(base_url):
                raise LLMConfigError(
                    f"no API key for {base_url}",
                    hint="set OPENAI_API_KEY or pass api_key (servers that ignore keys accept any, e.g. 'EMPTY')",
                )
            key = "no-key-needed"
        if max_concurrency < 1 or max_retries < 0 or timeout <= 0:
            raise LLMConfigError("max_concurrency >= 1, max_retries >= 0 and timeout > 0 are required")
        self.base_url = base_url
        self.max_concurrency = max_concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.prices = prices if prices is not None else PriceTable.default()
        self.raise_on_refusal = raise_on_refusal
        self.max_tokens_field = max_tokens_field
        """"max_tokens" for most servers; hosted reasoning models want "max_completion_tokens"."""
        self.max_reply_bytes = max_reply_bytes
        self.stream = stream
        """Stream answers, so that the tokens of a call in flight are counted as they come (``live``)."""
        self._api_key = key
        self._random = random.Random()
        # The HTTP client and the semaphore belong to one event loop; a later asyncio.run() (common in
        # CLIs and tests) gets fresh ones. Each client is closed by an async generator parked in its
        # loop: asyncio.run finalizes such generators before closing the loop (shutdown_asyncgens),
        # so no connection outlives its loop even when nobody calls aclose().
        self._client: AsyncOpenAI | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None

    async def _ensure_client(self) -> tuple[AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._semaphore is None or self._loop is not loop:
            from openai import AsyncOpenAI

            self._client = AsyncOpenAI(
                base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout,
                http_client=_capped_http_client(self.max_reply_bytes),
            )
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._loop = loop
            self._closer = _close_at_loop_end(self._client)
            await anext(self._closer)
        return self._client, self._semaphore

    async def aclose(self) -> None:
        closer, self._closer, self._client = self._closer, None, None
        if closer is not None and self._loop is asyncio.get_running_loop():
            await closer.aclose()

    def backoff(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based): exponential, with +-50% jitter so
        many clients that failed together do not retry together. A server's Retry-After wins."""
        delay = self.backoff_base * 2.0 ** (retry - 1) * (0.5 + self._random.random())
        if retry_after is not None:
            delay = max(delay, min(retry_after, _MAX_RETRY_AFTER))
        return delay

    async def chat(self, messages: list[ChatMessage], **options: Unpack[ChatOptions]) -> ChatResponse:
        given: ChatOptions = {**CHAT_DEFAULTS, **options}
        tools, seed = given["tools"], given["seed"]
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [to_openai_message(m) for m in messages],
            "temperature": given["temperature"],
            self.max_tokens_field: given["max_tokens"],
        }
        if tools:
            request["tools"] = [to_openai_tool(t) for t in tools]
        if seed is not None:
            request["seed"] = seed
        started = time.monotonic()
        attempt = timeouts = 0
        with LiveCall(self.model) as live:
            while True:
                attempt += 1
                try:
                    raw, usage = await self._attempt(request, live)
                    response = self._checked_response(raw, started, attempt, usage).model_copy(
                        update={"timeouts": timeouts})
                except _RetryableError as e:
                    timeouts += e.kind is LLMTimeout
                    if attempt > self.max_retries:
                        raise self._failed(e.final(attempt), attempt, timeouts) from None
                    await asyncio.sleep(self.backoff(attempt, e.retry_after))
                    continue
                except LLMError as e:
                    raise self._failed(e, attempt, timeouts)
                self.usage.add(response)
                return response

    def _failed(self, error: LLMError, attempts: int, timeouts: int) -> LLMError:
        """``error``, counted in the totals and carrying the call's retries and timeouts."""
        error.retries, error.timeouts = attempts - 1, timeouts
        self.usage.add_failure(retries=error.retries, timeouts=timeouts)
        return error

    async def _attempt(self, request: dict[str, Any], live: LiveCall) -> tuple[Any, Usage | None]:
        """One HTTP call, with errors sorted into retryable ones and final LLMErrors: the completion,
        and its usage when the completion does not carry it (a stream without usage)."""
        import openai

        client, semaphore = await self._ensure_client()
        async with semaphore:
            try:
                async with asyncio.timeout(self.timeout):
                    if not self.stream:
                        return await client.chat.completions.create(**request), None
                    return await self._streamed(client, request, live)
            except (openai.APITimeoutError, TimeoutError):
                raise _RetryableError(LLMTimeout, f"no answer from {self.base_url} within {self.timeout:g} s") from None
            except openai.APIConnectionError as e:
                raise _RetryableError(LLMUnavailable, f"cannot reach {self.base_url}: {_cause(e)}") from None
            except openai.APIStatusError as e:
                raise self._status_error(e) from None
            except _ReplyTooLarge as e:
                raise LLMBadResponse(f"{self.base_url} {e}",
                                     hint="check the server; OpenAIBackend(max_reply_bytes=...) raises the limit") from None
            except (json.JSONDecodeError, UnicodeError, RecursionError, openai.APIResponseValidationError):
                raise LLMBadResponse(
                    f"{self.base_url} answered with a body that is not a chat completion",
                    hint="check that base_url points at an OpenAI-compatible /v1 endpoint",
                ) from None

    async def _streamed(self, client: AsyncOpenAI, request: dict[str, Any],
                        live: LiveCall) -> tuple[Any, Usage | None]:
        """The answer streamed: every chunk that carries content or a tool call's text is a token
        for ``live``. A stream without usage (llama.cpp's) is accounted by ``stream_usage``."""
        from openai.lib.streaming.chat import ChatCompletionStreamState

        state = ChatCompletionStreamState()
        counted = chunks = 0
        try:
            stream = await client.chat.completions.create(**request, stream=True,
                                                          stream_options={"include_usage": True})
            async for chunk in stream:
                chunks += 1
                state.handle_chunk(chunk)
                delta = chunk.choices[0].delta if chunk.choices else None
                if delta is not None and (delta.content or delta.tool_calls):
                    counted += 1
                    live.add_tokens()
            snapshot = state.current_completion_snapshot if chunks else None
        except _http_errors("HTTPError") as e:  # the non-streamed path gets these as openai.APIConnectionError
            kind = LLMTimeout if isinstance(e, _http_errors("TimeoutException")) else LLMUnavailable
            raise _RetryableError(kind, f"{self.base_url} broke off the stream: {_cause(e)}") from None
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, AssertionError, RecursionError) as e:
            # undecodable bytes, events that are not JSON, chunks of the wrong shape (the client builds
            # them without validation, and the stream state assumes the right one)
            raise LLMBadResponse(f"{self.base_url} streamed something that is not a chat completion: {_cause(e)}",
                                 hint="check that base_url points at an OpenAI-compatible /v1 endpoint") from None
        if snapshot is None:
            raise LLMBadResponse(f"{self.base_url} ended the stream without a chunk", hint="is it a chat endpoint?")
        if snapshot.usage is not None:
            return snapshot, None
        return snapshot, await self.stream_usage(client, request, counted)

    async def stream_usage(self, client: AsyncOpenAI, request: dict[str, Any], counted: int) -> Usage:
        """The usage of a streamed answer whose stream carried none: the chunks counted (one token
        each on the servers that omit usage) and no prompt tokens. A backend that can ask its server
        for the prompt's length overrides this."""
        return Usage(prompt_tokens=0, completion_tokens=counted)

    def _status_error(self, e: Any) -> Exception:
        status = e.status_code
        message = _error_message(e)
        if status in _RETRYABLE_STATUS or status >= 500:
            retry_after = _retry_after(e.response.headers.get("retry-after"))
            return _RetryableError(LLMUnavailable, f"HTTP {status} from {self.base_url}: {message}", retry_after)
        if "content_filter" in str(getattr(e, "code", "") or ""):
            return LLMRefusal(
                f"the provider's content filter blocked the request: {message}",
                hint="refusals are excluded from scored attempts",
            )
        if status in _CONFIG_STATUS:
            return LLMConfigError(f"HTTP {status} from {self.base_url}: {message}", hint=_CONFIG_STATUS[status])
        return LLMRequestError(f"HTTP {status} from {self.base_url}: {message}")

    def _checked_response(self, raw: Any, started: float, attempts: int, usage: Usage | None = None) -> ChatResponse:
        """``_to_response``, with a completion whose fields have the wrong types (the client builds it
        from the server's JSON without validation) turned into LLMBadResponse."""
        try:
            return self._to_response(raw, started, attempts, usage)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as e:  # ValidationError is a ValueError
            raise LLMBadResponse(f"{self.base_url} answered with a malformed chat completion: {_cause(e)}",
                                 hint="check that base_url points at an OpenAI-compatible /v1 endpoint") from None

    def _to_response(self, raw: Any, started: float, attempts: int, usage: Usage | None = None) -> ChatResponse:
        choices = getattr(raw, "choices", None)
        if not choices:
            raise LLMBadResponse(f"{self.base_url} answered without choices", hint="is it a chat endpoint?")
        choice = choices[0]
        finish = choice.finish_reason or "stop"
        message = choice.message
        if message is None:
            raise LLMBadResponse(f"{self.base_url} answered a choice without a message")
        refusal = getattr(message, "refusal", None)
        if finish == "content_filter" and not refusal:
            refusal = "the provider's content filter stopped the answer"
        if refusal and self.raise_on_refusal:
            raise LLMRefusal(
                f"{self.model} refused: {refusal}",
                hint="refusals are excluded from scored attempts; pass raise_on_refusal=False to keep them as data",
            )
        calls = tuple(_parse_tool_call(c) for c in (message.tool_calls or ()))
        known = raw.usage is not None or usage is not None
        usage = usage or Usage(
            prompt_tokens=getattr(raw.usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(raw.usage, "completion_tokens", 0) or 0,
        )
        model = raw.model or self.model
        price = self.prices.cost(self.model, usage)
        if price is None and model != self.model:
            price = self.prices.cost(model, usage)
        return ChatResponse(
            message=ChatMessage(role="assistant", content=message.content or "", tool_calls=calls),
            usage=usage,
            model=model,
            finish_reason=finish,
            seconds=time.monotonic() - started,
            cost_usd=price if known else None,
            refusal=refusal or None,
            attempts=attempts,
        )


async def _close_at_loop_end(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


class _RetryableError(Exception):
    """An attempt failed in a way a later attempt may not; `final` is what to raise when out of tries."""

    def __init__(self, kind: type[LLMError], message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after

    def final(self, attempts: int) -> LLMError:
        return self.kind(
            f"{self.message} (gave up after {attempts} attempts)",
            hint="an infrastructure failure: check the server, or raise timeout/max_retries",
        )


class _ReplyTooLarge(Exception):
    """An answer over the byte cap, or compressed (its size unknown until decoded) although the
    request asked for none; raised while the body is read, so nothing more of it is taken."""


def _capped_http_client(limit: int) -> Any:
    """The openai client's own HTTP client, asking for uncompressed answers and reading at most
    ``limit`` bytes of each."""
    import openai

    client_cls = openai.DefaultAsyncHttpxClient
    base = next(c for c in client_cls.__mro__ if c.__name__ == "AsyncClient")
    http = sys.modules[base.__module__.partition(".")[0]]  # httpx, or httpx2 in later releases

    class Capped(http.AsyncByteStream):  # type: ignore[name-defined]
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > limit:
                    raise _ReplyTooLarge(f"sent more than {limit >> 20} MiB for one answer")
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    async def cap(response: Any) -> None:
        encoding = response.headers.get("content-encoding", "").strip().lower()
        if encoding not in ("", "identity"):
            raise _ReplyTooLarge(f"compressed its answer ({encoding}) although asked not to")
        response.stream = Capped(response.stream)

    return client_cls(headers={"Accept-Encoding": "identity"}, event_hooks={"response": [cap]})


def _http_errors(name: str) -> tuple[type[BaseException], ...]:
    """The HTTP library's error class ``name`` (HTTPError: a connection that broke or a body that
    could not be decoded), from whichever library the installed openai client uses (httpx, or httpx2
    in later releases): a streamed answer raises them while it is read, outside the client's mapping."""
    return tuple(getattr(sys.modules[m], name) for m in ("httpx", "httpx2") if m in sys.modules)


def _cause(e: BaseException) -> str:
    """The innermost cause's text: 'Connection refused' says more than 'Connection error.'."""
    while e.__cause__ is not None:
        e = e.__cause__
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def _error_message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"]).splitlines()[0][:200]
    return str(e).splitlines()[0][:200]


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None  # an HTTP date; rare for APIs, and our own backoff is a fine fallback
