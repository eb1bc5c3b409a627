"""summary_formulas: add a summary sheet of live formulas over a sales workbook.

The workspace holds ``sales.xlsx``: one sheet of order records (order id, date, region, rep,
product, units, unit price, amount). From level 3 the records sit under a title row and a ``Notes``
sheet rides along, to be left alone. The instruction asks for a new sheet with a table laid out
exactly (headers in row 1, one row per region, product or rep labelled in column A, a total row):
per group a SUMIF total, then (level 1+) a COUNTIF count and an AVERAGEIF average, (level 2+) a
units total and a share of the grand total, and key figures below the table: the largest order
(level 2+), the average price per unit and a SUMIFS over a date window (level 3+), a COUNTIF over a
threshold and a second breakdown table (level 4+).

Every number must be a formula that reads the data sheet. The checker computes the formulas with
the ``formulas`` engine twice: on the workbook as saved, and on a copy whose order records were
edited (so typed-in numbers, or formulas over typed-in numbers, fail). Penalty: cells of the data
sheet or the notes changed. Mistake of the wrong answer: every range stops one row short of the
last order.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from . import content
from .base import Draft, grow, xlsx_bytes

DATA_HEADER = ["Order ID", "Date", "Region", "Rep", "Product", "Units", "Unit Price", "Amount"]
#: header choices of the summary's metric columns, by metric
METRIC_HEADERS = {
    "total": ["Total Sales", "Total Amount", "Revenue"],
    "count": ["Orders", "Order Count", "Number of Orders"],
    "avg": ["Average Order", "Average Sale", "Avg Order Value"],
    "units": ["Units Sold", "Total Units", "Units"],
    "share": ["Share of Sales", "Share of Total", "Sales Share"],
}
METRIC_TEXT = {
    "total": "the sum of Amount over the {key}'s orders (SUMIF)",
    "count": "the number of the {key}'s orders (COUNTIF)",
    "avg": "the average Amount of the {key}'s orders (AVERAGEIF)",
    "units": "the sum of Units over the {key}'s orders",
    "share": "the {key}'s total Amount divided by the total Amount of all orders, as a fraction "
             "(0.25, not 25), which you may format as a percentage",
}
#: what the total row holds for each metric it covers
TOTAL_TEXT = {"total": "the total Amount of all orders", "count": "the number of all orders",
              "avg": "the average Amount of all orders", "units": "the total Units of all orders"}


def _records(rng: random.Random, level: int, year: int, month: int) -> tuple[list[dict], dict[str, list[str]]]:
    """Order records in date order; every region, rep and product has at least two orders."""
    groups = {
        "Region": list(content.REGIONS[: 3 if level == 0 else 4 if level <= 2 else 5]),
        "Rep": [p.name for p in content.people(rng, 3 + min(level, 3))],
        "Product": rng.sample(content.PRODUCTS, 4 + min(level, 4)),
    }
    price = {p: content.money(rng, 12, 480) for p in groups["Product"]}
    rows = grow(level, 20, 1.6) + rng.randint(0, 4)
    seeded = {k: v * 2 for k, v in groups.items()}
    for values in seeded.values():
        rng.shuffle(values)
    out = []
    for i in range(rows):
        rec: dict[str, Any] = {k: seeded[k][i] if i < len(seeded[k]) else rng.choice(groups[k]) for k in groups}
        rec["Units"] = rng.randint(1, 40)
        rec["Unit Price"] = price[rec["Product"]] if rng.random() < 0.7 else round(price[rec["Product"]] * rng.choice([0.9, 0.95]), 2)
        rec["Amount"] = round(rec["Units"] * rec["Unit Price"], 2)
        rec["Date"] = content.day_in(rng, year, month)
        out.append(rec)
    rng.shuffle(out)
    out.sort(key=lambda r: r["Date"])
    first_id = rng.randint(10000, 60000)
    for i, rec in enumerate(out):
        rec["Order ID"] = f"SO-{first_id + i}"
    return out, {k: sorted(v) for k, v in groups.items()}


def _workbook(rng: random.Random, records: list[dict], sheet: str, title: str | None, notes: bool) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    if title:
        ws.append([title])
        ws.append([])
    ws.append(DATA_HEADER)
    for rec in records:
        ws.append([dt.datetime.combine(rec["Date"], dt.time()) if h == "Date" else rec[h] for h in DATA_HEADER])
        ws.cell(ws.max_row, 2).number_format = "yyyy-mm-dd"
        ws.cell(ws.max_row, 7).number_format = ws.cell(ws.max_row, 8).number_format = "#,##0.00"
    if notes:
        ws2 = wb.create_sheet("Notes")
        ws2.append(["Date", "Note"])
        for rec in rng.sample(records, 3):
            note = rng.choice(["price agreed by phone", "customer asked for split delivery", "rush order", "repeat customer"])
            ws2.append([rec["Date"].isoformat(), f"{rec['Order ID']}: {note}"])
    return xlsx_bytes(wb, dt.datetime(2024, 1, 1) + dt.timedelta(minutes=rng.randrange(60 * 24 * 700)))


def _figures(rng: random.Random, level: int, records: list[dict], year: int, month: int) -> list[dict]:
    """The key figures below the table, each with its label and the sentence that defines it."""
    out: list[dict[str, Any]] = []
    if level >= 2:
        out.append({"label": "Largest Order", "fn": "max", "text": "the largest Amount of any single order (MAX)"})
    if level >= 3:
        out.append({"label": "Average Price per Unit", "fn": "per_unit",
                    "text": "the total Amount of all orders divided by their total Units"})
        first = rng.randint(1, 10)
        last = first + rng.randint(7, 14)
        start, end = dt.date(year, month, first), dt.date(year, month, last)
        mon = content.month_name(month)[:3]
        out.append({"label": f"Sales {mon} {first}-{last}", "fn": "between", "from": start.isoformat(), "to": end.isoformat(),
                    "text": f"the total Amount of orders dated {start.isoformat()} to {end.isoformat()}, both days included (SUMIFS)"})
    if level >= 4:
        amounts = sorted(r["Amount"] for r in records)
        threshold = max(100, int(round(amounts[int(len(amounts) * 0.7)], -2)))
        out.append({"label": f"Orders over {threshold}", "fn": "over", "threshold": threshold,
                    "text": f"the number of orders with an Amount above {threshold} (COUNTIF)"})
    return out


def build(rng: random.Random, level: int) -> Draft:
    year, month = content.period(rng)
    records, groups = _records(rng, level, year, month)
    sheet = rng.choice(["Orders", "Sales", "Order Log", "Sales Data"])
    summary = rng.choice(["Summary", "Overview", "Dashboard", "Sales Summary"])
    titled = level >= 3
    title = f"Order log - {content.month_name(month)} {year}" if titled else None
    data = _workbook(rng, records, sheet, title, notes=level >= 3)

    first = "Region" if rng.random() < 0.6 else "Product"
    keys = [first, rng.choice([k for k in ("Region", "Product", "Rep") if k != first])]
    metrics = ["total"] + (["count", "avg"] if level >= 1 else []) + (["units", "share"] if level >= 2 else [])
    headers = {m: rng.choice(METRIC_HEADERS[m]) for m in metrics}
    total_label = rng.choice(["Total", "Grand Total", "All " + keys[0] + "s"])
    tables: list[dict[str, Any]] = [{"key": keys[0], "labels": groups[keys[0]], "columns": [[headers[m], m] for m in metrics],
               "total": {"label": total_label, "columns": [[headers[m], m] for m in metrics if m in TOTAL_TEXT]}}]
    figures = _figures(rng, level, records, year, month)
    if level >= 4:
        second = ["total", "count"] + (["units"] if level >= 5 else [])
        tables.append({"key": keys[1], "labels": groups[keys[1]], "columns": [[headers[m], m] for m in second], "total": None})

    main = tables[0]
    cols = [main["key"], *(h for h, _ in main["columns"])]
    letters = "ABCDEFGH"
    where = f"the {sheet} sheet" + (", where the table starts under a title (headers in row 3)" if titled else "")
    intro = rng.choice([
        f"Sales ops keeps every order of {content.month_name(month)} {year} in sales.xlsx, on {where}.",
        f"All our {content.month_name(month)} orders are logged in sales.xlsx, on {where}.",
        f"The order log for {content.month_name(month)} {year} is in sales.xlsx, on {where}.",
    ])
    ask = rng.choice([
        f"Please add a sheet named \"{summary}\" to that same workbook with a summary built from live formulas, "
        "so it stays correct when someone edits an order.",
        f"I need a \"{summary}\" sheet added to the workbook that summarises it with formulas, not pasted numbers: "
        "the orders still get corrected now and then and the summary must follow.",
    ])
    lines = [f"{intro} {ask}", "", f"Layout of the {summary} sheet:",
             "- Row 1 holds the headers: " + ", ".join(f"{letters[i]}1 \"{h}\"" for i, h in enumerate(cols)) + ".",
             f"- Below it, one row per {main['key'].lower()} that appears in the {main['key']} column of the data "
             f"(any order), with the {main['key'].lower()} in column A written exactly as in the data.",
             f"- Right after those rows, a row labelled \"{total_label}\" in column A."]
    lines += [f"- {head}: " + METRIC_TEXT[metric].format(key=main["key"].lower()) + "." for head, metric in main["columns"]]
    lines.append(f"- In the \"{total_label}\" row: " + "; ".join(
        f"{head} = {TOTAL_TEXT[m]}" for head, m in main["total"]["columns"]) + "."
        + (" Its other cells may stay empty." if len(main["total"]["columns"]) < len(main["columns"]) else ""))
    if figures:
        lines += ["", "Key figures: leave one empty row after the table, then put each of these on its own row, "
                      "with the label in column A exactly as written and the value in column B:"]
        lines += [f"- \"{f['label']}\": {f['text']}." for f in figures]
    if len(tables) > 1:
        t2 = tables[1]
        lines += ["", f"Second breakdown: below the key figures, leave one empty row and add a second table with its own "
                      f"header row: column A \"{t2['key']}\", then " + ", ".join(f"\"{h}\"" for h, _ in t2["columns"])
                  + f" in the next columns; one row per {t2['key'].lower()} in the data (no total row), where "
                  + "; ".join(f"{h} is " + METRIC_TEXT[m].format(key=t2["key"].lower()) for h, m in t2["columns"]) + "."]
    lines += ["", f"Every number on {summary} must be a formula that reads the order records on {sheet} (SUMIF, "
                  "COUNTIF, AVERAGEIF, SUMIFS, MAX, SUM and the like, or arithmetic on such cells), so that it "
                  f"updates when an order changes; typed-in numbers do not count. Do not change anything on {sheet}"
              + (" or on the Notes sheet" if titled else "") + ", and save the workbook as sales.xlsx."]
    instruction = "\n".join(lines) + "\n"

    spec = {"file": "sales.xlsx", "data_sheet": sheet, "summary_sheet": summary, "notes_sheet": "Notes" if titled else None,
            "tables": tables, "figures": figures, "data_header": DATA_HEADER, "share_tolerance": 0.0006}
    params = {"file": "sales.xlsx", "data_sheet": sheet, "summary_sheet": summary, "tables": tables, "figures": figures}
    return Draft(kind="sales_summary", instruction=instruction, files={"sales.xlsx": data}, spec=spec, params=params,
                 outputs={"sales.xlsx": "xlsx"}, originals=["sales.xlsx"],
                 mistake="every formula range stops one row short, leaving out the last order",
                 parameters={"rows": len(records), "metrics": len(metrics), "figures": len(figures),
                             "tables": len(tables), "titled": titled},
                 tags=["xlsx", "formulas"], agent_timeout_sec=900.0)
