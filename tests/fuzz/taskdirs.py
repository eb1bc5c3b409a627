"""Task directories on disk, as hypothesis draws them: any task.toml (missing, a folder, junk, huge,
binary), any instruction.md, files with odd (even non-UTF-8) names, folders, FIFOs, and symbolic links
that point out of the task, at themselves or nowhere. ``SECRET`` marks what lies outside the task:
it must never come back inside a task that was read."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from .strategies import huge_text, junk_bytes, task_toml_text, text_like

SECRET = "SECRET-outside-the-task"
KNOWN_NAMES = [b"task.toml", b"instruction.md", b"environment", b"Dockerfile", b"tests", b"test.sh", b"solution",
               b"solve.sh", b"steps", b".dockerignore", b"__pycache__", b".DS_Store", b"docker-compose.yaml",
               b"reward.txt", b"x.py"]
SYMLINK_TARGETS = ["../outside/secret.toml", "../outside/secret.md", "../outside", "/etc/passwd", "/etc", "..", ".",
                   "task.toml", "loop", "/nonexistent/x", "/dev/zero", "/proc/self/environ", "../../..", "environment"]


@dataclass(frozen=True)
class Node:
    """One entry of a drawn task directory: ``path`` (name parts, as bytes), its kind and content."""

    path: tuple[bytes, ...]
    kind: str  # "file", "dir", "symlink" or "fifo"
    data: bytes = b""
    target: str = ""
    executable: bool = False


names = st.one_of(st.sampled_from(KNOWN_NAMES), st.sampled_from(KNOWN_NAMES),
                  st.text(min_size=1, max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),
                  st.binary(min_size=1, max_size=30), st.just(b"\xff\xfe.sh"), st.just(b"n" * 300))
contents = st.one_of(text_like.map(lambda t: t.encode("utf-8", "surrogatepass")), junk_bytes,
                     task_toml_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
                     huge_text(1 << 18).map(lambda t: t.encode("utf-8", "surrogatepass")))
nodes = st.builds(
    Node, path=st.lists(names, min_size=1, max_size=3).map(tuple),
    kind=st.sampled_from(["file", "file", "file", "dir", "symlink", "fifo"]), data=contents,
    target=st.sampled_from(SYMLINK_TARGETS), executable=st.booleans())


def _special(name: bytes, content: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[Node]]:
    """task.toml or instruction.md: missing, a file, a folder, a link (out of the task), a FIFO."""
    return st.one_of(
        st.just([]),
        content.map(lambda data: [Node((name,), "file", data)]),
        content.map(lambda data: [Node((name,), "file", data)]),
        st.just([Node((name,), "dir")]),
        st.sampled_from(SYMLINK_TARGETS).map(lambda target: [Node((name,), "symlink", target=target)]),
        st.just([Node((name,), "fifo")]),
    )


@st.composite
def task_trees(draw: st.DrawFn) -> list[Node]:
    toml = task_toml_text.map(lambda t: t.encode("utf-8", "surrogatepass"))
    tree = draw(_special(b"task.toml", st.one_of(toml, toml, junk_bytes)))
    tree += draw(_special(b"instruction.md", contents))
    tree += draw(st.lists(nodes, max_size=6))
    return tree


def materialise(tree: list[Node], root: Path) -> Path:
    """Write ``tree`` as ``root/task`` beside ``root/outside`` (the secrets links may point at).
    Entries the file system refuses (a name too long, a parent that is a file) are left out."""
    outside = root / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.toml").write_text(f'[task]\nname = "org/x"\ndescription = "{SECRET}"\n')
    (outside / "secret.md").write_text(SECRET)
    task = root / "task"
    task.mkdir()
    base = os.fsencode(task)
    for node in tree:
        path = os.path.join(base, *node.path)
        if os.path.lexists(path):  # the first entry of a path wins (opening a FIFO to write would block)
            continue
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if node.kind == "file":
                with open(path, "wb") as fh:
                    fh.write(node.data)
                os.chmod(path, 0o755 if node.executable else 0o644)
            elif node.kind == "dir":
                os.makedirs(path, exist_ok=True)
            elif node.kind == "symlink":
                os.symlink("loop" if node.target == "loop" else node.target, path)
            else:
                os.mkfifo(path)
        except (OSError, ValueError):
            continue
    return task


def secret_inside(task: object) -> bool:
    """Whether a task that was read carries anything from outside its directory."""
    from autoenvscaling.tasks import Task

    assert isinstance(task, Task)
    texts = [task.instruction or "", task.config_text or "", repr(task.config.model_dump())]
    return any(SECRET in t for t in texts) or any(SECRET.encode() in f.data for f in task.files.values())
