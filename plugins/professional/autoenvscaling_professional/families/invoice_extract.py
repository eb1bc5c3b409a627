"""invoice_extract: read supplier invoices (PDF) and record their fields in a spreadsheet.

The workspace holds ``invoices/*.pdf``, drawn with reportlab from up to three vendor templates that
differ the way real suppliers do: the number is labelled "Invoice No.", "Invoice #" or "Reference";
dates print as 2025-03-04, March 4, 2025 or 04/03/2025 (the UK/Irish template, day first, which
the instruction states); the total is "Total", "Amount Due" or "Total Due"; blocks sit in different
places. Every invoice carries a subtotal and a tax line, so the total is never the only amount.
Levels add invoices and line items, the Due Date column (level 2+), then (level 3+) the Tax column,
a credit note (its own number, a reference to the invoice it credits, negative amounts, no due
date) and a two-page invoice whose first page ends with a "carried forward" amount.

Output: ``invoices.xlsx``, a named sheet with a given header and one row per PDF, sorted as asked.
Checks: per document, each field of its row (found by the invoice number); extra rows penalised;
the order (with correct sort keys). Mistake of the wrong answer: the subtotal recorded as the total.
"""

from __future__ import annotations

import datetime as dt
import io
import random
from typing import TypedDict

from . import content
from .base import Draft

COUNTS = (2, 3, 5, 7, 10, 14)
US_CITIES = [c for c in content.CITIES if c[0] in ("Portland", "Austin", "Denver", "Madison", "Raleigh", "Toronto", "Ottawa")]
UK_CITIES = [c for c in content.CITIES if c[0] in ("Leeds", "Bristol", "Glasgow", "Dublin", "Cork")]
VARIANTS = ("black", "white", "pack of 10", "large", "small", "grey", "box of 5", "refill")

# What differs between vendors' templates: labels, date format, currency, page size, layout.
class Template(TypedDict):
    """An invoice layout's labels: the header fields, the tax line (``{rate}``), the table columns."""

    number: str
    date: str
    due: str
    total: str
    tax: str
    cn_number: str
    cn_total: str
    cols: tuple[str, str, str, str]


TEMPLATES: dict[str, Template] = {
    "classic": {"number": "Invoice No.", "date": "Invoice Date", "due": "Due Date", "total": "Total",
                "tax": "Tax ({rate}%)", "cn_number": "Credit Note No.", "cn_total": "Total Credit",
                "cols": ("Description", "Qty", "Unit Price", "Amount")},
    "modern": {"number": "Invoice #", "date": "Date", "due": "Payment Due", "total": "Amount Due",
               "tax": "Sales Tax {rate}%", "cn_number": "Credit #", "cn_total": "Credit Total",
               "cols": ("Item", "Qty", "Rate", "Line Total")},
    "uk": {"number": "Reference", "date": "Issue Date", "due": "Due By", "total": "Total Due",
           "tax": "VAT @ {rate}%", "cn_number": "Credit Note Ref", "cn_total": "Total Credited",
           "cols": ("Description", "Quantity", "Unit Price", "Net")},
}


def _fmt_date(day: dt.date, template: str) -> str:
    if template == "classic":
        return day.isoformat()
    if template == "modern":
        return content.long_date(day, "mdy")
    return day.strftime("%d/%m/%Y")


def _items(rng: random.Random, n: int, sign: int = 1) -> list[tuple[str, int, float, float]]:
    """(description, qty, unit price, line total) rows; goods by the unit, services by the hour."""
    out = []
    for _ in range(n):
        if rng.random() < 0.6:
            desc = f"{rng.choice(content.PRODUCTS)} ({rng.choice(VARIANTS)})"
            qty, price = rng.randint(1, 12), content.money(rng, 4, 480)
        else:
            desc, qty, price = rng.choice(content.SERVICES), rng.randint(1, 24), content.money(rng, 35, 160)
        out.append((desc, sign * qty, price, round(sign * qty * price, 2)))
    return out


def _pdf(inv: dict, buyer: tuple[str, str]) -> bytes:
    """One invoice or credit note as a PDF; long item lists continue on a second page."""
    from reportlab.lib.pagesizes import A4, letter
    from reportlab.pdfgen import canvas

    tpl = TEMPLATES[inv["template"]]
    cur = inv["currency"]
    credit = inv["credit"]
    size = A4 if inv["template"] == "uk" else letter
    width, height = size
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=size, invariant=1)
    c.setTitle(f"{'Credit note' if credit else 'Invoice'} {inv['number']}")
    c.setAuthor(inv["vendor"])
    title = "CREDIT NOTE" if credit else ("TAX INVOICE" if inv["template"] == "uk" else "INVOICE")
    meta = [(tpl["cn_number"] if credit else tpl["number"], inv["number"]),
            ("Date" if credit else tpl["date"], _fmt_date(inv["date"], inv["template"]))]
    if credit:
        meta.append(("Credits invoice", inv["credits"]))
    else:
        meta.append((tpl["due"], _fmt_date(inv["due"], inv["template"])))
        meta.append(("Terms", f"Net {inv['terms']}"))
    vendor_lines = [inv["street"], inv["city"], inv["contact"]]
    top = height - 60
    if inv["template"] == "classic":
        c.setFont("Helvetica-Bold", 18)
        c.drawString(50, top, inv["vendor"])
        c.setFont("Helvetica", 10)
        for i, line in enumerate(vendor_lines):
            c.drawString(50, top - 16 - 13 * i, line)
        c.setFont("Helvetica-Bold", 22)
        c.drawRightString(width - 50, top, title)
        meta_x, meta_y, bill_x, bill_y = width - 230, top - 40, 50, top - 90
    elif inv["template"] == "modern":
        c.setFont("Helvetica-Bold", 26)
        c.drawString(50, top, title)
        c.setFont("Helvetica-Bold", 12)
        c.drawRightString(width - 50, top, inv["vendor"])
        c.setFont("Helvetica", 9)
        for i, line in enumerate(vendor_lines):
            c.drawRightString(width - 50, top - 15 - 12 * i, line)
        meta_x, meta_y, bill_x, bill_y = 50, top - 45, 320, top - 95
    else:
        c.setFont("Helvetica-Bold", 16)
        c.drawCentredString(width / 2, top, inv["vendor"])
        c.setFont("Helvetica", 9)
        c.drawCentredString(width / 2, top - 15, " | ".join(vendor_lines))
        c.setFont("Helvetica-Bold", 14)
        c.drawString(50, top - 50, title)
        meta_x, meta_y, bill_x, bill_y = width - 240, top - 75, 50, top - 75
    c.setFont("Helvetica", 10)
    for i, (label, value) in enumerate(meta):
        c.drawString(meta_x, meta_y - 14 * i, f"{label}: {value}")
    c.setFont("Helvetica-Bold", 10)
    c.drawString(bill_x, bill_y, "Bill To:")
    c.setFont("Helvetica", 10)
    c.drawString(bill_x, bill_y - 14, buyer[0])
    c.drawString(bill_x, bill_y - 28, buyer[1])

    cols = (50, width - 260, width - 170, width - 50)

    def header_row(y: float) -> float:
        c.setFont("Helvetica-Bold", 10)
        c.drawString(cols[0], y, tpl["cols"][0])
        for x, name in zip(cols[1:], tpl["cols"][1:]):
            c.drawRightString(x, y, name)
        c.line(50, y - 4, width - 50, y - 4)
        c.setFont("Helvetica", 10)
        return y - 18

    def footer(page: int, pages: int) -> None:
        c.setFont("Helvetica", 8)
        c.drawString(50, 30, inv["footer"])
        c.drawRightString(width - 50, 30, f"Page {page} of {pages}")

    per_page = 28
    pages = 1 if len(inv["items"]) <= per_page else 2
    y = header_row(min(bill_y, meta_y - 14 * len(meta)) - 40)
    carried = 0.0
    for n, (desc, qty, price, amount) in enumerate(inv["items"]):
        if n == per_page:
            c.drawRightString(cols[3], y - 6, f"Carried forward: {content.fmt_money(carried, cur)}")
            c.drawString(50, y - 6, "Continued on page 2")
            footer(1, pages)
            c.showPage()
            c.setFont("Helvetica-Bold", 11)
            c.drawString(50, height - 60, f"{inv['vendor']} - {title.title()} {inv['number']} (continued)")
            c.setFont("Helvetica", 10)
            c.drawRightString(cols[3], height - 80, f"Brought forward: {content.fmt_money(carried, cur)}")
            y = header_row(height - 110)
        c.drawString(cols[0], y, desc)
        c.drawRightString(cols[1], y, str(qty))
        c.drawRightString(cols[2], y, content.fmt_money(price, cur))
        c.drawRightString(cols[3], y, content.fmt_money(amount, cur))
        carried = round(carried + amount, 2)
        y -= 15
    c.line(width - 260, y + 5, width - 50, y + 5)
    totals = [("Subtotal", inv["subtotal"]), (tpl["tax"].format(rate=inv["rate"]), inv["tax"]),
              (tpl["cn_total"] if credit else tpl["total"], inv["total"])]
    for i, (label, value) in enumerate(totals):
        c.setFont("Helvetica-Bold" if i == 2 else "Helvetica", 10)
        c.drawString(width - 260, y - 12 - 15 * i, f"{label}:")
        c.drawRightString(cols[3], y - 12 - 15 * i, content.fmt_money(value, cur))
    footer(pages, pages)
    c.showPage()
    c.save()
    return buf.getvalue()


def _vendors(rng: random.Random, n_templates: int, count: int) -> list[dict]:
    templates = rng.sample(sorted(TEMPLATES), n_templates)
    names = content.companies(rng, count)
    out = []
    for i, name in enumerate(names):
        template = templates[i % n_templates]
        uk = template == "uk"
        city, post = rng.choice(UK_CITIES if uk else US_CITIES)
        irish = city in ("Dublin", "Cork")
        rate: float
        if uk:
            currency, rate = ("€", 23) if irish else ("£", 20)
            footer = f"VAT reg. no. {'IE' if irish else 'GB'} {rng.randint(1000000, 9999999)}"
        else:
            currency, rate = "$", rng.choice((5, 6.25, 7.5, 8.25, 8.875))
            footer = rng.choice(("Thank you for your business.", "Please quote the invoice number with payment."))
        out.append({"vendor": name, "template": template, "street": f"{rng.randint(1, 240)} {rng.choice(content.STREETS)}",
                    "city": f"{city} {post}", "currency": currency, "rate": rate, "footer": footer,
                    "terms": rng.choice((14, 30, 45, 60)), "initials": "".join(w[0] for w in name.split()[:2]).upper(),
                    "contact": f"accounts@{name.split()[0].lower()}.example.com"})
    return out


def _invoices(rng: random.Random, level: int) -> list[dict]:
    n = COUNTS[level]
    credits = 0 if level < 3 else 1 if level < 5 else 2
    vendors = _vendors(rng, 1 if level == 0 else 2 if level == 1 else 3, max(1, min(n - credits, 2 + level)))
    year, month = content.period(rng)
    start = dt.date(year, month, 1)
    days = sorted(rng.sample(range(0, 20 + 8 * n), n))
    rng.shuffle(days)
    long_one = 0 if level >= 3 else None
    out: list[dict] = []
    seq: dict[str, int] = {}
    used: set[str] = set()
    for i in range(n - credits):
        v = vendors[i % len(vendors)] if i < len(vendors) else rng.choice(vendors)
        number = ""
        while not number or number in used:
            seq[v["vendor"]] = seq.get(v["vendor"], rng.randint(40, 900)) + rng.randint(1, 6)
            k = seq[v["vendor"]]
            number = {"classic": f"INV-{year}-{k:04d}", "modern": f"{v['initials']}{k * 7 + 10000}",
                      "uk": f"{v['initials']}/{year % 100}/{k:04d}"}[v["template"]]
        used.add(number)
        size = rng.randint(34, 44) if i == long_one else rng.randint(1, 2 + level)
        date = start + dt.timedelta(days=days[i])
        out.append({**v, "number": number, "credit": False, "date": date, "items": _items(rng, size),
                    "due": date + dt.timedelta(days=v["terms"]), "pages": 2 if size > 28 else 1})
    for j, orig in enumerate(rng.sample(out, credits)):
        date = max(orig["date"], start + dt.timedelta(days=days[n - credits + j])) + dt.timedelta(days=1)
        while date in {x["date"] for x in out}:
            date += dt.timedelta(days=1)
        number = f"CN-{rng.randint(100, 999)}"
        while number in used:
            number = f"CN-{rng.randint(100, 999)}"
        used.add(number)
        out.append({**{k: orig[k] for k in ("vendor", "template", "street", "city", "currency", "rate", "terms",
                                               "initials", "contact", "footer")},
                    "number": number, "credit": True, "credits": orig["number"], "date": date,
                    "items": _items(rng, rng.randint(1, 2), sign=-1), "due": None, "pages": 1})
    for inv in out:
        inv["subtotal"] = round(sum(item[3] for item in inv["items"]), 2)
        inv["tax"] = round(inv["subtotal"] * inv["rate"] / 100, 2)
        inv["total"] = round(inv["subtotal"] + inv["tax"], 2)
    return out


def build(rng: random.Random, level: int) -> Draft:
    buyer = (content.company(rng), f"{rng.randint(1, 240)} {rng.choice(content.STREETS)}, {' '.join(rng.choice(US_CITIES))}")
    invoices = _invoices(rng, level)
    files = {}
    for idx, inv in enumerate(rng.sample(invoices, len(invoices)), start=1):
        name = f"invoices/{inv['vendor'].split()[0].lower()}_{rng.choice(('scan', 'doc', 'pdf', 'inv'))}{idx:02d}.pdf"
        inv["file"] = name
        files[name] = _pdf(inv, buyer)
    columns = ["Invoice Number", "Vendor", "Invoice Date", "Due Date", "Total", "Tax"][:5 + (level >= 3)]
    if level < 2:
        columns.remove("Due Date")
    sort = None
    if level >= 1:
        options = [("Invoice Date", False, "by Invoice Date, oldest first")]
        if level >= 3:
            options.append(("Invoice Date", True, "by Invoice Date, newest first"))
        if level >= 3 and len({inv["total"] for inv in invoices}) == len(invoices):
            options.append(("Total", True, "by Total, largest first"))
        sort = rng.choice(options)
    expected = [{"number": inv["number"], "vendor": inv["vendor"], "date": inv["date"].isoformat(),
                 "due": inv["due"].isoformat() if inv["due"] else None, "total": inv["total"], "tax": inv["tax"],
                 "subtotal": inv["subtotal"], "file": inv["file"], "credit": inv["credit"]} for inv in invoices]
    if sort:
        key = "date" if sort[0] == "Invoice Date" else "total"
        expected.sort(key=lambda e: e[key], reverse=sort[1])
    sheet = rng.choice(["Invoices", "AP Register", "Payables", "Invoice Log", "Supplier Invoices"])
    credit_count = sum(inv["credit"] for inv in invoices)
    uk = any(inv["template"] == "uk" for inv in invoices)
    intro = rng.choice([
        f"Accounts payable is behind: the folder invoices/ holds {len(invoices)} supplier PDFs that nobody has logged yet.",
        f"I've dropped the latest supplier paperwork into invoices/ ({len(invoices)} PDFs) and need it in a register.",
        f"Before the payment run, the {len(invoices)} PDFs in invoices/ have to be entered into a spreadsheet.",
    ])
    notes = [
        "Invoice Number: the document's own number exactly as printed"
        + (" (for a credit note, its credit note number, not the invoice it credits)." if credit_count else "."),
        "Vendor: the supplier's company name as printed on the document.",
        "Invoice Date" + (" and Due Date" if level >= 2 else "") + ": real Excel dates, or text as yyyy-mm-dd."
        + (" Our UK and Irish suppliers print dates day first (DD/MM/YYYY, so 04/03/2025 is 4 March 2025)." if uk else ""),
        "Total: the full amount of the document including tax (not the subtotal), as a number without a currency symbol.",
    ]
    if level >= 3:
        notes.append("Tax: the tax or VAT amount (not the rate), as a number.")
    if credit_count:
        one = credit_count == 1
        notes.append(f"There {'is a credit note' if one else f'are {credit_count} credit notes'} among them: log "
                     f"{'it' if one else 'them'} like an invoice, with Total{' and Tax' if level >= 3 else ''} as "
                     f"negative numbers{' and the Due Date left empty' if level >= 2 else ''}.")
    order = f" Sort the rows {sort[2]}." if sort else ""
    instruction = (f"{intro} Please create invoices.xlsx in /app with a sheet named \"{sheet}\" whose row 1 is the header "
                   f"{' | '.join(columns)} (one column each), then one row per PDF and no other rows.{order}\n\n"
                   + "\n".join(f"- {x}" for x in notes) + "\n\nDo not modify the PDFs.\n")
    spec = {"file": "invoices.xlsx", "sheet": sheet, "columns": columns, "invoices": expected,
            "sort": {"column": sort[0], "descending": sort[1]} if sort else None}
    params = {"file": "invoices.xlsx", "folder": "invoices", "sheet": sheet, "columns": columns,
              "sort": spec["sort"], "dayfirst": uk}
    return Draft(kind="invoice_register", instruction=instruction, files=files, spec=spec, params=params,
                 outputs={"invoices.xlsx": "xlsx"}, mistake="the subtotal (before tax) is recorded as the Total",
                 parameters={"documents": len(invoices), "credit_notes": credit_count,
                             "templates": len({inv["template"] for inv in invoices}),
                             "pages": sum(inv["pages"] for inv in invoices), "columns": len(columns)},
                 tags=["pdf", "xlsx", "extraction"], agent_timeout_sec=900.0)
