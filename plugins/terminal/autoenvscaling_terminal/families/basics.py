"""Shell basics: the single-command operations every other family builds on, one check per step.

The floor of the curriculum. At level 0 a task is one short sentence and one command (create a
directory, copy a file, make a script executable); every level adds one more step, and from level 3
on the extra steps come from the other kinds too (one more skill). Each step is its own check, so
a partly done task earns partial credit: the rung a small solver can climb.

Kinds:
- ``create``: make directories, write a file with given text, create an empty file.
- ``copy_move``: copy a file, move or rename one, link one.
- ``permissions``: make a script executable, restrict a file to its owner (mode 600).
- ``edit``: append a line to a file, delete a file.
- ``inspect``: count a file's lines or words, or save its first line, into a new file.
"""

from __future__ import annotations

import hashlib
import random
import shlex
from typing import Any, Callable

from . import vocab
from .base import Draft, Kind, Wording

EXTS = [".txt", ".md", ".log", ".csv", ".cfg"]
OPS: dict[str, tuple[str, ...]] = {
    "create": ("mkdir", "write", "touch"),
    "copy_move": ("copy", "move", "symlink"),
    "permissions": ("chmod_x", "chmod_private"),
    "edit": ("append", "delete"),
    "inspect": ("count_lines", "count_words", "first_line"),
}
ALL_OPS = tuple(op for ops in OPS.values() for op in ops)


class Names:
    """Fresh, distinct file and directory names under /app (relative paths)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, make: Callable[[], str]) -> str:
        for _ in range(200):
            name = make()
            if name not in self.used and not any(u.startswith(name + "/") or name.startswith(u + "/") for u in self.used):
                self.used.add(name)
                return name
        raise RuntimeError("ran out of names")  # pragma: no cover - the vocabularies are large

    def file(self, ext: str | None = None, folder: str | None = None) -> str:
        def make() -> str:
            stem = f"{self.rng.choice(vocab.WORDS)}_{self.rng.choice(vocab.FILE_STEMS)}"
            name = stem + (ext or self.rng.choice(EXTS))
            return f"{folder}/{name}" if folder else name
        return self._fresh(make)

    def folder(self, depth: int = 1) -> str:
        def make() -> str:
            parts = [self.rng.choice(vocab.DIR_NAMES)] + [self.rng.choice(vocab.WORDS) for _ in range(depth - 1)]
            return "/".join(parts)
        return self._fresh(make)


def _lines(rng: random.Random, low: int, high: int) -> list[str]:
    return [rng.choice(vocab.PROSE) for _ in range(rng.randint(low, high))]


def _phrase(rng: random.Random) -> str:
    """A short line of text to write or append (no quotes, no shell-special characters)."""
    return rng.choice([
        f"hello {rng.choice(vocab.FIRST_NAMES)}",
        f"status: {rng.choice(['ok', 'ready', 'done', 'pending'])}",
        f"owner={rng.choice(vocab.FIRST_NAMES)}",
        f"{rng.choice(vocab.WORDS)} {rng.choice(vocab.WORDS)} {rng.randint(1, 99)}",
        f"version {rng.randint(1, 9)}.{rng.randint(0, 20)}",
        f"region {rng.choice(vocab.REGIONS)}",
    ])


class Builder:
    """Steps of one task: the hidden truth, the instruction sentences, the files and the solution."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.w = Wording(rng)
        self.names = Names(rng)
        self.files: dict[str, bytes] = {}
        self.unguarded: set[str] = set()  # inputs a step is asked to change, move or delete
        self.steps: list[dict[str, Any]] = []
        self.sentences: list[str] = []
        self.solution: list[str] = []

    def add(self, op: str) -> None:
        if op in self.INSPECT:
            self._inspect(op)
        else:
            getattr(self, f"_{op}")()

    def _step(self, sentence: str, command: str, **truth: Any) -> None:
        self.steps.append(truth)
        self.sentences.append(sentence)
        self.solution.append(command)

    def _input(self, ext: str | None = None, lines: list[str] | None = None, folder: str | None = None) -> str:
        rel = self.names.file(ext, folder)
        self.files[rel] = ("\n".join(lines or _lines(self.rng, 2, 6)) + "\n").encode()
        return rel

    # -- create -------------------------------------------------------------------------------
    def _mkdir(self) -> None:
        path = self.names.folder(self.rng.randint(1, 2))
        self._step(self.w.pick(["Create the directory `/app/{p}`.", "Make a new directory `/app/{p}` (with any missing parents).",
                                "Add an empty directory at `/app/{p}`."], p=path),
                   f"mkdir -p /app/{path}", op="mkdir", path=path)

    def _write(self) -> None:
        path, line = self.names.file(".txt"), _phrase(self.rng)
        self._step(self.w.pick(["Create the file `/app/{p}` containing the single line `{t}`.",
                                "Write the text `{t}` into a new file `/app/{p}`.",
                                "Make a file `/app/{p}` whose only line is `{t}`."], p=path, t=line),
                   f"echo {shlex.quote(line)} > /app/{path}", op="write", path=path, text=line)

    def _touch(self) -> None:
        path = self.names.file(self.rng.choice([".lock", ".flag", ".done"]))
        self._step(self.w.pick(["Create an empty file named `/app/{p}`.", "Create `/app/{p}` as an empty file.",
                                "Add an empty marker file at `/app/{p}`."], p=path),
                   f"touch /app/{path}", op="touch", path=path)

    # -- copy_move ----------------------------------------------------------------------------
    def _copy(self) -> None:
        src = self._input()
        dest = self.names.file(src[src.rfind("."):], self.rng.choice([None, None, "backup", "copies"]))
        make = f"mkdir -p /app/{dest.rsplit('/', 1)[0]} && " if "/" in dest else ""
        self._step(self.w.pick(["Copy `/app/{s}` to `/app/{d}`.", "Make a copy of `/app/{s}` at `/app/{d}` (keep the original).",
                                "Duplicate the file `/app/{s}` as `/app/{d}`."], s=src, d=dest),
                   f"{make}cp /app/{src} /app/{dest}", op="copy", src=src, dest=dest)

    def _move(self) -> None:
        src = self._input()
        self.unguarded.add(src)
        dest = self.names.file(src[src.rfind("."):])
        self._step(self.w.pick(["Rename `/app/{s}` to `/app/{d}`.", "Move the file `/app/{s}` to `/app/{d}`.",
                                "Change the name of `/app/{s}` to `/app/{d}`."], s=src, d=dest),
                   f"mv /app/{src} /app/{dest}", op="move", src=src, dest=dest,
                   sha256=hashlib.sha256(self.files[src]).hexdigest())

    def _symlink(self) -> None:
        target = self._input()
        link = self.names.file(self.rng.choice([".link", "_latest" + target[target.rfind("."):]]))
        self._step(self.w.pick(["Create a symbolic link `/app/{l}` that points to `/app/{t}`.",
                                "Make `/app/{l}` a symlink to `/app/{t}`."], l=link, t=target),
                   f"ln -s /app/{target} /app/{link}", op="symlink", link=link, target=target)

    # -- permissions --------------------------------------------------------------------------
    def _chmod_x(self) -> None:
        path = self._input(".sh", ["#!/bin/bash", f"echo {self.rng.choice(vocab.WORDS)}"])
        self._step(self.w.pick(["Make the script `/app/{p}` executable.", "Give `/app/{p}` execute permission.",
                                "Allow `/app/{p}` to be run as a program (set its executable bit)."], p=path),
                   f"chmod +x /app/{path}", op="chmod_x", path=path)

    def _chmod_private(self) -> None:
        path = self._input(self.rng.choice([".key", ".env", ".secret"]), [f"token={self.rng.randrange(16**12):012x}"])
        self._step(self.w.pick(["Set the permissions of `/app/{p}` to 600 (owner read and write only).",
                                "Restrict `/app/{p}` so that only its owner can read and write it (mode 600)."], p=path),
                   f"chmod 600 /app/{path}", op="chmod_private", path=path)

    # -- edit ---------------------------------------------------------------------------------
    def _append(self) -> None:
        path = self._input(self.rng.choice([".txt", ".log"]))
        self.unguarded.add(path)
        line = _phrase(self.rng)
        before = self.files[path].decode().splitlines()
        self._step(self.w.pick(["Append the line `{t}` to the end of `/app/{p}`.", "Add `{t}` as a new last line of `/app/{p}`.",
                                "Add one line, `{t}`, at the end of `/app/{p}` (keep what is there)."], p=path, t=line),
                   f"echo {shlex.quote(line)} >> /app/{path}", op="append", path=path, text=line, before=before)

    def _delete(self) -> None:
        path = self._input(self.rng.choice([".tmp", ".bak", ".old"]))
        self.unguarded.add(path)
        self._step(self.w.pick(["Delete the file `/app/{p}`.", "Remove `/app/{p}`.", "Get rid of the file `/app/{p}`."], p=path),
                   f"rm /app/{path}", op="delete", path=path)

    # -- inspect ------------------------------------------------------------------------------
    # op -> (input extension, input lines low-high, what the output holds, phrasings, command)
    INSPECT: dict[str, tuple[str, tuple[int, int], Callable[[str], str], tuple[str, ...], str]] = {
        "count_lines": (".log", (3, 12), lambda t: str(len(t.splitlines())),
                        ("Write the number of lines in `/app/{s}` to `/app/{o}`.",
                         "Count the lines of `/app/{s}` and save just the number in `/app/{o}`."), "wc -l <"),
        "count_words": (".txt", (1, 4), lambda t: str(len(t.split())),
                        ("Write the number of words in `/app/{s}` to `/app/{o}`.",
                         "Count the words in `/app/{s}` and put only that number in `/app/{o}`."), "wc -w <"),
        "first_line": (".txt", (2, 6), lambda t: t.splitlines()[0],
                       ("Save the first line of `/app/{s}` to `/app/{o}`.",
                        "Copy only the first line of `/app/{s}` into a new file `/app/{o}`."), "head -n 1"),
    }

    def _inspect(self, op: str) -> None:
        ext, (low, high), value, phrasings, tool = self.INSPECT[op]
        src = self._input(ext, _lines(self.rng, low, high))
        out = self.names.file(".txt")
        self._step(self.w.pick(phrasings, s=src, o=out), f"{tool} /app/{src} > /app/{out}", op=op, src=src, out=out,
                   value=value(self.files[src].decode()))


def make_build(kind: str) -> Callable[[random.Random, int], Draft]:
    def build(rng: random.Random, level: int) -> Draft:
        b = Builder(rng)
        n = level + 1
        ops = [rng.choice(OPS[kind])]  # then n - 1 more; from level 3 on, one may be of another kind (a new skill)
        ops += [rng.choice(ALL_OPS if level >= 3 and rng.random() < 0.5 else OPS[kind]) for _ in range(n - 1)]
        for op in ops:
            b.add(op)
        for _ in range(level - 1):  # bystanders from level 2 on: files that must come through untouched
            b._input()
        checks = [f"test_step_{i + 1}" for i in range(n)]
        instruction = _instruction(b, rng)
        guard = sorted(p for p in b.files if p not in b.unguarded)
        return Draft(kind=kind, outputs=sorted({s[k] for s in b.steps for k in ("path", "src", "dest", "link", "out") if k in s}), instruction=instruction, files=b.files, truth={"steps": b.steps}, checks=checks,
                     solution="\n".join(b.solution), parameters={"steps": n, "ops": ",".join(ops)},
                     tags=["shell-basics", *sorted({op.split("_")[0] for op in ops})], guard=guard,
                     agent_timeout_sec=300.0, shared_verifier="symlink" in ops)
    return build


def _instruction(b: Builder, rng: random.Random) -> str:
    if len(b.sentences) == 1:
        return b.sentences[0] + "\n"
    w = b.w
    lead = w.pick(["Please do the following in `/app`:", "A few small jobs in `/app`:", "Set up `/app` as follows:",
                   "Do these {n} things:", "Steps (all paths are absolute):"], n=len(b.sentences))
    numbered = rng.random() < 0.5
    body = "\n".join(f"{i}. {s}" if numbered else f"- {s}" for i, s in enumerate(b.sentences, 1))
    note = w.pick(["", "Leave every other file as it is.", "Do not change any other file."])
    return "\n\n".join(x for x in [lead, body, note] if x) + "\n"


KINDS = [Kind(name, make_build(name)) for name in OPS]
