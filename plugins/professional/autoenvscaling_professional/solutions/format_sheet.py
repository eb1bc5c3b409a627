"""Reference solution for format_sheet: style the sheet with openpyxl, values untouched.
``--wrong``: the plausible wrong answer (the Margin ratio gets the money format)."""

import json
import sys

import openpyxl
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)
rules = P["rules"]

wb = openpyxl.load_workbook(P["file"])
ws = wb[P["sheet"]]
header = [c.value for c in ws[1]]
last = ws.max_row
for cell in ws[1]:
    cell.font = Font(bold=True)
    if rules.get("header_fill"):
        cell.fill = PatternFill(fill_type="solid", fgColor=rules["header_fill"])
for idx, name in enumerate(header, start=1):
    fmt = None
    if name in rules["money_columns"] or (WRONG and name == rules["percent_column"]):
        fmt = rules["money_format"]
    elif name == rules["percent_column"]:
        fmt = rules["percent_format"]
    elif name == rules["date_column"]:
        fmt = rules["date_format"]
    if fmt:
        for r in range(2, last + 1):
            ws.cell(r, idx).number_format = fmt
    if rules.get("min_width"):
        ws.column_dimensions[get_column_letter(idx)].width = rules["min_width"] + 2
ws.freeze_panes = rules["freeze"]
if rules.get("autofilter"):
    ws.auto_filter.ref = f"A1:{get_column_letter(len(header))}{last}"
wb.save(P["file"])
print("styled", P["sheet"])
