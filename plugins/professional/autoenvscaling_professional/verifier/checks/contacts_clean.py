"""Checks for contacts_clean: the header is a precondition (fatal), not credit. Each person's row is
found by e-mail, else by name, and earns credit only with every field exactly as the rules make it
(merged, normalised): the inputs never hold a phone in the required format, so a copy of them, even
under the right header, earns nothing. Then one row per person and the sort order."""

import profcheck as pc


def _name_key(first, last) -> str:
    return f"{pc.norm(first)}|{pc.norm(last)}"


def check(spec, report):
    rows = pc.read_csv(report, spec["file"])
    header = spec["header"]
    wanted = [pc.norm(h) for h in header]
    if not rows or list(rows[0].keys()) != wanted:
        got = list(rows[0].keys()) if rows else "no data rows"
        report.fatal(f"{spec['file']} must have the header {','.join(header)} and contact rows (found {got})")
    first, last, email = (pc.norm(header[i]) for i in range(3))
    people = spec["people"]
    by_email = {p[header[2]]: i for i, p in enumerate(people) if p[header[2]]}
    by_name = {_name_key(p[header[0]], p[header[1]]): i for i, p in enumerate(people)}
    matched: list[int | None] = []
    for row in rows:
        key = row[email].strip().lower()
        matched.append(by_email[key] if key in by_email else by_name.get(_name_key(row[first], row[last])))
    for i, person in enumerate(people):
        label = f"{person[header[0]]} {person[header[1]]}"
        found = [r for r, m in zip(rows, matched) if m == i]
        if len(found) != 1:
            report.req(f"{label}: one row, every field cleaned and merged", False, f"{len(found)} rows for this person")
            continue
        wrong = []
        for col in header:
            got, exp = found[0][pc.norm(col)], person[col]
            same = pc.norm(got) == pc.norm(exp) if col in (header[4], header[5]) else got == exp
            if not same:
                wrong.append(f"{col} {got!r} (expected {exp!r})")
        report.req(f"{label}: one row, every field cleaned and merged", not wrong, "; ".join(wrong))
    seen = [m for m in matched if m is not None]
    extra = sum(1 for m in matched if m is None)
    complete = sorted(seen) == list(range(len(people))) and not extra
    report.req("one row per person: none missing, none twice, no other rows", complete,
               f"{len(rows)} rows for {len(people)} people ({len(set(seen))} found, {extra} unknown)")
    in_order = len(set(seen)) >= 2 and len(seen) == len(set(seen)) and seen == sorted(seen)
    report.req(f"sorted by {header[1]}, then {header[0]}", in_order,
               "" if in_order else "people repeat or are out of order")
