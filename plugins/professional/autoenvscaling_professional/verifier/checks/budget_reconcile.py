"""Checks for budget_reconcile: per budget category its Budget, Actual and Variance; the Total row;
the Unmatched sheet against the expected transactions in both directions (as a multiset, matched on
date, description ignoring case and spaces, and the amount's size). Cells may hold values or
formulas (formulas are computed). Penalty: rows for categories that are not in the budget."""

import profcheck as pc


def _reader(wb, report):
    """cell -> its value; a formula cell's value is computed (once, for the whole workbook)."""
    has_formulas = any(pc.is_formula(c.value) for ws in wb.worksheets for row in ws.iter_rows() for c in row)
    computed = pc.formula_values(wb, report) if has_formulas else {}

    def value(cell):
        if pc.is_formula(cell.value):
            return computed.get((cell.parent.title.upper(), cell.coordinate))
        return cell.value

    return value


def _line(expected, got):
    """The problems of one reconciliation row: [] when Budget, Actual and Variance all match."""
    return [f"{col} {got[col]!r}, expected {expected[col.lower()]}" for col in ("Budget", "Actual", "Variance")
            if not pc.close(got[col], expected[col.lower()])]


def _unmatched(report, wb, value, spec):
    ws = pc.find_sheet(wb, spec["unmatched_sheet"])
    found = pc.header_map(ws, ["Date", "Description", "Amount"]) if ws is not None else None
    listed = []
    if found:
        row0, cols = found
        for r in range(row0 + 1, ws.max_row + 1):
            got = {k: value(ws.cell(r, c)) for k, c in cols.items()}
            if any(v not in (None, "") for v in got.values()):
                listed.append(got)
    left = list(spec["unmatched"])
    extras = []
    for got in listed:
        date, amount = pc.as_date(got["Date"], dayfirst=False), pc.num(got["Amount"])
        hit = next((e for e in left if date is not None and date.isoformat() == e["date"]
                    and pc.norm(got["Description"]) == pc.norm(e["description"])
                    and amount is not None and pc.close(abs(amount), abs(e["amount"]))), None)
        if hit is None:
            extras.append(got)
        else:
            left.remove(hit)
    where = f"the {spec['unmatched_sheet']} sheet" + ("" if found else " (missing, or no Date/Description/Amount header)")
    report.req(f"{spec['unmatched_sheet']}: every unmatched transaction listed", found is not None and not left,
               f"{len(left)} of {len(spec['unmatched'])} missing from {where}, e.g. {left[:2]}" if left else "")
    report.req(f"{spec['unmatched_sheet']}: only unmatched transactions listed", bool(listed) and not extras,
               f"{len(extras)} rows that are not unmatched transactions, e.g. {extras[:2]}" if extras else
               ("" if listed else f"nothing listed on {where}"))


def check(spec, report):
    wb = pc.open_xlsx(report, spec["file"])
    ws = pc.find_sheet(wb, spec["sheet"])
    if ws is None:
        report.fatal(f"{spec['file']} has no {spec['sheet']} sheet")
    found = pc.header_map(ws, ["Category", "Budget", "Actual", "Variance"])
    if found is None:
        report.fatal(f"the {spec['sheet']} sheet has no header row Category | Budget | Actual | Variance")
    value = _reader(wb, report)
    row0, cols = found
    rows = {}
    for r in range(ws.max_row, row0, -1):  # the first row of a label wins
        label = pc.norm(ws.cell(r, cols["Category"]).value)
        if label:
            rows[label] = {k: value(ws.cell(r, c)) for k, c in cols.items()}
    lines = spec["categories"] + ([spec["total"]] if spec.get("total") else [])
    for line in lines:
        got = rows.get(pc.norm(line["name"]))
        problems = _line(line, got) if got else ["no row"]
        what = "Total row" if line is spec.get("total") else line["name"]
        report.req(f"{what}: budget, actual and variance", not problems, "; ".join(problems))
    known = {pc.norm(line["name"]) for line in lines} | {"total"}
    extra = sorted(k for k, got in rows.items() if k not in known and pc.num(got["Actual"]) is not None)
    report.penalty("rows only for budget categories", len(extra), f"other rows: {extra[:5]}")
    if spec.get("unmatched") is not None:
        _unmatched(report, wb, value, spec)
