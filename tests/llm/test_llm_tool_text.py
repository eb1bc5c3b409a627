"""Parsing tool calls out of a local model's text."""

from __future__ import annotations

import pytest

from autoenvscaling.llm.errors import LLMBadResponse
from autoenvscaling.llm.tool_text import parse_tool_calls


def test_tool_call_blocks_are_parsed_in_order() -> None:
    text = (
        'Let me look.\n<tool_call>\n{"name": "ls", "arguments": {"path": "/"}}\n</tool_call>\n'
        '<tool_call>{"name": "cat", "arguments": "{\\"f\\": 1}"}</tool_call>'
    )
    content, calls = parse_tool_calls(text, id_prefix="call_7")
    assert content == "Let me look."
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_7_0", "ls", {"path": "/"}),
        ("call_7_1", "cat", {"f": 1}),
    ]


def test_unclosed_block_cut_by_the_token_limit_still_parses() -> None:
    _, calls = parse_tool_calls('<tool_call>{"name": "ls", "arguments": {}}')
    assert [c.name for c in calls] == ["ls"]


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "ls", "arguments": {"path": "."}}',
        '```json\n{"name": "ls", "parameters": {"path": "."}}\n```',
    ],
)
def test_a_bare_json_call_is_parsed(text: str) -> None:
    content, calls = parse_tool_calls(text)
    assert content == "" and [(c.name, c.arguments) for c in calls] == [("ls", {"path": "."})]


@pytest.mark.parametrize("text", ["Paris.", '{"answer": 42}', "{not json at all", ""])
def test_plain_answers_have_no_calls(text: str) -> None:
    assert parse_tool_calls(text) == (text, ())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('<tool_call>{"name": "ls", "arguments": {</tool_call>', "not valid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', "no string 'name'"),
        ('<tool_call>{"name": "ls", "arguments": [1]}</tool_call>', "not a JSON object"),
    ],
)
def test_malformed_calls_are_bad_responses(text: str, message: str) -> None:
    with pytest.raises(LLMBadResponse, match=message) as info:
        parse_tool_calls(text)
    assert "\n" not in str(info.value) and info.value.scored
