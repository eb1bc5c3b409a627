"""Unified diffs in git's format (``a/`` and ``b/`` prefixes, ``/dev/null`` for added or deleted
files), which ``git apply`` and SWE-bench harnesses read."""

from __future__ import annotations

import difflib
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping


def unified_patch(before: Mapping[str, bytes | None], after: Mapping[str, bytes | None]) -> str:
    """The patch turning ``before`` into ``after`` (paths in either; None or absent: no such file)."""
    out: list[str] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        if old is None:
            out.append("new file mode 100644\n")
        elif new is None:
            out.append("deleted file mode 100644\n")
        out.extend(difflib.unified_diff(_lines(old), _lines(new), "/dev/null" if old is None else f"a/{path}",
                                        "/dev/null" if new is None else f"b/{path}", n=3))
    # a content line without a newline is the file's last: marked the way diff does
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "surrogateescape").splitlines(keepends=True)


class PatchError(ValueError):
    """A patch that does not apply; the message is git's."""


def apply_patch(files: dict[str, bytes], patch: str, *, reverse: bool = False) -> dict[str, bytes | None]:
    """The files ``patch`` changes once applied to ``files`` (None: deleted), with ``git apply``."""
    touched = sorted({line[6:].strip() for line in patch.splitlines() if line.startswith(("--- a/", "+++ b/"))})
    with tempfile.TemporaryDirectory(prefix="aes-swe-patch-") as tmp:
        root = Path(tmp)
        for path in touched:
            if path in files:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(files[path])
        proc = subprocess.run(["git", "apply", "--whitespace=nowarn", *(["-R"] if reverse else []), "-"], cwd=root,
                              input=patch.encode("utf-8", "surrogateescape"), capture_output=True)
        if proc.returncode != 0:
            lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PatchError(lines[-1] if lines else "git apply failed")
        return {p: ((root / p).read_bytes() if (root / p).exists() else None) for p in touched}
