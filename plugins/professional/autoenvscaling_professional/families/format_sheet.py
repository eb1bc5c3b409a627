"""format_sheet: apply a house style to a report workbook without changing a single value.

The workspace holds ``report.xlsx``: one data sheet (two from level 3, only one of which is to be
styled) with a plain header row, money columns, a margin ratio and dates, all unformatted. The
instruction lists the style rules; which rules, and which columns they name, vary with the seed:
bold header, money columns as ``#,##0.00``, the ratio as a one-decimal percentage, dates as
``yyyy-mm-dd``, the header row frozen, then (level 2+) an autofilter over the table and minimum
column widths, then (level 3+) a header fill colour and the second sheet left alone.

Checks: each rule on every cell it covers; a penalty when any value changed. Mistake of the wrong
answer: the ratio column gets the money format too.
"""

from __future__ import annotations

import datetime as dt
import io
import random

from . import content
from .base import Draft, grow

RANGES = {"Revenue": (2000, 25000), "Cost": (500, 15000), "Discount": (0, 800), "Shipping": (10, 400)}
FILLS = {"light grey": "D9D9D9", "pale blue": "DDEBF7", "pale green": "E2EFDA", "light yellow": "FFF2CC"}


def _workbook(rng: random.Random, level: int, sheet: str, other: str | None) -> tuple[bytes, dict]:
    import openpyxl

    rows = grow(level, 12, 1.7) + rng.randint(0, 6)
    year, month = content.period(rng)
    money_cols = rng.sample(["Revenue", "Cost", "Discount", "Shipping"], 2 if level < 3 else 3)
    header = ["Date", "Region", "Rep", *money_cols, "Margin"]
    rng.shuffle(header)
    reps = [p.name for p in content.people(rng, 6)]
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    ws.append(header)
    for _ in range(rows):
        record = {"Date": dt.datetime.combine(content.day_in(rng, year, month), dt.time()),
                  "Region": rng.choice(content.REGIONS), "Rep": rng.choice(reps),
                  "Margin": round(rng.uniform(0.05, 0.6), 4)}
        for col in money_cols:
            record[col] = content.money(rng, *RANGES[col])
        ws.append([record[h] for h in header])
        ws.cell(ws.max_row, header.index("Date") + 1).number_format = "m/d/yy"
    if other:
        ws2 = wb.create_sheet(other)
        ws2.append(["Item", "Note"])
        for i in range(rng.randint(3, 6)):
            ws2.append([f"{rng.choice(content.PRODUCTS)}", rng.choice(["check stock", "reorder", "ok", "discontinue"])])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue(), {"header": header, "money": money_cols, "rows": rows}


def build(rng: random.Random, level: int) -> Draft:
    sheet = rng.choice(["Sales", "Q3 Sales", "Regional Sales", "Orders", "Revenue Report"])
    other = rng.choice(["Notes", "Stock", "Lookup"]) if level >= 3 else None
    data, shape = _workbook(rng, level, sheet, other)
    money = shape["money"]
    rules: dict = {"bold_header": True, "money_format": "#,##0.00", "money_columns": money,
                   "percent_column": "Margin", "percent_format": "0.0%", "date_column": "Date",
                   "date_format": "yyyy-mm-dd", "freeze": "A2"}
    asks = [
        "Make the header row (row 1) bold.",
        f"Format the {' and '.join(money) if len(money) == 2 else ', '.join(money[:-1]) + ' and ' + money[-1]} columns "
        "as numbers with a thousands separator and two decimals (number format #,##0.00).",
        "Show Margin as a percentage with one decimal place (number format 0.0%).",
        "Display the Date column as yyyy-mm-dd.",
        "Freeze the header row so it stays visible when scrolling (the panes freeze at A2).",
    ]
    if level >= 2:
        width = rng.choice([14, 15, 16, 18])
        rules["autofilter"] = True
        rules["min_width"] = width
        asks.append("Add an autofilter over the whole table (header row included).")
        asks.append(f"Make every column of the table at least {width} characters wide.")
    if level >= 3:
        fill_name = rng.choice(sorted(FILLS))
        rules["header_fill"] = FILLS[fill_name]
        asks.append(f"Give the header cells a solid {fill_name} fill (hex {FILLS[fill_name]}).")
    keep_other = f" Leave the {other} sheet exactly as it is." if other else ""
    intro = rng.choice([
        "Finance needs report.xlsx ready for the board pack by this afternoon.",
        "I'm sending report.xlsx to the regional directors and it looks rough.",
        "Please tidy up report.xlsx before it goes out with the monthly numbers.",
    ])
    instruction = (f"{intro} Apply our house style to the {sheet} sheet and save it back to report.xlsx "
                   f"(same file name, in /app).\n\n" + "\n".join(f"- {a}" for a in asks) +
                   f"\n\nDo not change, add, move or delete any values, only formatting.{keep_other}\n")
    spec = {"file": "report.xlsx", "sheet": sheet, "other_sheet": other, "rules": rules,
            "header": shape["header"], "rows": shape["rows"]}
    params = {"file": "report.xlsx", "sheet": sheet, "rules": rules}
    return Draft(kind="house_style", instruction=instruction, files={"report.xlsx": data}, spec=spec,
                 params=params, outputs={"report.xlsx": "xlsx"}, originals=["report.xlsx"],
                 mistake="the Margin ratio gets the money format instead of a percentage",
                 parameters={"rows": shape["rows"], "money_columns": len(money), "extra_sheet": bool(other),
                             "rules": len(asks)},
                 tags=["xlsx", "formatting"], agent_timeout_sec=600.0)
