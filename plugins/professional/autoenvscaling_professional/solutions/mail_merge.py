"""Reference solution for mail_merge: filter recipients.csv, format the amount and date, replace the
placeholders paragraph by paragraph (Word may split one over several runs, so the paragraph's whole
text is rewritten into its first run), one letters/<key>.docx each or one letters.docx with page breaks.
``--wrong``: the plausible wrong answer (the amount merged as it stands in the CSV)."""

import copy
import csv
import datetime as dt
import json
import os
import re
import sys

import docx

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]
TOKEN = re.compile(r"«(\w+)»" if P["camel"] else r"\{\{\s*(\w+)\s*\}\}")


def wanted(row):
    f = P["filter"]
    if f is None:
        return True
    return (row[f["column"]] == f["value"] and (f["min"] is None or float(row[P["money"]]) >= f["min"])
            and (f["month"] is None or row[P["date"]].startswith(f["month"])))


def values(row):
    out = dict(row)
    if not WRONG:
        out[P["money"]] = f"${float(row[P['money']]):,.2f}"
    if P["date"]:
        d = dt.date.fromisoformat(row[P["date"]])
        month = MONTHS[d.month - 1]
        out[P["date"]] = f"{d.day} {month} {d.year}" if P["date_style"] == "dmy" else f"{month} {d.day}, {d.year}"
    return out


def merge(paragraph, row):
    text = paragraph.text
    merged = TOKEN.sub(lambda m: row[m.group(1)], text)
    if merged != text:
        runs = paragraph.runs
        runs[0].text = merged
        for run in runs[1:]:
            run._r.getparent().remove(run._r)


def letter(row):
    """The template merged with one row, as a python-docx Document."""
    if P["template"].endswith(".md"):
        doc = docx.Document()
        for line in open(P["template"], encoding="utf-8").read().splitlines():
            if line.strip():
                doc.add_paragraph(TOKEN.sub(lambda m: row[m.group(1)], line))
        return doc
    doc = docx.Document(P["template"])
    for p in doc.paragraphs:
        merge(p, row)
    return doc


with open("recipients.csv", encoding="utf-8") as fh:
    rows = [values(r) for r in csv.DictReader(fh) if wanted(r)]
if P["combined"]:
    out = None
    for i, row in enumerate(rows):
        doc = letter(row)
        if out is None:
            out = doc
            continue
        out.add_page_break()
        body = out.element.body
        for block in doc.element.body.iterchildren():
            if not block.tag.endswith("}sectPr"):
                body.insert(len(body) - 1, copy.deepcopy(block))
    if out is None:
        sys.exit("no recipient is to get a letter")
    out.save("letters.docx")
else:
    os.makedirs("letters", exist_ok=True)
    for row in rows:
        letter(row).save(os.path.join("letters", f"{row[P['key']]}.docx"))
print("merged", len(rows), "letters")
