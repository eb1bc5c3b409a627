"""schedule_ics: book meetings into an iCalendar file around everyone's busy times and the office rules.

The workspace holds ``team.csv`` (names and e-mail addresses), one ``calendars/<name>.ics`` per person
(floating local times: stand-ups, 1:1s, client calls, focus time, out-of-office days) and
``meetings.md``, an assistant's brief listing the meetings to book. The agent writes ``schedule.ics``
with one VEVENT per requested meeting. Levels add rules: working hours (always), one or two
out-of-office days (all-day events), the lunch hour (1+), one meeting at the earliest possible slot
and multi-day absences (2+), a meeting that must follow another, a meeting room from ``rooms.csv``
and cancelled events that no longer block (3+), two weeks, a 15-minute buffer and recurring events
(RRULE) (4+), a day restriction and a skipped occurrence (EXDATE) (5).

Several schedules can be right, so the checker validates each meeting against every rule (the busy
intervals it needs are expanded here into the spec) instead of comparing with one answer; only "the
earliest slot" has a single expected start, computed here. Mistake of the wrong answer: all-day
events are skipped, so meetings land on days when a participant is out of office. The generator
redraws the task until that mistake visibly costs points.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from . import content
from .base import Draft, csv_bytes

STEP = 15  # minutes: meetings start on the quarter hour
TITLES = ("Q3 budget review", "Vendor contract renewal", "Website relaunch kickoff", "Hiring plan sync",
          "Customer churn deep-dive", "Pricing workshop", "Onboarding retro", "Board deck dry run",
          "Security audit follow-up", "Office move planning", "Sales pipeline review", "Product roadmap review",
          "Campaign debrief", "Supplier quality review", "Travel policy update", "Warehouse KPI check-in")
BUSY = ("Client call - {firm}", "Focus time", "Project sync", "Sprint planning", "Interview: {role} candidate",
        "Quarterly review prep", "Vendor demo - {firm}", "Training: {topic}", "Customer onboarding - {firm}",
        "Dentist", "Expense report catch-up", "Design review", "1:1 with {first}", "Lunch with {first}")
ROLES = ("analyst", "account manager", "engineer", "designer", "controller")
TOPICS = ("GDPR refresher", "Excel power user", "Negotiation skills", "First aid")
AWAY = ("Out of office", "Annual leave", "Conference: {city}", "Off-site workshop", "Sick leave")
ROOMS = ("Oak", "Maple", "Birch", "Harbour View", "Atrium", "Boardroom", "Pod A", "Library", "Skyline")
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR")


def _hm(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def _day(d: dt.date) -> str:
    return f"{d:%A} {d.day} {d:%B %Y}"


def _at(d: dt.date, minutes: int) -> dt.datetime:
    return dt.datetime.combine(d, dt.time()) + dt.timedelta(minutes=minutes)


def _calendar(rng, level, person, days, team, stamp):
    """One person's calendar: (ics bytes, busy intervals [(start, end, all_day)])."""
    events, busy = [], []

    def add(summary, start, end, *, blocks=True, **extra):
        """An event of the calendar; ``blocks``: its one occurrence is busy time (else added by hand)."""
        events.append({"summary": summary, "start": start, "end": end, **extra})
        if blocks:
            busy.append((start, end, False))

    if rng.random() < 0.5 or level == 0:
        first = rng.randrange(min(len(days), 3))
        length = 1 if level < 2 else rng.choice([1, 1, 2, 3])
        start = days[first]
        for when in (start + dt.timedelta(days=i) for i in range(length)):
            busy.append((_at(when, 0), _at(when, 24 * 60), True))
        add(rng.choice(AWAY).format(city=rng.choice(content.CITIES)[0]), start, start + dt.timedelta(days=length),
            blocks=False)
    standup = 9 * 60 + rng.choice([0, 15, 30])
    if level >= 4:
        skip = rng.choice(days[1:]) if level >= 5 else None
        add("Team stand-up", _at(days[0], standup), _at(days[0], standup + 15), blocks=False,
            rrule={"freq": "weekly", "byday": list(WEEKDAYS), "count": len(days)},
            exdate=_at(skip, standup) if skip else None)
        busy += [(_at(d, standup), _at(d, standup + 15), False) for d in days if d != skip]
        if rng.random() < 0.6:
            d0 = rng.choice(days[:5])
            boss = rng.choice([p for p in team if p != person]).first
            add(f"1:1 with {boss}", _at(d0, 14 * 60), _at(d0, 14 * 60 + 30), blocks=False,
                rrule={"freq": "weekly", "count": len(days) // 5})
            busy += [(_at(d, 14 * 60), _at(d, 14 * 60 + 30), False) for d in days if d.weekday() == d0.weekday()]
    for d in days:
        if level < 4:
            add("Team stand-up", _at(d, standup), _at(d, standup + 15))
        for _ in range(rng.randint(1, 3 if level < 3 else 4)):
            length = rng.choice([30, 30, 45, 60, 60, 90, 120])
            start = rng.randrange(8 * 60, 18 * 60 - length + 1, STEP)
            if any(s < _at(d, start + length) and _at(d, start) < e for s, e, _ in busy):
                continue
            summary = rng.choice(BUSY).format(firm=content.company(rng), role=rng.choice(ROLES),
                                              topic=rng.choice(TOPICS),
                                              first=rng.choice([p for p in team if p != person]).first)
            add(summary, _at(d, start), _at(d, start + length))
    if level >= 3:
        for _ in range(rng.randint(1, 2)):
            d, start = rng.choice(days[:3]), rng.randrange(9 * 60, 16 * 60, 30)
            add(rng.choice(BUSY[:4]).format(firm=content.company(rng)), _at(d, start), _at(d, start + 60),
                blocks=False, status="CANCELLED")
    return _ics(person, events, stamp), busy


def _ics(person, events, stamp) -> bytes:
    import icalendar

    cal = icalendar.Calendar()
    cal.add("prodid", "-//Northwind Office//Calendar export 2.1//EN")
    cal.add("version", "2.0")
    cal.add("x-wr-calname", person.name)
    local = person.email.split("@")[0]
    for i, item in enumerate(sorted(events, key=lambda e: (str(e["start"]), e["summary"])), start=1):
        ev = icalendar.Event()
        ev.add("uid", f"{local}-{i:03d}@calendar.example")
        ev.add("dtstamp", stamp)
        ev.add("summary", item["summary"])
        ev.add("dtstart", item["start"])
        ev.add("dtend", item["end"])
        for key in ("status", "rrule", "exdate"):
            if item.get(key):
                ev.add(key, item[key])
        cal.add_component(ev)
    return cal.to_ical()


def _plan(meetings, busy, rules, rooms):
    """Greedy booking, the reference solution's algorithm: the earliest-slot meeting first, then the
    others in the brief's order, each at its first valid quarter hour; the smallest free room that
    seats everyone. ``busy``: e-mail -> [(start, end)]. Returns title -> (start, end, room) or None."""
    buffer = dt.timedelta(minutes=rules["buffer"])
    placed: dict[str, tuple] = {}
    for m in sorted(meetings, key=lambda m: not m["earliest"]):
        spans = [iv for e in m["emails"] for iv in busy[e]]
        spans += [(p[0], p[1]) for p in placed.values() if set(p[3]) & set(m["emails"])]
        for day in m["days"] or rules["days"]:
            for minute in range(rules["start"], rules["end"] - m["minutes"] + 1, STEP):
                start = _at(dt.date.fromisoformat(day), minute)
                end = start + dt.timedelta(minutes=m["minutes"])
                lunch = rules["lunch"]
                if lunch and minute < lunch[1] and minute + m["minutes"] > lunch[0]:
                    continue
                if m["after"] and start < placed[m["after"]][1]:
                    continue
                if any(s < end + buffer and start - buffer < e for s, e in spans):
                    continue
                taken = {p[2] for p in placed.values() if p[0] < end and start < p[1]}
                free = [r for r in rooms if r["capacity"] >= len(m["emails"]) and r["name"] not in taken]
                if rooms and not free:
                    continue
                room = min(free, key=lambda r: (r["capacity"], r["name"]))["name"] if rooms else ""
                placed[m["title"]] = (start, end, room, m["emails"])
                break
            if m["title"] in placed:
                break
        else:
            return None
    return placed


def _requests(rng, level, team, days):
    """The meetings of the brief: title, length, participants and per-meeting timing constraints."""
    count = level + 1
    meetings = []
    for title in rng.sample(TITLES, count):
        who = rng.sample(team, rng.randint(2, min(len(team), 3 + level // 2)))
        meetings.append({"title": title, "minutes": rng.choice([30, 45, 60] + ([90] if level >= 2 else [])),
                         "who": [p.first for p in who], "emails": [p.email.lower() for p in who],
                         "earliest": False, "after": None, "days": None})
    if level >= 2:
        rng.choice(meetings)["earliest"] = True
    if level >= 3:
        later = rng.choice([i for i in range(1, count) if not meetings[i]["earliest"]])
        meetings[later]["after"] = meetings[rng.randrange(later)]["title"]
    if level >= 5:
        m = rng.choice([m for m in meetings if not m["earliest"]])
        m["days"] = [d.isoformat() for d in days[rng.randrange(3, len(days) - 2):][:2]]
    return meetings


def _brief(rng, meetings, days) -> str:
    lines = [f"# Meetings to set up ({_day(days[0])} to {_day(days[-1])})", "",
             rng.choice(["Notes from my call with the assistant. Titles in bold are what the invites should say.",
                         "Here's what needs booking. Use the bold titles as the invite names."]), ""]
    for i, m in enumerate(meetings, start=1):
        who = ", ".join(m["who"][:-1]) + " and " + m["who"][-1]
        text = rng.choice([f"Set up a {m['minutes']}-minute **{m['title']}** with {who}.",
                           f"**{m['title']}**: {m['minutes']} minutes, attendees {who}.",
                           f"Book {who} for the **{m['title']}** ({m['minutes']} min)."])
        if m["earliest"]:
            text += " This one is urgent: book it at the earliest possible slot."
        if m["after"]:
            text += f" It must take place after the {m['after']} has ended."
        if m["days"]:
            text += " It has to be on " + " or ".join(_day(dt.date.fromisoformat(d)) for d in m["days"]) + "."
        lines.append(f"{i}. {text}")
    return "\n".join(lines) + "\n"


def _draw(rng: random.Random, level: int):
    """One candidate task: workspace data, rules, the reference plan and the wrong answer's score."""
    monday = dt.date(rng.choice([2025, 2026]), 1, 6) + dt.timedelta(weeks=rng.randrange(48))
    monday -= dt.timedelta(days=monday.weekday())
    days = [monday + dt.timedelta(days=i) for i in range(14 if level >= 4 else 7) if i % 7 < 5]
    stamp = dt.datetime.combine(monday - dt.timedelta(days=3), dt.time(16, 5), tzinfo=dt.timezone.utc)
    team = content.first_named(rng, 4 * (level + 3))[:level + 3]  # the brief calls people by first name
    hours = rng.choice([(9 * 60, 17 * 60), (9 * 60, 17 * 60 + 30), (8 * 60 + 30, 17 * 60)])
    rules: dict[str, Any] = {"days": [d.isoformat() for d in days], "start": hours[0], "end": hours[1],
             "lunch": rng.choice([(12 * 60, 13 * 60), (12 * 60 + 30, 13 * 60 + 30)]) if level >= 1 else None,
             "buffer": 15 if level >= 4 else 0}
    files, busy = {}, {}
    for person in team:
        local = person.email.split("@")[0]
        files[f"calendars/{local}.ics"], busy[person.email.lower()] = _calendar(rng, level, person, days, team, stamp)
    rooms = []
    if level >= 3:
        caps = sorted(rng.sample([2, 3, 4, 6, 8, 10, 12], 4))
        rooms = [{"name": n, "capacity": c} for n, c in zip(rng.sample(ROOMS, 4), caps)]
    meetings = _requests(rng, level, team, days)
    plain = {e: [(s, t) for s, t, _ in ivs] for e, ivs in busy.items()}
    plan = _plan(meetings, plain, rules, rooms)
    wrong = _plan(meetings, {e: [(s, t) for s, t, a in ivs if not a] for e, ivs in busy.items()}, rules, rooms)
    if plan is None or wrong is None:
        return None
    buffer = dt.timedelta(minutes=rules["buffer"])
    failed = sum(any(s < wrong[m["title"]][1] + buffer and wrong[m["title"]][0] - buffer < e
                     for mail in m["emails"] for s, e in plain[mail]) for m in meetings)
    failed += sum(1 for m in meetings if m["earliest"] and wrong[m["title"]][0] != plan[m["title"]][0])
    total = len(meetings) + any(m["earliest"] for m in meetings)
    if failed == 0 or (total - failed) / total > 0.8:
        return None
    return days, team, rules, rooms, meetings, files, busy, plan


def build(rng: random.Random, level: int) -> Draft:
    drawn = None
    while drawn is None:
        drawn = _draw(rng, level)
    days, team, rules, rooms, meetings, files, busy, plan = drawn
    files["team.csv"] = csv_bytes(["Name", "Email", "Department", "Calendar"],
                                  [[p.name, p.email, rng.choice(content.DEPARTMENTS), f"calendars/{p.email.split('@')[0]}.ics"]
                                   for p in team])
    files["meetings.md"] = _brief(rng, meetings, days).encode()
    if rooms:
        files["rooms.csv"] = ("Room,Capacity,Floor\n" + "".join(
            f"{r['name']},{r['capacity']},{rng.randint(1, 5)}\n" for r in rooms)).encode()

    period = f"{_day(days[0])} to {_day(days[-1])}"
    asks = [f"Only weekdays from {period}, between {_hm(rules['start'])} and {_hm(rules['end'])} "
            "(a meeting must start and end within those hours), starting on the quarter hour (:00, :15, :30, :45).",
            "No meeting may overlap anything in a participant's calendar. All-day events (out of office, leave, "
            "conferences) block the whole of every day they span (DTEND is exclusive, as in the iCalendar standard)."
            + (" Events with STATUS:CANCELLED do not block." if level >= 3 else "")
            + (" Recurring events (RRULE) block every occurrence except the dates listed in EXDATE."
               if level >= 4 else ""),
            "New meetings that share a participant must not overlap each other."]
    if rules["lunch"]:
        asks.append(f"Keep lunch free: no meeting may overlap {_hm(rules['lunch'][0])}-{_hm(rules['lunch'][1])}.")
    if rules["buffer"]:
        asks.append("Leave at least 15 minutes between a new meeting and anything else in its participants' "
                    "calendars, the other new meetings included (back-to-back is not allowed).")
    if any(m["earliest"] for m in meetings):
        asks.append("The meeting marked urgent goes at the earliest start that satisfies these rules for its "
                    "participants' calendars; book it first and fit the other new meetings around it.")
    if rooms:
        asks.append("Book a room from rooms.csv for each meeting: put the room name in LOCATION; the room must seat "
                    "every participant (Capacity) and must not host two of the new meetings at overlapping times.")
    intro = rng.choice(["I need these meetings in the diary before people fill their weeks up.",
                        "Could you sort out the meeting requests my assistant collected?",
                        "Please book the meetings from this week's planning call."])
    instruction = (
        f"{intro} The requests are in meetings.md; everyone's calendar is in calendars/ (one .ics file per "
        "person, named in team.csv, which also has their e-mail addresses).\n\n"
        "Write schedule.ics in /app: an iCalendar file with one VEVENT per requested meeting and nothing else. "
        "Each event needs SUMMARY set to the meeting's title exactly as written in bold in meetings.md, DTSTART "
        "and DTEND in local time (the calendars use floating local times with no time zone; do the same, do "
        "not convert to UTC), and one ATTENDEE line (mailto:address) for each participant, nobody else.\n\n"
        "Rules:\n" + "\n".join(f"- {a}" for a in asks) + "\n")
    spec = {"file": "schedule.ics", "rules": rules, "rooms": rooms, "step": STEP,
            "meetings": [{k: m[k] for k in ("title", "minutes", "emails", "earliest", "after", "days")}
                         for m in meetings],
            "busy": {e: [[s.isoformat(), t.isoformat()] for s, t, _ in sorted(ivs)] for e, ivs in busy.items()},
            "earliest": {m["title"]: plan[m["title"]][0].isoformat() for m in meetings if m["earliest"]}}
    params = {"file": "schedule.ics", "rules": rules, "rooms": bool(rooms), "step": STEP,
              "meetings": [{k: m[k] for k in ("title", "minutes", "who", "earliest", "after", "days")}
                           for m in meetings]}
    return Draft(kind="book_meetings", instruction=instruction, files=files, spec=spec, params=params,
                 outputs={"schedule.ics": "ics"},
                 mistake="all-day out-of-office events are skipped, so meetings land on days a participant is away",
                 parameters={"people": len(team), "meetings": len(meetings), "days": len(days),
                             "lunch": bool(rules["lunch"]), "buffer": rules["buffer"], "rooms": len(rooms),
                             "earliest": any(m["earliest"] for m in meetings),
                             "ordering": any(m["after"] for m in meetings)},
                 tags=["ics", "scheduling"], agent_timeout_sec=900.0)
