"""A real OpenAI-compatible HTTP server that replays a script, for tests and plugin authors.

A frontier model cannot run in a test, so instead of patching the client we serve scripted answers
over loopback HTTP: the real `openai` client, real sockets, real retries and timeouts get exercised,
and every request the client sent is recorded for assertions.

    with ScriptedOpenAIServer(["hello", ErrorReply(503), ToolCallsReply([("ls", {"path": "."})])]) as srv:
        backend = OpenAIBackend(srv.base_url, None, "scripted")

Token counts in the replies are word counts (prompt: all message contents; completion: the reply),
so tests can predict them; a reply can also state its own counts.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, TypeAlias


@dataclasses.dataclass(frozen=True)
class TextReply:
    """An assistant message with text."""

    content: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclasses.dataclass(frozen=True)
class ToolCallsReply:
    """An assistant message calling tools. Arguments given as a str are sent verbatim (malformed JSON)."""

    calls: Sequence[tuple[str, dict[str, Any] | str]]
    content: str = ""


@dataclasses.dataclass(frozen=True)
class RefusalReply:
    """A refusal, either in the message's `refusal` field or as finish_reason "content_filter"."""

    text: str = "I can't help with that."
    via: Literal["refusal", "content_filter"] = "refusal"


@dataclasses.dataclass(frozen=True)
class MalformedReply:
    """HTTP 200 with a body that is not JSON."""

    body: str = "<html>502 Bad Gateway</html>"


@dataclasses.dataclass(frozen=True)
class ErrorReply:
    """An HTTP error status with an OpenAI-style error body."""

    status: int
    message: str = "scripted error"
    retry_after: float | None = None
    code: str | None = None


@dataclasses.dataclass(frozen=True)
class DelayReply:
    """Wait `seconds` (e.g. longer than the client's timeout), then send `then`."""

    seconds: float
    then: Reply = TextReply("too late")


Reply: TypeAlias = (
    str
    | TextReply
    | ToolCallsReply
    | RefusalReply
    | MalformedReply
    | ErrorReply
    | DelayReply
    | dict[str, Any]
    | Callable[[dict[str, Any]], "Reply"]
)
"""A str is a TextReply; a dict is sent verbatim as the JSON body; a callable gets the request JSON."""


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    """Parsed JSON body (None for GET)."""
    received_at: float
    """time.monotonic() when the request arrived."""


class ScriptedOpenAIServer:
    """Serves POST /v1/chat/completions from `script` and GET /v1/models on 127.0.0.1:<ephemeral>.

    `script` is a list of replies, one per chat request, in order; or one callable that answers every
    request. A request past the end of the list gets HTTP 400 "script exhausted", so a test that sends
    more than it planned fails loudly.
    """

    def __init__(
        self,
        script: Sequence[Reply] | Callable[[dict[str, Any]], Reply],
        *,
        models: Sequence[str] = ("scripted",),
    ) -> None:
        self._script = script if callable(script) else list(script)
        self._models = list(models)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._next = 0
        self._ids = itertools.count(1)
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        handler = type("_Handler", (_Handler,), {"owner": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running; use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests received, in arrival order."""
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    # serving ---------------------------------------------------------------------------------------

    def _take_reply(self, request: dict[str, Any]) -> Reply:
        if callable(self._script):
            return self._script
        with self._lock:
            if self._next >= len(self._script):
                return ErrorReply(400, f"scripted server: script exhausted after {len(self._script)} replies")
            self._next += 1
            return self._script[self._next - 1]

    def _respond(self, handler: _Handler, request: dict[str, Any], reply: Reply) -> None:
        if isinstance(reply, DelayReply):
            if self._stop.wait(reply.seconds):
                return
            return self._respond(handler, request, reply.then)
        if callable(reply):
            return self._respond(handler, request, reply(request))
        if isinstance(reply, MalformedReply):
            return handler.send(200, reply.body.encode())
        if isinstance(reply, ErrorReply):
            error = {"message": reply.message, "type": "scripted_error", "code": reply.code}
            headers = {} if reply.retry_after is None else {"retry-after": str(reply.retry_after)}
            return handler.send(reply.status, json.dumps({"error": error}).encode(), headers)
        body = reply if isinstance(reply, dict) else self._completion(request, reply)
        handler.send(200, json.dumps(body).encode())

    def _completion(self, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        if isinstance(reply, str):
            reply = TextReply(reply)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in request.get("messages", []))
        completion_tokens: int | None = None
        if isinstance(reply, TextReply):
            message["content"] = reply.content
            finish = reply.finish_reason
            prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_tokens
            completion_tokens = reply.completion_tokens
            produced = reply.content
        elif isinstance(reply, ToolCallsReply):
            message["content"] = reply.content or None
            message["tool_calls"] = [
                {
                    "id": f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
                }
                for name, args in reply.calls
            ]
            finish = "tool_calls"
            produced = reply.content + " " + " ".join(c["function"]["arguments"] for c in message["tool_calls"])
        elif isinstance(reply, RefusalReply):
            if reply.via == "refusal":
                message["refusal"] = reply.text
                finish = "stop"
            else:
                message["content"] = ""
                finish = "content_filter"
            produced = reply.text
        else:
            raise TypeError(f"not a scripted reply: {reply!r}")
        if completion_tokens is None:
            completion_tokens = len(produced.split())
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", self._models[0]),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handle(self, handler: _Handler, method: str) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0)) if method == "POST" else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        record = RecordedRequest(method, handler.path, dict(handler.headers), body, time.monotonic())
        with self._lock:
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            path = handler.path.split("?", 1)[0].rstrip("/")
            if method == "GET" and path == "/v1/models":
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in self._models]
                handler.send(200, json.dumps({"object": "list", "data": data}).encode())
            elif method == "POST" and path == "/v1/chat/completions":
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    self._respond(handler, {}, ErrorReply(400, "request body needs a 'messages' list"))
                else:
                    self._respond(handler, body, self._take_reply(body))
            else:
                self._respond(handler, {}, ErrorReply(404, f"no route {method} {path}"))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. its timeout fired during a DelayReply)
        finally:
            with self._lock:
                self.in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers, so connection pooling is exercised
    timeout = 30  # idle keep-alive connections do not hold a thread forever
    owner: ScriptedOpenAIServer

    def do_GET(self) -> None:
        self.owner._handle(self, "GET")

    def do_POST(self) -> None:
        self.owner._handle(self, "POST")

    def send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging: tests read `requests` instead."""
