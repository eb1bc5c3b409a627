"""crm_search_edit: find contacts in a paginated, searchable CRM and edit their details.

Levels: more contacts (more pages to search through), namesakes at other companies that the
company name must tell apart, more contacts and more fields to change.
"""

from __future__ import annotations

import random

from .base import Draft
from .content import CITIES, COMPANIES, FIRST, LAST, email_of, phone_of

STATUSES = ["lead", "active", "customer", "inactive"]
SIZES = {0: 8, 1: 15, 2: 30, 3: 45, 4: 60, 5: 80}


def contacts(rng: random.Random, n: int) -> list[dict]:
    seen: set[tuple[str, str]] = set()
    out: list[dict] = []
    while len(out) < n:
        first, last, company = rng.choice(FIRST), rng.choice(LAST), rng.choice(COMPANIES)
        if (first, last) in seen:
            continue
        seen.add((first, last))
        out.append({"id": len(out) + 1, "name": f"{first} {last}", "company": company,
                    "email": email_of(first, last, company), "phone": phone_of(rng), "city": rng.choice(CITIES),
                    "status": rng.choice(STATUSES), "notes": ""})
    return out


def changed(rng: random.Random, fieldname: str, contact: dict) -> str:
    """A new phone number, status or city for ``contact``: one it does not have (a phone is drawn anew)."""
    if fieldname == "phone":
        return phone_of(rng)
    if fieldname == "status":
        return rng.choice([s for s in STATUSES if s != contact["status"]])
    return rng.choice([c for c in CITIES if c != contact["city"]])


def build(rng: random.Random, level: int) -> Draft:
    rows = contacts(rng, SIZES[level])
    n_edits = 1 if level <= 2 else 2 if level <= 4 else 3
    n_fields = 1 if level <= 1 else 2
    targets = rng.sample(rows, n_edits)
    namesakes = level >= 2
    if namesakes:  # the same name at another company, so the company must tell them apart
        for t in targets:
            other = dict(t, id=len(rows) + 1, company=rng.choice([c for c in COMPANIES if c != t["company"]]),
                         phone=phone_of(rng), city=rng.choice(CITIES))
            first, last = t["name"].split()
            other["email"] = email_of(first, last, other["company"])
            rows.append(other)
    rng.shuffle(rows)
    for i, r in enumerate(rows, 1):
        r["id"] = i
    sentences, expect, edits = [], [], []
    for t in targets:
        changes: dict[str, str] = {}
        for fieldname in rng.sample(["phone", "status", "city", "email"], n_fields):
            if fieldname == "email":
                first, last = t["name"].split()
                changes["email"] = f"{first[0].lower()}{last.lower()}@{rng.choice(['mailbox', 'post', 'inbox'])}.example"
            else:
                changes[fieldname] = changed(rng, fieldname, t)
        parts = [{"phone": "phone number", "email": "email address"}.get(k, k) + f" to {v}" for k, v in changes.items()]
        who = f"{t['name']} ({t['company']})" if namesakes else t["name"]
        sentences.append(f"- {who}: set the {' and the '.join(parts)}.")
        expect.append({"what": f"{who}: " + ", ".join(f"{k} = {v}" for k, v in changes.items()),
                       "table": "contacts", "key": {"id": t["id"]}, "values": changes})
        edits.append({"name": t["name"], "company": t["company"], "set": changes})
    note = " Some people share a name; the company tells them apart." if namesakes else ""
    instruction = ("Our CRM runs at http://127.0.0.1:8080/. Please update these contacts:\n\n" + "\n".join(sentences)
                   + f"\n\nUse the CRM's search to find them.{note} Change nothing else: no other contact or field "
                   "should be touched.\n")
    return Draft(app="crm", rows={"contacts": rows}, instruction=instruction, expect=expect,
                 params={"edits": edits}, kind="edit" if n_edits == 1 else "multi-edit",
                 tags=["search", "edit", "pagination"] + (["disambiguation"] if namesakes else []),
                 parameters={"contacts": len(rows), "edits": n_edits, "fields": n_fields, "namesakes": namesakes},
                 agent_timeout_sec=600.0 + 300.0 * n_edits)
