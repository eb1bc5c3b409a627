"""Reference solution for summary_formulas: write the summary sheet as SUMIF/COUNTIF/AVERAGEIF/SUMIFS
formulas over the data sheet's exact record range, with openpyxl.
``--wrong``: the plausible wrong answer (every range stops one row short of the last order)."""

import datetime as dt
import json
import sys

import openpyxl
from openpyxl.utils import get_column_letter

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)

wb = openpyxl.load_workbook(P["file"])
data = wb[P["data_sheet"]]
header_row = next(r for r in range(1, 11) if any(c.value == "Amount" for c in data[r]))
letter = {c.value: c.column_letter for c in data[header_row] if c.value}
first = header_row + 1
last = max(r for r in range(first, data.max_row + 1) if data.cell(r, 1).value not in (None, ""))
if WRONG:
    last -= 1
quoted = "'" + P["data_sheet"].replace("'", "''") + "'"


def rng(col):
    return f"{quoted}!${letter[col]}${first}:${letter[col]}${last}"


def group_formula(metric, key, label_cell):
    if metric == "total":
        return f"=SUMIF({rng(key)},{label_cell},{rng('Amount')})"
    if metric == "count":
        return f"=COUNTIF({rng(key)},{label_cell})"
    if metric == "avg":
        return f"=AVERAGEIF({rng(key)},{label_cell},{rng('Amount')})"
    if metric == "units":
        return f"=SUMIF({rng(key)},{label_cell},{rng('Units')})"
    if metric == "share":
        return f"=SUMIF({rng(key)},{label_cell},{rng('Amount')})/SUM({rng('Amount')})"
    raise ValueError(metric)


TOTALS = {"total": f"=SUM({rng('Amount')})", "count": f"=COUNT({rng('Amount')})",
          "avg": f"=AVERAGE({rng('Amount')})", "units": f"=SUM({rng('Units')})"}


def figure_formula(fig):
    if fig["fn"] == "max":
        return f"=MAX({rng('Amount')})"
    if fig["fn"] == "per_unit":
        return f"=SUM({rng('Amount')})/SUM({rng('Units')})"
    if fig["fn"] == "between":
        a, b = dt.date.fromisoformat(fig["from"]), dt.date.fromisoformat(fig["to"])
        return (f"=SUMIFS({rng('Amount')},{rng('Date')},\">=\"&DATE({a.year},{a.month},{a.day}),"
                f"{rng('Date')},\"<=\"&DATE({b.year},{b.month},{b.day}))")
    if fig["fn"] == "over":
        return f"=COUNTIF({rng('Amount')},\">{fig['threshold']}\")"
    raise ValueError(fig["fn"])


def labels_of(key):
    col = letter[key]
    return sorted({data[f"{col}{r}"].value for r in range(first, data.max_row + 1)} - {None, ""})


def write_table(ws, row, table):
    """The table's header row, one row per label, then its total row; returns the next free row."""
    heads = [h for h, _ in table["columns"]]
    for c, head in enumerate([table["key"], *heads], start=1):
        ws.cell(row, c, head)
    row += 1
    for label in labels_of(table["key"]):
        ws.cell(row, 1, label)
        for c, (head, metric) in enumerate(table["columns"], start=2):
            ws.cell(row, c, group_formula(metric, table["key"], f"$A{row}"))
            if metric == "share":
                ws.cell(row, c).number_format = "0.0%"
        row += 1
    if table.get("total"):
        ws.cell(row, 1, table["total"]["label"])
        for head, metric in table["total"]["columns"]:
            ws.cell(row, heads.index(head) + 2, TOTALS[metric])
        row += 1
    return row


ws = wb.create_sheet(P["summary_sheet"])
row = write_table(ws, 1, P["tables"][0])
if P["figures"]:
    row += 1
    for fig in P["figures"]:
        ws.cell(row, 1, fig["label"])
        ws.cell(row, 2, figure_formula(fig))
        row += 1
for table in P["tables"][1:]:
    row = write_table(ws, row + 1, table)
for c in range(1, 8):
    ws.column_dimensions[get_column_letter(c)].width = 18
wb.save(P["file"])
print("wrote", P["summary_sheet"], "over rows", first, "to", last)
