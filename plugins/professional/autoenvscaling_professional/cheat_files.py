"""Documents the professional domain's cheats build on the host (cheats.py): workbooks, Word
pages, CSV, calendars, PDFs, and an input saved again by its own library."""

from __future__ import annotations

import csv
import io


def xlsx(sheets: dict[str, list[list]], base: bytes | None = None) -> bytes:
    """A workbook with ``sheets`` (rows of values) added to ``base`` (or to a new one)."""
    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(base)) if base else openpyxl.Workbook()
    if base is None:
        wb.remove(wb.active)  # the new workbook's default sheet
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def docx_pages(pages: list[list[tuple[str, str]]]) -> bytes:
    """A Word document: each page a list of (style, text), "h1" a Heading 1; pages split by breaks."""
    import docx

    doc = docx.Document()
    for i, page in enumerate(pages):
        if i:
            doc.add_page_break()
        for style, text in page:
            if style == "h1":
                doc.add_heading(text, level=1)
            else:
                doc.add_paragraph(text)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def csv_text(rows: list[list]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def ics(events: list[dict]) -> bytes:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//aes cheat//EN"]
    for i, ev in enumerate(events):
        lines += ["BEGIN:VEVENT", f"UID:cheat-{i}@aes", f"SUMMARY:{ev['summary']}"]
        if ev.get("start"):
            lines += [f"DTSTART:{ev['start']}", f"DTEND:{ev['end']}"]
        lines += [f"ATTENDEE:mailto:{a}" for a in ev.get("attendees", [])]
        if ev.get("location"):
            lines.append(f"LOCATION:{ev['location']}")
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return ("\r\n".join(lines) + "\r\n").encode()


def pdf(lines: list[str]) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out, pagesize=A4)
    y = 800
    for line in lines:
        for part in [line[i:i + 95] for i in range(0, len(line), 95)] or [""]:
            if y < 40:
                page.showPage()
                y = 800
            page.drawString(40, y, part)
            y -= 14
    page.save()
    return out.getvalue()


def resaved(data: bytes, kind: str) -> bytes:
    """The document opened and saved again by its library: new bytes, the same content."""
    out = io.BytesIO()
    if kind == "xlsx":
        import openpyxl

        openpyxl.load_workbook(io.BytesIO(data)).save(out)
    elif kind == "docx":
        import docx

        docx.Document(io.BytesIO(data)).save(out)
    else:
        return data.rstrip(b"\n") + b"\n\n"
    return out.getvalue()
