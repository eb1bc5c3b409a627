"""memo_docx: write up a review meeting as a Word memo, with figures computed from the data.

The workspace holds the period's data and ``meeting_notes.md``. The data is one of two kinds: a
month's ``expenses.csv`` with ``budgets.csv`` (a spend review by department), or a quarter's
``sales_q<N>_<year>.json`` with the previous quarter's revenue per region (a sales review). The
notes list attendees, decisions and action items with owners and due dates. From level 2 they are
written per agenda topic with a proposal that was parked, and from level 3 action owners appear by
first name only.

The output, ``memo.docx``, must have the required sections as Word headings, in a given order:
- a summary stating the total (level 2+: the largest group and its amount; level 3+: a percentage);
- a figures table with one row per group (level 2+: a Total row);
- the decisions (level 1+) and the action items with their owners (level 2+: with due dates);
- from level 2, a risks section naming the groups over budget or down on the prior quarter;
- from level 3, a To/From/Date/Subject header block;
- from level 4, a second table by category or product.
Refunds are negative rows (level 2+). From level 3, rejected or cancelled rows must be left out.

Checks: every section's content; a heading alone earns nothing. The heading order and the header
block only count once every section has some right content. Mistake of the wrong answer: the
action items lose their owners.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from typing import Any

from . import content
from .base import Draft, csv_bytes, grow

REGIONS = ("North", "South", "East", "West", "Central", "Coastal", "Mountain", "Metro")
ROLES = ("Finance Director", "Head of Operations", "Sales Lead", "HR Manager", "Controller",
         "Marketing Manager", "Office Manager", "Financial Analyst", "Procurement Lead")
TOPICS = ("Budget vs actuals", "Suppliers and contracts", "Team and hiring", "Travel and events",
          "Office and facilities", "Any other business")
FILLER = ("Went through the figures line by line; no questions on the larger items.",
          "Discussed whether the monthly pack could be shorter; views were mixed.",
          "Short update on the expense tool roll-out, which is going smoothly.",
          "Some concern about late supplier invoices, to be watched over the next weeks.",
          "Recap of last meeting's open points; most are closed.",
          "Brief discussion of seasonal effects in the numbers.")
HEADINGS = {"summary": ("Summary", "Executive Summary", "Overview"),
            "figures": ("Figures", "Key Figures", "The Numbers"),
            "risks": ("Risks", "Watch List", "Areas of Concern"),
            "decisions": ("Decisions", "Key Decisions", "What We Decided"),
            "next": ("Next Steps", "Action Items", "Follow-ups")}


class _Slots:
    """Distinct vendors, cities, products and services for the notes, so each item has its own keys."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.vendors = iter(" ".join(c.split()[:2]) for c in content.companies(rng, 12))
        self.cities = iter(rng.sample([c for c, _ in content.CITIES], len(content.CITIES)))
        self.products = iter(rng.sample(content.PRODUCTS, len(content.PRODUCTS)))
        self.services = iter(rng.sample(content.SERVICES, len(content.SERVICES)))
        self.months = iter(rng.sample(content.MONTHS, 12))


def _decisions(s: _Slots) -> list[tuple[str, list[str], float | None]]:
    """Candidate decisions: (text, words the memo must keep, amount the memo must state)."""
    a1, a2 = s.rng.choice([1500, 2000, 2500, 3000]), s.rng.choice([4000, 6500, 8000, 12000])
    v1, v2, c1, p1 = next(s.vendors), next(s.vendors), next(s.cities), next(s.products)
    m1, m2, sv1, sv2 = next(s.months), next(s.months), next(s.services), next(s.services)
    return [
        (f"Move the {sv1.lower()} contract to {v1} when the current term ends", [v1], None),
        (f"Cap travel spend at ${a1:,} per person per quarter", ["travel"], a1),
        (f"Postpone the {p1.lower()} refresh until {m1}", [p1, m1], None),
        (f"Hold the next team offsite in {c1}", [c1], None),
        (f"Approve ${a2:,} for a {sv2.lower()} pilot", [sv2], a2),
        (f"Make {v2} the preferred supplier for office furniture", [v2], None),
        (f"Freeze new software subscriptions until the end of {m2}", ["subscriptions", m2], None),
        (f"Approve expense claims every {s.rng.choice(['Monday', 'Tuesday', 'Thursday'])} instead of monthly",
         ["expense claims"], None),
    ]


def _parked(s: _Slots) -> tuple[str, list[str]]:
    vendor = next(s.vendors)
    return s.rng.choice([
        (f"Parked: switching the cleaning contract to {vendor} (waiting for a second quote)", [vendor]),
        (f"Not agreed: moving payroll processing to {vendor} (too risky before year end)", [vendor]),
    ])


def _actions(s: _Slots) -> list[tuple[str, list[str]]]:
    """Candidate action items: (task, words the memo must keep)."""
    p1, p2, v1, v2 = next(s.products), next(s.products), next(s.vendors), next(s.vendors)
    c1, sv = next(s.cities), next(s.services)
    return [
        (f"get three supplier quotes for the {p1.lower()} order", [p1]),
        (f"draft the renewal letter to {v1}", [v1]),
        (f"confirm the venue booking in {c1}", [c1]),
        (f"update the {sv.lower()} line in the forecast", [sv]),
        (f"set up a call with {v2} about the late invoices", [v2]),
        ("circulate the updated headcount plan", ["headcount"]),
        ("write up the onboarding checklist for new starters", ["onboarding"]),
        (f"review the {p2.lower()} stock count", [p2]),
    ]


def _people(rng: random.Random, n: int) -> list[tuple[content.Person, str]]:
    """``n`` attendees and one absentee (last), with distinct first names: owners go by first name."""
    return list(zip(content.first_named(rng, 4 * n)[:n + 1], rng.sample(ROLES, n + 1)))


def _day(d: dt.date) -> str:
    return f"{d:%a} {d.day} {content.month_name(d.month)}"


def _reference(rng: random.Random, groups: list[str], actual: dict[str, float], *, bad_above: bool,
               step: float) -> dict[str, float]:
    """Reference figures (budget, prior quarter) 5-25% away from the actuals, rounded to ``step``;
    about a third of the groups are on the bad side (above the actual when ``bad_above``)."""
    bad = set(rng.sample(groups, max(1, len(groups) // 3)))
    out = {}
    for g in groups:
        above = (g in bad) == bad_above
        value = round(actual[g] * (rng.uniform(1.05, 1.25) if above else rng.uniform(0.8, 0.95)) / step) * step
        while (value <= actual[g]) if above else (value >= actual[g]):
            value += step if above else -step
        out[g] = round(value, 2)
    return out


def _spend(rng: random.Random, level: int, n: int) -> dict:
    year, month = content.period(rng)
    groups = rng.sample(content.DEPARTMENTS, n)
    cats = rng.sample(content.EXPENSE_CATEGORIES, min(12, 4 + level))
    vendors = content.companies(rng, 6)
    rows: list[list[Any]] = []  # date, department, category, vendor, amount, status
    for g in groups:
        for _ in range(grow(level, 4, 1.35) + rng.randint(0, 2)):
            rows.append([content.day_in(rng, year, month), g, rng.choice(cats), rng.choice(vendors),
                         content.money(rng, 60, 4800), "Approved"])
    if level >= 2:
        for src in rng.sample(rows, max(2, n // 2)):
            rows.append([content.day_in(rng, year, month), src[1], src[2], src[3],
                         -round(src[4] * rng.uniform(0.1, 0.6), 2), "Approved"])
    if level >= 3:
        for _ in range(rng.randint(2, 4)):
            rows.append([content.day_in(rng, year, month), rng.choice(groups), rng.choice(cats), rng.choice(vendors),
                         content.money(rng, 300, 6000), rng.choice(["Rejected", "Pending"])])
    rows.sort(key=lambda r: (r[0], r[1]))
    counted = [r for r in rows if r[5] == "Approved"]
    actual = {g: round(sum(r[4] for r in counted if r[1] == g), 2) for g in groups}
    budget = _reference(rng, groups, actual, bad_above=False, step=100)
    header = ["Date", "Department", "Category", "Vendor", "Amount"] + (["Status"] if level >= 3 else [])
    files = {"expenses.csv": csv_bytes(header, [[r[0].isoformat(), *r[1:5], *(r[5:] if level >= 3 else [])] for r in rows]),
             "budgets.csv": csv_bytes(["Department", "Budget"], [[g, f"{budget[g]:.2f}"] for g in sorted(groups)])}
    by_cat = {c: round(sum(r[4] for r in counted if r[2] == c), 2) for c in sorted({r[2] for r in counted})}
    label = f"{content.month_name(month)} {year}"
    cur = rng.choice(["Spend", "Actual"])
    return {"files": files, "groups": groups, "current": actual, "reference": budget, "period": label,
            "columns": ["Department", cur, "Budget", "Variance"], "diff": f"Variance = Budget - {cur}",
            "sign": -1, "breakdown": by_cat, "sub": "Category", "meeting": dt.date(year + (month == 12), month % 12 + 1, 1),
            "what": "spend", "unit": "department", "bad": "over budget",
            "data": "expenses.csv and budgets.csv", "exclude": "Rejected and Pending expenses",
            "percent": ("the share of the total budget used (e.g. 87.4%)", round(100 * sum(actual.values()) / sum(budget.values()), 4)),
            "title": "Monthly budget review"}


def _sales(rng: random.Random, level: int, n: int) -> dict:
    year, q = rng.choice((2024, 2025)), rng.randint(1, 4)
    groups = rng.sample(REGIONS, n)
    prices = {p: content.money(rng, 25, 900) for p in rng.sample(content.PRODUCTS, min(12, 4 + level))}
    reps = [p.name for p in content.people(rng, 5)]
    orders: list[dict[str, Any]] = []
    for g in groups:
        for _ in range(grow(level, 4, 1.35) + rng.randint(0, 2)):
            product = rng.choice(sorted(prices))
            units = rng.randint(1, 12)
            orders.append({"date": content.day_in(rng, year, 3 * q - rng.randint(0, 2)).isoformat(), "region": g,
                           "rep": rng.choice(reps), "product": product, "units": units,
                           "amount": round(units * prices[product], 2),
                           "status": rng.choice(["Shipped", "Delivered"]) if level < 3 or rng.random() > 0.12 else "Cancelled"})
    if level >= 3 and not any(o["status"] == "Cancelled" for o in orders):
        orders[rng.randrange(len(orders))]["status"] = "Cancelled"
    orders.sort(key=lambda o: (o["date"], o["region"]))
    for i, o in enumerate(orders):
        o["order_id"] = f"SO-{10400 + 7 * i}"
    counted = [o for o in orders if o["status"] != "Cancelled"]
    actual = {g: round(sum(o["amount"] for o in counted if o["region"] == g), 2) for g in groups}
    prior = _reference(rng, groups, actual, bad_above=True, step=0.01)
    label, prev = f"Q{q} {year}", (f"Q{q - 1} {year}" if q > 1 else f"Q4 {year - 1}")
    doc = {"quarter": label, "currency": "USD",
           "previous_quarter": {"quarter": prev, "revenue_by_region": {g: prior[g] for g in sorted(groups)}},
           "orders": [{k: o[k] for k in ("order_id", "date", "region", "rep", "product", "units", "amount", "status")}
                      for o in orders]}
    name = f"sales_q{q}_{year}.json"
    by_product = {p: round(sum(o["amount"] for o in counted if o["product"] == p), 2) for p in sorted({o["product"] for o in counted})}
    cur, ref = rng.choice(["Revenue", "Sales"]), rng.choice(["Previous Quarter", "Prior Quarter"])
    total, prev_total = sum(actual.values()), sum(prior.values())
    return {"files": {name: (json.dumps(doc, indent=2) + "\n").encode()}, "groups": groups, "current": actual,
            "reference": prior, "period": label, "columns": ["Region", cur, ref, "Change"],
            "diff": f"Change = {cur} - {ref}", "sign": 1, "breakdown": by_product, "sub": "Product",
            "meeting": dt.date(year + (q == 4), (3 * q) % 12 + 1, 1), "what": "revenue", "unit": "region",
            "bad": f"down on {prev}", "data": name, "exclude": "Cancelled orders",
            "percent": (f"the percentage change of total revenue against {prev} (e.g. +4.2% or -3.1%)", round(100 * (total - prev_total) / prev_total, 4)),
            "title": "Quarterly sales review"}


def _notes(rng, level, data, people, decisions, parked, actions, meeting) -> str:
    *people, (absent, _) = people
    attendees = ", ".join(f"{p.name} ({role})" for p, role in people)
    lines = [f"# {data['title']} — {content.long_date(meeting)}", ""]
    if level < 2:
        lines += [f"Attendees: {attendees}", f"Minutes: {people[0][0].name}", "", "## Discussion",
                  *(f"- {f}" for f in rng.sample(FILLER, 2)), "", "## Decisions", *(f"- {d['text']}." for d in decisions),
                  "", "## Action items", *(f"- {a['owner']} — {a['text']} — due {_day(a['date'])}" for a in actions)]
        return "\n".join(lines) + "\n"
    lines += [f"**Present:** {attendees}", f"**Apologies:** {absent.name}", ""]
    topics = rng.sample(TOPICS[:-1], min(4, 2 + level // 2)) + [TOPICS[-1]]
    fillers = rng.sample(FILLER, len(topics))
    parts: list[list[str]] = [[] for _ in topics]
    for i, d in enumerate(decisions):
        parts[i % len(topics)].append(f"- DECISION: {d['text']}.")
    for i, a in enumerate(actions):
        first = a["owner"].split()[0]
        parts[(i + 1) % len(topics)].append(f"- ACTION: {a['owner']} to {a['text']} by {_day(a['date'])}" if level == 2
                                            else f"- ACTION ({first}): {a['text']}, due {_day(a['date'])}")
    parts[-1].append(f"- {parked[0]['text']}.")
    for n, (topic, filler, items) in enumerate(zip(topics, fillers, parts), start=1):
        lines += [f"## {n}. {topic}", filler, *items, ""]
    return "\n".join(lines)


def build(rng: random.Random, level: int) -> Draft:
    n = min(8, 3 + level)
    data = (_spend if rng.random() < 0.5 else _sales)(rng, level, n)
    meeting = data["meeting"] + dt.timedelta(days=rng.randint(2, 10))
    people = _people(rng, 4 + level // 2)
    slots = _Slots(rng)
    decisions = [{"text": t, "keys": k, "amount": a} for t, k, a in rng.sample(_decisions(slots), min(8, 2 + level))]
    parked = [dict(zip(("text", "keys"), _parked(slots)))] if level >= 2 else []
    actions = []
    for task, keys in rng.sample(_actions(slots), min(8, 2 + level)):
        due = meeting + dt.timedelta(days=rng.randint(3, 24))
        owner = rng.choice(people[:-1])[0].name
        actions.append({"text": task, "keys": keys, "owner": owner, "date": due, "due": [due.month, due.day]})
    notes = _notes(rng, level, data, people, decisions, parked, actions, meeting)

    roles = ["figures"] + (["risks"] if level >= 2 else []) + (["breakdown"] if level >= 4 else [])
    meeting_roles = (["decisions"] if level >= 1 else []) + ["next"]
    order = ["summary"] + (roles + meeting_roles if rng.random() < 0.5 else meeting_roles + roles)
    names = {r: rng.choice(HEADINGS[r]) for r in HEADINGS}
    sub = data["sub"]
    names["breakdown"] = rng.choice([f"{sub} Breakdown", f"{data['what'].title()} by {sub}"])
    heading = {r: names[r] for r in order}
    cols, unit, what, period = data["columns"], data["unit"], data["what"], data["period"]
    cur, ref = data["current"], data["reference"]
    diff = {g: round(data["sign"] * (cur[g] - ref[g]), 2) for g in data["groups"]}
    total = round(sum(cur.values()), 2)
    largest = max(data["groups"], key=lambda g: cur[g])
    bad = sorted(g for g in data["groups"] if diff[g] < 0)

    summary = f"state the total {what} for {period} (to the cent)"
    if level >= 2:
        summary += f", name the {unit} with the largest {what} and give its amount"
    if level >= 3:
        summary += f", and give {data['percent'][0].replace(' (', ' as a percentage with one decimal (')}"
    asks = {
        "summary": summary + ".",
        "figures": (f"a table with exactly these column headers: {' | '.join(cols)}, one row per {unit}, amounts to the "
                    f"cent ({data['diff']}; negative means {data['bad']})" + (". End the table with a Total row." if level >= 2 else ".")),
        "risks": f"name every {unit} that is {data['bad']}, and no other {unit}.",
        "breakdown": f"a second table with the column headers {sub} | {cols[1]}: the {what} of every {sub.lower()}, to the cent.",
        "decisions": "every decision taken in the meeting, one bullet each (not the proposals that were parked or not agreed).",
        "next": ("every action item from the notes, one bullet each, with the owner's full name"
                 + (" and the due date." if level >= 2 else ".")),
    }
    header: dict[str, str] | None = None
    if level >= 3:
        chair = people[0][0].name
        header = {"to": rng.choice(["Leadership Team", "Department Heads", "Executive Committee"]), "from": chair,
                  "date": (meeting + dt.timedelta(days=1)).isoformat(), "subject": f"{data['title']}: {period}"}
    intro = rng.choice([
        f"Can you turn the {data['title'].lower()} into a proper memo?",
        f"I need the write-up of the {data['title'].lower()} to go out today.",
        f"Please write the memo for the {data['title'].lower()} we held on {content.long_date(meeting)}.",
    ])
    text = [f"{intro} Use {data['data']} for the numbers and meeting_notes.md for what was said, and save the memo "
            "as memo.docx in /app.", "",
            "Use these section headings, exactly as written and in this order, each as a real Word heading "
            "(the built-in Heading 1 style, not bold text):", ""]
    text += [f"{i}. **{heading[r]}**: {asks[r]}" for i, r in enumerate(order, start=1)]
    rules = []
    if level >= 2:
        rules.append("Refunds are negative amounts and reduce the totals." if what == "spend"
                     else f"Use the previous quarter's figures in {data['data']} for the comparison.")
    if header is not None:  # level 3 and up
        rules.append(f"Leave out {data['exclude']}: they do not count.")
        rules.append(f"Start the memo with a header block before the first heading, one line each: To: {header['to']} / "
                     f"From: {header['from']} / Date: {content.long_date(dt.date.fromisoformat(header['date']))} / "
                     f"Subject: {header['subject']}.")
        rules.append("The notes give action owners by first name; write their full names (see the attendee list).")
    if rules:
        text += ["", *(f"- {r}" for r in rules)]
    instruction = "\n".join(text) + "\n"

    figures = {"columns": cols, "rows": {g: [cur[g], ref[g], diff[g]] for g in data["groups"]},
               "total": [total, round(sum(ref.values()), 2), round(sum(diff.values()), 2)] if level >= 2 else None}
    spec = {"file": "memo.docx", "order": [heading[r] for r in order], "heading": heading, "figures": figures,
            "summary": {"total": total, "largest": [largest, cur[largest]] if level >= 2 else None,
                        "percent": data["percent"][1] if level >= 3 else None},
            "groups": data["groups"], "risks": bad if level >= 2 else None,
            "breakdown": {"columns": [sub, cols[1]], "rows": data["breakdown"]} if level >= 4 else None,
            "decisions": decisions if level >= 1 else None, "parked": parked,
            "actions": [{k: a[k] for k in ("text", "keys", "owner", "due")} for a in actions],
            "due_required": level >= 2, "header": header}
    params = {"file": "memo.docx", "kind": what, "data": sorted(data["files"]), "order": order, "heading": heading,
              "columns": cols, "sign": data["sign"], "sub": sub, "total_row": level >= 2, "largest": level >= 2,
              "percent": level >= 3, "header": header, "exclude_status": level >= 3}
    files = dict(data["files"])
    files["meeting_notes.md"] = notes.encode()
    return Draft(kind=f"{what}_memo", instruction=instruction, files=files, spec=spec, params=params,
                 outputs={"memo.docx": "docx"}, mistake="the action items are listed without their owners",
                 parameters={"groups": n, "sections": len(order), "decisions": len(decisions),
                             "actions": len(actions)},
                 tags=["docx", "report", what], agent_timeout_sec=900.0)
