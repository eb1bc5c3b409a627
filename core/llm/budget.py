"""Budgets on LLM work: tokens (in and out), wall time and dollars.

A ``Budget`` is a limit on each of the three (None: no limit). ``MeteredLLM`` runs a backend under
one: it counts what its calls spend, with their retries and timeouts, and before each call a spent
budget raises ``BudgetExceeded`` naming what ran out. A call's reply is capped at the tokens left and
its wait at the seconds left, so a budget ends work at the next call, never in the middle of a
sandbox command. The flywheel gives every proposal one (``run --proposal-budget``) and keeps round and
run budgets from its run database (see docs/flywheel.md, Budgets).
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import Unpack

from ..errors import UsageError
from .base import CHAT_DEFAULTS, ChatMessage, ChatOptions, ChatResponse, LLMBackend, UsageTotals
from .errors import BudgetExceeded, LLMError

_SUFFIX = {"k": 1_000, "m": 1_000_000}


class Budget(BaseModel):
    """At most ``tokens`` model tokens (prompt and completion), ``seconds`` of wall time and ``usd``
    dollars (priced models only); None: no limit on that one."""

    model_config = ConfigDict(frozen=True)

    tokens: int | None = Field(default=None, ge=1)
    seconds: float | None = Field(default=None, gt=0)
    usd: float | None = Field(default=None, gt=0)

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``tokens=20k,seconds=600,usd=0.5`` (any of the three, in any order)."""
        fields: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, _, value = part.partition("=")
            name, value = name.strip(), value.strip().lower()
            scale = _SUFFIX.get(value[-1:], 1) if name == "tokens" else 1
            try:
                if name not in cls.model_fields or name in fields:
                    raise ValueError
                fields[name] = float(value[:-1] if scale > 1 else value) * scale
            except ValueError:
                raise UsageError(f"cannot read the budget {text!r} at {part!r}",
                                 hint="write it as tokens=20k,seconds=600,usd=0.5 (any of the three)") from None
        if "tokens" in fields:
            fields["tokens"] = int(fields["tokens"])
        try:
            return cls.model_validate(fields)
        except ValueError:
            raise UsageError(f"the budget {text!r} has a limit that is not positive",
                             hint="every limit must be above 0; leave a limit out to have none") from None

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.tokens, self.seconds, self.usd))

    def describe(self) -> str:
        parts = [f"{self.tokens:,} tokens" if self.tokens is not None else "",
                 f"{self.seconds:g} s" if self.seconds is not None else "",
                 f"${self.usd:g}" if self.usd is not None else ""]
        return ", ".join(p for p in parts if p) or "no limit"

    def spent(self, *, tokens: float, seconds: float, usd: float) -> str | None:
        """What ran out, in words ("40,000 tokens (40,512 used)"), or None while all are left."""
        if self.tokens is not None and tokens >= self.tokens:
            return f"{self.tokens:,} tokens ({int(tokens):,} used)"
        if self.seconds is not None and seconds >= self.seconds:
            return f"{self.seconds:g} s of wall time ({seconds:.0f} s used)"
        if self.usd is not None and usd >= self.usd:
            return f"${self.usd:g} (${usd:.4f} used)"
        return None

    def left(self, *, tokens: float, seconds: float, usd: float) -> Budget:
        """What is left after spending that much (a spent limit keeps a sliver, so that the next
        check, not a validation error, says it is spent)."""
        return Budget(tokens=None if self.tokens is None else max(1, int(self.tokens - tokens)),
                      seconds=None if self.seconds is None else max(1e-3, self.seconds - seconds),
                      usd=None if self.usd is None else max(1e-9, self.usd - usd))

    def tighter(self, other: Budget) -> Budget:
        """The smaller limit of the two, field by field."""
        def low(a: float | None, b: float | None) -> float | None:
            return b if a is None else a if b is None else min(a, b)

        tokens = low(self.tokens, other.tokens)
        return Budget(tokens=None if tokens is None else int(tokens), seconds=low(self.seconds, other.seconds),
                      usd=low(self.usd, other.usd))


class MeteredLLM(LLMBackend):
    """``inner`` under ``budget`` from the moment it is built. ``usage`` counts this meter's calls
    only (the inner backend may be shared); ``stopped`` is the budget message once one was raised."""

    name: ClassVar[str] = "metered"

    def __init__(self, inner: LLMBackend, budget: Budget, *, scope: str = "proposal") -> None:
        super().__init__(inner.model)
        self.inner, self.budget, self.scope = inner, budget, scope
        self.started = time.monotonic()
        self.stopped: str | None = None
        self.usage = UsageTotals()

    def _spent(self) -> dict[str, float]:
        u = self.usage
        return {"tokens": u.prompt_tokens + u.completion_tokens, "seconds": time.monotonic() - self.started,
                "usd": u.cost_usd}

    def _stop(self, what: str) -> BudgetExceeded:
        self.stopped = f"{self.scope} budget spent: {what}"
        return BudgetExceeded(self.stopped, hint=f"the {self.scope} budget is {self.budget.describe()}")

    async def chat(self, messages: list[ChatMessage], **options: Unpack[ChatOptions]) -> ChatResponse:
        spent = self._spent()
        what = self.budget.spent(**spent)
        if what is not None:
            raise self._stop(what)
        given: ChatOptions = {**CHAT_DEFAULTS, **options}
        if self.budget.tokens is not None:
            given["max_tokens"] = max(1, min(given["max_tokens"], self.budget.tokens - int(spent["tokens"])))
        wait = None if self.budget.seconds is None else self.budget.seconds - spent["seconds"]
        try:
            async with asyncio.timeout(wait):
                response = await self.inner.chat(messages, **given)
        except TimeoutError:
            raise self._stop(f"{self.budget.seconds:g} s of wall time (a call was still waiting)") from None
        except LLMError as e:
            self.usage.add_failure(retries=e.retries, timeouts=e.timeouts)
            raise
        self.usage.add(response)
        return response

    async def aclose(self) -> None:
        """The inner backend is not this meter's to close."""
