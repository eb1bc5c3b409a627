"""The policy as the solver's LLM: generation from the model being trained, recorded token by token.

GRPO trains on exactly the tokens the model produced, in the context it produced them in. A
multi-turn rollout is one token stream: the rendered prompt, then the model's first reply, then the
environment's answer (a tool result wrapped in the chat template's turn markers), then the next
reply, and so on. ``PolicyLLM`` is an ``LLMBackend`` the ordinary ``SolverAgent`` talks to, so the
rollout runs the solver's own loop and tools; behind the interface it keeps that stream: each reply
is generated conditioned on the stream so far (never on a fresh rendering of the messages), and
each environment turn is appended as the text by which the chat template extends the conversation.
The model's tokens are marked 1 in ``env_mask`` (trained on), the environment's 0 (context only).

Generators: ``TransformersGenerator`` samples from the trainer's model with ``model.generate``
(CPU or GPU); ``VLLMGenerator`` uses TRL's vLLM integration when the trainer runs with vLLM.
Both sample at the trainer's temperature (the loss recomputes log-probabilities at that
temperature), whatever temperature the agent asks for.
"""

from __future__ import annotations

import abc
import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from autoenvscaling.llm.base import ChatMessage, ChatResponse, LLMBackend, ToolSpec, Usage
from autoenvscaling.llm.chat_template import ChatTemplate
from autoenvscaling.llm.errors import LLMRequestError
from autoenvscaling.llm.tool_text import parse_tool_calls


@dataclass(frozen=True)
class Sampling:
    """How replies are sampled (TRL's GRPOConfig fields of the same names)."""

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0


@dataclass(frozen=True)
class Generated:
    """One reply: its token ids, the log-probability of each under the sampling distribution, and
    whether it ended with an end-of-turn token (False: cut by the token limit)."""

    ids: list[int]
    logprobs: list[float]
    ended: bool


class Generator(abc.ABC):
    """Samples one reply for a token prefix. Implementations are thread-safe; calls may be made
    from several rollouts' threads at once."""

    def __init__(self, tokenizer: Any, eos_ids: list[int], sampling: Sampling, context: int | None) -> None:
        self.tokenizer = tokenizer
        self.eos_ids = eos_ids
        self.sampling = sampling
        self.context = context
        self.tokens = 0
        self.seconds = 0.0
        self._lock = threading.Lock()

    def generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        with self._lock:
            started = time.monotonic()
            out = self._generate(prefix, max_new_tokens=max_new_tokens, seed=seed)
            self.seconds += time.monotonic() - started
            self.tokens += len(out.ids)
        return out

    @abc.abstractmethod
    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated: ...

    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


class TransformersGenerator(Generator):
    """``model.generate`` on the model being trained. Each call seeds its own random stream (forked
    from the global one, which stays untouched), so a reply depends only on its prefix and seed:
    rollouts give the same tokens in any order, and a resumed run repeats them."""

    def __init__(self, model: Any, tokenizer: Any, eos_ids: list[int], sampling: Sampling) -> None:
        super().__init__(tokenizer, eos_ids, sampling, getattr(model.config, "max_position_embeddings", None))
        self.model = model

    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        import torch
        from transformers import GenerationConfig

        device = self.model.device
        sample = self.sampling.temperature > 0
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eos_ids[0]
        config = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=sample,  # type: ignore[no-untyped-call]
                                  temperature=self.sampling.temperature if sample else None,
                                  top_p=self.sampling.top_p if sample else None,
                                  top_k=(self.sampling.top_k or None) if sample else None,
                                  eos_token_id=self.eos_ids, pad_token_id=pad,
                                  output_scores=True, return_dict_in_generate=True)
        ids = torch.tensor([prefix], device=device)
        devices = [device.index or 0] if device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices), torch.no_grad():
            torch.manual_seed(seed)
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=config)
        new = out.sequences[0, len(prefix):].tolist()
        logprobs = [float(torch.log_softmax(score[0].float(), dim=-1)[token]) for score, token in zip(out.scores, new)]
        return Generated(ids=new, logprobs=logprobs, ended=bool(new) and new[-1] in self.eos_ids)


class VLLMGenerator(Generator):
    """TRL's vLLM integration (``trainer.vllm_generation``, colocated or served), which TRL keeps in
    sync with the training weights before each rollout. vLLM takes no per-call seed, so rollouts
    with vLLM are not repeatable."""

    def __init__(self, trainer: Any, eos_ids: list[int], sampling: Sampling) -> None:
        super().__init__(trainer.processing_class, eos_ids, sampling, None)
        self.vllm = trainer.vllm_generation

    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        limit = self.vllm.max_completion_length
        self.vllm.max_completion_length = max_new_tokens  # per turn, not per rollout
        try:
            _, completions, logprobs, _ = self.vllm.generate([prefix], None, 1)
        finally:
            self.vllm.max_completion_length = limit
        new = list(completions[0])
        flat = [float(step[0]) if step and step[0] is not None else 0.0 for step in logprobs[0]]
        return Generated(ids=new, logprobs=flat, ended=bool(new) and new[-1] in self.eos_ids)


@dataclass
class TokenStream:
    """What a rollout's conversation was, as the trainer sees it."""

    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    replies: int = 0
    rerendered: int = 0  # environment turns the template could not append verbatim (see PolicyLLM)

    def add(self, ids: list[int], *, model: bool, logprobs: list[float] | None = None) -> None:
        self.completion_ids += ids
        self.env_mask += [1 if model else 0] * len(ids)
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)


class PolicyLLM(LLMBackend):
    """One rollout's model: answers the agent from the policy and records the token stream.

    A fresh instance per rollout (the stream is the rollout's). ``max_tokens_per_turn`` caps each
    reply whatever the agent asks for."""

    name = "policy"

    def __init__(self, generator: Generator, template: ChatTemplate, *, model: str = "policy",
                 max_tokens_per_turn: int | None = None) -> None:
        super().__init__(model)
        self.generator = generator
        self.template = template
        self.max_tokens_per_turn = max_tokens_per_turn
        self.stream = TokenStream()
        self._text = ""  # the stream as text, to find what each new rendering adds
        self._ended = True

    @property
    def started(self) -> bool:
        return bool(self.stream.prompt_ids)

    def _tokenize(self, text: str) -> list[int]:
        return list(self.generator.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _continuation(self, messages: list[ChatMessage], tools: list[ToolSpec] | None, text: str) -> str:
        """The text the environment adds after the model's last reply. Normally the new rendering
        extends the stream verbatim. A template that renders the reply differently from how it was
        sampled (tool calls re-serialised, whitespace trimmed) is continued from the end of its own
        rendering of that reply, closing the reply first if the token limit cut it."""
        if text.startswith(self._text):
            return text[len(self._text):]
        last = max((i for i, m in enumerate(messages) if m.role == "assistant"), default=None)
        through = self.template.render(messages[:last + 1], tools, add_generation_prompt=False) if last is not None else ""
        if last is None or not text.startswith(through):
            raise LLMRequestError("the chat template rewrites earlier turns of the conversation, so a rollout "
                                  "cannot be recorded as one token stream")
        self.stream.rerendered += 1
        close = "" if self._ended else str(self.generator.tokenizer.decode([self.generator.eos_ids[0]]))
        return close + text[len(through):]

    async def chat(self, messages: list[ChatMessage], *, tools: list[ToolSpec] | None = None,
                   temperature: float = 0.0, max_tokens: int = 512, seed: int | None = None) -> ChatResponse:
        started = time.monotonic()
        text = self.template.render(messages, tools)
        if not self.started:
            self.stream.prompt_ids = self._tokenize(text)
            self._text = text
        else:
            added = self._continuation(messages, tools, text)
            self.stream.add(self._tokenize(added), model=False)
            self._text += added
        limit = min(max_tokens, self.max_tokens_per_turn or max_tokens)
        prefix = self.stream.prompt_ids + self.stream.completion_ids
        window = self.generator.context
        if window and len(prefix) + limit > window:
            raise LLMRequestError(f"the rollout of {len(prefix)} tokens plus {limit} new ones exceeds the "
                                  f"{window}-token context")
        out = await asyncio.to_thread(self.generator.generate, prefix, max_new_tokens=limit, seed=seed or 0)
        self.stream.add(out.ids, model=True, logprobs=out.logprobs)
        self.stream.replies += 1
        self._ended = out.ended
        tokenizer = self.generator.tokenizer
        self._text += str(tokenizer.decode(out.ids, skip_special_tokens=False))
        content = str(tokenizer.decode(out.ids, skip_special_tokens=True))
        calls: tuple[Any, ...] = ()
        if tools:
            content, calls = parse_tool_calls(content, id_prefix=f"call_{self.stream.replies}")
        response = ChatResponse(
            message=ChatMessage(role="assistant", content=content, tool_calls=calls),
            usage=Usage(prompt_tokens=len(prefix), completion_tokens=len(out.ids)),
            model=self.model, finish_reason="tool_calls" if calls else ("stop" if out.ended else "length"),
            seconds=time.monotonic() - started, cost_usd=0.0)
        self.usage.add(response)
        return response
