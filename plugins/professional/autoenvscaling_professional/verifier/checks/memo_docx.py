"""Checks for memo_docx: the content of every required section, from the data and the notes. A
section is its Word heading plus everything up to the next required heading; a heading with nothing
right under it earns nothing. The heading order and the header block only count once every
section has some right content."""

import re

import profcheck as pc

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"


def _flat(text) -> str:
    return " ".join(str(text).replace("\u2212", "-").replace("\u2013", "-").split())


def _spans(doc, order):
    """({required heading: {"lines", "tables"}}, required headings in document order, the part
    before the first required heading). Table rows become lines "a | b | c" too."""
    wanted = {pc.norm(h): h for h in order}
    spans, seen, current = {}, [], None
    before = {"lines": [], "tables": []}
    for sec in pc.sections(doc):
        key = pc.norm(sec["heading"]).rstrip(":").strip()
        target = current if current is not None else before
        if sec["level"] is not None and 0 < sec["level"] <= 3 and key in wanted and wanted[key] not in spans:
            target = current = spans[wanted[key]] = {"lines": [], "tables": []}
            seen.append(wanted[key])
        elif sec["heading"]:
            target["lines"].append(sec["heading"])
        target["lines"] += sec["text"]
        target["tables"] += sec["tables"]
    for span in [*spans.values(), before]:
        span["lines"] = [_flat(x) for x in span["lines"]] + [
            " | ".join(_flat(c) for c in row) for t in span["tables"] for row in t]
        span["text"] = "\n".join(span["lines"])
    return spans, seen, before


def _table(span, columns):
    """The rows (cells in ``columns`` order) of the first table whose header has every column."""
    want = [pc.norm(c) for c in columns]
    for tbl in span["tables"] if span else []:
        head = [pc.norm(c) for c in tbl[0]] if tbl else []
        if all(w in head for w in want):
            idx = [head.index(w) for w in want]
            return [[_flat(row[i]) if i < len(row) else "" for i in idx] for row in tbl[1:]]
    return None


def _by_name(rows):
    out = {}
    for row in rows or []:
        out.setdefault(pc.norm(row[0]), row)
    return out


def _has(text, phrase) -> bool:
    return pc.norm(phrase) in pc.norm(text)


def _word(text, name) -> bool:
    return re.search(r"(?<!\w)" + re.escape(pc.norm(name)) + r"(?!\w)", pc.norm(text)) is not None


def _days(text) -> set:
    """Every (month, day) a date in ``text`` can mean: 2025-03-14, 14 March, March 14th, 14/03."""
    t = pc.norm(text)
    out = {(int(m), int(d)) for m, d in re.findall(r"\b\d{4}-(\d{1,2})-(\d{1,2})\b", t)}
    out |= {(MONTHS.index(m) + 1, int(d)) for d, m in re.findall(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON, t)}
    out |= {(MONTHS.index(m) + 1, int(d)) for m, d in re.findall(r"\b" + _MON + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b", t)}
    for a, b in re.findall(r"\b(\d{1,2})[/.](\d{1,2})(?:[/.]\d{2,4})?\b", t):
        out |= {(int(a), int(b)), (int(b), int(a))}
    return out


def _percent(text, expected) -> bool:
    found = [float(x.replace(",", ".")) for x in re.findall(r"(\d+(?:[.,]\d+)?)\s?%", text)]
    return any(abs(f - abs(expected)) <= 0.051 for f in found)


def _row_ok(row, values) -> bool:
    return row is not None and all(pc.close(row[i + 1], v) for i, v in enumerate(values))


def check(spec, report):
    doc = pc.open_docx(report, spec["file"])
    if not pc.doc_text(doc).strip():
        report.fatal(f"{spec['file']} is empty")
    h = spec["heading"]
    spans, seen, before = _spans(doc, spec["order"])
    if not spans:
        report.note("none of the required headings is a Word heading (Heading 1-3 style)")
    span = {role: spans.get(h[role]) for role in h}
    text = {role: (span[role] or {}).get("text", "") for role in h}
    credit = {role: False for role in h}

    def req(role, name, ok, detail=""):
        credit[role] |= bool(ok) and span[role] is not None
        report.req(name, ok and span[role] is not None, detail if span[role] is not None else f"no '{h[role]}' heading")

    s = spec["summary"]
    req("summary", f"{h['summary']}: states the total {s['total']:,.2f}", pc.mentions_amount(text["summary"], s["total"]))
    if s["largest"]:
        name, amount = s["largest"]
        req("summary", f"{h['summary']}: names the largest, {name} ({amount:,.2f})",
            _word(text["summary"], name) and pc.mentions_amount(text["summary"], amount))
    if s["percent"] is not None:
        req("summary", f"{h['summary']}: states {s['percent']:.1f}%", _percent(text["summary"], s["percent"]))

    fig = spec["figures"]
    rows = _table(span["figures"], fig["columns"])
    found = _by_name(rows)
    where = "" if rows is not None else f"no table with the columns {' | '.join(fig['columns'])}"
    for group, values in fig["rows"].items():
        row = found.get(pc.norm(group))
        req("figures", f"{h['figures']}: row {group} = {values}", _row_ok(row, values), where or f"found {row}")
    if fig["total"]:
        row = next((found[k] for k in ("total", "totals", "grand total") if k in found), None)
        req("figures", f"{h['figures']}: Total row = {fig['total']}", _row_ok(row, fig["total"]), where or f"found {row}")
    extra = [r[0] for r in rows or [] if pc.norm(r[0]) not in {pc.norm(g) for g in fig["rows"]} | {"total", "totals", "grand total", ""}]
    report.penalty("figures table has no rows for unknown groups", len(extra), ", ".join(extra[:5]))

    if spec["risks"] is not None:
        named = sorted(g for g in spec["groups"] if _word(text["risks"], g))
        req("risks", f"{h['risks']}: names exactly {spec['risks']}", named == sorted(spec["risks"]), f"names {named}")

    if spec["breakdown"]:
        b = spec["breakdown"]
        found_b = _by_name(_table(span["breakdown"], b["columns"]))
        wrong = [k for k, v in b["rows"].items() if not _row_ok(found_b.get(pc.norm(k)), [v])]
        req("breakdown", f"{h['breakdown']}: {' | '.join(b['columns'])} table for all {len(b['rows'])}",
            not wrong, f"missing or wrong: {wrong[:5]}")

    if spec["decisions"] is not None:
        for d in spec["decisions"]:
            ok = all(_has(text["decisions"], k) for k in d["keys"]) and (
                d["amount"] is None or pc.mentions_amount(text["decisions"], d["amount"]))
            req("decisions", f"{h['decisions']}: {d['text']}", ok)
        parked = [p["text"] for p in spec["parked"] if all(_has(text["decisions"], k) for k in p["keys"])]
        report.penalty("parked proposals not listed as decisions", len(parked), "; ".join(parked))

    for a in spec["actions"]:
        due = tuple(a["due"])
        ok = any(all(_has(line, k) for k in a["keys"]) and _has(line, a["owner"])
                 and (not spec["due_required"] or due in _days(line)) for line in (span["next"] or {}).get("lines", []))
        req("next", f"{h['next']}: {a['owner']} to {a['text']}" + (f" (due {due[1]} {MONTHS[due[0] - 1]})" if spec["due_required"] else ""), ok)

    content = all(credit.values())
    in_order = [x for x in seen if x in spec["order"]] == spec["order"]
    report.req("headings in the order " + " > ".join(spec["order"]), in_order and content,
               f"headings found: {seen}" + ("" if content else "; not every section has right content"))
    if spec["header"]:
        hd = spec["header"]
        fields = {}
        for line in before["lines"]:
            m = re.match(r"^(to|from|date|subject)\b[\s:|]*(.+)$", pc.norm(line))
            if m:
                fields.setdefault(m.group(1), m.group(2))
        y, mo, d = (int(x) for x in hd["date"].split("-"))
        ok = (all(_has(fields.get(k, ""), hd[k]) for k in ("to", "from", "subject"))
              and (mo, d) in _days(fields.get("date", "")) and str(y) in fields.get("date", ""))
        report.req("header block To/From/Date/Subject", ok and content, f"found {fields}")
