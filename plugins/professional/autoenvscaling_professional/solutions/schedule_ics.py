"""Reference solution for schedule_ics: expand everyone's busy times from the calendars (all-day
events block whole days, cancelled events none, RRULE occurrences minus EXDATE), then book each
meeting greedily at its first valid quarter hour, the urgent one first, and write schedule.ics.
``--wrong``: the plausible wrong answer (all-day events are skipped)."""

import csv
import datetime as dt
import json
import sys

import icalendar
from dateutil.rrule import rrulestr

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)
rules = P["rules"]
STEP = P["step"]


def at(day, minute):
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=minute)


def exdates(comp):
    value = comp.get("EXDATE")
    lists = value if isinstance(value, list) else [value] if value is not None else []
    return {d.dt for item in lists for d in item.dts}


def busy_of(path):
    """[(start, end)] of every event that blocks time in the calendar at ``path``."""
    with open(path, encoding="utf-8") as fh:
        cal = icalendar.Calendar.from_ical(fh.read())
    out = []
    for comp in cal.walk("VEVENT"):
        if str(comp.get("STATUS", "")).upper() == "CANCELLED":
            continue
        start, end = comp.decoded("DTSTART"), comp.decoded("DTEND")
        if not isinstance(start, dt.datetime):  # all-day: midnight to midnight of every day spanned
            if WRONG:
                continue
            start, end = at(start, 0), at(end, 0)
        starts = [start]
        if comp.get("RRULE") is not None:
            skip = exdates(comp)
            starts = [s for s in rrulestr(comp.get("RRULE").to_ical().decode(), dtstart=start) if s not in skip]
        out += [(s, s + (end - start)) for s in starts]
    return out


with open("team.csv", encoding="utf-8") as fh:
    team = {row["Name"].split()[0]: row for row in csv.DictReader(fh)}
busy = {row["Email"].lower(): busy_of(row["Calendar"]) for row in team.values()}
rooms: list[dict] = []
if P["rooms"]:
    with open("rooms.csv", encoding="utf-8") as fh:
        rooms = [{"name": r["Room"], "capacity": int(r["Capacity"])} for r in csv.DictReader(fh)]

buffer = dt.timedelta(minutes=rules["buffer"])
placed: dict[str, tuple[dt.datetime, dt.datetime, str, list[str]]] = {}
for m in sorted(P["meetings"], key=lambda m: not m["earliest"]):
    emails = [team[first]["Email"].lower() for first in m["who"]]
    spans = [iv for e in emails for iv in busy[e]]
    spans += [(p[0], p[1]) for p in placed.values() if set(p[3]) & set(emails)]
    for day in m["days"] or rules["days"]:
        for minute in range(rules["start"], rules["end"] - m["minutes"] + 1, STEP):
            start = at(dt.date.fromisoformat(day), minute)
            end = start + dt.timedelta(minutes=m["minutes"])
            lunch = rules["lunch"]
            if lunch and minute < lunch[1] and minute + m["minutes"] > lunch[0]:
                continue
            if m["after"] and start < placed[m["after"]][1]:
                continue
            if any(s < end + buffer and start - buffer < e for s, e in spans):
                continue
            taken = {p[2] for p in placed.values() if p[0] < end and start < p[1]}
            free = [r for r in rooms if r["capacity"] >= len(emails) and r["name"] not in taken]
            if rooms and not free:
                continue
            room = min(free, key=lambda r: (r["capacity"], r["name"]))["name"] if rooms else ""
            placed[m["title"]] = (start, end, room, emails)
            break
        if m["title"] in placed:
            break
    else:
        sys.exit(f"no slot for {m['title']}")

cal = icalendar.Calendar()
cal.add("prodid", "-//reference solution//schedule_ics//EN")
cal.add("version", "2.0")
for i, m in enumerate(P["meetings"], start=1):
    start, end, room, emails = placed[m["title"]]
    ev = icalendar.Event()
    ev.add("uid", f"meeting-{i}@schedule.example")
    ev.add("dtstamp", dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc))
    ev.add("summary", m["title"])
    ev.add("dtstart", start)
    ev.add("dtend", end)
    for email in emails:
        ev.add("attendee", f"mailto:{email}")
    if room:
        ev.add("location", room)
    cal.add_component(ev)
with open(P["file"], "wb") as ics_file:
    ics_file.write(cal.to_ical())
print("booked", ", ".join(f"{t} {p[0]:%a %d %H:%M}" for t, p in placed.items()))
