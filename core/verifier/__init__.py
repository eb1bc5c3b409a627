"""The verifier library every generated task ships (``aes_verifier``: result files, pytest
reports, partial credit), and its text for a task's tests/ folder."""

from __future__ import annotations

from pathlib import Path

from . import aes_verifier

#: the library's file name in a task's tests/ (and the module name a verifier imports there)
VERIFIER_LIBRARY = "aes_verifier.py"


def verifier_library() -> dict[str, str]:
    """The files that give a task's verifier its library, name -> text: ``{"aes_verifier.py": ...}``;
    a plugin puts them in tests/ beside its verifier scripts."""
    return {VERIFIER_LIBRARY: Path(__file__).with_name(VERIFIER_LIBRARY).read_text(encoding="utf-8")}


__all__ = ["VERIFIER_LIBRARY", "aes_verifier", "verifier_library"]
