"""Checks for invoice_extract: each document's row (found by its number), field by field; rows that
are no document's (or a document's second row) are penalised; the order, when one was asked for,
counts only with the sort column right, so a sheet of bare invoice numbers earns nothing for it."""

import datetime as dt
import re

import profcheck as pc


def _key(value) -> str:
    """An invoice number as compared: no spaces, any case, no leading '#'; 10234.0 reads as 10234."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return "".join(str(value if value is not None else "").split()).casefold().lstrip("#")


def _words(value) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", pc.norm(value)).split())


def _blank(value) -> bool:
    return pc.norm(value) in ("", "-", "n/a", "na", "none")


def _field(column: str, value, inv: dict) -> tuple[bool, str]:
    """Whether ``value`` is right for ``column`` of the expected document, and what was found."""
    if column == "Vendor":
        return _words(value) == _words(inv["vendor"]), f"{value!r}, expected {inv['vendor']!r}"
    if column in ("Invoice Date", "Due Date"):
        wanted = inv["date"] if column == "Invoice Date" else inv["due"]
        if wanted is None:
            return _blank(value), f"{value!r}, expected empty (a credit note has no due date)"
        return pc.as_date(value) == dt.date.fromisoformat(wanted), f"{value!r}, expected {wanted}"
    wanted = inv["total"] if column == "Total" else inv["tax"]
    return pc.close(value, wanted), f"{value!r}, expected {wanted:.2f}"


def check(spec, report):
    wb = pc.open_xlsx(report, spec["file"], data_only=True)
    ws = pc.find_sheet(wb, spec["sheet"])
    if ws is None:
        report.fatal(f"{spec['file']} has no sheet named {spec['sheet']!r}")
    columns = spec["columns"]
    rows = pc.table(ws, columns)
    if rows is None:
        report.fatal(f"no header row with {', '.join(columns)} on the {spec['sheet']} sheet")
    rows = [r for r in rows if any(not _blank(v) for v in r.values())]
    if not rows:
        report.fatal(f"the {spec['sheet']} sheet has a header but no rows")
    by_key: dict[str, list[dict]] = {}
    for row in rows:
        by_key.setdefault(_key(row["Invoice Number"]), []).append(row)
    fields = [c for c in columns if c != "Invoice Number"]
    for inv in spec["invoices"]:
        found = by_key.get(_key(inv["number"]), [])
        for column in fields:
            if not found:
                report.req(f"{inv['number']}: {column}", False, f"no row with invoice number {inv['number']}")
                continue
            ok, detail = _field(column, found[0][column], inv)
            report.req(f"{inv['number']}: {column}", ok, "" if ok else detail)
    known = {_key(inv["number"]) for inv in spec["invoices"]}
    extra = [str(r["Invoice Number"]) for r in rows if _key(r["Invoice Number"]) not in known]
    extra += [k for k, group in by_key.items() if k in known for _ in group[1:]]
    report.penalty("no extra or duplicate rows", len(extra), f"rows for: {extra[:5]}")
    sort = spec.get("sort")
    if sort:
        order = [inv["number"] for inv in spec["invoices"]]
        got = [str(r["Invoice Number"]) for r in rows]
        by_number = {_key(inv["number"]): inv for inv in spec["invoices"]}
        keys_right = all(_key(r["Invoice Number"]) in by_number
                         and _field(sort["column"], r[sort["column"]], by_number[_key(r["Invoice Number"])])[0]
                         for r in rows)
        ok = [_key(x) for x in got] == [_key(x) for x in order] and keys_right
        report.req(f"rows sorted by {sort['column']} ({'descending' if sort['descending'] else 'ascending'})", ok,
                   "" if ok else f"order {got[:8]}, expected {order[:8]}"
                   + ("" if keys_right else f"; some {sort['column']} values are wrong"))
