"""The fenced-block protocol: how a model without tool calling tells the solver what to run.

Small local models (the embedded SmolLM2-135M) cannot be trusted with tool-call JSON, so they
answer in markdown: a fenced shell block holds the next command, a line with only FINISH ends the
attempt. They follow that format loosely (other fence labels, a shell prompt before each command,
a block cut off by the token limit, a comment-only block before the real one), so the parser
accepts the variants that still say unambiguously "run this", and nothing else: prose, inline code
and blocks in other languages are never run.

Other tools (agents/tools.py) are called the same way: a block labelled with the tool's name, its
body the arguments (a JSON object, or the text of a one-text tool). Only the tools offered count: a
```json or ```python block is never a call unless a tool of that name was offered.

The worked example that teaches the format is package data (``prompts/solver_example.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Collection, Literal

from ..llm.base import ChatMessage

# Fence labels that mean "shell"; a bare fence counts too (models often omit the label).
SHELL_LABELS = frozenset({"", "bash", "sh", "shell", "zsh", "console", "terminal", "shell-session", "shellsession"})
_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+.-]*)[^`]*$")
_PROMPT = re.compile(r"^[ \t]*\$ ")
_FINISH = re.compile(r"^[ \t*_]*(?:FINISH|finish\(\))[ \t.!*_]*$", re.M)
# Messages of the worked example carry this name, so a trainer can tell them from the rollout.
EXAMPLE_NAME = "example"


@dataclass(frozen=True)
class _Block:
    label: str
    lines: list[str]
    closed: bool


def _split(text: str) -> tuple[list[_Block], list[str]]:
    """(the fenced blocks in order, the lines outside every block)."""
    blocks: list[_Block] = []
    outside: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opened = _OPEN.match(lines[i])
        if not opened:
            outside.append(lines[i])
            i += 1
            continue
        fence, label = opened.group(1), opened.group(2).lower()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i])
            i += 1
        blocks.append(_Block(label, body, closed=i < len(lines)))
        i += 1  # past the closing fence
    return blocks, outside


def _runnable(lines: list[str], label: str) -> str | None:
    """The command a shell block holds, or None when it holds nothing to run (blank or comments)."""
    prompted = [line for line in lines if _PROMPT.match(line)]
    if label in ("console", "terminal", "shell-session", "shellsession") and prompted:
        lines = prompted  # a transcript: the lines after "$ " are commands, the rest is output
    commands = [_PROMPT.sub("", line, count=1) for line in lines]
    body = "\n".join(commands).strip("\n")
    code = [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return body if code else None


@dataclass(frozen=True)
class TextTurn:
    """What a reply without tool calls asks for: ``tool`` ("bash", another offered tool's name, or
    None when there is nothing to run), ``body`` (the command, or the tool block's text) and whether
    it says FINISH."""

    tool: str | None
    body: str | None
    finish: bool


def parse_text_turn(text: str, *, truncated: bool = False, tools: Collection[str] = ("bash",)) -> TextTurn:
    """The first thing to run in a reply without tool calls, among the ``tools`` offered.

    A shell block runs with ``bash``; a block labelled with another offered tool's name is a call of
    that tool, its body the arguments. The first block that holds something counts; failing that,
    the ``$ cmd`` lines outside any block. A block left open counts when the reply ended there; when
    the token limit cut the reply (``truncated``) a shell block's last, possibly partial, line is
    dropped and a cut tool block is not run. FINISH is only looked for outside the blocks, so a
    script that prints the word does not end the attempt.
    """
    blocks, outside = _split(text)
    shell = "bash" in tools
    others = {t.lower(): t for t in tools if t != "bash"}  # fence labels are matched lowercased
    found: tuple[str, str] | None = None
    for block in blocks:
        if block.label in others and block.lines and (block.closed or not truncated):
            body = "\n".join(block.lines).strip("\n")
            if body.strip():
                found = (others[block.label], body)
                break
        elif shell and block.label in SHELL_LABELS:
            lines = block.lines[:-1] if truncated and not block.closed else block.lines
            command = _runnable(lines, block.label)
            if command is not None:
                found = ("bash", command)
                break
    if found is None and shell:
        candidates = outside
        if truncated and (not blocks or blocks[-1].closed):
            candidates = outside[:-1]  # the reply ends outside a block: its last line may be cut
        prompted = [line for line in candidates if _PROMPT.match(line)]
        command = _runnable(prompted, "console") if prompted else None
        found = ("bash", command) if command is not None else None
    finish = bool(_FINISH.search("\n".join(outside)))
    return TextTurn(tool=found[0], body=found[1], finish=finish) if found else TextTurn(None, None, finish)


def parse_text_reply(text: str, *, truncated: bool = False) -> tuple[str | None, bool]:
    """(the command to run, whether the reply says FINISH) of a reply when only ``bash`` is offered."""
    turn = parse_text_turn(text, truncated=truncated)
    return turn.body, turn.finish


def example_messages(package: str = "autoenvscaling.agents", name: str = "solver_example.md") -> list[ChatMessage]:
    """The worked example as conversation turns (``## user`` / ``## assistant`` sections of a
    package data file). Small models copy a shown exchange far more reliably than they follow a
    described format; the turns are named ``example`` so they stay distinguishable in a trajectory."""
    text = resources.files(package).joinpath("prompts", name).read_text("utf-8")
    messages: list[ChatMessage] = []
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        role, _, content = section.partition("\n")
        role = role.strip()
        if role not in ("user", "assistant"):
            raise ValueError(f"{name}: a section must be '## user' or '## assistant', not {role!r}")
        turn: Literal["user", "assistant"] = "user" if role == "user" else "assistant"
        messages.append(ChatMessage(role=turn, content=content.strip(), name=EXAMPLE_NAME))
    return messages
