"""Checks for schedule_ics: each requested meeting booked once and valid under every rule (length,
attendees, days and hours, quarter hours, lunch, participants' busy times and the other new meetings
with the buffer, ordering, room); the urgent meeting at the exact earliest start; a penalty for
events nobody asked for. Any valid schedule passes: the busy intervals come expanded in the spec."""

import datetime as dt

import profcheck as pc


def _dt(text):
    return dt.datetime.fromisoformat(text)


def _problems(m, ev, booked, spec):
    """What is wrong with event ``ev`` as the booking of meeting ``m`` (empty when it is right);
    ``booked``: the (meeting, event) pairs of every meeting booked exactly once."""
    rules = spec["rules"]
    start, end = ev["start"], ev["end"]
    if start is None or end is None:
        return ["no DTSTART/DTEND"]
    out = []
    if end - start != dt.timedelta(minutes=m["minutes"]):
        out.append(f"lasts {end - start}, not {m['minutes']} minutes")
    if set(ev["attendees"]) != set(m["emails"]):
        out.append(f"attendees {ev['attendees']}, expected {sorted(m['emails'])}")
    day = start.date()
    first = start.hour * 60 + start.minute
    last = (end - dt.datetime.combine(day, dt.time())).total_seconds() / 60
    if day.isoformat() not in (m["days"] or rules["days"]):
        out.append(f"{day} is not an allowed day")
    if first < rules["start"] or last > rules["end"] or start.second or first % spec["step"]:
        out.append(f"{start:%H:%M}-{end:%H:%M} is outside working hours or not on a quarter hour")
    lunch = rules["lunch"]
    if lunch and first < lunch[1] and last > lunch[0]:
        out.append("overlaps lunch")
    buffer = dt.timedelta(minutes=rules["buffer"])
    for email in m["emails"]:
        for s, e in spec["busy"].get(email, []):
            if _dt(s) < end + buffer and start - buffer < _dt(e):
                out.append(f"clashes with {email}'s busy time {s[:16]} to {e[:16]}")
                break
    for other, oev in booked:
        if other is m or oev["start"] is None or oev["end"] is None:
            continue
        near = oev["start"] < end + buffer and start - buffer < oev["end"]
        if near and set(other["emails"]) & set(m["emails"]):
            out.append(f"clashes with the {other['title']} (shared participant)")
        same_room = pc.norm(oev["location"]) == pc.norm(ev["location"])
        if spec["rooms"] and same_room and oev["start"] < end and start < oev["end"]:
            out.append(f"same room as the {other['title']} at the same time")
    if m["after"]:
        before = next((oev for o, oev in booked if o["title"] == m["after"]), None)
        if before is None or before["end"] is None or start < before["end"]:
            out.append(f"not after the {m['after']}")
    if spec["rooms"]:
        room = next((r for r in spec["rooms"] if pc.norm(r["name"]) == pc.norm(ev["location"])), None)
        if room is None or room["capacity"] < len(m["emails"]):
            out.append(f"LOCATION {ev['location']!r} is not a room from rooms.csv that seats {len(m['emails'])}")
    return out


def check(spec, report):
    events = pc.read_ics(report, spec["file"])
    if not events:
        report.fatal(f"{spec['file']} has no events")
    by_title = {}
    for ev in events:
        by_title.setdefault(pc.norm(ev["summary"]), []).append(ev)
    booked = [(m, by_title[pc.norm(m["title"])][0]) for m in spec["meetings"]
              if len(by_title.get(pc.norm(m["title"]), [])) == 1]
    for m in spec["meetings"]:
        found = by_title.get(pc.norm(m["title"]), [])
        if len(found) == 1:
            problems = _problems(m, found[0], booked, spec)
        else:
            problems = ["not in the calendar" if not found else f"booked {len(found)} times"]
        report.req(f"{m['title']} scheduled correctly", not problems, "; ".join(problems[:4]))
        if m["earliest"]:
            want, got = _dt(spec["earliest"][m["title"]]), found[0]["start"] if found else None
            report.req(f"{m['title']} at the earliest possible slot", got == want and not problems,
                       f"starts {got}, the earliest valid start is {want}")
    known = {pc.norm(m["title"]) for m in spec["meetings"]}
    extra = [ev["summary"] for ev in events if pc.norm(ev["summary"]) not in known]
    report.penalty("no unrequested events", len(extra), f"{len(extra)} other events, e.g. {extra[:3]}")
