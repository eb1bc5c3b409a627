"""Reference solution for budget_reconcile: read the budget and every bank export (each in its own
format), keep the month's transactions, drop transfers and the copies the overlapping exports share,
categorise (from the export or the merchant mapping), then write the reconciliation and the unmatched
list with openpyxl. ``--wrong``: the plausible wrong answer (refunds added to the spending)."""

import collections
import csv
import datetime as dt
import json
import sys

import openpyxl

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)

# the budget: the table under the "Category" header, without its Total line
ws = openpyxl.load_workbook(P["budget_file"])[P["budget_sheet"]]
rows = list(ws.iter_rows(values_only=True))
head = next(i for i, r in enumerate(rows) if r and r[0] == "Category")
budget = {r[0]: float(r[1]) for r in rows[head + 1:] if r and r[0] and str(r[0]).strip().lower() != "total"}

mapping = []
if P["mapping"]:
    with open(P["mapping"], encoding="utf-8") as fh:
        mapping = [(m["Merchant"].lower(), m["Category"]) for m in csv.DictReader(fh)]


def parse(row):
    """(date, description, signed amount, category) from a row of any of the export formats."""
    if "Posted Date" in row:
        date = dt.datetime.strptime(row["Posted Date"], "%m/%d/%Y").date()
        amount = float(row["Credit"] or 0) - float(row["Debit"] or 0)
        text = row["Payee"]
    else:
        date, amount, text = dt.date.fromisoformat(row["Date"]), float(row["Amount"]), row["Description"]
    if "Category" in row:
        category = row["Category"]
    else:
        category = next((c for m, c in mapping if m in text.lower()), None)
    return date, text, round(amount, 2), category


# one account exported twice: a transaction in both exports counts once (a multiset union per account)
accounts: collections.defaultdict[str, collections.Counter] = collections.defaultdict(collections.Counter)
for name in P["statements"]:
    account = name[len("bank_"):-len(".csv")].rstrip("_0123456789")
    with open(name, encoding="utf-8") as fh:
        seen = collections.Counter(parse(r) for r in csv.DictReader(fh))
    accounts[account] |= seen
txs = [t for counter in accounts.values() for t in counter.elements()]
txs = [t for t in txs if (t[0].year, t[0].month) == (P["year"], P["month"]) and t[3] != P["transfer"]]

actual: collections.defaultdict[str, float] = collections.defaultdict(float)
unmatched = []
for date, text, amount, category in sorted(txs):
    if category in budget:
        actual[category] += abs(amount) if WRONG else -amount
    else:
        unmatched.append((date, text, amount))

wb = openpyxl.Workbook()
out = wb.active
out.title = P["sheet"]
out.append(["Category", "Budget", "Actual", "Variance"])
for category in sorted(budget):
    r = out.max_row + 1
    out.append([category, budget[category], round(actual[category], 2), f"=B{r}-C{r}"])
if P["total"]:
    last = out.max_row
    out.append(["Total", f"=SUM(B2:B{last})", f"=SUM(C2:C{last})", f"=SUM(D2:D{last})"])
for row in out.iter_rows(min_row=2, min_col=2):
    for cell in row:
        cell.number_format = "#,##0.00"
if P["unmatched_sheet"]:
    extra = wb.create_sheet(P["unmatched_sheet"])
    extra.append(["Date", "Description", "Amount"])
    for date, text, amount in unmatched:
        extra.append([date, text, amount])
        extra.cell(extra.max_row, 1).number_format = "yyyy-mm-dd"
wb.save(P["output"])
print(f"reconciled {len(budget)} categories, {len(txs)} transactions, {len(unmatched)} unmatched")
