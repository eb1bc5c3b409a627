"""Error types for LLM calls.

The distinctions are not cosmetic: the valid-environment rate excludes infrastructure failures and
provider refusals from "scored", while a model's own malformed output stays scored as a failure.
Each class says which side it is on through `scored`, so metrics code never has to guess from text.
"""

from __future__ import annotations

from typing import ClassVar

from autoenvscaling.errors import AESError, ConfigError


class LLMError(AESError):
    """Base class of every expected failure of an LLM call."""

    scored: ClassVar[bool] = False
    """Whether an attempt that ended in this error counts as a scored (model-caused) failure."""
    retries: int = 0
    """Attempts retried before the call gave up with this error."""
    timeouts: int = 0
    """Attempts of the call that timed out."""


class LLMRefusal(LLMError):
    """The provider refused to answer (a refusal message or a content filter)."""


class LLMTimeout(LLMError):
    """No answer arrived within the per-request timeout, retries included: an infrastructure failure."""


class LLMUnavailable(LLMError):
    """Connection errors, 429 or 5xx answers persisted after all retries: an infrastructure failure."""


class LLMBadResponse(LLMError):
    """The answer was malformed (e.g. tool-call arguments that are not JSON): the model's own failure."""

    scored = True


class LLMRequestError(LLMError):
    """The provider rejected the request (HTTP 400/413/422, e.g. the conversation outgrew the context
    window). Retrying cannot help; it stays scored because the attempt's own conversation caused it."""

    scored = True


class LLMConfigError(LLMError, ConfigError):
    """The backend is misconfigured (missing or rejected API key, unknown model or path): not scored,
    since every attempt would fail the same way."""


class BudgetExceeded(LLMError):
    """A budget (``llm.budget``) ran out before a call, or during its wait. Scored: spending the
    budget is the work's own doing (arms compared under one budget pay for what they use)."""

    scored = True
