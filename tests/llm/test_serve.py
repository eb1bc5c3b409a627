"""The local model server: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving the
embedded SmolLM2 GGUF, talked to by the real openai client; its lifetime and its errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agents.solver import LOCAL_PROFILE, SERVED_PROFILE, solver_profile
from autoenvscaling.errors import ConfigError, MissingPrerequisite
from autoenvscaling.executors.jobs import LLMSpec
from autoenvscaling.llm.base import ChatMessage
from autoenvscaling.llm.errors import LLMConfigError
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.serve import (LlamaServerBackend, LocalServer, available, context_of, converter, gguf_path,
                                      servable)
from autoenvscaling.plugins import create_host

pytestmark = pytest.mark.skipif(not available() and not os.environ.get("AUTOENVSCALING_REQUIRE_LLAMA_SERVER"),
                                reason="llama-cpp-python[server] is not installed (scripts/bootstrap.sh builds it)")


needs_converter = pytest.mark.skipif(converter() is None and not os.environ.get("AUTOENVSCALING_REQUIRE_LLAMA_SERVER"),
                                     reason="llama.cpp's converter is not unpacked (scripts/bootstrap.sh does)")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_dead(pid: int, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(pid)


def test_the_embedded_model_is_served_and_answers_the_openai_client(tmp_path: Path) -> None:
    with LocalServer("embedded", log=tmp_path / "server.log") as server:
        assert server.alias == "smollm2-135m-instruct" and server.base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{server.base_url}/models") as answer:
            assert [m["id"] for m in json.loads(answer.read())["data"]] == [server.alias]
        llm = create_host().llm_backends.get("llama-server").from_target(server.alias, server.base_url)
        assert isinstance(llm, LlamaServerBackend) and solver_profile(llm) == LOCAL_PROFILE

        async def ask() -> tuple[str, int]:
            try:
                reply = await llm.chat([ChatMessage.user("Say hello.")], max_tokens=12, temperature=0)
                return reply.message.content, reply.usage.completion_tokens
            finally:
                await llm.aclose()

        text, tokens = asyncio.run(ask())
        assert text.strip() and 0 < tokens <= 12 and llm.usage.calls == 1
        pid = server.process.pid  # type: ignore[union-attr]
    assert server.process is None and _wait_dead(pid)
    # The control: a plain OpenAI backend is a served model, which gets the served profile.
    assert solver_profile(OpenAIBackend("http://127.0.0.1:9/v1", None, "m")) == SERVED_PROFILE


def test_the_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """SIGKILL of the parent (no `with` exit runs) still stops the server: no orphan holds the model."""
    script = ("import sys, time; from autoenvscaling.llm.serve import LocalServer; "
              "s = LocalServer('embedded').start(); print(s.process.pid, flush=True); time.sleep(600)")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        server_pid = int(parent.stdout.readline())  # type: ignore[union-attr]
        assert _alive(server_pid)
        parent.kill()
        parent.wait()
        assert _wait_dead(server_pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            parent.kill()


def test_what_cannot_be_served_fails_in_one_line(tmp_path: Path) -> None:
    assert servable("embedded") and servable("embedded-qwen") and not servable("gpt-4o")
    # Each server gets its model's trained context: a prompt-feedback revision of a professional
    # task (a 4,600-token prompt, then the first answer, then the feedback) needs more than 8,192.
    assert (context_of("embedded-qwen"), context_of("embedded"), context_of("x.gguf")) == (32768, 8192, 8192)
    with pytest.raises(ConfigError, match="not an embedded model, a GGUF file or a checkpoint") as missing:
        gguf_path("no-such-model")
    assert "embedded" in (missing.value.hint or "")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a model" * 100)
    with pytest.raises(ConfigError, match="exited with status") as broken:
        LocalServer(str(junk), log=tmp_path / "junk.log").start()
    assert str(tmp_path / "junk.log") in (broken.value.hint or "")
    with pytest.raises(LLMConfigError, match="the llama-server LLM backend needs the server's base URL"):
        LlamaServerBackend.check_target("m", None)


def test_run_serves_local_models_once_per_model() -> None:
    """What `run`/`generate` do with their LLM specs: a local model named without a backend gets a
    server (one for both roles), a served model or an explicit transformers backend stays as given."""
    from autoenvscaling.cli.flywheel_cmd import _Served

    with contextlib.ExitStack() as servers:
        served = _Served(servers)
        proposer = served(LLMSpec(model="embedded"))
        solver = served(LLMSpec(model="embedded"))
        assert proposer == solver and len(served.running) == 1
        assert (proposer.backend, proposer.model) == ("llama-server", "smollm2-135m-instruct")
        assert proposer.base_url == served.running["embedded"].base_url
        kept = [LLMSpec(model="embedded", backend="transformers"), LLMSpec(model="m", base_url="http://h/v1"),
                LLMSpec(model="/no/such/checkpoint")]
        assert [served(s) for s in kept] == kept and len(served.running) == 1
        pid = served.running["embedded"].process.pid  # type: ignore[union-attr]
    assert _wait_dead(pid)


def _sharp_tiny_model(path: Path, seed: int) -> Path:
    """The kit's tiny model with weights of std 0.3 instead of 0.02, so that greedy decoding writes
    varied tokens with clear margins (the stock weights answer a newline after a newline)."""
    import torch
    from transformers import AutoModelForCausalLM

    from autoenvscaling.llm.tiny import build_tiny_model

    build_tiny_model(path, seed=seed)
    model = AutoModelForCausalLM.from_pretrained(path)
    draw = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, weights in model.named_parameters():
            if "norm" not in name:
                weights.copy_(torch.randn(weights.shape, generator=draw) * 0.3)
    model.save_pretrained(path)
    return path


def _greedy(llm: Any) -> str:
    async def ask() -> str:
        try:
            return (await llm.chat([ChatMessage.user("Say hello.")], max_tokens=16, temperature=0)).message.content
        finally:
            await llm.aclose()

    return asyncio.run(ask())


@needs_converter
def test_a_checkpoint_is_served_with_its_own_weights_and_follows_them(tmp_path: Path) -> None:
    """A transformers checkpoint (what training writes) is converted to GGUF by llama.cpp's converter
    and served: its greedy answer is the one transformers decodes from the same weights. When the
    weights are rewritten (the next training), the checkpoint is converted again and the server
    answers as the new weights do, not as the old ones."""
    host = create_host()
    checkpoint = _sharp_tiny_model(tmp_path / "round-0" / "model", seed=1)
    assert servable(str(checkpoint)) and not servable(str(tmp_path))
    assert context_of(str(checkpoint)) == 2048  # the tiny model's max_position_embeddings

    def both() -> tuple[str, str]:
        local = _greedy(host.llm_backends.get("transformers").from_target(str(checkpoint), None))
        with LocalServer(str(checkpoint), log=tmp_path / "server.log") as server:
            assert server.alias == "round-0-model"
            return local, _greedy(host.llm_backends.get("llama-server").from_target(server.alias, server.base_url))

    local, served = both()
    assert served == local and len(set(served.split())) > 3  # the same words, and not a degenerate answer
    converted = (checkpoint / "model.gguf").stat().st_mtime_ns
    _sharp_tiny_model(checkpoint, seed=2)
    new_local, new_served = both()
    assert (checkpoint / "model.gguf").stat().st_mtime_ns > converted
    assert new_served == new_local and new_served != served  # the server follows the new weights


def test_a_checkpoint_that_cannot_be_converted_fails_in_one_line(tmp_path: Path, monkeypatch: Any) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text('{"architectures": ["NoSuchModelForCausalLM"], "torch_dtype": "float32"}')
    if converter() is not None:
        with pytest.raises(ConfigError, match="could not convert the checkpoint") as failed:
            gguf_path(str(broken))
        assert "--llm-backend transformers" in (failed.value.hint or "") and not (broken / "model.gguf").exists()
    monkeypatch.setenv("AUTOENVSCALING_GGUF_CONVERTER", str(tmp_path / "nowhere.py"))
    assert not servable(str(broken))  # run keeps such a model on transformers
    with pytest.raises(MissingPrerequisite, match="converter is not installed") as missing:
        gguf_path(str(broken))
    assert "scripts/bootstrap.sh" in (missing.value.hint or "")


def test_serve_command_prints_its_url_and_stops_on_sigterm(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("autoenvscaling")
    proc = subprocess.Popen([str(cli), "serve", "embedded", "--threads", "1", "--log", str(tmp_path / "s.log")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("serving smollm2-135m-instruct at http://127.0.0.1:"), first
        url = first.split(" at ")[1].split()[0]
        with urllib.request.urlopen(f"{url}/models") as answer:
            assert json.loads(answer.read())["data"][0]["id"] == "smollm2-135m-instruct"
        assert "--base-url" in proc.stdout.readline()  # type: ignore[union-attr]
        port = url.rsplit(":", 1)[1].split("/")[0]
        found = subprocess.run(["pgrep", "-f", f"llama_cpp.server .*--port {port} "], capture_output=True, text=True)
        server_pids = [int(p) for p in found.stdout.split()]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        assert server_pids and all(_wait_dead(p) for p in server_pids)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_streamed_answers_are_accounted_as_plain_ones(tmp_path: Path) -> None:
    """The server streams without usage: the tokens are counted from the stream and the prompt's from
    a one-token probe, and they equal what the same request answered in one piece reports."""
    with LocalServer("embedded", log=tmp_path / "server.log") as server:
        streamed = LlamaServerBackend(server.base_url, None, server.alias)
        plain = OpenAIBackend(server.base_url, None, server.alias)
        assert streamed.stream and not plain.stream
        prompt = [ChatMessage.system("You are terse."), ChatMessage.user("Name three colours.")]

        async def ask(llm: OpenAIBackend) -> object:
            try:
                return await llm.chat(prompt, max_tokens=24, temperature=0, seed=1)
            finally:
                await llm.aclose()

        a, b = asyncio.run(ask(streamed)), asyncio.run(ask(plain))
    assert a.message.content == b.message.content and a.message.content  # type: ignore[attr-defined]
    assert a.usage == b.usage and a.usage.prompt_tokens > 10  # type: ignore[attr-defined]


def test_a_call_in_flight_shows_its_tokens_from_another_process(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from autoenvscaling.llm.live import LIVE_DIR_ENV, calls_in_flight, describe

    live = tmp_path / "live"
    monkeypatch.setenv(LIVE_DIR_ENV, str(live))
    seen: list[dict] = []
    with LocalServer("embedded", log=tmp_path / "server.log") as server:
        llm = LlamaServerBackend(server.base_url, None, server.alias)

        async def ask_and_watch() -> None:
            call = asyncio.create_task(llm.chat([ChatMessage.user("Count from 1 to 200.")], max_tokens=200,
                                                temperature=0))
            while not call.done():
                seen.extend(c for c in calls_in_flight(live) if c["tokens"])
                await asyncio.sleep(0.2)
            await call
            await llm.aclose()

        asyncio.run(ask_and_watch())
    assert seen and seen[-1]["model"] == server.alias and seen[-1]["pid"] == os.getpid()
    assert "tokens" in describe(seen[-1:]) and " s" in describe(seen[-1:])
    assert calls_in_flight(live) == [] and not list(live.glob("*.json"))  # gone when the call ended
    # A file whose process is gone is not a call in flight.
    (live / "1-0.json").write_text(json.dumps({"model": "m", "pid": 2 ** 22 + 7, "started": time.time(), "tokens": 3}))
    assert calls_in_flight(live) == []


@needs_converter
@pytest.mark.slow  # three conversions and servers; the trainer's served-solver test retires a server in the fast set
def test_a_new_checkpoint_retires_the_server_of_the_older_one_of_its_training(tmp_path: Path) -> None:
    """What `run --train` serves: round 1's checkpoint replaces round 0's server (siblings under one
    training directory), while a model from elsewhere (the initial one, which a role may keep) stays."""
    from autoenvscaling.cli.flywheel_cmd import _Served
    from autoenvscaling.llm.tiny import build_tiny_model

    initial = build_tiny_model(tmp_path / "initial" / "model", seed=1)
    rounds = [build_tiny_model(tmp_path / "training" / f"round-{r}" / "model", seed=r) for r in (0, 1)]
    with contextlib.ExitStack() as servers:
        served = _Served(servers)
        served(LLMSpec(model=str(initial)))
        served(LLMSpec(model=str(rounds[0])))
        first = served.running[str(rounds[0])].process
        assert first is not None and list(served.running) == [str(initial), str(rounds[0])]
        newest = served(LLMSpec(model=str(rounds[1])))
        assert list(served.running) == [str(initial), str(rounds[1])] and newest.model == "round-1-model"
        assert _wait_dead(first.pid)  # round 0's server was stopped when round 1's started
