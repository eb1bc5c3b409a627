"""crm_form_fill: add people to the CRM through its validated form, updating instead of duplicating.

The instruction lists people with every field (name, company, email, phone, city, status, notes),
in values the form accepts. From level 2 one of them (two at level 5) is already in the CRM under the
same email address and must be updated, not added again; from level 3 a value must be looked up
("the same company as X", at level 5 also "the same city as Y"); from level 4 a new person shares
the name of someone already there (a different email: a different person, to be added).
"""

from __future__ import annotations

import random

from .base import Draft
from .content import CITIES, COMPANIES, FIRST, LAST, email_of, phone_of
from .crm_search_edit import SIZES, STATUSES, changed, contacts

# level: new people, existing people to update, values to look up, a namesake among the new people
PLAN = {0: (1, 0, 0, False), 1: (2, 0, 0, False), 2: (2, 1, 0, False), 3: (2, 1, 1, False), 4: (3, 1, 1, True),
        5: (3, 2, 2, True)}
NOTES = ["Met at the {city} trade fair and wants a demo.", "Asked for a quote on the annual plan.",
         "Prefers email over phone calls.", "Renewal is due next quarter.", "Interested in the analytics add-on.",
         "Introduced by a partner, follow up in two weeks.", "Needs invoices in euros.", "Decision maker for purchasing."]
FIELDS = ["name", "company", "email", "phone", "city", "status", "notes"]


def note(rng: random.Random) -> str:
    return rng.choice(NOTES).format(city=rng.choice(CITIES))


def build(rng: random.Random, level: int) -> Draft:
    rows = contacts(rng, SIZES[level])
    for r in rng.sample(rows, len(rows) // 3):
        r["notes"] = note(rng)
    n_new, n_update, n_lookup, namesake = PLAN[level]
    names = [r["name"] for r in rows]
    unique = [r for r in rows if names.count(r["name"]) == 1]
    updated = rng.sample(unique, n_update)
    sources = rng.sample([r for r in unique if r not in updated], n_lookup + int(namesake))
    emails, taken = {r["email"] for r in rows}, set(names)

    # (the values asked for, the existing row or None, {field: whose value to look up})
    people: list[tuple[dict, dict | None, dict[str, str]]] = []
    for old in updated:  # the same person (same email) with new details
        new = dict(old)
        for fieldname in rng.sample(["phone", "city", "status", "notes"], 2 if level <= 3 else 3):
            if fieldname != "notes":
                new[fieldname] = changed(rng, fieldname, old)
            while fieldname == "notes" and new["notes"] in ("", old["notes"]):
                new["notes"] = note(rng)
        people.append(({k: new[k] for k in FIELDS}, old, {}))
    for i in range(n_new):
        if namesake and i == 0:  # someone already there has this name, at another company
            twin = sources.pop()
            first, last = twin["name"].split()
            company = rng.choice([c for c in COMPANIES if c != twin["company"]])
        else:
            while True:
                first, last = rng.choice(FIRST), rng.choice(LAST)
                if f"{first} {last}" not in taken:
                    break
            company = rng.choice(COMPANIES)
        taken.add(f"{first} {last}")
        values = {"name": f"{first} {last}", "company": company, "email": email_of(first, last, company),
                  "phone": phone_of(rng), "city": rng.choice(CITIES), "status": rng.choice(STATUSES), "notes": note(rng)}
        lookups = {}
        if n_lookup and i == int(namesake):  # the company is someone else's (a private email: no hint)
            src = sources.pop()
            values["company"], lookups["company"] = src["company"], src["name"]
            values["email"] = f"{first[0].lower()}{last.lower()}@{rng.choice(['mailbox', 'post', 'inbox'])}.example"
        if n_lookup > 1 and i == n_new - 1:  # and the city someone else's
            src = sources.pop()
            values["city"], lookups["city"] = src["city"], src["name"]
        while values["email"] in emails:
            values["email"] = f"{first.lower()}{rng.randint(2, 99)}.{last.lower()}@post.example"
        emails.add(values["email"])
        people.append((values, None, lookups))
    rng.shuffle(people)

    lines, expect, params = [], [], []
    for values, existing, lookups in people:
        shown = {k: (f"the same as {lookups[k]}'s" if k in lookups else v) for k, v in values.items()}
        lines.append(f"- {shown['name']}: company {shown['company']}; email {shown['email']}; phone {shown['phone']}; "
                     f"city {shown['city']}; status {shown['status']}; notes \"{shown['notes']}\"")
        if existing is None:
            expect.append({"what": f"{values['name']} ({values['email']}) added", "table": "contacts", "insert": values,
                           "count": 1})
        else:
            expect.append({"what": f"{values['name']} ({values['email']}) updated, not duplicated", "table": "contacts",
                           "key": {"id": existing["id"]}, "values": values})
        params.append({**{k: v for k, v in values.items() if k not in lookups}, "same_as": lookups})
    rules = []
    if n_update:
        rules.append("Some of them may already be in the CRM: a contact with the same email address is the same "
                     "person, so update that record with these details instead of adding them again.")
    if namesake:
        rules.append("People with the same name but a different email address are different people.")
    if n_lookup:
        rules.append("Where a value says \"the same as\" someone's, look that person up in the CRM and use their value.")
    who = "this person" if len(people) == 1 else "these people"
    instruction = (f"Our CRM runs at http://127.0.0.1:8080/. Please add {who} as contacts, with every field "
                   f"exactly as given:\n\n" + "\n".join(lines) + "\n\n" + (" ".join(rules) + " " if rules else "")
                   + "Change nothing else: no other contact should be added, edited or deleted.\n")
    return Draft(app="crm", rows={"contacts": rows}, instruction=instruction, expect=expect, params={"people": params},
                 kind="upsert" if n_update else "create",
                 tags=["forms"] + (["upsert"] if n_update else []) + (["lookup"] if n_lookup else [])
                 + (["disambiguation"] if namesake else []),
                 parameters={"contacts": len(rows), "new": n_new, "updates": n_update, "lookups": n_lookup,
                             "namesake": namesake},
                 agent_timeout_sec=600.0 + 200.0 * len(people))
