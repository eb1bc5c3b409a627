"""OpenAIBackend against the scripted server: the real openai client over real loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Literal

import pytest

from autoenvscaling.llm.base import ChatMessage, ChatResponse, ToolCall, ToolSpec
from autoenvscaling.llm.errors import (
    LLMBadResponse,
    LLMConfigError,
    LLMRefusal,
    LLMRequestError,
    LLMTimeout,
    LLMUnavailable,
)
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.pricing import PriceTable
from autoenvscaling.llm.scripted_server import (
    DelayReply,
    ErrorReply,
    MalformedReply,
    RefusalReply,
    Reply,
    ScriptedOpenAIServer,
    TextReply,
    ToolCallsReply,
)

PRICES = PriceTable.from_toml_text('[prices]\n"priced-model" = { input = 2.0, output = 8.0 }\n')
HELLO = [ChatMessage.system("be brief"), ChatMessage.user("say hello")]
LS = ToolSpec(
    name="ls",
    description="list a directory",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def backend(srv: ScriptedOpenAIServer, model: str = "priced-model", **kw: Any) -> OpenAIBackend:
    options: dict[str, Any] = {"prices": PRICES, "backoff_base": 0.01, "timeout": 5.0} | kw
    return OpenAIBackend(srv.base_url, None, model, **options)


async def chat_once(b: OpenAIBackend, messages: list[ChatMessage] = HELLO, **kw: Any) -> ChatResponse:
    """One call, then close the client inside the same event loop."""
    try:
        return await b.chat(messages, **kw)
    finally:
        await b.aclose()


def test_text_reply_and_what_the_client_sent() -> None:
    with ScriptedOpenAIServer(["hello there"]) as srv:
        r = asyncio.run(chat_once(backend(srv), temperature=0.7, max_tokens=33, seed=5))
    assert r.message.role == "assistant" and r.message.content == "hello there"
    assert r.finish_reason == "stop" and r.model == "priced-model" and r.attempts == 1
    assert r.usage.prompt_tokens == 4 and r.usage.completion_tokens == 2  # the server's word counts
    (sent,) = srv.chat_bodies
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hello"}]
    assert (sent["model"], sent["temperature"], sent["max_tokens"], sent["seed"]) == ("priced-model", 0.7, 33, 5)
    assert "tools" not in sent
    assert srv.requests[0].headers["authorization"].startswith("Bearer ")  # dummy key for loopback


def test_tool_calls_are_parsed_and_round_trip() -> None:
    script: list[Reply] = [ToolCallsReply([("ls", {"path": "/tmp"}), ("ls", {})]), "done"]
    with ScriptedOpenAIServer(script) as srv:
        b = backend(srv)

        async def two_turns() -> tuple[ChatResponse, ChatResponse]:
            first = await b.chat(HELLO, tools=[LS])
            call = first.message.tool_calls[0]
            follow = [*HELLO, first.message, ChatMessage.tool(call, "a.txt")]
            second = await b.chat(follow, tools=[LS])
            await b.aclose()
            return first, second

        first, second = asyncio.run(two_turns())
    assert first.finish_reason == "tool_calls"
    assert [(c.name, c.arguments) for c in first.message.tool_calls] == [("ls", {"path": "/tmp"}), ("ls", {})]
    assert all(isinstance(c, ToolCall) and c.id.startswith("call_") for c in first.message.tool_calls)
    assert second.message.content == "done"
    sent_tools = srv.chat_bodies[0]["tools"]
    assert sent_tools == [{"type": "function", "function": LS.model_dump()}]
    assistant, tool_msg = srv.chat_bodies[1]["messages"][2:]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "/tmp"}
    assert tool_msg == {"role": "tool", "content": "a.txt", "tool_call_id": first.message.tool_calls[0].id}


@pytest.mark.parametrize("via", ["refusal", "content_filter"])
def test_refusal_raises_llm_refusal(via: Literal["refusal", "content_filter"]) -> None:
    with ScriptedOpenAIServer([RefusalReply("no way", via=via)]) as srv:
        b = backend(srv)
        with pytest.raises(LLMRefusal) as info:
            asyncio.run(chat_once(b))
    assert not info.value.scored and "\n" not in str(info.value)
    assert len(srv.requests) == 1 and b.usage.failed_calls == 1 and b.usage.calls == 0


def test_refusal_as_data_when_asked() -> None:
    with ScriptedOpenAIServer([RefusalReply("no way")]) as srv:
        r = asyncio.run(chat_once(backend(srv, raise_on_refusal=False)))
    assert r.refusal == "no way"


def test_malformed_tool_arguments_raise_bad_response_without_retry() -> None:
    unclosed = ToolCallsReply([("ls", '{"path": "/tmp"')])
    with ScriptedOpenAIServer([unclosed]) as srv, pytest.raises(LLMBadResponse) as info:
        asyncio.run(chat_once(backend(srv), tools=[LS]))
    message = str(info.value)
    assert "'ls'" in message and "not a JSON object" in message and "\n" not in message
    assert info.value.scored and info.value.hint
    assert len(srv.requests) == 1


def test_completion_without_usage_has_unknown_cost_and_one_without_choices_is_bad() -> None:
    no_usage = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "priced-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    with ScriptedOpenAIServer([no_usage, {**no_usage, "choices": []}]) as srv:
        b = backend(srv)
        r = asyncio.run(b.chat(HELLO))
        with pytest.raises(LLMBadResponse, match="without choices"):
            asyncio.run(b.chat(HELLO))
    assert r.message.content == "hi" and r.usage.total_tokens == 0 and r.cost_usd is None


def test_body_that_is_not_json_raises_bad_response() -> None:
    with ScriptedOpenAIServer([MalformedReply("<html>oops</html>")]) as srv, pytest.raises(LLMBadResponse) as info:
        asyncio.run(chat_once(backend(srv)))
    assert "not a chat completion" in str(info.value)


def test_503_then_success_is_retried_after_a_backoff() -> None:
    with ScriptedOpenAIServer([ErrorReply(503), "recovered"]) as srv:
        b = backend(srv, backoff_base=0.2)
        r = asyncio.run(chat_once(b))
    assert r.message.content == "recovered" and r.attempts == 2
    assert b.usage.retries == 1 and b.usage.calls == 1 and b.usage.failed_calls == 0
    gap = srv.requests[1].received_at - srv.requests[0].received_at
    assert gap >= 0.1  # backoff_base * (0.5 + jitter) with jitter >= 0


def test_retry_after_header_is_honoured() -> None:
    with ScriptedOpenAIServer([ErrorReply(429, "slow down", retry_after=0.3), "ok"]) as srv:
        asyncio.run(chat_once(backend(srv, backoff_base=0.001)))
    assert srv.requests[1].received_at - srv.requests[0].received_at >= 0.3


def test_persistent_500_gives_up_as_unavailable() -> None:
    with ScriptedOpenAIServer([ErrorReply(500, "boom")] * 4) as srv:
        b = backend(srv, max_retries=2)
        with pytest.raises(LLMUnavailable) as info:
            asyncio.run(chat_once(b))
    assert len(srv.requests) == 3  # one attempt plus max_retries
    assert "HTTP 500" in str(info.value) and "3 attempts" in str(info.value) and not info.value.scored
    assert b.usage.failed_calls == 1 and b.usage.retries == 2


def test_timeout_raises_llm_timeout() -> None:
    # The server never answers in time (it holds each request until it closes): only the client's
    # timeout can end each attempt.
    with ScriptedOpenAIServer([DelayReply(300.0), DelayReply(300.0)]) as srv:
        b = backend(srv, timeout=0.3, max_retries=1)
        with pytest.raises(LLMTimeout, match=r"within 0\.3 s") as info:
            asyncio.run(chat_once(b))
    assert (info.value.timeouts, info.value.retries) == (2, 1)  # both attempts timed out: one retry
    assert b.usage.failed_calls == 1 and b.usage.retries == 1


def test_connection_refused_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once the socket closes
    b = OpenAIBackend(f"http://127.0.0.1:{port}/v1", None, "m", max_retries=1, backoff_base=0.01)
    with pytest.raises(LLMUnavailable, match="cannot reach"):
        asyncio.run(chat_once(b))


def test_concurrency_limit_is_respected() -> None:
    with ScriptedOpenAIServer([DelayReply(0.15, "ok")] * 6) as srv:
        b = backend(srv, max_concurrency=2)

        async def many() -> list[ChatResponse]:
            results = await asyncio.gather(*(b.chat(HELLO) for _ in range(6)))
            await b.aclose()
            return results

        results = asyncio.run(many())
    assert [r.message.content for r in results] == ["ok"] * 6
    assert srv.max_in_flight == 2


def test_token_and_cost_accounting() -> None:
    script = [
        TextReply("a", prompt_tokens=1000, completion_tokens=500),
        TextReply("b", prompt_tokens=10, completion_tokens=20),
    ]
    with ScriptedOpenAIServer(script) as srv:
        b = backend(srv)

        async def two() -> list[ChatResponse]:
            out = [await b.chat(HELLO), await b.chat(HELLO)]
            await b.aclose()
            return out

        first, second = asyncio.run(two())
    assert first.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert second.cost_usd == pytest.approx((10 * 2.0 + 20 * 8.0) / 1e6)
    totals = b.usage
    assert (totals.calls, totals.prompt_tokens, totals.completion_tokens) == (2, 1010, 520)
    assert totals.cost_usd == pytest.approx((1010 * 2.0 + 520 * 8.0) / 1e6)
    assert totals.unpriced_calls == 0


def test_unknown_model_has_no_cost() -> None:
    with ScriptedOpenAIServer(["hi"]) as srv:
        b = backend(srv, model="mystery-model")
        r = asyncio.run(chat_once(b))
    assert r.cost_usd is None and b.usage.unpriced_calls == 1 and b.usage.cost_usd == 0.0


@pytest.mark.parametrize(("status", "error"), [(401, LLMConfigError), (404, LLMConfigError), (400, LLMRequestError)])
def test_client_errors_are_not_retried(status: int, error: type[Exception]) -> None:
    with ScriptedOpenAIServer([ErrorReply(status, "nope"), "never sent"]) as srv, pytest.raises(error) as info:
        asyncio.run(chat_once(backend(srv)))
    assert f"HTTP {status}" in str(info.value)
    assert len(srv.requests) == 1


def test_backend_survives_a_second_event_loop() -> None:
    with ScriptedOpenAIServer(["one", "two"]) as srv:
        b = backend(srv)
        assert asyncio.run(b.chat(HELLO)).message.content == "one"
        assert asyncio.run(b.chat(HELLO)).message.content == "two"
    assert b.usage.calls == 2


def test_missing_key_for_remote_url_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match=r"no API key for https://api\.example\.com/v1") as info:
        OpenAIBackend("https://api.example.com/v1", None, "gpt-4o")
    assert "OPENAI_API_KEY" in (info.value.hint or "")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAIBackend("https://api.example.com/v1", None, "gpt-4o")._api_key == "sk-test"
    assert OpenAIBackend("http://localhost:8000/v1", None, "m")  # loopback needs no key


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    b = OpenAIBackend("http://127.0.0.1:1/v1", None, "m", backoff_base=1.0)
    for retry in (1, 2, 3):
        delays = [b.backoff(retry) for _ in range(50)]
        assert all(0.5 * 2 ** (retry - 1) <= d <= 1.5 * 2 ** (retry - 1) for d in delays)
        assert len(set(delays)) > 1  # jittered
    assert b.backoff(1, retry_after=7.0) == 7.0


def _raw_chat(server: Any, *, stream: bool, **kw: Any) -> ChatResponse:
    b = OpenAIBackend(server.base_url, None, "m", timeout=30.0, max_retries=0, backoff_base=0.0, stream=stream, **kw)
    return asyncio.run(chat_once(b))


def _completion_bytes(text: str) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}]}).encode()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_answer_over_the_byte_cap_is_refused_while_it_is_read(stream: bool) -> None:
    """A server that sends without end (or just a huge answer) is cut off at the cap, not read into
    memory until the timeout; the same answer under a larger cap goes through (positive control)."""
    from ..fuzz.rawserver import RawReply, RawServer

    text = "x" * (2 << 20)
    if stream:
        chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
        head, body = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close", (
            b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n")
        endless = b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}\n\n'
    else:
        body = _completion_bytes(text)
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d" % len(body)
        endless = b"x" * 65536
    with RawServer() as server:
        server.reply = RawReply(head, body)
        assert _raw_chat(server, stream=stream).message.content == text  # positive control: the default cap (64 MiB)
        with pytest.raises(LLMBadResponse, match=r"sent more than 1 MiB for one answer"):
            _raw_chat(server, stream=stream, max_reply_bytes=1 << 20)
        # A body that never ends stops at the cap too (without it: read until the timeout).
        server.reply = RawReply(head.replace(b"content-length", b"x-length") if not stream else head, b"{" if not stream else b"",
                                endless=endless)
        with pytest.raises(LLMBadResponse, match=r"sent more than 1 MiB for one answer"):
            _raw_chat(server, stream=stream, max_reply_bytes=1 << 20)


def test_a_compressed_answer_is_refused_since_its_size_is_unknown_until_decoded() -> None:
    import gzip

    from ..fuzz.rawserver import RawReply, RawServer

    body = _completion_bytes("hello")
    with RawServer() as server:
        for encoding, data in ((b"gzip", gzip.compress(body)), (b"identity", body)):
            server.reply = RawReply(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: " + encoding
                                    + b"\r\ncontent-length: %d" % len(data), data)
            if encoding == b"gzip":
                with pytest.raises(LLMBadResponse, match=r"compressed its answer \(gzip\) although asked not to"):
                    _raw_chat(server, stream=False)
            else:
                assert _raw_chat(server, stream=False).message.content == "hello"
