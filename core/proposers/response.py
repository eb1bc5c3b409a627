"""The response format LLM proposers answer in: a task directory as a sequence of files.

Each file is a header line ``FILE: <relative path>`` followed by a fenced block (three or more
backticks or tildes; the block ends at a fence of the same character at least as long, so a
markdown instruction that itself holds ```bash blocks goes in a ```` block). Text between files is
ignored, so a model may think aloud. Parsing is strict about everything else: a missing closing
fence, a duplicate or unsafe path, a missing required file or a task.toml that does not parse all
make the response malformed, which is the model's own (scored) failure.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..errors import AESError, TaskFormatError
from ..tasks import Task, TaskFile, parse_config, qualified_name, render_config

REQUIRED = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh")
_HEADER = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?FILE:[ \t]*`?([^`*\s]+)`?(?:\*\*)?[ \t]*$")
_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*[\w.+-]*[ \t]*$")
_MAX_FILES = 200


class MalformedResponse(AESError):
    """A proposer model's answer does not follow the response format."""


def parse_files(text: str) -> dict[str, str]:
    """``{path: content}`` of every FILE block in ``text``."""
    lines = text.splitlines()
    files: dict[str, str] = {}
    i = 0
    while i < len(lines):
        header = _HEADER.match(lines[i])
        i += 1
        if not header:
            continue
        path = _safe_path(header.group(1))
        while i < len(lines) and not lines[i].strip():
            i += 1
        opening = _OPEN.match(lines[i]) if i < len(lines) else None
        if opening is None:
            raise MalformedResponse(f"FILE: {path} is not followed by a fenced block")
        fence = opening.group(1)
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        start = i + 1
        end = next((j for j in range(start, len(lines)) if closing.match(lines[j])), None)
        if end is None:
            raise MalformedResponse(f"the block of FILE: {path} is never closed (expected a line {fence})")
        if path in files:
            raise MalformedResponse(f"FILE: {path} appears twice")
        body = lines[start:end]
        files[path] = "\n".join(body) + ("\n" if body else "")
        if len(files) > _MAX_FILES:
            raise MalformedResponse(f"more than {_MAX_FILES} files")
        i = end + 1
    if not files:
        raise MalformedResponse("no FILE blocks found (each file must be `FILE: <path>` and a fenced block)")
    return files


def parse_task(text: str, *, fallback_name: str) -> Task:
    """A Task from a response; MalformedResponse with one line saying what is wrong."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a JSON answer can carry "\\ud800"; no file can hold it
        raise MalformedResponse("the response holds a lone surrogate, which is not Unicode text") from None
    files = parse_files(text)
    missing = [p for p in REQUIRED if p not in files]
    if missing:
        raise MalformedResponse(f"missing required files: {', '.join(missing)}")
    try:
        config = parse_config(files.pop("task.toml"), where="task.toml")
    except TaskFormatError as exc:
        raise MalformedResponse(exc.message) from None
    instruction = files.pop("instruction.md")
    name = qualified_name(config.task.name or fallback_name)
    contents: dict[str, bytes | str | TaskFile] = dict(files)
    task = Task.create(name, config, instruction, contents)
    return task if config.task.name == name else task.renamed(name)  # Harbor wants org/name


def render_task(task: Task) -> str:
    """``task`` in the response format (for worked examples and skeletons)."""
    entries = [("task.toml", render_config(task))]
    if task.instruction is not None:
        entries.append(("instruction.md", task.instruction))
    entries += [(p, f.text) for p, f in task.files.items()]
    return "\n\n".join(_block(path, content) for path, content in entries) + "\n"


def _block(path: str, content: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", content)), default=2)
    fence = "`" * max(4, longest + 1) if path.endswith(".md") or longest >= 3 else "```"
    lang = {"toml": "toml", "sh": "bash", "md": "markdown", "py": "python"}.get(path.rsplit(".", 1)[-1], "")
    return f"FILE: {path}\n{fence}{lang}\n{content.rstrip(chr(10))}\n{fence}"


def _safe_path(raw: str) -> str:
    path = PurePosixPath(raw.strip())
    if path.is_absolute() or ".." in path.parts or not path.parts or raw.strip() in (".", ""):
        raise MalformedResponse(f"unsafe file path {raw!r} (paths are relative to the task directory)")
    return path.as_posix()
