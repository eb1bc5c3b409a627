"""Reference solution for contacts_clean: read every input record, clean each field, group records
of one person (same valid e-mail ignoring case, or same cleaned name and phone; transitively), merge
each group (most recent non-empty value per field), sort by last then first name, write the CSV.
``--wrong``: the plausible wrong answer (e-mails compared case-sensitively when grouping)."""

import csv
import json
import os
import sys

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)
FIELDS = P["fields"]


def valid_email(text: str) -> bool:
    return text.count("@") == 1 and " " not in text and "." in text.split("@")[1].strip(".")


def clean(raw: dict) -> dict:
    digits = "".join(ch for ch in raw.get("phone", "") if ch.isdigit())[-10:]
    email = raw.get("email", "").strip()
    return {"first": " ".join(raw["first"].split()).title(), "last": " ".join(raw["last"].split()).title(),
            "email": email.lower() if valid_email(email) else "", "raw_email": email if valid_email(email) else "",
            "phone": f"+1-{digits[:3]}-{digits[3:6]}-{digits[6:]}" if len(digits) == 10 else "",
            "company": " ".join(raw.get("company", "").split()), "city": " ".join(raw.get("city", "").split()),
            "updated": raw.get("updated", "")[:10]}


records = []
for file, cols in P["inputs"].items():
    with open(file, encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh):
            if not any((v or "").strip() for v in row.values()):
                continue
            raw = {f: row.get(c) or "" for f, c in cols.items() if f != "name"}
            if "name" in cols:  # "Last, First"
                last, _, first = row[cols["name"]].partition(",")
                raw.update(first=first, last=last)
            records.append(clean(raw))

parent = list(range(len(records)))


def find(i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


seen: dict = {}
for i, rec in enumerate(records):
    keys: list[tuple[str, ...]] = []
    if rec["email"]:
        keys.append(("email", rec["raw_email"] if WRONG else rec["email"]))
    if rec["phone"]:
        keys.append(("name+phone", rec["first"].casefold(), rec["last"].casefold(), rec["phone"]))
    for key in keys:
        if key in seen:
            parent[find(i)] = find(seen[key])
        else:
            seen[key] = i

groups: dict[int, list[dict]] = {}
for i, rec in enumerate(records):
    groups.setdefault(find(i), []).append(rec)
people = []
for group in groups.values():
    group.sort(key=lambda r: r["updated"], reverse=True)
    people.append({f: next((r[f] for r in group if r[f]), "") for f in FIELDS})
people.sort(key=lambda p: (p["last"].casefold(), p["first"].casefold()))

with open(P["file"], "w", encoding="utf-8", newline="") as fh:
    writer = csv.writer(fh)
    writer.writerow(P["header"])
    writer.writerows([p[f] for f in FIELDS] for p in people)
print(f"{len(records)} records -> {len(people)} people in {os.path.abspath(P['file'])}")
