"""The professional domain's verifier: scores what the agent left in the workspace.

Copied verbatim into every task's tests/ with the family's ``check_<family>.py`` and the hidden
``spec.json``; test.sh runs ``python3 -I /tests/profcheck.py`` (isolated: no PYTHON* variables, no
user site, neither the script's folder nor the working directory on sys.path; this file puts /tests
first on it, to import the verifier library tests/aes_verifier.py and the family's checks). It uses only the libraries of the task's image (openpyxl,
python-docx, pypdf, icalendar, formulas): the task declares its outputs, so the verifier runs on the
image as built plus those files, whatever the agent did to site-packages.

Scoring. A check module calls ``report.req(name, ok, detail)`` once per requirement the task states.
Half of the reward is partial credit, the other half is paid only for the whole answer:

    reward = 1                     when every requirement is met and no penalty applies
    reward = fraction met / 2      otherwise (so always below 0.5)

A plain fraction would pay a plausible wrong answer, right in all but one respect, 0.8 or more: a
policy trained on it learns that a near miss pays almost as well as the answer, and a reward hack
that gets most requirements cheaply beats the 0.5 line the admission gates use. The fraction met is
still reported (``fraction`` in details.json). A spec with ``"scoring": "fraction"`` pays the plain
fraction; only the tests use it, to show what the old scoring paid. Two more kinds of outcome:

- ``report.fatal(reason)``: the answer cannot be scored at all (an output missing, a file that is not
  a valid document of its type, an output left empty): reward 0.
- ``report.penalty(name, count, detail, total=None)``: something the task did not ask for happened
  (cells or paragraphs changed outside the asked region, an input file edited). A penalty with
  ``count > 0`` adds one unmet requirement; with ``count == 0`` it adds nothing, so doing nothing
  never earns it. Changing more than a tenth of ``total`` is fatal.

Credit goes only to content derived from the task's data: a document with the right name, sheet or
headings and nothing right in it scores 0.

Writes /logs/verifier/reward.txt (one number) and /logs/verifier/details.json (every requirement with
its outcome and detail), and prints the same summary.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import importlib
import io
import json
import math
import os
import re
import sys
import traceback
import zipfile
from typing import TYPE_CHECKING, NoReturn

APP = os.environ.get("PROFCHECK_APP", "/app")
OUTPUTS_UNDER = "PROFCHECK_OUTPUTS_UNDER"  # set by ``--outputs-under`` (``path``)
TESTS = os.path.dirname(os.path.abspath(__file__))
LOGS = os.environ.get("PROFCHECK_LOGS", "/logs/verifier")
if TYPE_CHECKING or __package__:  # imported on the host, as part of the plugin: the core's copy of the library
    from autoenvscaling.api import aes_verifier
else:  # the task's verifier (or a family's check importing it): tests/aes_verifier.py, first on sys.path
    sys.path.insert(0, TESTS)
    import aes_verifier


class Fatal(Exception):
    """The answer cannot be scored: reward 0, with this reason."""


class Report:
    def __init__(self) -> None:
        self.items: list[dict] = []
        self.penalties: list[dict] = []
        self.notes: list[str] = []
        self.fatal_reason: str | None = None  # set by ``run`` when the answer cannot be scored

    def req(self, name: str, ok: bool, detail: str = "") -> bool:
        self.items.append({"name": name, "ok": bool(ok), "detail": str(detail)[:300]})
        return bool(ok)

    def penalty(self, name: str, count: int, detail: str = "", *, total: int | None = None) -> None:
        """Something the task did not ask for happened ``count`` times. With ``total`` (how many
        cells or paragraphs there were), changing more than a tenth of them is fatal: the answer
        destroyed the document instead of editing it."""
        if total and count > max(1, total // 10):
            self.fatal(f"{name}: {count} of {total} changed")
        self.penalties.append({"name": name, "count": int(count), "detail": str(detail)[:300]})

    def note(self, text: str) -> None:
        self.notes.append(str(text)[:300])

    def fatal(self, reason: str) -> NoReturn:
        raise Fatal(reason)

    def fraction(self) -> float:
        """The fraction of requirements met, each penalty that applies counting as one unmet."""
        return aes_verifier.fraction([i["ok"] for i in self.items] + [False for p in self.penalties if p["count"] > 0])

    def score(self, scoring: str = "complete") -> float:
        """The reward: 1 for the whole answer, else half the fraction met ("complete"); or the plain
        fraction ("fraction", the old scoring, kept for the tests that measure it)."""
        fraction = self.fraction()
        if scoring == "fraction" or fraction == 1.0:
            return fraction
        return fraction / 2


# -- paths and files -------------------------------------------------------------------------------

def path(rel: str) -> str:
    """The workspace file ``rel``. Under ``--outputs-under DIR`` (a warm interpreter, which gets the
    attempt's outputs as copies at DIR + their path and the workspace as the image has it) a file
    that is there is read there: those are the declared outputs, the rest is the image's."""
    own = os.path.join(APP, rel)
    under = os.environ.get(OUTPUTS_UNDER)
    if under:
        moved = under.rstrip("/") + "/" + own.lstrip("/")
        if os.path.lexists(moved):
            return moved
    return own


def original(rel: str) -> str:
    """The workspace file as the task shipped it (tests/original/), for change counting."""
    return os.path.join(TESTS, "original", rel)


def sha256(file: str) -> str | None:
    try:
        with open(file, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def find_output(rel: str) -> str | None:
    """The output's path; a name that differs only in case or surrounding spaces is accepted."""
    exact = path(rel)
    if os.path.isfile(exact):
        return exact
    folder, name = os.path.split(exact)
    try:
        for entry in os.listdir(folder):
            if entry.strip().casefold() == name.casefold() and os.path.isfile(os.path.join(folder, entry)):
                return os.path.join(folder, entry)
    except OSError:
        pass
    return None


def require(report: Report, rel: str) -> str:
    found = find_output(rel)
    if found is None:
        report.fatal(f"{rel} was not written")
    if os.path.getsize(found) == 0:
        report.fatal(f"{rel} is empty")
    return found


def open_xlsx(report: Report, rel: str, *, data_only: bool = False):
    """The agent's workbook (formulas as text unless ``data_only``); fatal when it is not one."""
    import openpyxl

    file = require(report, rel)
    if not zipfile.is_zipfile(file):
        report.fatal(f"{rel} is not a valid .xlsx workbook (not a zip package)")
    try:
        return openpyxl.load_workbook(file, data_only=data_only)
    except Exception as exc:  # noqa: BLE001 - any parse failure means "not a workbook"
        report.fatal(f"{rel} is not a valid .xlsx workbook ({type(exc).__name__}: {str(exc)[:120]})")


def open_docx(report: Report, rel: str):
    import docx

    file = require(report, rel)
    if not zipfile.is_zipfile(file):
        report.fatal(f"{rel} is not a valid .docx document (not a zip package)")
    try:
        return docx.Document(file)
    except Exception as exc:  # noqa: BLE001
        report.fatal(f"{rel} is not a valid .docx document ({type(exc).__name__}: {str(exc)[:120]})")


def read_text(report: Report, rel: str) -> str:
    file = require(report, rel)
    try:
        with open(file, encoding="utf-8-sig") as fh:
            text = fh.read()
    except (UnicodeDecodeError, OSError) as exc:
        report.fatal(f"{rel} is not UTF-8 text ({exc})")
    if not text.strip():
        report.fatal(f"{rel} is empty")
    return text


def read_csv(report: Report, rel: str) -> list[dict[str, str]]:
    """Rows as dicts keyed by the normalised header (``norm``); the delimiter is sniffed (, ; tab)."""
    text = read_text(report, rel)
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        report.fatal(f"{rel} has no rows")
    header = [norm(h) for h in rows[0]]
    return [{header[i]: (row[i].strip() if i < len(row) else "") for i in range(len(header))} for row in rows[1:]]


def read_ics(report: Report, rel: str) -> list[dict]:
    """The VEVENTs of an iCalendar file: summary, start, end (datetimes, naive local), attendees
    (lower-case addresses without ``mailto:``), location, uid."""
    import icalendar

    text = read_text(report, rel)
    try:
        cal = icalendar.Calendar.from_ical(text)
    except Exception as exc:  # noqa: BLE001
        report.fatal(f"{rel} is not a valid iCalendar file ({type(exc).__name__}: {str(exc)[:120]})")
    events = []
    for comp in cal.walk("VEVENT"):
        start_v = _naive(_when(report, rel, comp, "DTSTART"))
        end_v = _naive(_when(report, rel, comp, "DTEND"))
        duration = _when(report, rel, comp, "DURATION")
        if end_v is None and start_v is not None and duration is not None:
            end_v = start_v + duration
        attendees = comp.get("ATTENDEE") or []
        if not isinstance(attendees, list):
            attendees = [attendees]
        events.append({"summary": str(comp.get("SUMMARY") or ""), "start": start_v, "end": end_v,
                       "attendees": sorted({str(a).lower().replace("mailto:", "").strip() for a in attendees}),
                       "location": str(comp.get("LOCATION") or ""), "uid": str(comp.get("UID") or "")})
    return events


def _when(report: Report, rel: str, comp, name: str):
    """The value of a date, time or duration property of an event (None when absent); fatal when the
    event repeats it or its value cannot be read."""
    prop = comp.get(name)
    if prop is None:
        return None
    if isinstance(prop, list):
        report.fatal(f"{rel}: an event ({comp.get('SUMMARY') or 'untitled'}) has more than one {name}")
    try:
        return prop.dt
    except Exception as exc:  # noqa: BLE001 - icalendar reports unreadable values in its own ways
        report.fatal(f"{rel}: an event ({comp.get('SUMMARY') or 'untitled'}) has an unreadable {name} ({str(exc)[:80]})")


def _naive(value):
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    return value


# -- values ----------------------------------------------------------------------------------------

def norm(text) -> str:
    """Case-folded, whitespace-collapsed text: for names and headers where case does not matter."""
    return " ".join(str(text if text is not None else "").split()).casefold()


_NUM_CLEAN = re.compile(r"[\s$€£¥,]|USD|EUR|GBP", re.IGNORECASE)


def num(value) -> float | None:
    """A number from a cell or a string: "1,234.50", "$1,234.50", "(12.00)" (negative), "12%" (0.12)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    text = str(value).strip().replace("\u2212", "-").replace("\u2013", "-")  # Unicode minus, en dash
    if not text:
        return None
    negative = text.startswith("(") and text.endswith(")")
    text = text.strip("()")
    percent = text.endswith("%")
    text = _NUM_CLEAN.sub("", text.rstrip("%"))
    try:
        out = float(text)
    except ValueError:
        return None
    if math.isnan(out) or math.isinf(out):
        return None
    out = -out if negative else out
    return out / 100 if percent else out


def close(actual, expected: float, *, rel: float = 1e-6, abs_tol: float = 0.011) -> bool:
    """``actual`` (anything ``num`` reads) equals ``expected`` within a cent or a relative 1e-6."""
    value = num(actual)
    return value is not None and math.isclose(value, float(expected), rel_tol=rel, abs_tol=abs_tol)


_DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%d.%m.%Y", "%d %B %Y", "%B %d, %Y", "%d %b %Y", "%b %d, %Y",
                 "%Y/%m/%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S")


def as_date(value, *, dayfirst: bool | None = None) -> dt.date | None:
    """A date from a cell (datetime, date, Excel serial number) or text in a common format. Ambiguous
    d/m vs m/d text is read as ISO-first, then day-first unless ``dayfirst`` is False."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 20000 < value < 80000:
        return dt.date(1899, 12, 30) + dt.timedelta(days=int(value))
    text = " ".join(str(value or "").split())
    formats = list(_DATE_FORMATS)
    if dayfirst is False:
        formats.remove("%d/%m/%Y")
        formats.insert(1, "%d/%m/%Y")
        formats.remove("%m/%d/%Y")
        formats.insert(1, "%m/%d/%Y")
    for fmt in formats:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    return None


# -- spreadsheets ----------------------------------------------------------------------------------

def find_sheet(wb, name: str):
    """The worksheet whose name matches ``name`` ignoring case and spaces (sheet order never matters)."""
    wanted = norm(name).replace(" ", "")
    for ws in wb.worksheets:
        if norm(ws.title).replace(" ", "") == wanted:
            return ws
    return None


def header_map(ws, wanted: list[str], *, search_rows: int = 10) -> tuple[int, dict[str, int]] | None:
    """Find a header row holding every name in ``wanted`` (ignoring case and spaces, any column
    order, extra columns allowed): (1-based row, {wanted name: 1-based column}), or None."""
    keys = {norm(w): w for w in wanted}
    for r, row in enumerate(ws.iter_rows(min_row=1, max_row=search_rows, values_only=True), start=1):
        cols = {}
        for c, value in enumerate(row, start=1):
            key = norm(value)
            if key in keys and keys[key] not in cols:
                cols[keys[key]] = c
        if len(cols) == len(keys):
            return r, cols
    return None


def table(ws, wanted: list[str]) -> list[dict] | None:
    """The records under the header row ``header_map`` finds (empty rows skipped), keyed by ``wanted``."""
    found = header_map(ws, wanted)
    if found is None:
        return None
    row0, cols = found
    out = []
    for row in ws.iter_rows(min_row=row0 + 1, values_only=True):
        record = {w: (row[c - 1] if c - 1 < len(row) else None) for w, c in cols.items()}
        if all(v in (None, "") for v in record.values()):
            continue
        out.append(record)
    return out


def is_formula(value) -> bool:
    return isinstance(value, str) and value.startswith("=")


_KEY = re.compile(r"^'?\[(?P<book>[^\]]+)\](?P<sheet>.+?)'?!(?P<cell>\$?[A-Z]+\$?\d+)$")


def computed_values(file: str) -> dict[tuple[str, str], object]:
    """Every formula cell of the workbook at ``file``, computed by the ``formulas`` engine (files
    written by openpyxl carry no cached results): {(SHEET NAME UPPER-CASE, "B7"): value}. A cell
    whose formula the engine cannot compute maps to an error string ("#NAME?", "#VALUE!", ...).
    Checks of agents' workbooks use ``formula_values``, which bounds whole-column references first."""
    import formulas  # the spreadsheet engine of the task's image

    model = formulas.ExcelModel().loads(file).finish()
    solution = model.calculate()
    out: dict[tuple[str, str], object] = {}
    for key, value in solution.items():
        match = _KEY.match(str(key))
        if not match:
            continue
        cell = match.group("cell").replace("$", "")
        data = getattr(value, "value", value)
        try:
            item = data[0][0]
        except (TypeError, IndexError, KeyError):
            item = data
        if hasattr(item, "item"):
            item = item.item()
        if type(item).__name__ in ("XlError",):
            item = str(item)
        out[(match.group("sheet").upper(), cell)] = item
    return out


#: a whole-column reference (Orders!H:H, $B:$B) outside string literals
_WHOLE_COLUMN = re.compile(r"(?<![A-Za-z0-9_$.])(\$?)([A-Z]{1,3}):(\$?)([A-Z]{1,3})(?![A-Za-z0-9_(])")


def bound_whole_columns(wb) -> None:
    """Rewrite whole-column references (``SUMIF(B:B, ...)``, ordinary in Excel) to the workbook's used
    rows, in place: the engine would expand each to a million cells (a minute and gigabytes)."""
    last = max(ws.max_row for ws in wb.worksheets)

    def bound(m):
        return f"{m[1]}{m[2]}{m[1]}1:{m[3]}{m[4]}{m[3]}{last}"

    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if is_formula(cell.value):
                    parts = cell.value.split('"')
                    parts[::2] = [_WHOLE_COLUMN.sub(bound, p) for p in parts[::2]]
                    cell.value = '"'.join(parts)


def formula_values(wb, report: Report, what: str = "the") -> dict[tuple[str, str], object]:
    """``computed_values`` of an open workbook (formulas as text), whole columns bounded first, on a
    saved copy; {} with a note when the engine cannot read the formulas (they then count as wrong)."""
    import tempfile

    bound_whole_columns(wb)
    with tempfile.TemporaryDirectory() as tmp:
        file = os.path.join(tmp, "book.xlsx")
        wb.save(file)
        try:
            return computed_values(file)
        except Exception as exc:  # noqa: BLE001 - formulas the engine cannot read count as wrong
            report.note(f"the formulas of {what} workbook could not be computed: {type(exc).__name__}: {str(exc)[:150]}")
            return {}


def cell_changes(before_ws, after_ws, *, allowed=lambda coord: False) -> list[str]:
    """Coordinates whose value differs between two worksheets, skipping those ``allowed`` says the
    task asked to change. Values compare as numbers when both are numbers, else as text."""
    changed = []
    rows = max(before_ws.max_row, after_ws.max_row)
    cols = max(before_ws.max_column, after_ws.max_column)
    for r in range(1, rows + 1):
        for c in range(1, cols + 1):
            a, b = before_ws.cell(r, c).value, after_ws.cell(r, c).value
            coord = before_ws.cell(r, c).coordinate
            if allowed(coord) or _same(a, b):
                continue
            changed.append(coord)
    return changed


def _same(a, b) -> bool:
    if a in (None, "") and b in (None, ""):
        return True
    na, nb = num(a), num(b)
    if na is not None and nb is not None and not isinstance(a, str) and not isinstance(b, str):
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(a, (dt.date, dt.datetime)) or isinstance(b, (dt.date, dt.datetime)):
        return as_date(a) == as_date(b)
    return str(a).strip() == str(b).strip()


# -- documents -------------------------------------------------------------------------------------

def heading_level(paragraph) -> int | None:
    """1-9 for a heading paragraph (style "Heading N" or "Title" as 0), else None."""
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style.lower() == "title":
        return 0
    match = re.match(r"heading\s*(\d)", style, re.IGNORECASE)
    return int(match.group(1)) if match else None


def sections(doc) -> list[dict]:
    """The document as sections: each heading with the text and tables that follow it up to the
    next heading. Text before the first heading is a section with heading "" (level None)."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    out: list[dict] = [{"heading": "", "level": None, "text": [], "tables": []}]
    for block in doc.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            para = Paragraph(block, doc)
            level = heading_level(para)
            if level is not None and para.text.strip():
                out.append({"heading": para.text.strip(), "level": level, "text": [], "tables": []})
            elif para.text.strip():
                out[-1]["text"].append(para.text.strip())
        elif tag == "tbl":
            out[-1]["tables"].append(table_rows(Table(block, doc)))
    return out


def table_rows(tbl) -> list[list[str]]:
    return [[cell.text.strip() for cell in row.cells] for row in tbl.rows]


def section(doc_sections: list[dict], heading: str) -> dict | None:
    wanted = norm(heading)
    for sec in doc_sections:
        if sec["level"] is not None and norm(sec["heading"]).rstrip(":") == wanted:
            return sec
    return None


def doc_text(doc) -> str:
    """All paragraph and table text of a document, one block per line."""
    parts = [p.text for p in doc.paragraphs]
    for tbl in doc.tables:
        parts += [" | ".join(r) for r in table_rows(tbl)]
    return "\n".join(parts)


def mentions_amount(text: str, amount: float) -> bool:
    """The text states ``amount`` (any of 1234.5, 1,234.50, $1,234.50, 1234.50)."""
    for token in re.findall(r"\(?-?[$€£]?\s?\d[\d,]*(?:\.\d+)?\)?", text):
        if close(token, amount, abs_tol=0.006):
            return True
    return False


# -- main ------------------------------------------------------------------------------------------

def unchanged_inputs(report: Report, spec: dict) -> None:
    """Penalty: workspace inputs the task said to leave alone were edited or deleted."""
    changed = [rel for rel, digest in sorted(spec.get("keep", {}).items()) if sha256(path(rel)) != digest]
    report.penalty("inputs left unchanged", len(changed), ", ".join(changed[:5]))


def run(spec: dict) -> Report:
    report = Report()
    sys.path.insert(0, TESTS)
    module = importlib.import_module(f"check_{spec['family']}")
    try:
        module.check(spec, report)
        unchanged_inputs(report, spec)
        if not report.items:
            report.fatal("no requirement was checked")
    except Fatal as exc:
        report.notes.insert(0, f"fatal: {exc}")
        report.items = [{"name": "output", "ok": False, "detail": str(exc)}]
        report.penalties = []
        report.fatal_reason = str(exc)
    return report


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--outputs-under"] and len(args) == 2:
        # the environment, not a global: the family's check imports this file again as ``profcheck``
        os.environ[OUTPUTS_UNDER] = args[1]
    elif args:
        print(f"usage: profcheck.py [--outputs-under DIR], not {' '.join(args)!r}", file=sys.stderr)
        return 2
    aes_verifier.clear(LOGS, ("reward.txt", "reward.json", "details.json"))  # only this run's verdict counts
    with open(os.path.join(TESTS, "spec.json"), encoding="utf-8") as fh:
        spec = json.load(fh)
    try:
        report = run(spec)
    except Exception:  # noqa: BLE001 - a crash in a check is the verifier's bug: score 0, say where
        traceback.print_exc()
        report = Report()
        report.items = [{"name": "verifier", "ok": False, "detail": "the checker crashed (see the output)"}]
    fatal = report.fatal_reason
    fraction = 0.0 if fatal else report.fraction()
    reward = 0.0 if fatal else report.score(spec.get("scoring", "complete"))
    details = {"reward": round(reward, 6), "fraction": round(fraction, 6), "family": spec.get("family"),
               "requirements": report.items, "penalties": report.penalties, "notes": report.notes}
    aes_verifier.write_json("details.json", details, LOGS, default=str)
    for item in report.items:
        print(f"[{'x' if item['ok'] else ' '}] {item['name']}" + (f": {item['detail']}" if item["detail"] else ""))
    for pen in report.penalties:
        if pen["count"]:
            print(f"[-] {pen['name']}: {pen['count']} ({pen['detail']})")
    for note in report.notes:
        print(f"note: {note}")
    aes_verifier.write_reward(reward, LOGS, fmt=".6f")
    print(f"fraction met {fraction:.6f}")
    print(f"reward {reward:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
