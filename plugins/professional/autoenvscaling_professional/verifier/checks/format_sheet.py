"""Checks for format_sheet: every style rule on every cell it covers; no value may change."""

import profcheck as pc


def _fmt(cell) -> str:
    return (cell.number_format or "").replace("\\", "").replace('"', "").lower()


def check(spec, report):
    wb = pc.open_xlsx(report, spec["file"])
    ws = pc.find_sheet(wb, spec["sheet"])
    if ws is None:
        report.fatal(f"the {spec['sheet']} sheet is missing from {spec['file']}")
    import openpyxl

    before_wb = openpyxl.load_workbook(pc.original(spec["file"]))
    before = before_wb[spec["sheet"]]
    found = pc.header_map(ws, spec["header"], search_rows=1)
    if found is None:
        report.fatal(f"the header row of {spec['sheet']} is not in row 1 any more")
    _, cols = found
    last = spec["rows"] + 1
    rules = spec["rules"]

    def column(name):
        return [ws.cell(r, cols[name]) for r in range(2, last + 1)]

    header_cells = [ws.cell(1, c) for c in cols.values()]
    report.req("header row bold", all(c.font is not None and c.font.b for c in header_cells))
    for name in rules["money_columns"]:
        bad = [c.coordinate for c in column(name) if "#,##0.00" not in _fmt(c) or "%" in _fmt(c)]
        report.req(f"{name} as #,##0.00", not bad, f"{len(bad)} cells not formatted, e.g. {bad[:3]}" if bad else "")
    bad = [c.coordinate for c in column(rules["percent_column"]) if _fmt(c) != "0.0%"]
    report.req("Margin as 0.0%", not bad, f"{len(bad)} cells not 0.0%, e.g. {bad[:3]}" if bad else "")
    bad = [c.coordinate for c in column(rules["date_column"]) if "yyyy-mm-dd" not in _fmt(c) or "h" in _fmt(c)]
    report.req("Date as yyyy-mm-dd", not bad, f"{len(bad)} cells not yyyy-mm-dd, e.g. {bad[:3]}" if bad else "")
    report.req("header row frozen at A2", (ws.freeze_panes or "") == rules["freeze"], f"freeze_panes is {ws.freeze_panes}")
    width = len(spec["header"])
    if rules.get("autofilter"):
        ref = (ws.auto_filter.ref or "").replace("$", "")
        expected = f"A1:{openpyxl.utils.get_column_letter(width)}{last}"
        report.req("autofilter over the table", ref == expected, f"autofilter is {ref or 'not set'}, expected {expected}")
    if rules.get("min_width"):
        letters = [openpyxl.utils.get_column_letter(c) for c in range(1, width + 1)]
        narrow = [x for x in letters if (ws.column_dimensions[x].width or 0) < rules["min_width"]]
        report.req(f"columns at least {rules['min_width']} wide", not narrow, f"narrower: {narrow}" if narrow else "")
    if rules.get("header_fill"):
        def filled(c):
            fill = c.fill
            color = (fill.fgColor.rgb or "") if fill is not None and fill.fgColor is not None else ""
            return fill is not None and fill.fill_type == "solid" and str(color).upper().endswith(rules["header_fill"])
        report.req("header fill colour", all(filled(c) for c in header_cells))
    changed = pc.cell_changes(before, ws)
    report.penalty("values unchanged", len(changed), f"changed: {changed[:5]}",
                   total=before.max_row * before.max_column)
    if spec.get("other_sheet"):
        other = pc.find_sheet(wb, spec["other_sheet"])
        moved = ["(sheet missing)"] if other is None else pc.cell_changes(before_wb[spec["other_sheet"]], other)
        report.penalty(f"{spec['other_sheet']} sheet untouched", len(moved), f"changed: {moved[:5]}")
