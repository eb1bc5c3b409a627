"""Render documents to PNG images: LibreOffice headless turns xlsx/docx/csv into PDF, poppler's
``pdftoppm`` turns each PDF's first pages into images. For looking at what the generators make (the
README's pictures come from here), not used by generation or verification."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from autoenvscaling.api import MissingPrerequisite

OFFICE_SUFFIXES = {".xlsx", ".docx", ".csv", ".md", ".txt"}
INSTALL_HINT = "apt-get install libreoffice-calc-nogui libreoffice-writer-nogui poppler-utils"


def _tool(*names: str) -> str:
    found = next(filter(None, map(shutil.which, names)), None)
    if found:
        return found
    raise MissingPrerequisite(f"{names[0]} is not installed: rendering documents needs LibreOffice and poppler",
                            hint=INSTALL_HINT)


def to_pdf(document: Path, out_dir: Path, *, timeout: float = 120.0) -> Path:
    """``document`` as a PDF in ``out_dir`` (a PDF is copied as it is)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if document.suffix.lower() == ".pdf":
        target = out_dir / document.name
        shutil.copyfile(document, target)
        return target
    office = _tool("soffice", "libreoffice")
    with tempfile.TemporaryDirectory(prefix="aes-lo-") as profile:  # a fresh profile: no shared lock
        subprocess.run([office, f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf",
                        "--outdir", str(out_dir), str(document)],
                       check=True, capture_output=True, timeout=timeout)
    target = out_dir / (document.stem + ".pdf")
    if not target.is_file():
        raise MissingPrerequisite(f"LibreOffice did not convert {document.name}", hint="try it by hand: soffice --headless --convert-to pdf FILE")
    return target


def to_png(document: Path, out_dir: Path, *, pages: int = 1, dpi: int = 80) -> list[Path]:
    """The first ``pages`` pages of ``document`` as PNG files in ``out_dir``."""
    pdftoppm = _tool("pdftoppm")
    with tempfile.TemporaryDirectory(prefix="aes-pdf-") as tmp:
        pdf = to_pdf(document, Path(tmp))
        out_dir.mkdir(parents=True, exist_ok=True)
        prefix = out_dir / document.stem
        subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-f", "1", "-l", str(pages), str(pdf), str(prefix)],
                       check=True, capture_output=True, timeout=120)
    return sorted(out_dir.glob(f"{document.stem}*.png"))


def documents(folder: Path) -> list[Path]:
    """The renderable documents under ``folder``."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and (p.suffix.lower() in OFFICE_SUFFIXES | {".pdf"}))
