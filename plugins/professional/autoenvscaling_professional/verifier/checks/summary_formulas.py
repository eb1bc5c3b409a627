"""Checks for summary_formulas: each asked-for summary cell holds a formula whose value is right on
the workbook as saved AND on a copy whose order records were edited (live formulas, not typed or
frozen numbers). Penalties: cells of the data sheet or the notes sheet changed.

A spec with ``"live": false`` takes that protection away (a typed number or any formula with the
right value on the saved workbook counts): the positive control of the red team's typed-values
cheats, never a generated task."""

import profcheck as pc


def _computed(wb, report, what):
    """The values of the workbook's formulas ({} when the engine fails)."""
    return pc.formula_values(wb, report, f"the {what}")


def _records(ws, spec):
    """The order records of a data sheet: [{header: value}], one per non-empty row under the header."""
    found = pc.header_map(ws, spec["data_header"])
    if found is None:
        return None, []
    row0, cols = found
    out = []
    for r in range(row0 + 1, ws.max_row + 1):
        rec = {h: ws.cell(r, c).value for h, c in cols.items()}
        if any(v not in (None, "") for v in rec.values()):
            out.append((r, rec))
    return cols, out


def _edit_orders(ws, spec):
    """Change every order's units and price (amount follows) and move two orders to another group;
    returns the edited records, which the live formulas must now summarise."""
    cols, recs = _records(ws, spec)
    for i, (r, rec) in enumerate(recs):
        units = (pc.num(rec["Units"]) or 0) + 1 + i % 3
        price = round((pc.num(rec["Unit Price"]) or 0) + 0.5 + 0.75 * (i % 5), 2)
        ws.cell(r, cols["Units"]).value = units
        ws.cell(r, cols["Unit Price"]).value = price
        ws.cell(r, cols["Amount"]).value = round(units * price, 2)
    for i, table in enumerate(spec["tables"]):
        if i < len(recs):
            r, rec = recs[i]
            labels = table["labels"]
            now = pc.norm(rec[table["key"]])
            idx = next((j for j, label in enumerate(labels) if pc.norm(label) == now), -1)
            ws.cell(r, cols[table["key"]]).value = labels[(idx + 1) % len(labels)]
    return [rec for _, rec in _records(ws, spec)[1]]


def _amount(rec):
    return pc.num(rec["Amount"]) or 0.0


def _metric(records, metric):
    """A summary metric over some records (the share is handled by the caller)."""
    if metric in ("total", "share"):
        return sum(_amount(r) for r in records)
    if metric == "count":
        return len(records)
    if metric == "avg":
        return sum(_amount(r) for r in records) / len(records) if records else float("nan")
    if metric == "units":
        return sum(pc.num(r["Units"]) or 0 for r in records)
    raise ValueError(metric)


def _figure(records, fig):
    if fig["fn"] == "max":
        return max(_amount(r) for r in records)
    if fig["fn"] == "per_unit":
        return sum(_amount(r) for r in records) / sum(pc.num(r["Units"]) or 0 for r in records)
    if fig["fn"] == "between":
        return sum(_amount(r) for r in records if fig["from"] <= str(pc.as_date(r["Date"])) <= fig["to"])
    if fig["fn"] == "over":
        return sum(1 for r in records if _amount(r) > fig["threshold"])
    raise ValueError(fig["fn"])


def _group_value(records, key, label, metric):
    rows = [r for r in records if pc.norm(r[key]) == pc.norm(label)]
    value = _metric(rows, metric)
    return value / _metric(records, "total") if metric == "share" else value


def _targets(ws, spec):
    """Every asked-for cell: (requirement, [(what, cell or None, expected(records) -> value, tolerance)])."""
    out = []
    for table in spec["tables"]:
        key, columns = table["key"], table["columns"]
        found = pc.header_map(ws, [key, *(h for h, _ in columns)], search_rows=ws.max_row)
        rows = {}
        if found:
            row0, cols = found
            for r in range(ws.max_row, row0, -1):  # the first row of a label wins
                rows[pc.norm(ws.cell(r, cols[key]).value)] = r

        def cell(label, head):
            r = rows.get(pc.norm(label))
            return ws.cell(r, cols[head]) if found and r else None

        for head, metric in columns:
            tol = spec["share_tolerance"] if metric == "share" else None
            cells = [(label, cell(label, head), lambda recs, l=label, m=metric, k=key: _group_value(recs, k, l, m), tol)
                     for label in table["labels"]]
            out.append((f"{head} for each {key.lower()}", cells))
        if table.get("total"):
            total = table["total"]
            cells = [(head, cell(total["label"], head), lambda recs, m=metric: _metric(recs, m), None)
                     for head, metric in total["columns"]]
            out.append((f"\"{total['label']}\" row", cells))
    for fig in spec["figures"]:
        spot = None
        for row in ws.iter_rows():
            for c in row:
                if pc.norm(c.value) == pc.norm(fig["label"]):
                    spot = spot or ws.cell(c.row, c.column + 1)
        out.append((f"key figure \"{fig['label']}\"", [(fig["label"], spot, lambda recs, f=fig: _figure(recs, f), None)]))
    return out


def _expect(want, records):
    try:
        return want(records)
    except (ValueError, ZeroDivisionError):  # no records left to summarise: nothing can match
        return float("nan")


def _problem(what, c, base, edited, want_base, want_edited, tol, sheet, live=True):
    if c is None:
        return f"{what}: no such row"
    formula = pc.is_formula(c.value)
    if live and not formula:
        return f"{what}: {c.coordinate} is not a formula ({c.value!r})"
    kw = {"abs_tol": tol} if tol else {}
    got = base.get((sheet, c.coordinate)) if formula else c.value
    if not pc.close(got, want_base, **kw):
        return f"{what}: {c.coordinate} computes {got!r}, expected {round(want_base, 4)}"
    if not live:
        return ""
    got = edited.get((sheet, c.coordinate))
    if not pc.close(got, want_edited, **kw):
        return f"{what}: {c.coordinate} does not follow edited orders (computes {got!r}, expected {round(want_edited, 4)})"
    return ""


def check(spec, report):
    import openpyxl

    wb = pc.open_xlsx(report, spec["file"])
    ws = pc.find_sheet(wb, spec["summary_sheet"])
    data = pc.find_sheet(wb, spec["data_sheet"])
    if ws is None:
        report.fatal(f"{spec['file']} has no {spec['summary_sheet']} sheet")
    if data is None:
        report.fatal(f"{spec['file']} has no {spec['data_sheet']} sheet any more")
    before_wb = openpyxl.load_workbook(pc.original(spec["file"]))
    changed = pc.cell_changes(before_wb[spec["data_sheet"]], data)
    report.penalty(f"{spec['data_sheet']} sheet unchanged", len(changed), f"changed: {changed[:5]}")
    if spec.get("notes_sheet"):
        notes = pc.find_sheet(wb, spec["notes_sheet"])
        moved = ["(sheet missing)"] if notes is None else pc.cell_changes(before_wb[spec["notes_sheet"]], notes)
        report.penalty(f"{spec['notes_sheet']} sheet unchanged", len(moved), f"changed: {moved[:5]}")

    original = [rec for _, rec in _records(before_wb[spec["data_sheet"]], spec)[1]]
    targets = _targets(ws, spec)
    base = _computed(wb, report, "saved")
    edited_records = _edit_orders(data, spec)
    edited = _computed(wb, report, "edited")
    sheet = ws.title.upper()
    for name, cells in targets:
        problems = [_problem(what, c, base, edited, _expect(want, original), _expect(want, edited_records), tol, sheet,
                             spec.get("live", True)) for what, c, want, tol in cells]
        problems = [p for p in problems if p]
        report.req(f"{name}: live formulas with the right values", not problems,
                   "; ".join(problems[:3]) + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""))
