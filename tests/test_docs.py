"""The documentation stays navigable.

- No file in the repository refers to the design notes that used to live outside it: what they held
  is in docs/ now (docs/architecture.md, docs/sandboxes.md), and a reference to a file a reader
  cannot open is a dead end.
- Every relative link in README.md and docs/*.md (Markdown links, images, ``<img src>``) points at a
  file or folder that exists, and a ``#fragment`` into a Markdown file names one of its headings
  (GitHub's anchors).
- Every repository path the README and docs quote in backticks (``core/...``, ``plugins/...``,
  ``scripts/...``, ...) exists, so moving a file without updating its documentation fails here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Spelled in two parts so that this file does not mention it.
MISSING_NOTES = "DESIGN" + ".md"

LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMG_SRC = re.compile(r"""<img\b[^>]*\bsrc=["']([^"']+)["']""")
# A fence opens with 3+ backticks (whose info string has none) or tildes, indented at most 3 spaces
FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`]*$)|~{3,})")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
REPO_PATH = re.compile(r"`((?:core|plugins|trainer|bench|scripts|docs|\.ci)/[A-Za-z0-9_./-]*|tests/[A-Za-z0-9_./-]*\.py)`")


def repository_files() -> list[Path]:
    """Tracked files and new files git does not ignore (what the next commit can hold)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return [ROOT / name for name in out.decode().split("\0") if name]


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks."""
    lines, fence = [], None
    for line in text.splitlines():
        match = FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and match and line.strip() == match.group(1) and match.group(1)[0] == fence[0] \
                and len(match.group(1)) >= len(fence):
            fence = None
        elif fence is None:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            name, n = base, 0
            while name in found:  # repeated headings get -1, -2, ...
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def links(path: Path) -> list[str]:
    targets = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        line = CODE_SPAN.sub("", line)
        targets += LINK.findall(line) + IMG_SRC.findall(line)
    return targets


def test_the_documents_are_found():
    # Guards the tests below: an empty list would make them pass vacuously.
    names = {p.name for p in DOCS}
    assert {"README.md", "architecture.md", "plugin-authors.md", "hooks.md"} <= names
    assert "docs/architecture.md" in links(ROOT / "README.md")


def test_no_file_mentions_the_design_notes_that_are_not_in_the_repository():
    offenders = []
    for path in repository_files():
        if path.is_file() and MISSING_NOTES.encode() in path.read_bytes():
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, (f"{', '.join(offenders)} mention {MISSING_NOTES}, which is not in the repository: "
                           "point at the document that holds it now (docs/architecture.md, docs/sandboxes.md, ...)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_files_that_exist(doc):
    dead = []
    for target in links(doc):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        path_part, _, fragment = target.partition("#")
        path = (doc.parent / path_part).resolve() if path_part else doc
        if not path.exists():
            dead.append(f"{target} (no such file)")
        elif fragment and path.suffix == ".md" and fragment.lower() not in anchors(path):
            dead.append(f"{target} (no heading with that anchor in {path.name})")
    assert not dead, f"{doc.relative_to(ROOT)} has dead links: {'; '.join(dead)}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_quoted_repository_paths_exist(doc):
    text = "\n".join(prose_lines(doc.read_text(encoding="utf-8")))
    missing = sorted({p for p in REPO_PATH.findall(text) if not (ROOT / p.rstrip("/")).exists()})
    assert not missing, f"{doc.relative_to(ROOT)} quotes paths the repository does not have: {', '.join(missing)}"
