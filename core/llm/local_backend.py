"""A backend that runs a Hugging Face causal LM in this process with transformers.

It makes the platform usable with no server and no network (the embedded SmolLM2), and gives the
trainer and tests a real model to talk to. torch and transformers load on first use.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Unpack

from autoenvscaling.errors import MissingPrerequisite
from autoenvscaling.llm.base import CHAT_DEFAULTS, ChatMessage, ChatOptions, ChatResponse, LLMBackend, ToolSpec, Usage
from autoenvscaling.llm.chat_template import ChatTemplate, eos_ids
from autoenvscaling.llm.embedded import EMBEDDED_MODELS, embedded_model_path, package_files, resolve_model_source
from autoenvscaling.llm.errors import LLMConfigError, LLMRequestError
from autoenvscaling.llm.tool_text import parse_tool_calls

__all__ = ["EMBEDDED", "TransformersBackend", "embedded_model_path"]

EMBEDDED = "embedded"
"""Pass as model_path_or_name to run the embedded SmolLM2-135M-Instruct."""


class TransformersBackend(LLMBackend):
    """Greedy decoding at temperature 0, seeded sampling above it; one request at a time per model.

    model_path_or_name: a local checkpoint directory, a name already in the Hugging Face cache,
    or "embedded". max_new_tokens, when set, caps every request's max_tokens. chat_template
    replaces the tokenizer's own (e.g. a template that can render tools).
    """

    name = "transformers"
    runs_here = True

    @classmethod
    def from_target(cls, model: str | None, base_url: str | None) -> TransformersBackend:
        if base_url:
            raise LLMConfigError(f"the transformers LLM backend runs the model here; it takes no base URL ({base_url})",
                                 hint="drop the base URL, or use --llm-backend openai for a served model")
        return cls(model or EMBEDDED)

    @classmethod
    def check_target(cls, model: str | None, base_url: str | None) -> None:
        """A model that cannot load fails here, once, not in every worker: an embedded model whose
        packages are missing, or a name that is neither a local checkpoint nor in the HF cache."""
        cls.from_target(model, base_url)
        source = model or EMBEDDED
        if source in EMBEDDED_MODELS:
            package_files(EMBEDDED_MODELS[source])
        elif not (Path(source).expanduser() / "config.json").is_file() and not _in_hf_cache(source):
            raise LLMConfigError(f"no local model {source!r}: not a checkpoint directory (no config.json there) "
                                 "and not in the Hugging Face cache",
                                 hint=f"pass a checkpoint directory or an embedded model ({', '.join(EMBEDDED_MODELS)})")

    def __init__(
        self,
        model_path_or_name: str | Path = EMBEDDED,
        *,
        device: str = "cpu",
        dtype: str | Any | None = None,
        max_new_tokens: int | None = None,
        chat_template: str | None = None,
    ) -> None:
        source = str(model_path_or_name)
        super().__init__(EMBEDDED_MODELS[source].name if source in EMBEDDED_MODELS else Path(source).name or source)
        self.source = source
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.chat_template = chat_template
        self._model: Any = None
        self._tokenizer: Any = None
        self._template: ChatTemplate | None = None
        self._calls = 0
        # The thread lock makes generation exclusive even across event loops and threads; the
        # per-loop asyncio lock keeps waiting requests off the thread pool while they wait.
        self._thread_lock = threading.Lock()
        self._loop_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    # loading ---------------------------------------------------------------------------------------

    def load(self) -> None:
        """Load the model now (chat does it on first use). Idempotent."""
        with self._thread_lock:
            self._load_unlocked()

    def _load_unlocked(self) -> None:
        if self._model is not None:
            return
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:
            raise MissingPrerequisite(
                f"the transformers backend needs torch and transformers ({e.name} is missing)",
                hint="pip install 'autoenvscaling[local]' (install torch first, from its CPU index on CPU machines)",
            ) from None
        path = resolve_model_source(self.source)
        dtype = getattr(torch, self.dtype) if isinstance(self.dtype, str) else self.dtype
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
            model: Any = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)
        except OSError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise LLMConfigError(
                f"cannot load model {self.source!r}: {first}",
                hint="pass a local checkpoint directory, or 'embedded' for the bundled SmolLM2 (no model hub here)",
            ) from None
        if self.chat_template is not None:
            tokenizer.chat_template = self.chat_template
        if not tokenizer.chat_template:
            raise LLMConfigError(f"model {self.source!r} has no chat template", hint="pass chat_template=")
        model.to(self.device)
        model.eval()
        self._tokenizer, self._model = tokenizer, model
        self._template = ChatTemplate(tokenizer)

    async def aclose(self) -> None:
        """Drop the weights; a later chat loads them again."""
        with self._thread_lock:
            self._model = self._tokenizer = self._template = None

    # chatting --------------------------------------------------------------------------------------

    def render_prompt(self, messages: list[ChatMessage], tools: list[ToolSpec] | None = None) -> str:
        """The exact text the model sees, after the chat template (loads the model if needed)."""
        with self._thread_lock:
            self._load_unlocked()
            return self._render(messages, tools)

    def _render(self, messages: list[ChatMessage], tools: list[ToolSpec] | None) -> str:
        assert self._template is not None
        return self._template.render(messages, tools)

    async def chat(self, messages: list[ChatMessage], **options: Unpack[ChatOptions]) -> ChatResponse:
        started = time.monotonic()
        given: ChatOptions = {**CHAT_DEFAULTS, **options}
        tools, max_tokens = given["tools"], given["max_tokens"]
        limit = min(max_tokens, self.max_new_tokens) if self.max_new_tokens else max_tokens
        lock = self._loop_locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with lock:
            text, prompt_tokens, new_tokens, finish = await asyncio.to_thread(
                self._generate, messages, tools, given["temperature"], limit, given["seed"]
            )
        self._calls += 1
        content, calls = parse_tool_calls(text, id_prefix=f"call_{self._calls}") if tools else (text, ())
        response = ChatResponse(
            message=ChatMessage(role="assistant", content=content, tool_calls=calls),
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=new_tokens),
            model=self.model,
            finish_reason="tool_calls" if calls else finish,
            seconds=time.monotonic() - started,
            cost_usd=0.0,
        )
        self.usage.add(response)
        return response

    def _generate(
        self,
        messages: list[ChatMessage],
        tools: list[ToolSpec] | None,
        temperature: float,
        max_new_tokens: int,
        seed: int | None,
    ) -> tuple[str, int, int, str]:
        import torch
        from transformers import GenerationConfig

        with self._thread_lock:
            self._load_unlocked()
            model, tokenizer = self._model, self._tokenizer
            prompt = self._render(messages, tools)
            inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False).to(self.device)
            prompt_tokens = int(inputs["input_ids"].shape[1])
            window = getattr(model.config, "max_position_embeddings", None)
            if window and prompt_tokens + max_new_tokens > window:
                raise LLMRequestError(
                    f"prompt of {prompt_tokens} tokens plus {max_new_tokens} new ones exceeds the "
                    f"{window}-token context of {self.model}"
                )
            eos = eos_ids(model, tokenizer)
            sample = temperature > 0
            config = GenerationConfig(
                max_new_tokens=max_new_tokens,
                do_sample=sample,
                temperature=temperature if sample else None,
                top_k=None,
                top_p=None,
                eos_token_id=eos,
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0],
            )
            if seed is not None:
                torch.manual_seed(seed)
            with torch.inference_mode():
                output = model.generate(**inputs, generation_config=config)
        new = output[0, prompt_tokens:].tolist()
        stopped = bool(new) and new[-1] in eos
        text = tokenizer.decode(new, skip_special_tokens=True)
        return text, prompt_tokens, len(new), "stop" if stopped or len(new) < max_new_tokens else "length"


def _in_hf_cache(name: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    try:
        return isinstance(try_to_load_from_cache(name, "config.json"), str)
    except ValueError:  # not a valid repository id
        return False
