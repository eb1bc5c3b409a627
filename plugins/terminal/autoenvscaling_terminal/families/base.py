"""What a family generator produces, and the helpers every generator shares.

A generator is a pure function of ``(random.Random(seed), level)``: no global randomness, no clock,
no filesystem. It returns a ``Draft`` (the instruction, the files the environment starts with, the
hidden ground truth, which checks to run, the reference solution); ``render.py`` turns a draft into a
Harbor task. Difficulty is an integer *level* (easy 1, medium 2, hard 3; variation may go from 0 to
``MAX_LEVEL``) so that "harder than hard" still means more data or more steps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from autoenvscaling.api import grow, label_of

from . import vocab

MIN_LEVEL, MAX_LEVEL = 0, 6


@dataclass
class Draft:
    """A generated task before rendering. Paths in ``files`` are relative to /app (the workdir)."""

    kind: str
    instruction: str
    files: dict[str, bytes]
    truth: dict[str, Any]
    checks: list[str]
    solution: str
    parameters: dict[str, Any]
    tags: list[str] = field(default_factory=list)
    #: files under /app that must stay byte-identical (None: every file in ``files``)
    guard: list[str] | None = None
    #: files (relative to /app) that need the executable bit in the image
    executables: set[str] = field(default_factory=set)
    #: bash run once at build time in /app (builds a git repo or a database); never seen by the agent
    setup: str | None = None
    setup_files: dict[str, bytes] = field(default_factory=dict)
    #: generator modules (under families/) whose source is pasted into the test file, so checks
    #: and ground truth share one implementation without the verifier importing this package
    inline: list[str] = field(default_factory=list)
    agent_timeout_sec: float = 900.0
    #: what the task asks the agent to produce or change, relative to /app (files or directories):
    #: with the inputs' top-level entries, the task's verifier ``outputs``, the only changes of the
    #: agent the verifier sees
    outputs: list[str] = field(default_factory=list)
    #: the verifier must run in the agent's own container (Harbor's "shared" mode) rather than a fresh
    #: copy holding /app: Harbor copies /app with a filter that drops symbolic links to absolute paths
    shared_verifier: bool = False


@dataclass(frozen=True)
class Kind:
    """One task type of a family. ``min_level`` keeps multi-step kinds out of the easiest levels."""

    name: str
    build: Callable[[random.Random, int], Draft]
    min_level: int = 0


def choose_kind(kinds: Sequence[Kind], rng: random.Random, level: int, kind: str | None) -> Kind:
    """The requested kind, or one drawn among those allowed at ``level``."""
    if kind is not None:
        return {k.name: k for k in kinds}[kind]
    return rng.choice([k for k in kinds if k.min_level <= level] or list(kinds))


class Wording:
    """Randomised phrasing: every choice goes through the generator's own ``random.Random``."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, options: Sequence[str], **values: Any) -> str:
        return self.rng.choice(list(options)).format(**values)

    def persona(self) -> str:
        """Who asks: the first sentence of an instruction."""
        return self.pick(vocab.PERSONAS) + "."

    def intro(self, situations: Sequence[str], **values: Any) -> list[str]:
        """The opening of an instruction: who asks (``persona``), then one phrasing of the situation."""
        return [self.persona(), self.pick(situations, **values)]

    def require(self, checks: list[str], details: list[str], check: str, options: Sequence[str], **values: Any) -> None:
        """An optional requirement of a task: its check joins ``checks`` and one phrasing of it
        (``pick``) joins ``details``."""
        checks.append(check)
        details.append(self.pick(options, **values))

    def require_if(self, checks: list[str], details: list[str], rows: Sequence[tuple[object, str, Sequence[str]]],
                   **values: Any) -> None:
        """The optional requirements of a task, a row each: (wanted, check, phrasings). Each wanted one
        is ``require``d, in row order. ``values`` fill in every row's phrasings: the caller computes
        them all, wanted or not."""
        for wanted, check, options in rows:
            if wanted:
                self.require(checks, details, check, options, **values)

    def describe_if(self, details: list[str], rows: Sequence[tuple[object, Sequence[str]]], **values: Any) -> None:
        """The optional details of a task, a row each: (wanted, phrasings). One phrasing of each wanted
        one (``pick``) joins ``details``, in row order; ``values`` as in ``require_if``."""
        for wanted, options in rows:
            if wanted:
                details.append(self.pick(options, **values))

    def compose(self, *, intro: Sequence[str], ask: str, details: Sequence[str], notes: Sequence[str] = (),
                shuffle_details: bool = True, first: Sequence[str] = ()) -> str:
        """A full instruction in one of several layouts: prose, a bulleted or numbered list, or
        headed sections. ``details`` are complete sentences; their order is shuffled unless the
        order matters (``shuffle_details=False``). ``first`` items (the definition the rest builds
        on) always lead."""
        rng = self.rng
        items = list(details)
        if shuffle_details:
            rng.shuffle(items)
        items = list(first) + items
        notes = [n for n in notes if n]
        intro_text = " ".join(s for s in intro if s)
        layout = rng.choice(["prose", "bullets", "numbered", "sections"])
        parts: list[str] = []
        if layout in ("prose", "bullets"):
            parts.append(" ".join(x for x in [intro_text, ask] if x))
            if layout == "prose":
                parts.append(" ".join(items))
            else:
                lead = rng.choice(["Requirements:", "Details:", "What I need:", "Specifically:",
                                   "Please make sure that:"])
                parts.append(lead + "\n" + "\n".join(f"- {item}" for item in items))
            parts.append(" ".join(notes))
        elif layout == "numbered":
            parts += [intro_text, ask, "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))]  # "" is dropped
            if notes:
                parts.append(rng.choice(["Notes:", "Keep in mind:", "Also:"]) + " " + " ".join(notes))
        else:
            heads = rng.choice([("## Context", "## Task", "## Requirements"), ("## Background", "## Goal", "## Acceptance criteria"),
                                ("### Situation", "### What to do", "### Rules")])
            if intro_text:
                parts.append(f"{heads[0]}\n\n{intro_text}")
            parts.append(f"{heads[1]}\n\n{ask}")
            body = "\n".join(f"- {item}" for item in items + list(notes))
            parts.append(f"{heads[2]}\n\n{body}")
        return "\n\n".join(p.strip() for p in parts if p.strip()) + "\n"
