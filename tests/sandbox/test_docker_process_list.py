"""The engine's process list (podman's libpod top endpoint, read before verification to find agent
processes), over real HTTP from a server that answers like podman: an answer that is not JSON (podman
sent an empty one on a loaded machine) is asked for again, and three in a row fail the check with a
one-line SandboxError, never a JSON error escaping the attempt."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import pytest

from autoenvscaling.errors import SandboxError
from autoenvscaling.sandbox import docker_verify

docker = pytest.importorskip("docker")

TABLE = {"Titles": ["PID", "PPID"], "Processes": [["1", "0"], ["7", "1"]]}


@pytest.fixture
def engine() -> Iterator[tuple[Any, list[str], list[str]]]:
    """A server answering the top endpoint with the queued bodies, then with TABLE; the paths it served."""
    bodies: list[str] = []
    served: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server API
            served.append(self.path)
            data = (bodies.pop(0) if bodies else json.dumps(TABLE)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api = docker.APIClient(base_url=f"tcp://127.0.0.1:{server.server_address[1]}", version="1.41")
    try:
        yield api, bodies, served
    finally:
        api.close()
        server.shutdown()
        server.server_close()


def _sandbox(api: Any) -> Any:
    """What the process list reads of a sandbox: its engine client, its backend's call, its container."""
    async def call(fn: Callable[..., Any], *args: Any, what: str = "", **kwargs: Any) -> Any:
        return await asyncio.to_thread(fn, *args, **kwargs)

    return SimpleNamespace(backend=SimpleNamespace(client=SimpleNamespace(api=api), call=call), container_id="c0ffee")


def test_an_empty_answer_is_asked_for_again(engine: tuple[Any, list[str], list[str]]) -> None:
    api, bodies, served = engine
    bodies.append("")
    with pytest.raises(ValueError):  # positive control: the body itself is no JSON
        api._get(api.base_url + "/v4.0.0/libpod/containers/c0ffee/top").json()
    served.clear()
    bodies.append("")
    table = asyncio.run(docker_verify._process_table(_sandbox(api)))
    assert table == {"1": "0", "7": "1"}
    assert len(served) == 2 and all(p.startswith("/v4.0.0/libpod/containers/c0ffee/top?ps_args=pid") for p in served)


def test_answers_that_are_never_json_fail_the_check_in_one_line(engine: tuple[Any, list[str], list[str]]) -> None:
    api, bodies, served = engine
    bodies.extend(["", "", "<html>"])
    with pytest.raises(SandboxError) as info:
        asyncio.run(docker_verify._process_table(_sandbox(api)))
    assert str(info.value).startswith("the engine's process list was not JSON 3 times in a row: '<html>'")
    assert "doctor" in (info.value.hint or "") and len(served) == docker_verify.TOP_TRIES
