"""Token prices, so "cost per valid environment" can be reported per proposer model.

Prices live in a TOML table (package data `prices.toml`, overridable by the user) rather than in
code, because they change more often than the code does. Unknown models cost None: a report that
says "unknown" is honest; a guessed price is not.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autoenvscaling.llm.base import Usage
from autoenvscaling.llm.errors import LLMConfigError

PRICES_ENV = "AUTOENVSCALING_PRICES"
"""Path of a user TOML file whose entries override and extend the default table."""

_WILDCARDS = set("*?[")


class Price(BaseModel):
    """USD per one million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PriceTable:
    """Model name (or glob pattern) -> Price. An exact name wins, then the longest matching pattern."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self._exact = {k.lower(): v for k, v in prices.items() if not _WILDCARDS & set(k)}
        patterns = [(k.lower(), v) for k, v in prices.items() if _WILDCARDS & set(k)]
        self._patterns = sorted(patterns, key=lambda kv: len(kv[0]), reverse=True)

    @classmethod
    def from_toml_text(cls, text: str, source: str = "<text>") -> PriceTable:
        try:
            data = tomllib.loads(text)
            table = data.get("prices", {})
            prices = {str(k): Price.model_validate(v) for k, v in table.items()}
        except (tomllib.TOMLDecodeError, ValidationError, AttributeError) as e:
            first = str(e).strip().splitlines()[0]
            raise LLMConfigError(
                f"invalid price table {source}: {first}",
                hint='expected [prices] entries like "gpt-4o" = { input = 2.5, output = 10.0 }',
            ) from None
        return cls(prices)

    @classmethod
    def from_file(cls, path: str | Path) -> PriceTable:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise LLMConfigError(f"cannot read price table {path}: {e.strerror}", hint=f"check {PRICES_ENV}") from None
        return cls.from_toml_text(text, source=str(path))

    @classmethod
    def default(cls) -> PriceTable:
        """The packaged table, overridden by the file named in AUTOENVSCALING_PRICES if set."""
        text = resources.files("autoenvscaling.llm").joinpath("prices.toml").read_text("utf-8")
        table = cls.from_toml_text(text, source="prices.toml (package data)")
        override = os.environ.get(PRICES_ENV)
        return table.merged(cls.from_file(override)) if override else table

    def entries(self) -> dict[str, Price]:
        return {**self._exact, **dict(self._patterns)}

    def merged(self, other: PriceTable) -> PriceTable:
        """A new table where `other`'s entries replace this one's."""
        return PriceTable({**self.entries(), **other.entries()})

    def lookup(self, model: str) -> Price | None:
        names = [model.lower()]
        if "/" in model:
            names.append(model.rsplit("/", 1)[1].lower())
        for name in names:
            if name in self._exact:
                return self._exact[name]
        for name in names:
            for pattern, price in self._patterns:
                if fnmatch.fnmatchcase(name, pattern):
                    return price
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        price = self.lookup(model)
        if price is None:
            return None
        return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1e6


def cost(model: str, usage: Usage, table: PriceTable | None = None) -> float | None:
    """USD cost of `usage` tokens on `model`, or None when the model has no known price."""
    return (table or PriceTable.default()).cost(model, usage)
