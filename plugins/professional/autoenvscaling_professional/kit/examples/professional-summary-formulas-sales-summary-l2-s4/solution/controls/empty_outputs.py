"""Negative control "empty": every output the task asks for, written as a valid but empty document
of its type (an empty workbook, a blank .docx, a calendar with no events, ...). It must score 0."""

import json
import os

with open("/solution/params.json", encoding="utf-8") as fh:
    OUTPUTS = json.load(fh)["outputs"]

for rel, kind in OUTPUTS.items():
    target = os.path.join("/app", rel)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    if kind == "xlsx":
        import openpyxl

        openpyxl.Workbook().save(target)
    elif kind == "docx":
        import docx

        docx.Document().save(target)
    elif kind == "ics":
        with open(target, "w", encoding="utf-8") as fh:
            fh.write("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//empty control//EN\r\nEND:VCALENDAR\r\n")
    elif kind == "json":
        with open(target, "w", encoding="utf-8") as fh:
            fh.write("{}\n")
    elif kind == "pdf":
        from reportlab.pdfgen import canvas

        canvas.Canvas(target).save()
    else:  # csv, md, txt: an empty file
        open(target, "w").close()
    print("wrote empty", rel)
