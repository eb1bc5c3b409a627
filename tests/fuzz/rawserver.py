"""A loopback HTTP server that answers every request with the raw bytes of the case under test:
any status line, headers and body, a body that never ends (an endless event stream), or headers and
then silence. The real ``openai`` client talks to it over real sockets, so what it makes of broken
answers is what users get. (``autoenvscaling.llm.scripted_server`` speaks only well-formed JSON.)"""

from __future__ import annotations

import select
import socket
import socketserver
import threading
from dataclasses import dataclass
from types import TracebackType


@dataclass(frozen=True)
class RawReply:
    """``head`` (status line and headers, CRLF-separated, without the blank line), ``body``; then
    ``endless`` repeated until the client hangs up, or (``hang``) nothing until it does."""

    head: bytes
    body: bytes = b""
    endless: bytes = b""
    hang: bool = False


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        length = 0
        self.rfile.readline()  # the request line
        while (line := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip() or 0)
        self.rfile.read(length)
        reply, stop = self.server.reply, self.server.stop
        try:
            self.wfile.write(reply.head + b"\r\n\r\n" + reply.body)
            self.wfile.flush()
            while reply.endless and not stop.is_set():
                self.wfile.write(reply.endless)
                self.wfile.flush()
            while reply.hang and not stop.is_set() and not self._hung_up():
                pass
        except OSError:  # the client gave up (its timeout fired): that is the point
            pass

    def _hung_up(self) -> bool:
        readable, _, _ = select.select([self.connection], [], [], 0.05)
        if not readable:
            return False
        try:
            return not self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            return True


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    reply: RawReply
    stop: threading.Event


class RawServer:
    """``with RawServer() as srv: srv.reply = RawReply(...)``; ``srv.base_url`` is the /v1 root."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.reply = RawReply(b"HTTP/1.1 204 No Content")
        self._server.stop = threading.Event()
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def reply(self) -> RawReply:
        return self._server.reply

    @reply.setter
    def reply(self, value: RawReply) -> None:
        self._server.reply = value

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._server.stop.set()
        self._server.shutdown()
        self._server.server_close()
