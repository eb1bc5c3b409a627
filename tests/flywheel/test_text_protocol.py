"""How the solver reads replies of models without tool calling (fenced blocks, prompts, FINISH),
and the worked example it shows them. Pure parsing: no sandbox, no model."""

from __future__ import annotations

import pytest

from autoenvscaling.agents.text_protocol import EXAMPLE_NAME, example_messages, parse_text_reply

RUNS = [
    ("```bash\nls -la /app\n```", "ls -la /app"),
    ("Let me look.\n```sh\nls\n```\nThen more prose.", "ls"),
    ("```shell\ncat /app/a.txt\n```", "cat /app/a.txt"),
    ("```\necho hi > /app/f.txt\n```", "echo hi > /app/f.txt"),  # a bare fence
    ("~~~bash\nmkdir -p /x\n~~~", "mkdir -p /x"),
    ("```bash title\ntouch /y\n```", "touch /y"),  # an info string after the label
    ("```BASH\npwd\n```", "pwd"),
    # A transcript: commands after "$ ", the other lines are output.
    ("```console\n$ wc -l /app/in.txt\n12 /app/in.txt\n```", "wc -l /app/in.txt"),
    ("```bash\n$ cd /app && ls\n```", "cd /app && ls"),  # a prompt inside a bash block
    # Comment-only blocks say nothing to run: the next block counts.
    ("```bash\n#!/bin/bash\n# first, plan\n```\n```bash\nrm /tmp/x\n```", "rm /tmp/x"),
    ("```python\nprint(1)\n```\n```bash\nls /\n```", "ls /"),
    # No block at all: "$ cmd" lines in the prose.
    ("Run these:\n$ mkdir -p /x\n$ touch /x/y\nThat is all.", "mkdir -p /x\ntouch /x/y"),
    # A block left open because the reply ended there (the model stopped by itself).
    ("```bash\necho a > /f", "echo a > /f"),
    # Multi-line scripts stay whole, here-documents included.
    ("```bash\ncat > /f <<'EOF'\nx y\nEOF\n```", "cat > /f <<'EOF'\nx y\nEOF"),
]


@pytest.mark.parametrize(("reply", "command"), RUNS)
def test_shell_blocks_and_prompts_are_run(reply: str, command: str) -> None:
    assert parse_text_reply(reply) == (command, False)


NOTHING = [
    "I would use `rm -rf /app/tmp` here.",  # inline code is prose, never run
    "```python\nimport os\nos.remove('x')\n```",  # another language
    "```json\n{\"a\": 1}\n```",
    "```bash\n# Create the file `/app/x.txt`\n```",  # only a comment
    "```bash\n\n```",
    "The price is $5 today.",
    "",
]


@pytest.mark.parametrize("reply", NOTHING)
def test_nothing_runnable(reply: str) -> None:
    assert parse_text_reply(reply) == (None, False)


def test_a_reply_cut_by_the_token_limit_drops_its_partial_last_line() -> None:
    cut = "```bash\necho a > /f\necho b >"
    assert parse_text_reply(cut, truncated=True) == ("echo a > /f", False)
    assert parse_text_reply(cut) == ("echo a > /f\necho b >", False)  # ended by the model: kept whole
    assert parse_text_reply("```bash\nrm -rf /app/da", truncated=True) == (None, False)
    assert parse_text_reply("Do this:\n$ ls /app\n$ rm -rf /ap", truncated=True) == ("ls /app", False)
    # A closed block is complete, whatever came after it.
    assert parse_text_reply("```bash\nls\n```\nand then I would", truncated=True) == ("ls", False)


def test_finish_is_read_outside_blocks_only() -> None:
    assert parse_text_reply("FINISH") == (None, True)
    assert parse_text_reply("All done.\n**FINISH**") == (None, True)
    assert parse_text_reply("finish()") == (None, True)
    assert parse_text_reply("```bash\necho FINISH\n```") == ("echo FINISH", False)
    assert parse_text_reply("```bash\ntouch /done\n```\nFINISH") == ("touch /done", True)
    assert parse_text_reply("I will finish later.") == (None, False)


def test_the_worked_example_is_turns_in_the_expected_format() -> None:
    turns = example_messages()
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]
    assert all(t.name == EXAMPLE_NAME for t in turns)
    command, finish = parse_text_reply(turns[1].content)
    assert command and not finish
    assert parse_text_reply(turns[3].content) == (None, True)
    assert turns[2].content.startswith("[exit code 0]")  # the observation format the solver sends
