"""Tool calling for models whose chat template cannot express tools.

Such a model is told about the tools in its system prompt (package data `tools_fallback.md`) and
answers with <tool_call>{"name": ..., "arguments": ...}</tool_call> blocks, the Hermes/Qwen
convention that many small models have seen. The parser also reads the same blocks from models
whose templates do render tools, and a bare JSON object, which Llama-style models emit.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from string import Template
from typing import Any

from autoenvscaling.llm.base import ChatMessage, ToolCall, ToolSpec
from autoenvscaling.llm.errors import LLMBadResponse

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_BAD_HINT = "the model produced a malformed tool call; this counts as its own failed attempt"


def tools_system_prompt(tools: list[ToolSpec]) -> str:
    template = resources.files("autoenvscaling.llm").joinpath("tools_fallback.md").read_text("utf-8")
    lines = "\n".join(json.dumps(t.model_dump()) for t in tools)
    return Template(template).safe_substitute(tools=lines).strip()


def messages_with_tools_in_text(messages: list[ChatMessage], tools: list[ToolSpec] | None) -> list[dict[str, str]]:
    """Plain role/content dicts any template renders: the tool list joins the system prompt, earlier
    calls become <tool_call> blocks and results become <tool_response> user turns."""
    out: list[dict[str, str]] = []
    for m in messages:
        if m.role == "assistant" and m.tool_calls:
            blocks = [
                f"<tool_call>\n{json.dumps({'name': c.name, 'arguments': c.arguments})}\n</tool_call>"
                for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": "\n".join([m.content, *blocks]).strip()})
        elif m.role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{m.content}\n</tool_response>"})
        else:
            out.append({"role": m.role, "content": m.content})
    if tools:
        prompt = tools_system_prompt(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{prompt}"}
        else:
            out.insert(0, {"role": "system", "content": prompt})
    return out


def parse_tool_calls(text: str, id_prefix: str = "call") -> tuple[str, tuple[ToolCall, ...]]:
    """Split a model's answer into (text before the calls, tool calls). No call found: (text, ())."""
    blocks = list(_BLOCK.finditer(text))
    if blocks:
        calls = tuple(_call(b.group(1), f"{id_prefix}_{i}") for i, b in enumerate(blocks))
        return text[: blocks[0].start()].strip(), calls
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    candidate = fenced.group(1) if fenced else candidate
    if candidate.startswith("{"):
        try:
            data = json.loads(candidate)
        except (ValueError, RecursionError):
            return text, ()  # prose that happens to start with a brace
        if isinstance(data, dict) and "name" in data and ({"arguments", "parameters"} & data.keys()):
            return "", (_call(candidate, f"{id_prefix}_0"),)
    return text, ()


def _call(raw: str, call_id: str) -> ToolCall:
    snippet = raw.replace("\n", " ")[:80]
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise LLMBadResponse(f"tool call is not valid JSON: {snippet}", hint=_BAD_HINT) from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise LLMBadResponse(f"tool call has no string 'name': {snippet}", hint=_BAD_HINT)
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):  # some models encode the arguments as a JSON string, like the API
        try:
            arguments = json.loads(arguments or "{}")
        except (ValueError, RecursionError):
            arguments = None
    if not isinstance(arguments, dict):
        raise LLMBadResponse(
            f"tool call {data['name']!r} has arguments that are not a JSON object: {snippet}", hint=_BAD_HINT
        )
    return ToolCall(id=call_id, name=data["name"], arguments=arguments)
