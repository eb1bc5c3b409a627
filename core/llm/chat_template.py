"""The text a local model sees for a conversation: its tokenizer's chat template, with tools rendered
by the template when it can show them and described in the system prompt when it cannot.

One class so that the model answering requests (``TransformersBackend``) and the trainer that
records rollouts token by token render exactly the same prompts: a model trained on one rendering
and served with another would be trained on prompts it never sees.
"""

from __future__ import annotations

from typing import Any

from autoenvscaling.llm.base import ChatMessage, ToolSpec
from autoenvscaling.llm.openai_backend import to_openai_tool
from autoenvscaling.llm.tool_text import messages_with_tools_in_text

_PROBE_TOOL = ToolSpec(name="autoenvscaling_probe_tool", description="probe")


class ChatTemplate:
    """Renders conversations with ``tokenizer``'s chat template (a Hugging Face tokenizer)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.renders_tools = self._probe()

    def _probe(self) -> bool:
        """Whether the template shows tools to the model. Templates that ignore them (SmolLM2's) or
        raise on them get the tools described in the system prompt instead."""
        try:
            text = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": "hi"}], tools=[to_openai_tool(_PROBE_TOOL)],
                tokenize=False, add_generation_prompt=True)
        except Exception:  # jinja raises many types; any failure means "cannot render tools"
            return False
        return _PROBE_TOOL.name in text

    def render(self, messages: list[ChatMessage], tools: list[ToolSpec] | None = None, *,
               add_generation_prompt: bool = True) -> str:
        if self.renders_tools:
            hf_messages: list[dict[str, Any]] = [hf_message(m) for m in messages]
            hf_tools = [to_openai_tool(t) for t in tools] if tools else None
        else:
            hf_messages, hf_tools = list(messages_with_tools_in_text(messages, tools)), None
        return str(self.tokenizer.apply_chat_template(hf_messages, tools=hf_tools, tokenize=False,
                                                      add_generation_prompt=add_generation_prompt))


def hf_message(m: ChatMessage) -> dict[str, Any]:
    """The message shape transformers' tool-aware templates expect (arguments as a dict)."""
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ]
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    if m.name is not None:
        out["name"] = m.name
    return out


def eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """The token ids that end a reply: the model's generation config, plus the tokenizer's EOS."""
    configured = model.generation_config.eos_token_id
    ids = configured if isinstance(configured, list) else [configured]
    ids = [i for i in ids if i is not None]
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return ids
