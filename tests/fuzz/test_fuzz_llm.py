"""Fuzzing what models and model servers send back: raw HTTP answers (broken JSON, wrong shapes,
binary, other encodings, huge bodies, broken and endless event streams, silence) to the real
``openai`` client inside ``OpenAIBackend.chat``, and reply texts through the parsers that read them
(``parse_text_turn`` for the solver, ``parse_task`` for prompt proposers, ``parse_tool_calls`` for
models without native tool calls). Each answers or raises one LLMError (or MalformedResponse) line;
endless streams and silent servers are cut by the backend's own timeout."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import strategies as st

from autoenvscaling.agents.text_protocol import parse_text_turn
from autoenvscaling.llm.base import ChatMessage, ChatResponse, ToolSpec
from autoenvscaling.llm.errors import LLMBadResponse, LLMError, LLMTimeout
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.tool_text import parse_tool_calls
from autoenvscaling.proposers.response import MalformedResponse, parse_task

from .conftest import Fuzz
from .rawserver import RawReply, RawServer
from .strategies import (any_text, deep, huge_text, json_text, junk_bytes, nasty_strings, one_line_error, shellish,
                         task_toml_text, text_like, toml_values, words)

# The client builds junk chunks without validation; pydantic then warns while the stream state copies them.
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")

MESSAGES = [ChatMessage.system("be brief"), ChatMessage.user("list /tmp")]
LS = ToolSpec(name="ls", description="list", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
junk_json = st.one_of(toml_values.map(lambda v: json.loads(json.dumps(v, default=str))), json_text, st.integers(),
                      st.none(), st.floats(allow_nan=False))


def _set(doc: Any, path: list[Any], value: Any) -> Any:
    """``doc`` with the value at ``path`` replaced (or the key removed when ``value`` is ...)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        out = dict(doc)
        if value is ... and not rest:
            out.pop(head, None)
        else:
            out[head] = _set(doc.get(head), rest, value)
        return out
    if isinstance(doc, list) and isinstance(head, int) and head < len(doc):
        return [_set(x, rest, value) if i == head else x for i, x in enumerate(doc)]
    return doc


def _completion(content: Any, calls: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


COMPLETION_PATHS = [["choices"], ["choices", 0], ["choices", 0, "message"], ["choices", 0, "message", "content"],
                    ["choices", 0, "message", "tool_calls"], ["choices", 0, "message", "tool_calls", 0],
                    ["choices", 0, "message", "tool_calls", 0, "function"],
                    ["choices", 0, "message", "tool_calls", 0, "function", "name"],
                    ["choices", 0, "message", "tool_calls", 0, "function", "arguments"],
                    ["choices", 0, "message", "tool_calls", 0, "id"], ["choices", 0, "message", "refusal"],
                    ["choices", 0, "finish_reason"], ["usage"], ["usage", "prompt_tokens"],
                    ["usage", "completion_tokens"], ["model"], ["error"]]
tool_arguments = st.one_of(st.just('{"path": "/tmp"}'), json_text, deep, st.integers(), st.dictionaries(words, words),
                           st.just('{"path": "/tmp"'), st.just("[1, 2]"), st.just("null"))
reply_texts = st.one_of(any_text, shellish, huge_text(1 << 16), st.sampled_from([
    "```bash\nls /tmp\n```", "FINISH", "```\n$ ls\n", '<tool_call>{"name": "ls", "arguments": {}}</tool_call>',
    "<tool_call>" + "[" * 5000, '{"name": "ls", "arguments": "{\\"a\\": 1"}', "FILE: task.toml\n```toml\n[task\n```"]))


@st.composite
def completions(draw: st.DrawFn) -> Any:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": draw(tool_arguments)}}]
    doc: Any = _completion(draw(st.one_of(reply_texts, junk_json)), draw(st.sampled_from([[], calls])))
    for path in draw(st.lists(st.sampled_from(COMPLETION_PATHS), max_size=3)):
        doc = _set(doc, path, draw(st.one_of(junk_json, st.just(...), tool_arguments)))
    return doc


def _chunk(delta: Any, finish: Any = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


@st.composite
def event_streams(draw: st.DrawFn) -> bytes:
    """Server-sent events: chunks of a streamed completion, some broken, in any order."""
    events: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["content", "content", "tool", "junk", "bytes", "done", "comment", "usage"]))
        if kind == "content":
            data = json.dumps(_chunk({"role": "assistant", "content": draw(st.one_of(reply_texts, junk_json))}))
        elif kind == "tool":
            call = {"index": draw(st.one_of(st.just(0), junk_json)), "id": draw(st.one_of(st.just("call_1"), junk_json)),
                    "type": "function", "function": {"name": draw(st.one_of(st.just("ls"), junk_json)),
                                                     "arguments": draw(st.one_of(tool_arguments, junk_json))}}
            data = json.dumps(_chunk({"tool_calls": draw(st.one_of(st.just([call]), junk_json))},
                                     draw(st.one_of(st.none(), st.just("tool_calls"), junk_json))))
        elif kind == "junk":
            chunk: Any = _chunk({"content": "x"})
            for path in draw(st.lists(st.sampled_from([["choices"], ["choices", 0], ["choices", 0, "delta"],
                                                        ["choices", 0, "index"], ["usage"], ["object"]]), min_size=1)):
                chunk = _set(chunk, path, draw(st.one_of(junk_json, st.just(...))))
            data = json.dumps(chunk, default=lambda _: None)  # a removed key's ... where no key was
        elif kind == "usage":
            data = json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [],
                               "usage": draw(st.one_of(junk_json, st.just({"prompt_tokens": -1, "completion_tokens": 2})))})
        elif kind == "done":
            data = "[DONE]"
        elif kind == "comment":
            events.append(b": keep-alive\n\n")
            continue
        else:
            events.append(b"data: " + draw(junk_bytes) + b"\n\n")
            continue
        prefix = draw(st.sampled_from([b"data: ", b"data: ", b"data:", b"event: error\ndata: ", b"id: 1\ndata: "]))
        events.append(prefix + data.encode("utf-8", "surrogatepass") + draw(st.sampled_from([b"\n\n", b"\r\n\r\n", b"\n"])))
    return b"".join(events)


STATUSES = [b"HTTP/1.1 200 OK"] * 6 + [b"HTTP/1.1 400 Bad", b"HTTP/1.1 401 No", b"HTTP/1.1 404 No", b"HTTP/1.1 413 Big",
                                       b"HTTP/1.1 429 Slow", b"HTTP/1.1 500 Oops", b"HTTP/1.1 503 Busy",
                                       b"HTTP/1.1 302 Found\r\nlocation: /v1/chat/completions", b"HTTP/1.1 204 None",
                                       b"HTTP/1.1 999 What", b"HTTP/1.0 200 OK", b"garbage"]
CONTENT_TYPES = [b"application/json", b"application/json; charset=utf-16", b"application/json; charset=latin-1",
                 b"text/event-stream", b"text/html", b"application/octet-stream", b"", b"application/json; charset=nope"]


@st.composite
def raw_replies(draw: st.DrawFn, stream: bool) -> RawReply:
    """One HTTP answer to a chat request: any status, headers, body and encoding."""
    kind = draw(st.sampled_from(["json", "json", "json", "events" if stream else "json", "bytes", "deep", "huge"]))
    if kind == "json":
        body = json.dumps(draw(completions()), default=lambda _: None).encode("utf-8", "surrogatepass")
    elif kind == "events":
        body = draw(event_streams())
    elif kind == "bytes":
        body = draw(junk_bytes)
    elif kind == "deep":
        body = draw(deep).encode()
    else:
        body = json.dumps(_completion(draw(huge_text(1 << 21)), [])).encode("utf-8", "surrogatepass")
    encoding = draw(st.sampled_from(["utf-8", "utf-8", "utf-16", "latin-1"]))
    if encoding != "utf-8":
        body = body.decode("utf-8", "replace").encode(encoding, "replace")
    headers = [draw(st.sampled_from(STATUSES)), b"content-type: " + draw(st.sampled_from(CONTENT_TYPES)),
               b"connection: close"]
    length = draw(st.sampled_from(["exact", "exact", "none", "short", "chunked-junk", "gzip-junk"]))
    if length == "exact":
        headers.append(b"content-length: %d" % len(body))
    elif length == "short":
        headers.append(b"content-length: %d" % max(0, len(body) // 2))
    elif length == "chunked-junk":
        headers.append(b"transfer-encoding: chunked")
    elif length == "gzip-junk":
        headers.append(b"content-encoding: gzip")
    if draw(st.booleans()):
        headers.append(b"retry-after: " + draw(st.sampled_from([b"1", b"-5", b"nan", b"Wed, 21 Oct 2015", b"1e400"])))
    return RawReply(b"\r\n".join(headers), body)


def chat(server: RawServer, *, stream: bool, timeout: float = 5.0) -> ChatResponse:
    backend = OpenAIBackend(server.base_url, None, "m", timeout=timeout, max_retries=0, backoff_base=0.0,
                            stream=stream)

    async def once() -> ChatResponse:
        try:
            return await backend.chat(MESSAGES, tools=[LS], max_tokens=16)
        finally:
            await backend.aclose()

    return asyncio.run(once())


def check_parsers(text: str) -> None:
    """The reply's text through every parser that reads replies: an answer or one line of ours."""
    for tools in (["bash"], ["bash", "ls"], ["ls"]):
        parse_text_turn(text, tools=tools)
        parse_text_turn(text, truncated=True, tools=tools)
    try:
        parse_tool_calls(text)
    except Exception as exc:
        one_line_error(exc, LLMBadResponse)
    try:
        parse_task(text, fallback_name="fuzz")
    except Exception as exc:
        one_line_error(exc, MalformedResponse)


def _check_chat(server: RawServer, reply: RawReply, stream: bool) -> None:
    server.reply = reply
    try:
        response = chat(server, stream=stream)
    except Exception as exc:
        one_line_error(exc, LLMError)
        return
    check_parsers(response.message.content)
    for call in response.message.tool_calls:
        assert isinstance(call.arguments, dict)


def test_chat_answers(fuzz: Fuzz) -> None:
    with RawServer() as server:
        @fuzz.given(raw_replies(stream=False))
        def check(reply: RawReply) -> None:
            _check_chat(server, reply, stream=False)

        check()


def test_streamed_chat_answers(fuzz: Fuzz) -> None:
    with RawServer() as server:
        @fuzz.given(raw_replies(stream=True))
        def check(reply: RawReply) -> None:
            _check_chat(server, reply, stream=True)

        check()


def test_endless_and_silent_servers_are_cut_by_the_timeout(fuzz: Fuzz) -> None:
    """A stream that never ends and a server that never answers end in LLMTimeout: the backend's
    per-attempt timeout bounds them (no wall clock is raced here: the timeout is the bound)."""
    ok = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close"
    chunk = ("data: " + json.dumps(_chunk({"content": "more "})) + "\n\n").encode()
    replies = st.one_of(
        event_streams().map(lambda events: RawReply(ok, events, endless=chunk)),
        st.sampled_from([RawReply(ok, hang=True), RawReply(ok, b"data: {", hang=True),
                         RawReply(ok, endless=b": keep-alive\n\n"), RawReply(ok, endless=b"\xff\xfe"),
                         RawReply(b"HTTP/1.1 200 OK\r\ncontent-length: 99999999", b"{", hang=True)]))

    with RawServer() as server:
        @fuzz.given(replies, st.booleans(), fast=4, full=100)
        def check(reply: RawReply, stream: bool) -> None:
            server.reply = reply
            try:
                chat(server, stream=stream, timeout=0.5)
            except Exception as exc:
                # A broken chunk before the endless part may end the stream first, as the model's failure.
                one_line_error(exc, LLMTimeout, LLMBadResponse)
            else:  # only a stream that said [DONE] before its endless part is over
                assert b"data: [DONE]" in reply.body, "an endless answer was accepted"

        check()


@st.composite
def proposer_replies(draw: st.DrawFn) -> str:
    """Replies in the proposers' response format (FILE blocks), with broken parts."""
    parts = []
    for path in draw(st.lists(st.one_of(st.sampled_from(["task.toml", "instruction.md", "environment/Dockerfile",
                                                         "tests/test.sh", "solution/solve.sh"]), words, nasty_strings),
                              max_size=7)):
        body = draw(task_toml_text) if path == "task.toml" else draw(text_like)
        fence = draw(st.sampled_from(["```", "````", "~~~", "```toml", ""]))
        close = draw(st.sampled_from([fence, fence, "", "``"]))
        header = draw(st.sampled_from(["FILE: ", "## FILE: ", "**FILE: ", "FILE:"]))
        parts.append(f"{header}{path}\n{fence}\n{body}\n{close}")
    return draw(st.sampled_from(["\n", "\n\n", "\r\n"])).join(parts)


def test_reply_texts(fuzz: Fuzz) -> None:
    pieces = st.one_of(reply_texts, st.sampled_from(["<tool_call>", "</tool_call>", "```", "```ls", "$ ", "FINISH\n",
                                                     '{"name": "ls", "arguments": ']))
    texts = st.one_of(reply_texts, proposer_replies(), st.lists(pieces).map("".join),
                      deep.map(lambda d: f"<tool_call>{d}</tool_call>"),
                      deep.map(lambda d: '{"name": "x", "arguments": ' + d + "}"))

    @fuzz.given(texts)
    def check(text: str) -> None:
        check_parsers(text)

    check()
