"""Price table, the scripted server's own surface, and the cost of importing the package."""

from __future__ import annotations

import asyncio
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.llm import builtin_llm_backends
from autoenvscaling.llm.base import ChatMessage, Usage
from autoenvscaling.llm.errors import LLMConfigError, LLMRequestError
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.pricing import PriceTable, cost
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, TextReply

TABLE = PriceTable.from_toml_text(
    """
[prices]
"acme-1" = { input = 1.0, output = 2.0 }
"acme-*" = { input = 10.0, output = 20.0 }
"acme-1-*" = { input = 100.0, output = 200.0 }
"""
)
MILLION = Usage(prompt_tokens=1_000_000, completion_tokens=1_000_000)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("acme-1", 3.0),  # exact name beats patterns
        ("ACME-1", 3.0),  # case-insensitive
        ("acme-2", 30.0),
        ("acme-1-mini", 300.0),  # the longest matching pattern wins
        ("vendor/acme-1", 3.0),  # provider prefix stripped
        ("other", None),  # unknown: no invented price
    ],
)
def test_lookup_rules(model: str, expected: float | None) -> None:
    assert TABLE.cost(model, MILLION) == expected


def test_default_table_prices_known_models_and_local_ones_at_zero() -> None:
    usage = Usage(prompt_tokens=2_000_000, completion_tokens=500_000)
    assert cost("gpt-4o-mini", usage) == pytest.approx(2 * 0.15 + 0.5 * 0.60)
    assert cost("gpt-4o-2024-08-06", usage) == pytest.approx(2 * 2.50 + 0.5 * 10.00)
    assert cost("smollm2-135m-instruct", usage) == 0.0
    assert cost("some-new-model", usage) is None


def test_user_price_file_overrides_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[prices]\n"gpt-4o" = { input = 1.0, output = 1.0 }\n"mine" = { input = 0.5, output = 0.5 }\n')
    monkeypatch.setenv("AUTOENVSCALING_PRICES", str(path))
    table = PriceTable.default()
    assert table.cost("gpt-4o", MILLION) == 2.0 and table.cost("mine", MILLION) == 1.0
    assert table.cost("gpt-4o-mini", MILLION) == pytest.approx(0.75)  # the rest of the default stays


@pytest.mark.parametrize(
    "text",
    ['[prices]\n"m" = { input = "free", output = 1 }\n', "[prices\n", '[prices]\n"m" = { input = -1, output = 1 }\n'],
)
def test_invalid_price_table_is_one_clear_line(text: str) -> None:
    with pytest.raises(LLMConfigError, match="invalid price table") as info:
        PriceTable.from_toml_text(text)
    assert "\n" not in str(info.value)


def test_models_endpoint_and_callable_script() -> None:
    from openai import AsyncOpenAI

    def echo(request: dict[str, Any]) -> TextReply:
        return TextReply("you said " + request["messages"][-1]["content"])

    async def talk(url: str) -> tuple[list[str], str]:
        client = AsyncOpenAI(base_url=url, api_key="x")
        models = [m.id async for m in client.models.list()]
        await client.close()
        backend = OpenAIBackend(url, None, "a")
        reply = await backend.chat([ChatMessage.user("ping")])
        await backend.aclose()
        return models, reply.message.content

    with ScriptedOpenAIServer(echo, models=["a", "b"]) as srv:
        assert asyncio.run(talk(srv.base_url)) == (["a", "b"], "you said ping")
    assert [r.method for r in srv.requests] == ["GET", "POST"]


def test_exhausted_script_fails_loudly() -> None:
    with ScriptedOpenAIServer(["only one"]) as srv:
        backend = OpenAIBackend(srv.base_url, None, "m")

        async def twice() -> None:
            await backend.chat([ChatMessage.user("1")])
            await backend.chat([ChatMessage.user("2")])

        with pytest.raises(LLMRequestError, match="script exhausted after 1 replies"):
            asyncio.run(twice())


def test_builtin_backends_resolve_to_backend_classes() -> None:
    for kind, target in builtin_llm_backends().items():
        module, _, name = target.partition(":")
        cls = getattr(importlib.import_module(module), name)
        assert cls.name == kind


def test_importing_the_package_stays_cheap() -> None:
    code = (
        "import sys, autoenvscaling.llm, autoenvscaling.llm.local_backend, autoenvscaling.llm.openai_backend, "
        "autoenvscaling.llm.tiny, autoenvscaling.llm.scripted_server;"
        "print(sorted(m for m in ('torch', 'transformers', 'openai', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
