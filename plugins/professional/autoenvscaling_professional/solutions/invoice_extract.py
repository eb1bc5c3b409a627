"""Reference solution for invoice_extract: pypdf text of every PDF, fields by their printed labels
(each vendor template words them differently), dates in the template's format, then the register.
``--wrong``: the plausible wrong answer (the subtotal recorded as the Total)."""

import datetime as dt
import glob
import json
import os
import re
import sys

import openpyxl
import pypdf

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)

TITLES = {"INVOICE", "TAX INVOICE", "CREDIT NOTE"}
LABELS = {
    "number": r"Credit Note No\.|Credit #|Credit Note Ref|Invoice No\.|Invoice #|Reference",
    "date": r"Invoice Date|Issue Date|Date",
    "due": r"Due Date|Payment Due|Due By",
    "subtotal": r"Subtotal",
    "tax": r"Tax \([\d.]+%\)|Sales Tax [\d.]+%|VAT @ [\d.]+%",
    "total": r"Total|Amount Due|Total Due|Total Credit|Credit Total|Total Credited",
}


def labelled(text: str, name: str) -> str | None:
    """The value after ``label:``, on the same line or the next one; the last one in the document."""
    found = re.findall(rf"^(?:{LABELS[name]}):[ \t]*\n?[ \t]*(.+)$", text, re.MULTILINE)
    return found[-1].strip() if found else None


def money(text: str | None) -> float:
    if text is None:
        raise ValueError("an amount is missing from the invoice")
    value = float(re.sub(r"[^\d.]", "", text))
    return -value if text.strip().startswith("-") else value


def date(text: str | None):
    if not text:
        return None
    for fmt in ("%Y-%m-%d", "%B %d, %Y", "%d/%m/%Y" if P["dayfirst"] else "%m/%d/%Y"):
        try:
            return dt.datetime.strptime(text.strip(), fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unreadable date {text!r}")


records = []
for path in sorted(glob.glob(os.path.join(P["folder"], "*.pdf"))):
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    vendor = next(ln for ln in lines if ln.upper() not in TITLES)
    total = money(labelled(text, "subtotal" if WRONG else "total"))
    records.append({"Invoice Number": labelled(text, "number"), "Vendor": vendor,
                    "Invoice Date": date(labelled(text, "date")), "Due Date": date(labelled(text, "due")),
                    "Total": total, "Tax": money(labelled(text, "tax"))})

sort = P["sort"]
if sort:
    records.sort(key=lambda r: r[sort["column"]], reverse=sort["descending"])
wb = openpyxl.Workbook()
ws = wb.active
ws.title = P["sheet"]
ws.append(P["columns"])
for rec in records:
    ws.append([rec[c] for c in P["columns"]])
for row in ws.iter_rows(min_row=2):
    for cell in row:
        if isinstance(cell.value, dt.date):
            cell.number_format = "yyyy-mm-dd"
wb.save(P["file"])
print(f"logged {len(records)} documents on {P['sheet']}")
