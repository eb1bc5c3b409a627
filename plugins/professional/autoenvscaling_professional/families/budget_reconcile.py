"""budget_reconcile: reconcile a month's budget against bank statement exports.

The workspace holds ``budget.xlsx`` (one line per expense category with its monthly budget; from
level 3 under a title and followed by a Total line that is not a category) and the bank exports:
``bank_checking.csv`` (ISO dates, signed amounts), from level 2 ``bank_card.csv`` (US dates, Debit
and Credit columns), from level 3 the checking account as two overlapping exports, from level 4
``bank_savings.csv`` and no category column at all: ``merchants.csv`` maps merchant names to
categories. Traps by level: refunds (always), transactions dated outside the month (level 1+),
transfers between the company's own accounts (level 2+), the same transaction in two exports
(level 3+), merchants missing from the mapping (level 4+).

The agent writes ``reconciliation.xlsx``: Category | Budget | Actual | Variance per budget category
(a Total row from level 2) and from level 2 an Unmatched sheet listing the month's transactions whose
category is not in the budget. Checks: each category's three numbers (values or formulas), the
total row, the unmatched list as a multiset in both directions. Mistake of the wrong answer:
refunds are added to the spending instead of netted against it.
"""

from __future__ import annotations

import datetime as dt
import random

from . import content
from .base import Draft, csv_bytes, grow, xlsx_bytes

MERCHANTS = {
    "Rent": ["Stonegate Property Mgmt", "Harbor Lettings"],
    "Payroll": ["PayFlow Payroll", "Ledgerline Payroll Services"],
    "Software": ["CloudDesk", "Nimbus Hosting", "CodeVault"],
    "Travel": ["SkyBridge Airlines", "MetroCab", "Lakeside Hotel"],
    "Office Supplies": ["Cedar Office Supply", "DeskDepot"],
    "Utilities": ["City Power & Light", "Riverbend Water", "FiberNet Internet"],
    "Marketing": ["AdReach Media", "PrintHouse Flyers", "SocialBoost"],
    "Insurance": ["Granite Mutual Insurance", "SafeHarbor Insurance"],
    "Training": ["SkillUp Academy", "LearnWorks"],
    "Equipment": ["TechMart Electronics", "ProTool Rentals"],
    "Catering": ["Bean & Leaf Cafe", "Harvest Catering"],
    "Legal Fees": ["Keller & Quinn LLP", "Brennan Law Office"],
}
#: spending in categories the budget does not have: the unmatched items
OTHER = {"Entertainment": ["Starlight Cinema", "Bowlmore Lanes"], "Charity": ["Food Bank Donation"],
         "Subscriptions": ["NewsDaily Subscription"], "Parking": ["CityPark Garage"]}
UNMAPPED = ["Corner Kiosk", "Gift Shop Pier 9", "Quickprint Express"]
#: amount ranges by category (default 15 to 600); these are paid once a month
RANGES = {"Rent": (1800, 6500), "Payroll": (4000, 16000), "Insurance": (150, 900)}
ONCE = {"Rent", "Payroll", "Insurance"}
TRANSFER = "Transfer"
#: what transfers say, and the mapping entries that catch them (level 4+)
TRANSFER_KEYS = ["Card Payment", "Payment Received", "Transfer"]


def _transactions(rng: random.Random, level: int, cats: list[str], year: int, month: int) -> list[dict]:
    """Every transaction of the exports, true ones once: account, date, description, signed amount,
    category (what the statement or the mapping says) and kind (spend, refund, transfer)."""
    refs = iter(rng.sample(range(1000, 9999), 400))
    accounts = ["checking"] + (["card"] if level >= 2 else [])
    first = dt.date(year, month, 1)
    last = dt.date(year + (month == 12), month % 12 + 1, 1) - dt.timedelta(days=1)
    out: list[dict] = []

    def add(kind, category, merchant, amount, date, account, text=None):
        ref = next(refs)
        if text is None:
            prefix = "Refund " if kind == "refund" else ""
            text = f"{prefix}{merchant} #{ref}" if account == "checking" else f"{prefix}{merchant} {ref}".upper()
        out.append({"kind": kind, "category": category, "merchant": merchant, "amount": round(amount, 2),
                    "date": date, "account": account, "description": text})
        return out[-1]

    def spend(cat, date, merchant=None):
        low, high = RANGES.get(cat, (15, 600))
        account = "checking" if cat in ONCE else rng.choice(accounts)
        return add("spend", cat, merchant or rng.choice(MERCHANTS.get(cat) or OTHER[cat]), -content.money(rng, low, high),
                   date, account)

    n = grow(level, 12, 1.5)
    picks = cats + [rng.choice([c for c in cats if c not in ONCE] or cats) for _ in range(max(0, n - len(cats)))]
    spends = [spend(cat, content.day_in(rng, year, month)) for cat in picks]
    # refunds, each in a different category (so each one shows in a category's actual); a full refund
    # only where the category has other spending: every actual stays above zero
    refundable = {t["category"]: t for t in rng.sample(spends, len(spends)) if t["category"] not in ONCE}
    for cat in rng.sample(sorted(refundable), min(len(refundable), 1 if level == 0 else min(3, level + 1))):
        tx = refundable[cat]
        when = min(last, tx["date"] + dt.timedelta(days=rng.randint(1, 6)))
        share = rng.choice([1, 1, 0.5, 0.25] if sum(t["category"] == cat for t in spends) > 1 else [0.25, 0.4, 0.5])
        add("refund", cat, tx["merchant"], -tx["amount"] * share, when, tx["account"])
    if level >= 1:  # the exports reach a few days into the neighbouring months
        for _ in range(2 + (level >= 3)):
            when = first - dt.timedelta(days=rng.randint(1, 4)) if rng.random() < 0.5 else last + dt.timedelta(days=rng.randint(1, 3))
            spend(rng.choice(cats), when)
    if level >= 2:
        others = rng.sample(sorted(OTHER), 2 if level == 2 else 3)
        for cat in others:
            spend(cat, content.day_in(rng, year, month))
        paid = content.money(rng, 300, 2500)
        when = content.day_in(rng, year, month)
        add(TRANSFER, TRANSFER, "", -paid, when, "checking", f"Card Payment - Bluefield Visa #{next(refs)}")
        add(TRANSFER, TRANSFER, "", paid, when + dt.timedelta(days=1) if when < last else when, "card",
            f"PAYMENT RECEIVED - THANK YOU {next(refs)}")
    if level >= 4:
        saved = float(rng.choice([500, 1000, 1500, 2000]))
        when = content.day_in(rng, year, month)
        add(TRANSFER, TRANSFER, "", -saved, when, "checking", f"Online Transfer to Savings #{next(refs)}")
        add(TRANSFER, TRANSFER, "", saved, when, "savings", f"Transfer from Checking #{next(refs)}")
        add("spend", "Bank Fees", "Monthly Account Fee", -5.0, last, "savings", "Monthly Account Fee")
        add("spend", None, rng.choice(UNMAPPED), -content.money(rng, 8, 90), content.day_in(rng, year, month), rng.choice(accounts))
    out.sort(key=lambda t: (t["date"], t["description"]))
    return out


def _exports(level: int, txs: list[dict], start: dt.date) -> dict[str, bytes]:
    """The statement files: each account in its bank's format; from level 3 the checking account
    exported twice with an overlap; from level 4 without categories."""
    cat = level < 4
    files = {}
    checking = [t for t in txs if t["account"] == "checking"]
    head = ["Date", "Description", "Amount"] + (["Category"] if cat else [])

    def chk(rows):
        return csv_bytes(head, [[t["date"].isoformat(), t["description"], f"{t['amount']:.2f}"] + ([t["category"]] if cat else [])
                           for t in rows])

    if level >= 3:
        # the first export runs to the 18th of the month, the second from the 12th: six days overlap
        files["bank_checking_1.csv"] = chk([t for t in checking if t["date"] <= start.replace(day=18)])
        files["bank_checking_2.csv"] = chk([t for t in checking if t["date"] >= start.replace(day=12)])
    else:
        files["bank_checking.csv"] = chk(checking)
    card = [t for t in txs if t["account"] == "card"]
    if card:
        files["bank_card.csv"] = csv_bytes(
            ["Posted Date", "Payee", "Debit", "Credit"] + (["Category"] if cat else []),
            [[t["date"].strftime("%m/%d/%Y"), t["description"], f"{-t['amount']:.2f}" if t["amount"] < 0 else "",
              f"{t['amount']:.2f}" if t["amount"] > 0 else ""] + ([t["category"]] if cat else []) for t in card])
    savings = [t for t in txs if t["account"] == "savings"]
    if savings:
        files["bank_savings.csv"] = chk(savings)  # level 4+: no category column, like the other exports
    return files


def _budget(rng: random.Random, level: int, lines: list[tuple[str, float]], month: int, year: int) -> tuple[bytes, str, str]:
    import openpyxl

    sheet = rng.choice(["Budget", f"{content.month_name(month)[:3]} Budget", "Monthly Budget"])
    column = "Budget" if level < 3 else rng.choice(["Monthly Budget", "Budgeted"])
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = sheet
    if level >= 3:
        ws.append([f"Operating budget - {content.month_name(month)} {year}"])
        ws.append([])
        ws.append(["Category", column, "Owner"])
        owners = [p.name for p in content.people(rng, 4)]
        for name, amount in lines:
            ws.append([name, amount, rng.choice(owners)])
        ws.append(["Total", sum(a for _, a in lines), None])
    else:
        ws.append(["Category", column])
        for name, amount in lines:
            ws.append([name, amount])
    for row in ws.iter_rows(min_row=2, min_col=2, max_col=2):
        row[0].number_format = "#,##0.00"
    return xlsx_bytes(wb, dt.datetime(year, month, 1) - dt.timedelta(days=rng.randint(3, 20))), sheet, column


def build(rng: random.Random, level: int) -> Draft:
    year, month = content.period(rng)
    cats = rng.sample(content.EXPENSE_CATEGORIES, min(4 + level, len(content.EXPENSE_CATEGORIES)))
    txs = _transactions(rng, level, cats, year, month)
    live = [t for t in txs if t["date"].month == month and t["kind"] != TRANSFER]
    actual = {c: round(-sum(t["amount"] for t in live if t["category"] == c), 2) for c in cats}
    budget = {c: float(max(50, round(actual[c] * rng.uniform(0.8, 1.25) / 50) * 50)) for c in cats}
    lines = [(c, budget[c]) for c in sorted(cats)]
    budget_file, budget_sheet, budget_col = _budget(rng, level, lines, month, year)
    files = {"budget.xlsx": budget_file, **_exports(level, txs, dt.date(year, month, 1))}
    if level >= 4:
        used = {t["merchant"]: t["category"] for t in txs if t["category"] not in (None, TRANSFER)}
        spare = {m: c for c in cats for m in MERCHANTS[c]}  # the mapping lists more merchants than were used
        mapping = sorted({**spare, **used, **{k: TRANSFER for k in TRANSFER_KEYS}}.items())
        files["merchants.csv"] = csv_bytes(["Merchant", "Category"], [list(m) for m in mapping])

    statements = sorted(f for f in files if f.startswith("bank_"))
    unmatched = [t for t in live if t["category"] not in cats]
    out_sheet = rng.choice(["Reconciliation", "Budget vs Actual"])
    mon = f"{content.month_name(month)} {year}"
    described = {
        "bank_checking.csv": "the checking account: Date (YYYY-MM-DD), Description, Amount (money out negative)",
        "bank_checking_1.csv": "the checking account, first export: Date (YYYY-MM-DD), Description, Amount (money out negative)",
        "bank_checking_2.csv": "the checking account, second export, same format",
        "bank_card.csv": "the company card: Posted Date (MM/DD/YYYY), Payee, Debit (money out), Credit (money in)",
        "bank_savings.csv": "the savings account: Date (YYYY-MM-DD), Description, Amount (money out negative)",
    }
    with_cat = ", Category" if level < 4 else ""
    intro = rng.choice([
        f"Month-end again: I need the {mon} budget reconciled against the bank.",
        f"Could you reconcile our {mon} spending against the budget before Friday's finance review?",
        f"Please do the {mon} budget reconciliation.",
    ])
    lines_ = [intro, "",
              f"The budget is in budget.xlsx, sheet \"{budget_sheet}\": one line per category with its monthly budget "
              f"(column \"{budget_col}\")"
              + (" (a title sits above the table, and the Total line at the bottom is not a category)." if level >= 3 else "."),
              "The bank exports:"]
    lines_ += [f"- {f}: {described[f]}{with_cat if f != 'bank_savings.csv' else ''}." for f in statements]
    if level >= 4:
        lines_.append("- merchants.csv: Merchant, Category. The exports carry no category: a transaction belongs to the "
                      "category of the merchant whose name appears in its description (ignoring case).")
    lines_ += ["", f"Create reconciliation.xlsx with a sheet named \"{out_sheet}\": the headers Category, Budget, Actual, "
                   "Variance in row 1, then one row per budget category:",
               "- Budget: the category's budget from budget.xlsx.",
               f"- Actual: what we spent in the category in {mon}: charges minus refunds, as a positive number.",
               "- Variance: Budget minus Actual (negative when we went over)."]
    if level >= 2:
        lines_.append("- After the categories, a row labelled Total with the sums of Budget, Actual and Variance.")
    rules = ["Refunds (money a merchant paid back) reduce the actual of their category."]
    if level >= 1:
        rules.insert(0, f"Only transactions dated in {mon} count: the exports run a few days into the neighbouring months.")
    if level >= 2:
        rules.append(f"Transfers between our own accounts (category {TRANSFER}) are not spending: leave them out everywhere.")
    if level >= 3:
        rules.append("bank_checking_1.csv and bank_checking_2.csv are two exports of the same account and they overlap: "
                     "a transaction that appears in both is one transaction.")
    lines_ += ["", "Rules:"] + [f"- {r}" for r in rules]
    if level >= 2:
        lines_ += ["", f"Add a second sheet named \"Unmatched\" with the headers Date, Description, Amount in row 1 and one row "
                       f"for every {mon} transaction whose category is not in the budget"
                   + (" (or whose merchant is not in merchants.csv)" if level >= 4 else "")
                   + ", transfers excluded: its date, its description exactly as in the export, and its amount "
                     "(money out as a negative number)."]
    lines_ += ["", "Values or formulas are both fine. Leave the budget and the exports as they are."]
    instruction = "\n".join(lines_) + "\n"

    rows = [{"name": c, "budget": budget[c], "actual": actual[c], "variance": round(budget[c] - actual[c], 2)} for c in sorted(cats)]
    total = {"name": "Total", **{k: round(sum(r[k] for r in rows), 2) for k in ("budget", "actual", "variance")}} if level >= 2 else None
    spec = {"file": "reconciliation.xlsx", "sheet": out_sheet, "categories": rows, "total": total,
            "unmatched_sheet": "Unmatched" if level >= 2 else None,
            "unmatched": [{"date": t["date"].isoformat(), "description": t["description"], "amount": t["amount"]} for t in unmatched]
            if level >= 2 else None}
    params = {"month": month, "year": year, "budget_file": "budget.xlsx", "budget_sheet": budget_sheet,
              "statements": statements, "mapping": "merchants.csv" if level >= 4 else None, "transfer": TRANSFER,
              "output": "reconciliation.xlsx", "sheet": out_sheet, "total": level >= 2,
              "unmatched_sheet": "Unmatched" if level >= 2 else None}
    return Draft(kind="bank_reconciliation", instruction=instruction, files=files, spec=spec, params=params,
                 outputs={"reconciliation.xlsx": "xlsx"},
                 mistake="refunds are added to the category's spending instead of subtracted from it",
                 parameters={"categories": len(cats), "transactions": len(txs), "statements": len(statements),
                             "unmatched": len(unmatched) if level >= 2 else 0, "mapping": level >= 4},
                 tags=["xlsx", "csv", "reconciliation"], agent_timeout_sec=900.0)
