"""contacts_clean: clean, normalise and deduplicate a contact list exported from two systems.

The workspace holds ``contacts.csv``: snake_case or CamelCase export headers, a Source column, names
with stray spaces and odd capitalisation, e-mails with capitals and spaces, phones in every format
but the wanted one ("(555) 123-4567", "555.123.4567", "+1 555 123 4567", ...), blank rows, and
people entered twice: the same e-mail in a different case (one record missing the phone), or the
same name and phone with the e-mail only in one record. From level 3 a second file,
``contacts_crm.csv`` (other headers, names as "Last, First"), is merged in; records carry a
last-updated date and some disagree (a new employer, a new phone), so the most recent value wins;
some e-mails are invalid and must be left empty.

Output: ``contacts_clean.csv`` with an exact header and one row per person, sorted by last then
first name. Checks: each person's row (found by e-mail, else by name), every field exact in the
required format; no duplicates, missing or extra rows; the order. No input phone is in the required
format, so a copy of the input (even under the right header) earns nothing. Mistake of the wrong
answer: e-mails are compared case-sensitively, so some people keep two rows.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from . import content
from .base import Draft, csv_bytes

SIZES = (5, 8, 12, 16, 22, 30)
FIELDS = ("first", "last", "email", "phone", "company", "city")
LABELS = {"first": ("First Name", "Given Name"), "last": ("Last Name", "Surname"), "email": ("Email", "E-mail"),
          "phone": ("Phone", "Phone Number"), "company": ("Company", "Organisation"), "city": ("City", "Town")}
INPUT_HEADERS = (
    {"first": "first_name", "last": "last_name", "email": "email", "phone": "phone", "company": "company",
     "city": "city", "source": "source", "updated": "last_updated"},
    {"first": "FirstName", "last": "LastName", "email": "EmailAddress", "phone": "PhoneNumber",
     "company": "CompanyName", "city": "City", "source": "Source", "updated": "LastUpdated"},
)
CRM_HEADER = {"name": "Name", "email": "E-mail", "phone": "Mobile", "company": "Organisation", "city": "Town",
              "updated": "Modified"}
PHONE_STYLES = ("({a}) {b}-{c}", "{a}.{b}.{c}", "+1 {a} {b} {c}", "{a}-{b}-{c}", "1-{a}-{b}-{c}", "{a}{b}{c}",
                "+1 ({a}) {b}-{c}")
INVALID = ("{u}@{d0}", "{u}.{d}", "{u}@@{d}", "{u} @{d}")


def is_valid_email(text: str) -> bool:
    """The instruction's rule: exactly one @, no spaces, and a dot in the part after the @."""
    text = text.strip()
    return text.count("@") == 1 and " " not in text and "." in text.split("@")[1].strip(".")


def clean(record: dict) -> dict:
    """A record's fields as the output must show them ("" where absent or invalid)."""
    digits = "".join(ch for ch in record.get("phone", "") if ch.isdigit())[-10:]
    email = record.get("email", "").strip().lower()
    return {"first": " ".join(record["first"].split()).title(), "last": " ".join(record["last"].split()).title(),
            "email": email if is_valid_email(email) else "",
            "phone": f"+1-{digits[:3]}-{digits[3:6]}-{digits[6:]}" if digits else "",
            "company": " ".join(record.get("company", "").split()), "city": " ".join(record.get("city", "").split())}


def merge(records: list[dict]) -> dict:
    """One person's records merged: per field, the most recent record's non-empty value."""
    ordered = sorted(records, key=lambda r: r.get("updated", ""), reverse=True)
    cleaned = [clean(r) for r in ordered]
    return {f: next((c[f] for c in cleaned if c[f]), "") for f in FIELDS}


def _messy_name(rng: random.Random, name: str) -> str:
    style = rng.randrange(5)
    text = name.lower() if style == 1 else name.upper() if style == 2 else name
    return rng.choice(("", " ", "  ")) + text + rng.choice(("", " ", "  ")) if style in (0, 3) else text


def _messy_email(rng: random.Random, email: str, *, recase: bool = False) -> str:
    user, domain = email.split("@")
    if recase or rng.random() < 0.4:
        user = ".".join(p.capitalize() for p in user.split("."))
        domain = domain.capitalize() if rng.random() < 0.5 else domain.upper()
    return rng.choice(("", " ")) + f"{user}@{domain}" + rng.choice(("", " ", "  "))


def _messy_phone(rng: random.Random, digits: str) -> str:
    return rng.choice(PHONE_STYLES).format(a=digits[:3], b=digits[3:6], c=digits[6:])


def _spaced(rng: random.Random, text: str) -> str:
    if not text or rng.random() < 0.6:
        return text
    return rng.choice((" ", "  ")) + text.replace(" ", rng.choice((" ", "  "))) + rng.choice(("", " "))


def _record(rng: random.Random, p: dict, drop: tuple[str, ...] = (), **raw: str) -> dict:
    """One messy record of person ``p``: the fields in ``drop`` left empty, ``raw`` written as given."""
    rec = {"first": _messy_name(rng, p["first"]), "last": _messy_name(rng, p["last"]),
           "email": _messy_email(rng, p["email"]), "phone": _messy_phone(rng, p["phone"]),
           "company": _spaced(rng, p["company"]), "city": _spaced(rng, p["city"]), "file": "contacts.csv"}
    rec.update({f: "" for f in drop}, **raw)
    return rec


def _records(rng: random.Random, p: dict, kind: str, firms: list[str]) -> list[dict]:
    """The records person ``p`` has in the inputs, oldest first where the kind implies an order."""
    if kind == "email":  # same address in another case; the second record lacks the phone
        plain = _record(rng, p, email=p["email"] + rng.choice(("", " ")))
        return [plain, _record(rng, p, ("phone",) + (("company",) if rng.random() < 0.5 else ()),
                               email=_messy_email(rng, p["email"], recase=True))]
    if kind == "phone":  # same name and phone; only one record has the e-mail
        return [_record(rng, p, ("email",)), _record(rng, p, ("company",) + (("city",) if rng.random() < 0.5 else ()))]
    if kind == "update":  # a newer record: another employer, sometimes a new phone, maybe no city
        moved = {"company": rng.choice([f for f in firms if f != p["company"]])}
        if rng.random() < 0.5:
            moved["phone"] = _messy_phone(rng, f"555{rng.randint(1000000, 9999999)}")
        return [_record(rng, p), _record(rng, p, ("city",) if rng.random() < 0.5 else (), **moved)]
    if kind == "invalid":  # an unusable address, sometimes with another record that has a good one
        user, domain = p["email"].split("@")
        bad = _record(rng, p, email=rng.choice(INVALID).format(u=user, d=domain, d0=domain.split(".")[0]))
        return [bad] if rng.random() < 0.5 else [_record(rng, p, ("company",)), bad]
    if kind in ("crm", "crm_only"):  # a CRM record, linked by e-mail or by name and phone
        crm = _record(rng, p, () if kind == "crm_only" or rng.random() < 0.5 else ("email",), file="contacts_crm.csv")
        if kind == "crm_only":
            return [crm]
        crm["company"] = rng.choice([crm["company"], rng.choice(firms)])
        return [_record(rng, p), crm]
    return [_record(rng, p)]


def _people(rng: random.Random, level: int) -> list[dict]:
    """The task's people, each with the records the inputs hold for them."""
    n = SIZES[level]
    base = content.people(rng, n)
    phones = rng.sample(range(1000000, 9999999), n)
    people: list[dict[str, Any]] = [
        {"first": content.ascii_fold(b.first), "last": content.ascii_fold(b.last), "email": b.email,
         "phone": f"555{phones[i]:07d}", "company": b.company, "city": b.city} for i, b in enumerate(base)]
    kinds = ["email"] * max(1, n // 4) + ["phone"] * (0 if level == 0 else max(1, n // 6))
    if level >= 3:
        kinds += (["update"] * max(2, n // 6) + ["invalid"] * max(2, n // 8) + ["crm"] * max(2, n // 6)
                  + ["crm_only"] * max(2, n // 8))
    kinds += ["single"] * (n - len(kinds))
    rng.shuffle(kinds)
    firms = content.companies(rng, 4)
    year = rng.choice((2023, 2024))
    for p, kind in zip(people, kinds):
        if level >= 2 and kind == "single" and rng.random() < 0.15:
            p["company"] = ""
        p["records"] = _records(rng, p, kind, firms)
        if level >= 3:
            days = sorted(rng.sample(range(0, 700), len(p["records"])))
            if kind != "update":
                rng.shuffle(days)
            for rec, day in zip(p["records"], days):
                rec["updated"] = (dt.date(year, 1, 1) + dt.timedelta(days=day)).isoformat()
        p["kind"] = kind
    return people


def _inputs(rng: random.Random, level: int, people: list[dict], cols: dict) -> dict[str, bytes]:
    """contacts.csv (and contacts_crm.csv from level 3): every record, shuffled, with blank rows."""
    records = [r for p in people for r in p["records"]]
    rng.shuffle(records)
    main = [[r[f] for f in FIELDS] + [rng.choice(("Outlook", "Mailchimp"))] + ([r["updated"]] if level >= 3 else [])
            for r in records if r["file"] == "contacts.csv"]
    for _ in range(min(level, 3)):
        main.insert(rng.randrange(1, len(main)), [""] * len(main[0]))
    header = [cols[f] for f in FIELDS] + [cols["source"]] + ([cols["updated"]] if level >= 3 else [])
    files = {"contacts.csv": csv_bytes(header, main, lineterminator="\r\n")}
    crm = [[f"{r['last'].strip()},{rng.choice((' ', '  '))}{r['first'].strip()}", r["email"], r["phone"], r["company"],
            r["city"], f"{r['updated']} {rng.randint(8, 18):02d}:{rng.randrange(60):02d}"]
           for r in records if r["file"] == "contacts_crm.csv"]
    if crm:
        files["contacts_crm.csv"] = csv_bytes(list(CRM_HEADER.values()), crm, lineterminator="\r\n")
    return files


def build(rng: random.Random, level: int) -> Draft:
    people = _people(rng, level)
    cols = rng.choice(INPUT_HEADERS)
    files = _inputs(rng, level, people, cols)
    labels = {f: LABELS[f][0] if level == 0 else rng.choice(LABELS[f]) for f in FIELDS}
    header = [labels[f] for f in FIELDS]
    expected = sorted((merge(p["records"]) for p in people), key=lambda e: (e["last"].casefold(), e["first"].casefold()))
    crm = "contacts_crm.csv" in files
    intro = rng.choice([
        "Our contact list is a mess: contacts.csv was exported from two systems (Outlook and Mailchimp) and has "
        "the same people in it more than once, spelled every which way.",
        "Before we import our contacts into the new CRM, the export in contacts.csv needs cleaning up: duplicates, "
        "stray spaces, random capitals and phone numbers in every format.",
        "Marketing wants one clean contact list. contacts.csv combines two systems' exports and it shows.",
    ])
    if crm:
        intro += (f" The sales team's CRM export, contacts_crm.csv, has to be merged in too (its {CRM_HEADER['name']} "
                  "column is written \"Last, First\").")
    rules = [
        f"{labels['first']} and {labels['last']}: trimmed, single spaces, Title Case (\"aVA \" becomes \"Ava\").",
        f"{labels['email']}: trimmed and lower case.",
        f"{labels['phone']}: every number as +1-NNN-NNN-NNNN, e.g. +1-555-123-4567 (the inputs write them in many ways, "
        "some with a leading 1 or +1).",
        f"{labels['company']} and {labels['city']}: trimmed, single spaces between words; empty when no record has one.",
        "Two records are the same person when their e-mail addresses are equal ignoring case and surrounding spaces, "
        "or when first name, last name and phone number are equal after the cleaning above. Merge each person's "
        "records into one row, filling every field from whichever record has it.",
    ]
    if level >= 3:
        rules[1] += (" An address is invalid unless it has exactly one @, no spaces and a dot after the @: leave the "
                     f"{labels['email']} empty for those (keep the person) and never match records on them.")
        rules.append(f"Where a person's records disagree, the most recently updated record wins ({cols['updated']} in "
                     f"contacts.csv, {CRM_HEADER['updated']} in contacts_crm.csv); an empty or invalid value never "
                     "replaces a filled one.")
    if level >= 1:
        rules.append("Skip blank rows.")
    rules.append(f"Sort the rows by {labels['last']}, then {labels['first']}, A to Z (ignoring case).")
    instruction = (f"{intro}\n\nPlease write contacts_clean.csv in /app: comma-separated, with exactly this header row\n\n"
                   f"    {','.join(header)}\n\nand then one row per person.\n\n" + "\n".join(f"- {r}" for r in rules)
                   + f"\n\nLeave {'contacts.csv and contacts_crm.csv as they are' if crm else 'contacts.csv as it is'}.\n")
    spec = {"file": "contacts_clean.csv", "header": header, "fields": list(FIELDS),
            "people": [{labels[f]: e[f] for f in FIELDS} for e in expected]}
    params = {"file": "contacts_clean.csv", "header": header, "fields": list(FIELDS),
              "inputs": {"contacts.csv": {f: cols[f] for f in (*FIELDS, "updated")},
                         **({"contacts_crm.csv": CRM_HEADER} if crm else {})}}
    kinds = [p["kind"] for p in people]
    return Draft(kind="dedupe_contacts", instruction=instruction, files=files, spec=spec, params=params,
                 outputs={"contacts_clean.csv": "csv"},
                 mistake="e-mail addresses are compared case-sensitively, so people whose addresses differ only in "
                         "case keep two rows",
                 parameters={"people": len(people), "records": sum(len(p["records"]) for p in people),
                             **{k: kinds.count(k) for k in sorted(set(kinds))}, "crm_file": crm},
                 tags=["csv", "cleaning", "deduplication"], agent_timeout_sec=900.0)
