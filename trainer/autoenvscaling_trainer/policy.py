"""The policy as the solver's LLM: generation from the model being trained, recorded token by token.

GRPO trains on exactly the tokens the model produced, in the context it produced them in. A
multi-turn rollout is one token stream: the rendered prompt, then the model's first reply, then the
environment's answer (a tool result wrapped in the chat template's turn markers), then the next
reply, and so on. ``PolicyLLM`` is an ``LLMBackend`` the ordinary ``SolverAgent`` talks to, so the
rollout runs the solver's own loop and tools; behind the interface it keeps that stream: each reply
is generated conditioned on the stream so far (never on a fresh rendering of the messages), and
each environment turn is appended as the text by which the chat template extends the conversation.
The model's tokens are marked 1 in ``env_mask`` (trained on), the environment's 0 (context only).

Generators: ``TransformersGenerator`` samples from the trainer's model (CPU or GPU), batching the
replies of concurrent rollouts; ``VLLMGenerator`` uses TRL's vLLM integration when the trainer runs
with vLLM. Both sample at the trainer's temperature (the loss recomputes log-probabilities at that
temperature), whatever temperature the agent asks for.
"""

from __future__ import annotations

import abc
import asyncio
import inspect
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from autoenvscaling.api import (
    ChatMessage, ChatResponse, ChatTemplate, LLMBackend, LLMRequestError, ToolSpec, Usage, parse_tool_calls,
)


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
    """Samples one reply for a token prefix. ``generate`` is called from the rollouts' event loop;
    implementations run the model in a worker thread, one call at a time."""

    def __init__(self, tokenizer: Any, eos_ids: list[int], sampling: Sampling, context: int | None) -> None:
        self.tokenizer = tokenizer
        self.eos_ids = eos_ids
        self.sampling = sampling
        self.context = context
        self.tokens = 0
        self.seconds = 0.0
        self._lock = threading.Lock()

    def join(self) -> Participant:
        """A rollout that will ask for replies (batching generators wait for every participant)."""
        return Participant(self)

    def _left(self) -> None:
        """A participant left: nothing to do unless the generator batches."""

    async def generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        replies = await asyncio.to_thread(self._timed,
                                          lambda: [self._generate(prefix, max_new_tokens=max_new_tokens, seed=seed)])
        return replies[0]

    def _timed(self, generate: Callable[[], list[Generated]]) -> list[Generated]:
        """``generate()``'s replies, counted in the generator's tokens and seconds (one call at a time)."""
        with self._lock:
            started = time.monotonic()
            out = generate()
            self.seconds += time.monotonic() - started
            self.tokens += sum(len(g.ids) for g in out)
        return out

    @abc.abstractmethod
    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated: ...


class Participant:
    """A rollout's membership in a generator's batches, from before its sandbox starts until its
    agent is done. ``leave`` is idempotent."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator
        self.active = True

    def leave(self) -> None:
        if self.active:
            self.active = False
            self.generator._left()


@dataclass
class _Request:
    prefix: list[int]
    max_new_tokens: int
    seed: int
    future: asyncio.Future[Generated]


class TransformersGenerator(Generator):
    """Sampling from the model being trained (CPU or GPU), batched across rollouts.

    The rollouts of a step ``join`` before their sandboxes start; a batch runs when every rollout
    still in its agent loop is waiting for a reply, so which replies share a batch depends only on
    the rollouts themselves, never on timing. Rows are left-padded and decoded together with a KV
    cache; each row samples from its own random generator seeded by its request, so a reply depends
    only on its prefix, its seed and its batch: a step repeats exactly after a resume. A caller that
    did not join is served at once, alone."""

    def __init__(self, model: Any, tokenizer: Any, eos_ids: list[int], sampling: Sampling) -> None:
        super().__init__(tokenizer, eos_ids, sampling, getattr(model.config, "max_position_embeddings", None))
        self.model = model
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
        self._live = 0
        self._waiting: list[_Request] = []
        self._running = False
        self.batches: list[int] = []  # the size of every batch run, for the step's figures

    def join(self) -> Participant:
        self._live += 1
        return Participant(self)

    def _left(self) -> None:
        self._live -= 1
        self._flush()

    async def generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        future: asyncio.Future[Generated] = asyncio.get_running_loop().create_future()
        self._waiting.append(_Request(list(prefix), max_new_tokens, seed, future))
        self._flush()
        return await future

    def _flush(self) -> None:
        if self._running or not self._waiting or len(self._waiting) < self._live:
            return
        batch = sorted(self._waiting, key=lambda r: r.seed)
        self._waiting = []
        self._running = True
        self._task = asyncio.get_running_loop().create_task(self._run(batch))  # referenced while it runs

    async def _run(self, batch: list[_Request]) -> None:
        try:
            requests = [(r.prefix, r.max_new_tokens, r.seed) for r in batch]
            results = await asyncio.to_thread(self._timed, lambda: self._generate_batch(requests))
            self.batches.append(len(batch))
        except BaseException as exc:  # every waiting rollout learns of the failure
            for r in batch:
                if not r.future.done():
                    r.future.set_exception(exc)
        else:
            for r, out in zip(batch, results):
                if not r.future.done():  # a rollout cancelled by its time limit no longer waits
                    r.future.set_result(out)
        finally:
            self._running = False
            self._flush()

    def _generate(self, prefix: list[int], *, max_new_tokens: int, seed: int) -> Generated:
        return self._generate_batch([(prefix, max_new_tokens, seed)])[0]

    def _generate_batch(self, requests: list[tuple[list[int], int, int]]) -> list[Generated]:
        import torch

        device = self.model.device
        width = max(len(p) for p, _, _ in requests)
        ids = torch.tensor([[self.pad_id] * (width - len(p)) + p for p, _, _ in requests], device=device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p, _, _ in requests], device=device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        generators = [torch.Generator(device=device).manual_seed(seed) for _, _, seed in requests]
        limits = [n for _, n, _ in requests]
        new: list[list[int]] = [[] for _ in requests]
        logprobs: list[list[float]] = [[] for _ in requests]
        done = [False] * len(requests)
        eos = set(self.eos_ids)
        # transformers 5 names the KV cache `cache`; older releases `past_key_values`
        cache_arg = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"
        past = None
        with torch.no_grad():
            for _ in range(max(limits)):
                out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True,
                                 **{cache_arg: past})
                past = out[cache_arg]
                logits = out.logits[:, -1, :].float()
                chosen = []
                for row, g in enumerate(generators):
                    token, logprob = self._sample(logits[row], g)
                    chosen.append(token)
                    if not done[row]:
                        new[row].append(token)
                        logprobs[row].append(logprob)
                        done[row] = token in eos or len(new[row]) >= limits[row]
                if all(done):
                    break
                ids = torch.tensor([[t] for t in chosen], device=device)
                mask = torch.cat([mask, torch.ones((len(requests), 1), dtype=mask.dtype, device=device)], dim=1)
                positions = positions[:, -1:] + 1
        return [Generated(ids=n, logprobs=lp, ended=bool(n) and n[-1] in eos) for n, lp in zip(new, logprobs)]

    def _sample(self, logits: Any, generator: Any) -> tuple[int, float]:
        """One token from ``logits`` under the sampling settings, and its log-probability there."""
        import torch

        s = self.sampling
        if s.temperature <= 0:
            token = int(torch.argmax(logits))
            return token, float(torch.log_softmax(logits, -1)[token])
        scores = logits / s.temperature
        if s.top_k and s.top_k < scores.shape[-1]:
            kth = torch.topk(scores, s.top_k).values[-1]
            scores = scores.masked_fill(scores < kth, float("-inf"))
        if s.top_p < 1.0:
            ordered, order = torch.sort(scores, descending=True)
            probs = torch.softmax(ordered, -1)
            beyond = probs.cumsum(-1) - probs > s.top_p  # keep the smallest head whose mass reaches top_p
            scores = scores.scatter(0, order, ordered.masked_fill(beyond, float("-inf")))
        logp = torch.log_softmax(scores, -1)
        token = int(torch.multinomial(logp.exp(), 1, generator=generator))
        return token, float(logp[token])


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
        out = await self.generator.generate(prefix, max_new_tokens=limit, seed=seed or 0)
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
