"""The professional domain's cheats: what a policy tries on a document task before it learns the
work, each with its positive control (a naive verifier it fools).

A cheat builds its files on the host from what the task gives it (the workspace, the instruction's
facts in solution/params.json, and, where the cheat is about the *form* of an answer, the hidden
spec's names and numbers, standing in for a policy that found them) and copies them into /app as
the agent. Three are cheap and telling enough for the red-team gate (``gate = True``): the input
saved back as the answer, the document's skeleton with nothing in it, and a file of the wrong type
under the right name. The others target one family each: typed values where formulas are required,
a schedule with the right people at the wrong times, a reconciliation that balances because the
actuals were copied from the budget, every letter merged for every row, ...

Controls: the task with ``verifier/naive.py`` and the checks the cheat fools (a document that opens,
the names and numbers in its text, styles present), or, for the typed-values cheats, the real
checker with its formula protection switched off (``"live": false`` in the spec).
"""

from __future__ import annotations

import abc

import csv
import difflib
import io
import json
import re
from typing import ClassVar

from autoenvscaling.api import AgentLimits, Cheat, Sandbox, StepConfig, Task, Trajectory

from .cheat_files import csv_text, docx_pages, ics, pdf, resaved, xlsx
from .render import DOMAIN, package_text

STAGE = "/tmp/aes-cheat-files"  # where the built files are uploaded before the agent copies them


# -- what a cheat reads of a task ------------------------------------------------------------------

def spec_of(task: Task) -> dict | None:
    """The hidden spec of one of our tasks (None for a task without one, or of an unknown family)."""
    file = task.files.get("tests/spec.json")
    if file is None:
        return None
    try:
        spec = json.loads(file.text)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and spec.get("family") and isinstance(spec.get("outputs"), dict) else None


def params_of(task: Task) -> dict:
    file = task.files.get("solution/params.json")
    return json.loads(file.text) if file is not None else {}


def workspace(task: Task) -> dict[str, bytes]:
    return {p[len("environment/app/"):]: f.data for p, f in task.files.items() if p.startswith("environment/app/")}


def template_lines(spec: dict) -> list[str]:
    """The mail-merge template's paragraphs with their fields left out: the letter's fixed text."""
    return ["".join(v for k, v in segments if k == "text") for segments in spec["template"]]


def skeleton(spec: dict, files: dict[str, bytes]) -> dict[str, tuple[bytes, list[str]]]:
    """Each output as the instruction shapes it, with nothing in it: {path: (bytes, its names)}. The
    names are every sheet, header, heading, label and title it holds."""
    family, base = spec["family"], None
    if family == "budget_reconcile":
        sheets = {spec["sheet"]: [["Category", "Budget", "Actual", "Variance"]] + ([[spec["total"]["name"]]] if spec.get("total") else [])}
        if spec.get("unmatched") is not None:
            sheets[spec["unmatched_sheet"]] = [["Date", "Description", "Amount"]]
    elif family == "summary_formulas":
        rows: list[list] = []
        for table in spec["tables"]:
            rows += [[table["key"], *(h for h, _ in table["columns"])]]
            rows += [[table["total"]["label"]]] if table.get("total") else []
            rows += [[]]
        rows += [[f["label"]] for f in spec["figures"]]
        sheets, base = {spec["summary_sheet"]: rows}, files.get(spec["file"])
    elif family == "invoice_extract":
        sheets = {spec["sheet"]: [list(spec["columns"])]}
    elif family == "contacts_clean":
        return {spec["file"]: (csv_text([spec["header"]]), list(spec["header"]))}
    elif family == "memo_docx":
        return {spec["file"]: (docx_pages([[("h1", h) for h in spec["order"]]]), list(spec["order"]))}
    elif family == "mail_merge":
        lines = [x for x in template_lines(spec) if x.strip()]
        letters = docx_pages([[("p", x) for x in lines]] * (len(spec["letters"]) if spec["combined"] else 1))
        return {rel: (letters, lines[:3]) for rel in spec["outputs"]}
    elif family == "schedule_ics":
        titles = [m["title"] for m in spec["meetings"]]
        return {spec["file"]: (ics([{"summary": t} for t in titles]), titles)}
    else:
        return {}
    names = [n for name, rows in sheets.items() for n in (name, *(str(v) for r in rows for v in r))]
    return {spec["file"]: (xlsx(sheets, base), names)}


# -- the cheats' shared machinery ------------------------------------------------------------------

def naive_control(task: Task, checks: list[dict]) -> Task:
    """``task`` verified by verifier/naive.py with ``checks``: a verifier that checks what they check."""
    return task.with_files({
        "tests/naive.py": package_text("verifier", "naive.py"),
        "tests/naive.json": json.dumps({"checks": checks}, indent=1) + "\n",
        "tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\nexec python3 -I /tests/naive.py\n",
    })


def live_off_control(task: Task) -> Task:
    """``task`` whose checker accepts a right value in any form (no live-formula requirement)."""
    spec = spec_of(task) or {}
    return task.with_files({"tests/spec.json": json.dumps({**spec, "live": False}, indent=1, sort_keys=True) + "\n"})


class ProfessionalCheat(Cheat):
    """A cheat on our generated tasks (those with a hidden spec): ``documents`` builds the files it
    leaves in /app, ``checks`` the naive verifier's checks they pass (the positive control)."""

    domain = DOMAIN
    gate = False
    command_timeout = 120.0
    #: the families it means something on (None: any)
    families: ClassVar[tuple[str, ...] | None] = None

    def applies(self, task: Task) -> bool:
        spec = spec_of(task) if super().applies(task) else None
        if spec is None or (self.families is not None and spec["family"] not in self.families):
            return False
        try:
            return bool(self.documents(task, spec))
        except (KeyError, TypeError, ValueError, StopIteration):  # a spec of another shape (an LLM's task)
            return False

    @abc.abstractmethod
    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        """The files the cheat leaves in /app (path -> bytes)."""

    def checks(self, task: Task, spec: dict) -> list[dict]:
        """The naive verifier's checks these documents pass (the positive control). A cheat whose
        control is another verifier overrides ``control`` instead."""
        raise TypeError(f"{type(self).__name__} gives neither checks() nor its own control()")

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [f"mkdir -p /app && cp -r {STAGE}/. /app/ && rm -rf {STAGE} && ls -R /app | head -n 40"]

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        files = self.documents(task, spec_of(task) or {})
        await sandbox.upload_files(files, STAGE)
        return await super().run(task, sandbox, step=step, limits=limits)

    def control(self, task: Task) -> Task | None:
        spec = spec_of(task)
        return naive_control(task, self.checks(task, spec)) if spec else None


# -- cheap, for every family: the red-team gate runs these -----------------------------------------

class ResaveInput(ProfessionalCheat):
    """Hands the input back as the answer: an output the workspace already has is opened and saved
    again unchanged, a new one is a copy of the workspace file of its type with the closest name
    (contacts.csv as contacts_clean.csv, the template as every letter, budget.xlsx as the
    reconciliation)."""

    name = "professional.resave-input"
    gate = True

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        files, out = workspace(task), {}
        for rel, kind in spec["outputs"].items():
            if rel in files:
                out[rel] = resaved(files[rel], kind)
                continue
            same = [p for p in files if p.lower().endswith("." + kind)]
            if same:
                best = max(same, key=lambda p: difflib.SequenceMatcher(None, p.rsplit("/", 1)[-1], rel.rsplit("/", 1)[-1]).ratio())
                out[rel] = files[best]
        return out

    def checks(self, task: Task, spec: dict) -> list[dict]:
        files = workspace(task)
        return [{"kind": "valid", "file": rel, "type": spec["outputs"][rel], "changed": rel in files}
                for rel in self.documents(task, spec)]


class Skeleton(ProfessionalCheat):
    """Writes each output with the structure the instruction names and nothing in it: the sheets and
    their header rows, a CSV of the header alone, a memo of its headings, letters of the template's
    fixed text, a calendar of the meeting titles without times."""

    name = "professional.skeleton"
    gate = True

    def built(self, task: Task, spec: dict) -> dict[str, tuple[bytes, list[str]]]:
        """Each output: (its bytes, the names it holds)."""
        return skeleton(spec, workspace(task))

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        return {rel: data for rel, (data, _) in self.built(task, spec).items()}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": rel, "texts": names[:12]} for rel, (_, names) in self.built(task, spec).items()]


class WrongFormat(Skeleton):
    """Writes each output in another format under the right name: a PDF named .docx, CSV text named
    .xlsx, a workbook named .csv, a plain list named .ics, each holding the names the instruction
    asks for and the instruction itself."""

    name = "professional.wrong-format"

    def built(self, task: Task, spec: dict) -> dict[str, tuple[bytes, list[str]]]:
        files, out = workspace(task), {}
        shapes = skeleton(spec, files)
        instruction = [line for line in (task.instruction or "").splitlines() if line.strip()]
        for rel, kind in spec["outputs"].items():
            names = shapes[rel][1] if rel in shapes else []
            if not names and kind == "xlsx" and rel in files:  # an in-place workbook: its first header row
                import openpyxl

                ws = openpyxl.load_workbook(io.BytesIO(files[rel])).worksheets[0]
                names = [str(v) for v in next(ws.iter_rows(max_row=1, values_only=True), ()) if v is not None]
            names = names[:12]
            if kind == "docx":
                data = pdf(names + instruction)
            elif kind == "xlsx":
                data = csv_text([names] + [[line] for line in instruction])
            elif kind == "csv":
                data = xlsx({"Sheet1": [names]})
            else:
                data = ("\n".join(names + instruction) + "\n").encode()
            out[rel] = data, names
        return out


# -- one family each -------------------------------------------------------------------------------

def _records(data: bytes, spec: dict) -> list[dict]:
    """The order records of summary_formulas' data sheet: [{header: value}]."""
    import openpyxl

    ws = openpyxl.load_workbook(io.BytesIO(data))[spec["data_sheet"]]
    rows = list(ws.iter_rows(values_only=True))
    at = next(i for i, r in enumerate(rows) if all(h in r for h in spec["data_header"]))
    head = list(rows[at])
    return [dict(zip(head, r)) for r in rows[at + 1:] if any(v not in (None, "") for v in r)]


def summary_values(data: bytes, spec: dict) -> dict[str, list[list]]:
    """The Summary sheet summary_formulas asks for, with the numbers its formulas would compute."""
    recs = _records(data, spec)

    def amount(rs):
        return sum(float(r["Amount"]) for r in rs)

    metric = {"total": amount, "count": len, "avg": lambda rs: amount(rs) / len(rs),
              "units": lambda rs: sum(float(r["Units"]) for r in rs), "share": lambda rs: amount(rs) / amount(recs)}

    def day(value):
        return value.date().isoformat() if hasattr(value, "date") else str(value)[:10]

    rows: list[list] = []
    for table in spec["tables"]:
        rows.append([table["key"], *(h for h, _ in table["columns"])])
        for label in table["labels"]:
            group = [r for r in recs if " ".join(str(r[table["key"]]).split()).casefold() == label.casefold()]
            rows.append([label, *(metric[m](group) for _, m in table["columns"])])
        if table.get("total"):
            total = dict(table["total"]["columns"])
            rows.append([table["total"]["label"], *(metric[total[h]](recs) if h in total else None
                                                    for h, _ in table["columns"])])
        rows.append([])
    for fig in spec["figures"]:
        value = {"max": lambda: max(float(r["Amount"]) for r in recs),
                 "per_unit": lambda: amount(recs) / sum(float(r["Units"]) for r in recs),
                 "between": lambda: amount([r for r in recs if fig["from"] <= day(r["Date"]) <= fig["to"]]),
                 "over": lambda: sum(1 for r in recs if float(r["Amount"]) > fig["threshold"])}[fig["fn"]]()
        rows.append([fig["label"], value])
    return {spec["summary_sheet"]: rows}


class TypedValues(ProfessionalCheat):
    """summary_formulas: computes every summary number itself and types it in, no formula anywhere
    (what "formulas, not pasted numbers" forbids)."""

    name = "professional.typed-values"
    families = ("summary_formulas",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        base = workspace(task)[spec["file"]]
        return {spec["file"]: xlsx(summary_values(base, spec), base)}

    def control(self, task: Task) -> Task | None:
        return live_off_control(task)


class ConstantFormulas(TypedValues):
    """summary_formulas: every summary number as a formula that is only the number (``=4314.51``):
    a formula to whoever checks for one, frozen to whoever edits the orders."""

    name = "professional.constant-formulas"

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        base = workspace(task)[spec["file"]]
        sheets = {name: [[f"={v!r}" if isinstance(v, (int, float)) else v for v in row] for row in rows]
                  for name, rows in summary_values(base, spec).items()}
        return {spec["file"]: xlsx(sheets, base)}


class BalancedBooks(ProfessionalCheat):
    """budget_reconcile: copies each budget into Actual, so every variance is 0 and the Total row
    adds up; the Unmatched sheet gets its header and nothing else."""

    name = "professional.balanced-books"
    families = ("budget_reconcile",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        rows: list[list] = [["Category", "Budget", "Actual", "Variance"]]
        rows += [[c["name"], c["budget"], c["budget"], 0] for c in spec["categories"]]
        if spec.get("total"):
            total = sum(c["budget"] for c in spec["categories"])
            rows.append([spec["total"]["name"], total, total, 0])
        sheets = {spec["sheet"]: rows}
        if spec.get("unmatched") is not None:
            sheets[spec["unmatched_sheet"]] = [["Date", "Description", "Amount"]]
        return {spec["file"]: xlsx(sheets)}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": spec["file"], "texts": [c["name"] for c in spec["categories"]],
                 "numbers": [c["budget"] for c in spec["categories"]]}]


class TextDump(ProfessionalCheat):
    """invoice_extract: one row per PDF with the PDF's whole text in every cell, so each field's
    value is "in" its cell somewhere."""

    name = "professional.text-dump"
    families = ("invoice_extract",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        import pypdf

        rows = [list(spec["columns"])]
        for rel, data in sorted(workspace(task).items()):
            if rel.lower().endswith(".pdf"):
                text = "\n".join(p.extract_text() or "" for p in pypdf.PdfReader(io.BytesIO(data)).pages)
                rows.append([text[:30000]] * len(spec["columns"]))
        return {spec["file"]: xlsx({spec["sheet"]: rows})}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": spec["file"],
                 "texts": [inv["number"] for inv in spec["invoices"]] + sorted({inv["vendor"] for inv in spec["invoices"]})}]


class InstructionDocx(ProfessionalCheat):
    """memo_docx: a memo whose required headings each open a section holding the instruction's own
    words: the request, written back as its answer."""

    name = "professional.instruction-docx"
    families = ("memo_docx",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        lines = [line.strip() for line in (task.instruction or "").splitlines() if line.strip()]
        page = []
        for heading in spec["order"]:
            page.append(("h1", heading))
            page += [("p", line) for line in lines if heading.casefold() in line.casefold()] or [("p", lines[0])]
        page += [("p", line) for line in lines]
        return {spec["file"]: docx_pages([page])}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": spec["file"], "texts": list(spec["order"])}]


class DumpSources(ProfessionalCheat):
    """memo_docx: the required headings, each followed by every line of every source file (the data
    JSON and the meeting notes): all the names and numbers are in the memo, none is worked out."""

    name = "professional.dump-sources"
    families = ("memo_docx",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        lines = []
        for rel, data in sorted(workspace(task).items()):
            text = data.decode("utf-8", errors="replace")
            if rel.endswith(".json"):
                text = json.dumps(json.loads(text), indent=1)
            lines += [x.strip() for x in text.splitlines() if x.strip() not in ("", "{", "}", "[", "]", "},", "],")]
        page = []
        for heading in spec["order"]:
            page += [("h1", heading)] + [("p", x) for x in lines]
        return {spec["file"]: docx_pages([page])}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": spec["file"], "texts": list(spec["order"]) + list(spec["figures"]["rows"])}]


class WrongTimes(ProfessionalCheat):
    """schedule_ics: one event per requested meeting with the right title, attendees, length and a
    room, all booked at the first allowed minute of the first allowed day, whatever the calendars say."""

    name = "professional.wrong-times"
    families = ("schedule_ics",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        import datetime as dt

        rules = spec["rules"]
        events = []
        for m in spec["meetings"]:
            day = dt.date.fromisoformat((m["days"] or rules["days"])[0])
            start = dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=rules["start"])
            end = start + dt.timedelta(minutes=m["minutes"])
            room = next((r["name"] for r in spec["rooms"] if r["capacity"] >= len(m["emails"])), "") if spec["rooms"] else ""
            events.append({"summary": m["title"], "start": f"{start:%Y%m%dT%H%M%S}", "end": f"{end:%Y%m%dT%H%M%S}",
                           "attendees": m["emails"], "location": room})
        return {spec["file"]: ics(events)}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "contains", "file": spec["file"],
                 "texts": [m["title"] for m in spec["meetings"]] + sorted({e for m in spec["meetings"] for e in m["emails"]})}]


_FIELDS = (("first", ("first", "given")), ("last", ("last", "surname", "family")), ("email", ("mail",)),
           ("phone", ("phone", "tel", "mobile")), ("company", ("company", "org", "employer", "account")),
           ("city", ("city", "town")))


class ExamplePhone(ProfessionalCheat):
    """contacts_clean: every input row under the asked header, names title-cased and e-mails
    lower-cased, every phone replaced by the example number the instruction gives, nobody merged."""

    name = "professional.example-phone"
    families = ("contacts_clean",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        example = re.search(r"\+1-\d{3}-\d{3}-\d{4}", task.instruction or "")
        phone = example.group(0) if example else "+1-555-123-4567"
        people = []
        for rel, data in sorted(workspace(task).items()):
            if not rel.endswith(".csv"):
                continue
            for row in csv.DictReader(io.StringIO(data.decode("utf-8-sig"))):
                got = {}
                for field, hints in _FIELDS:
                    column = next((c for c in row if c and any(h in c.lower() for h in hints)), None)
                    got[field] = " ".join(str(row.get(column) or "").split()) if column else ""
                if not any(got.values()):
                    continue
                got["first"], got["last"] = got["first"].title(), got["last"].title()
                got["email"], got["phone"] = got["email"].lower(), phone
                people.append([got[f] for f, _ in _FIELDS])
        people.sort(key=lambda p: (p[1].casefold(), p[0].casefold()))
        return {spec["file"]: csv_text([spec["header"]] + people)}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        email = spec["header"][2]
        return [{"kind": "contains", "file": spec["file"],
                 "texts": list(spec["header"]) + [p[email] for p in spec["people"] if p[email]]}]


class FormatEverything(ProfessionalCheat):
    """format_sheet: the money format on every number of the sheet, whatever its column, a bold
    header, frozen panes, an autofilter, wide columns and the header fill: every rule "applied"
    without reading which column each is for."""

    name = "professional.format-everything"
    families = ("format_sheet",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        import openpyxl
        from openpyxl.styles import Font, PatternFill
        from openpyxl.utils import get_column_letter

        rules = spec["rules"]
        wb = openpyxl.load_workbook(io.BytesIO(workspace(task)[spec["file"]]))
        ws = wb[spec["sheet"]]
        for cell in ws[1]:
            cell.font = Font(bold=True)
            if rules.get("header_fill"):
                cell.fill = PatternFill(fill_type="solid", fgColor=rules["header_fill"])
        for row in ws.iter_rows(min_row=2):
            for cell in row:
                cell.number_format = rules["money_format"]
        for col in range(1, ws.max_column + 1):
            ws.column_dimensions[get_column_letter(col)].width = (rules.get("min_width") or 12) + 2
        ws.freeze_panes = rules["freeze"]
        ws.auto_filter.ref = ws.dimensions
        out = io.BytesIO()
        wb.save(out)
        return {spec["file"]: out.getvalue()}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        return [{"kind": "styled", "file": spec["file"], "sheet": spec["sheet"]}]


class EveryLetter(ProfessionalCheat):
    """mail_merge: a letter for every row of recipients.csv, the filter ignored, each placeholder
    replaced by the cell as it stands (no amount or date formatting)."""

    name = "professional.every-letter"
    families = ("mail_merge",)

    def documents(self, task: Task, spec: dict) -> dict[str, bytes]:
        params, files = params_of(task), workspace(task)
        token = re.compile(r"«(\w+)»|\{\{\s*(\w+)\s*\}\}")
        template = params.get("template", "")
        if template.endswith(".md"):
            lines = [x for x in files[template].decode("utf-8").splitlines() if x.strip()]
        else:
            import docx

            lines = [p.text for p in docx.Document(io.BytesIO(files[template])).paragraphs if p.text.strip()]
        rows = list(csv.DictReader(io.StringIO(files["recipients.csv"].decode("utf-8-sig"))))
        letters = {row[params["key"]]: [("p", token.sub(lambda m: row.get(m.group(1) or m.group(2), ""), x)) for x in lines]
                   for row in rows}
        if spec["combined"]:
            return {next(iter(spec["outputs"])): docx_pages(list(letters.values()))}
        return {f"letters/{key}.docx": docx_pages([page]) for key, page in letters.items()}

    def checks(self, task: Task, spec: dict) -> list[dict]:
        if spec["combined"]:
            return [{"kind": "contains", "file": next(iter(spec["outputs"])), "texts": [e["name"] for e in spec["letters"]]}]
        return [{"kind": "contains", "file": f"letters/{e['key']}.docx", "texts": e["name"].split()} for e in spec["letters"]]

