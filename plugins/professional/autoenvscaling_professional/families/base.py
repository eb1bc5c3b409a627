"""What a family generator produces.

A generator is a pure function of ``(random.Random, level)``: no global randomness, no clock, no
filesystem. It returns a ``Draft``; ``render.py`` turns it into a Harbor task. Difficulty is an
integer level (easy 1, medium 2, hard 3; variation reaches 0 to ``MAX_LEVEL``): higher levels mean
more rows and documents, more traps in the data (duplicates, refunds, odd formats) and more
requirements.

Every family has three parts that must agree, all named after the family:

- ``families/<name>.py``: ``build(rng, level) -> Draft`` (its description and skills
  are in ``families/__init__.py``'s ``CATALOG``);
- ``verifier/checks/<name>.py``: ``check(spec, report)``, run inside the sandbox by
  ``verifier/profcheck.py`` on what the agent left in /app, against the hidden ``Draft.spec``;
- ``solutions/<name>.py``: the reference solution, run in /app with ``Draft.params`` (what the
  instruction says, never the hidden answers) in ``/solution/params.json``. Run with ``--wrong`` it
  makes the family's plausible wrong answer (``Draft.mistake`` says which mistake), a negative
  control that must not earn full credit.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from autoenvscaling.api import grow, label_of

MIN_LEVEL, MAX_LEVEL = 0, 5
DOC_TYPES = ("xlsx", "docx", "pdf", "csv", "json", "md", "ics", "txt")


@dataclass
class Draft:
    """A generated task before rendering. Paths are relative to /app, the agent's workspace."""

    kind: str
    instruction: str
    #: the workspace the agent starts with
    files: dict[str, bytes]
    #: hidden: what the checker compares against (expected values, tolerances); tests/spec.json
    spec: dict[str, Any]
    #: what the reference solution needs to know: only facts the instruction states
    params: dict[str, Any]
    #: the files the agent must write (or edit in place), with their document type
    outputs: dict[str, str]
    #: one line: the mistake the family's plausible wrong answer makes
    mistake: str
    #: workspace files the checker compares against (unrequested changes): copied to tests/original/
    originals: list[str] = field(default_factory=list)
    #: difficulty knobs, recorded in the task's provenance
    parameters: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    agent_timeout_sec: float = 900.0

    def __post_init__(self) -> None:
        for path, kind in self.outputs.items():
            if kind not in DOC_TYPES:
                raise ValueError(f"output {path}: unknown document type {kind!r} (one of {', '.join(DOC_TYPES)})")
        missing = [p for p in self.originals if p not in self.files]
        if missing:
            raise ValueError(f"originals must be workspace files: {', '.join(missing)}")


def csv_bytes(header: list[str], rows: Iterable[list[Any]], *, lineterminator: str = "\n") -> bytes:
    """A CSV file of ``header`` and ``rows``, as a workspace holds it (UTF-8)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator=lineterminator)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def dated_zip(data: bytes, when: dt.datetime, edit: Callable[[str, bytes], bytes] = lambda name, body: body) -> bytes:
    """The package ``data`` re-zipped with every entry dated ``when`` and its body passed through
    ``edit(name, body)``: openpyxl and python-docx date the entries with the clock."""
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name in src.namelist():
            dst.writestr(zipfile.ZipInfo(name, when.timetuple()[:6]), edit(name, src.read(name)), zipfile.ZIP_DEFLATED)
    return out.getvalue()


def xlsx_bytes(wb, stamp: dt.datetime) -> bytes:
    """The workbook's bytes, the same on every run: ``wb.save`` would stamp the current time into
    docProps/core.xml and into every zip entry, so write with ``stamp`` instead."""
    from openpyxl.writer.excel import ExcelWriter

    wb.properties.created = wb.properties.modified = stamp
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).save()
    return dated_zip(raw.getvalue(), stamp)
