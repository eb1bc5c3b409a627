"""An exec's output that the engine sends in the same packet as the response headers (podman does,
for a short command on a loaded machine) reaches the result. The engine here is a raw unix-socket
server answering exec start with the headers and the output in one write; the docker SDK's own
reader loses that output (the positive control), ours keeps it."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from autoenvscaling.sandbox.docker_sandbox import _exec_frames

docker = pytest.importorskip("docker")


def _frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data


class _OnePacketEngine:
    """Answers every request with the headers of a hijacked exec stream and two frames, in one send."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                head, _, body = request.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                while len(body) < length:
                    body += conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n"
                             + _frame(1, b"4\n") + _frame(2, b"warning\n"))

    def close(self) -> None:
        self.sock.close()


def test_output_sent_with_the_response_headers_is_kept(tmp_path: Path) -> None:
    engine = _OnePacketEngine(tmp_path / "engine.sock")
    try:
        api = docker.APIClient(base_url=f"unix://{tmp_path / 'engine.sock'}", version="1.41")
        frames = list(_exec_frames(api, "exec-id"))
        assert b"".join(o for o, _ in frames if o) == b"4\n"
        assert b"".join(e for _, e in frames if e) == b"warning\n"
        # Positive control: the SDK's reader skips the bytes that came with the headers.
        sdk = list(api.exec_start("exec-id", stream=True, demux=True))
        assert b"".join(o for o, _ in sdk if o) == b""
    finally:
        engine.close()
