"""booking_reserve: book, move and cancel meeting rooms in a week's calendar.

Three requests, each with one right answer the generator computes from the seeded calendar:

- reserve: the earliest start from a given time at which a room meeting every constraint (seats,
  equipment, building, floor) is free for the whole meeting; ties go to the smallest room, then the
  first by name (the instruction says so). The calendar is built so the answer is not the requested
  time itself (from level 1) and, from level 2, several rooms free up at once so the tie rule decides.
- move: "my Friday 14:00 booking" goes to the same time on another day in the one room of a building
  that is free then and seats everyone (the others are taken, some only partly).
- cancel: all of one person's bookings on one day, none of theirs on other days (and, from level 3,
  none of a colleague with the same first name).

Levels: more rooms (the room list pages from level 3) and bookings, more constraints, decoy rooms
that are free but do not qualify, and two (level 4) or three (level 5) requests in one task. Every
request of a task uses its own days, so they do not interact.
"""

from __future__ import annotations

import contextlib
import datetime
import random

from .base import Draft
from .content import FIRST, LAST

OPEN, CLOSE, STEP = 8 * 60, 19 * 60, 30
EQUIPMENT = ["projector", "whiteboard", "video"]
EQUIP_WORDS = {"projector": "a projector", "whiteboard": "a whiteboard", "video": "video"}
BUILDINGS = ["A", "B", "C", "D"]
CAPACITIES = [4, 6, 8, 10, 12, 16, 20]
ROOM_NAMES = ["Alder", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Iris", "Juniper", "Kelp",
              "Lagoon", "Meadow", "Nova", "Orchid", "Pebble", "Quarry", "Ridge", "Spruce", "Tundra", "Upland",
              "Valley", "Willow", "Yarrow", "Zephyr"]
TITLES = ["Standup", "Design review", "1:1", "Sprint planning", "Budget check-in", "Customer call", "Interview",
          "Retro", "Training", "Hiring sync", "Vendor demo", "Workshop", "Team lunch", "Status update", "Code review"]
NEW_TITLES = ["Roadmap sync", "Quarterly planning", "Pricing workshop", "Launch retro", "Hiring panel",
              "Security review", "Board prep", "Onboarding session", "Data review", "Offsite planning"]
# level: rooms, buildings, chance a free hour gets a booking, requests
SIZES = {0: (4, 2, 0.12, 1), 1: (6, 2, 0.15, 1), 2: (9, 3, 0.18, 1), 3: (12, 3, 0.2, 1), 4: (15, 3, 0.22, 2),
         5: (20, 4, 0.25, 3)}


class Retry(Exception):
    """This draw cannot carry the request: draw again (the rng moves on, so it stays deterministic)."""


def hhmm(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


def day_words(date: str) -> str:
    d = datetime.date.fromisoformat(date)
    return f"{d:%A} {d.day} {d:%B}"


def hours(dur: int) -> str:
    return {30: "30 minutes", 60: "1 hour", 90: "an hour and a half", 120: "2 hours"}[dur]


def ties(level: int) -> int:
    """How many rooms free up at the answer's time: the tie rule decides from level 2."""
    return 1 if level <= 1 else 2 if level <= 3 else 3


def fits(room: dict, need: dict) -> bool:
    return (room["capacity"] >= need["people"] and set(need.get("equipment", [])) <= set(room["equipment"])
            and need.get("building") in (None, room["building"]) and need.get("floor") in (None, room["floor"]))


def make_fit(rng: random.Random, room: dict, need: dict) -> None:
    if room["capacity"] < need["people"]:
        room["capacity"] = rng.choice([c for c in CAPACITIES if c >= need["people"]])
    room["equipment"] = sorted(set(room["equipment"]) | set(need.get("equipment", [])), key=EQUIPMENT.index)
    for key in ("building", "floor"):
        if need.get(key) is not None:
            room[key] = need[key]


def free(bookings: list[dict], room: str, date: str, start: int, end: int) -> bool:
    return not any(b["room"] == room and b["date"] == date and b["start"] < end and b["end"] > start for b in bookings)


def clear(bookings: list[dict], room: str, date: str, start: int, end: int) -> None:
    """Drop the filler bookings overlapping [start, end) in ``room`` on ``date``."""
    for b in [b for b in bookings if b["room"] == room and b["date"] == date and b["start"] < end and b["end"] > start]:
        if b.get("keep"):
            raise Retry
        bookings.remove(b)


def earliest(rooms: list[dict], bookings: list[dict], need: dict, date: str, after: int, dur: int):
    """(start, room) of the earliest fitting free slot from ``after``; ties: fewest seats, then name."""
    for s in range(after, CLOSE - dur + 1, STEP):
        ok = [r for r in rooms if fits(r, need) and free(bookings, r["name"], date, s, s + dur)]
        if ok:
            return s, min(ok, key=lambda r: (r["capacity"], r["name"]))
    return None, None


class Calendar:
    """The rooms and bookings being drawn, and the helpers the requests share."""

    def __init__(self, rng: random.Random, level: int) -> None:
        n_rooms, n_buildings, self.density, _ = SIZES[level]
        self.rng, self.level = rng, level
        monday = datetime.date(2025, 1, 6) + datetime.timedelta(weeks=rng.randint(0, 90))
        self.days = [(monday + datetime.timedelta(days=i)).isoformat() for i in range(5)]
        self.rooms: list[dict] = []
        for i, name in enumerate(sorted(rng.sample(ROOM_NAMES, n_rooms))):
            building = BUILDINGS[i % n_buildings] if i < 2 * n_buildings else rng.choice(BUILDINGS[:n_buildings])
            self.rooms.append({"name": name, "building": building, "floor": rng.randint(0, 3),
                               "capacity": rng.choice(CAPACITIES),
                               "equipment": sorted(rng.sample(EQUIPMENT, rng.choice([0, 1, 1, 2, 2, 3])),
                                                   key=EQUIPMENT.index)})
        self.buildings = BUILDINGS[:n_buildings]
        people: set[str] = set()
        while len(people) < 6 + 2 * level:
            people.add(f"{rng.choice(FIRST)} {rng.choice(LAST)}")
        self.people = sorted(people)
        self.bookings: list[dict] = []

    def room(self, name: str) -> dict:
        return next(r for r in self.rooms if r["name"] == name)

    def ensure(self, need: dict, n: int, avoid: tuple[str, ...] = ()) -> None:
        """At least ``n`` rooms meet ``need`` (others are refitted, never the ones named in ``avoid``)."""
        short = n - sum(fits(r, need) for r in self.rooms)
        others = [r for r in self.rooms if not fits(r, need) and r["name"] not in avoid]
        if short > len(others):
            raise Retry
        for r in self.rng.sample(others, max(0, short)):
            make_fit(self.rng, r, need)

    def add(self, room: dict, date: str, start: int, end: int, *, organiser: str | None = None, title: str | None = None,
            attendees: int | None = None, keep: bool = False) -> dict:
        clear(self.bookings, room["name"], date, start, end)
        b = {"room": room["name"], "date": date, "start": start, "end": end,
             "title": title or self.rng.choice(TITLES), "organiser": organiser or self.rng.choice(self.people),
             "attendees": attendees or self.rng.randint(2, room["capacity"]), "keep": keep}
        self.bookings.append(b)
        return b

    def fill(self, exclude: tuple[str, ...]) -> None:
        """Ordinary meetings: each free hour of each room starts one with chance ``density``."""
        for date in self.days:
            for room in self.rooms:
                t = OPEN + STEP * self.rng.randint(0, 2)
                while t < CLOSE:
                    if self.rng.random() < self.density:
                        dur = min(self.rng.choice([30, 60, 60, 90, 120]), CLOSE - t)
                        self.add(room, date, t, t + dur, organiser=self.rng.choice(
                            [p for p in self.people if p not in exclude]))
                        t += dur + STEP * self.rng.randint(0, 2)
                    else:
                        t += 60


# -- the three requests: plan (constraints, rooms refitted) before the filler, build after it -----

def plan_reserve(cal: Calendar, persona: str, days: list[str]) -> dict:
    rng, level, date = cal.rng, cal.level, days.pop()
    anchor = rng.choice(cal.rooms)
    if anchor["capacity"] < 6:
        anchor["capacity"] = rng.choice([6, 8, 10])
    need: dict = {"people": rng.randint(max(3, anchor["capacity"] // 2), anchor["capacity"])}
    n_equip = 0 if level == 0 else 1 if level <= 2 else 2
    if n_equip:
        if len(anchor["equipment"]) < n_equip:
            make_fit(rng, anchor, {"people": 1, "equipment": rng.sample(EQUIPMENT, n_equip)})
        need["equipment"] = sorted(rng.sample(anchor["equipment"], n_equip), key=EQUIPMENT.index)
    if level >= 2:
        need["building"] = anchor["building"]
    if level >= 5:
        need["floor"] = anchor["floor"]
    cal.ensure(need, ties(level) + 1)
    return {"kind": "reserve", "date": date, "need": need, "after": rng.choice([540, 570, 600, 630, 660, 780, 840]),
            "duration": 60 if level == 0 else rng.choice([60, 90, 120]), "title": rng.choice(NEW_TITLES),
            "organiser": persona}


def build_reserve(cal: Calendar, op: dict) -> None:
    """Every fitting room is taken from at or before ``after`` until ``at`` or later; the tie rooms free
    up exactly at ``at``; a room that does not qualify is free at ``after`` (the trap)."""
    rng, level, date, need, dur = cal.rng, cal.level, op["date"], op["need"], op["duration"]
    after = op["after"]
    at = after + STEP * (0 if level == 0 else rng.randint(1, 3))
    fitting = [r for r in cal.rooms if fits(r, need)]
    tied = sorted(rng.sample(fitting, ties(level)), key=lambda r: r["name"])
    if len(tied) > 1:  # the first by name has more seats than the rest, which (from level 4) tie on seats
        seats = max(r["capacity"] for r in tied[1:])
        bigger = [c for c in CAPACITIES if c > seats]
        if not bigger:
            raise Retry
        for r in tied[1:]:
            r["capacity"] = seats
        tied[0]["capacity"] = max(tied[0]["capacity"], rng.choice(bigger))
    for r in fitting:
        start = max(OPEN, after - STEP * rng.randint(0, 2))
        end = at if r in tied else at + STEP * rng.randint(1, 4)
        if end > start:
            cal.add(r, date, start, end, keep=True)
        if r in tied:
            clear(cal.bookings, r["name"], date, at, at + dur)
    decoys = [r for r in cal.rooms if not fits(r, need) and r["capacity"] >= need["people"]]
    if level >= 1 and decoys:
        clear(cal.bookings, rng.choice(decoys)["name"], date, after, after + dur)
    start, room = earliest(cal.rooms, cal.bookings, need, date, after, dur)
    if start != at:
        raise Retry
    op["answer"] = {"room": room["name"], "start": start}


def plan_move(cal: Calendar, persona: str, days: list[str]) -> dict:
    rng, level, src, dst = cal.rng, cal.level, days.pop(), days.pop()
    room = rng.choice(cal.rooms)
    attendees = rng.randint(2, min(room["capacity"], 10))
    need: dict = {"people": attendees, "building": rng.choice(cal.buildings)}
    if level >= 3:
        need["equipment"] = [rng.choice(EQUIPMENT)]
    cal.ensure(need, 1 if level == 0 else 2 if level <= 2 else 3, avoid=(room["name"],))
    start = rng.choice(range(540, 960, STEP))
    return {"kind": "move", "from": src, "to": dst, "room": room["name"], "start": start,
            "end": start + rng.choice([60, 90]), "attendees": attendees, "need": need,
            "title": rng.choice(NEW_TITLES), "organiser": persona}


def build_move(cal: Calendar, op: dict) -> None:
    """The booking on ``from``; on ``to`` every qualifying room but one is taken at that time."""
    rng, level, need, start, end = cal.rng, cal.level, op["need"], op["start"], op["end"]
    for b in [b for b in cal.bookings if b["date"] == op["from"] and b["organiser"] == op["organiser"]]:
        if b["keep"]:
            raise Retry
        cal.bookings.remove(b)
    op["booking"] = cal.add(cal.room(op["room"]), op["from"], start, end, organiser=op["organiser"], title=op["title"],
                            attendees=op["attendees"], keep=True)
    if level >= 2:  # another booking of theirs that day, and one at the same time on another day
        other = [t for t in range(OPEN, CLOSE - 60, 60) if t + 60 <= start or t >= end]
        t = rng.choice(other)
        cal.add(rng.choice(cal.rooms), op["from"], t, t + 60, organiser=op["organiser"], keep=True)
    if level >= 3:
        day = rng.choice([d for d in cal.days if d not in (op["from"], op["to"])])
        cal.add(rng.choice(cal.rooms), day, start, end, organiser=op["organiser"])
    candidates = [r for r in cal.rooms if fits(r, need)]
    target = rng.choice(candidates)
    clear(cal.bookings, target["name"], op["to"], start, end)
    for r in candidates:
        if r is not target and free(cal.bookings, r["name"], op["to"], start, end):
            shift = STEP * rng.choice([-1, 0, 0, 1])
            cal.add(r, op["to"], max(OPEN, start + shift), min(CLOSE, end + shift), keep=True)
    if level >= 1:  # a free room that does not qualify (too small, or another building)
        decoys = [r for r in cal.rooms if not fits(r, need)]
        if decoys:
            clear(cal.bookings, rng.choice(decoys)["name"], op["to"], start, end)
    found = [r for r in cal.rooms if fits(r, need) and free(cal.bookings, r["name"], op["to"], start, end)]
    if [r["name"] for r in found] != [target["name"]]:
        raise Retry
    op["answer"] = {"room": target["name"]}


def plan_cancel(cal: Calendar, persona: str, days: list[str]) -> dict:
    rng, date = cal.rng, days.pop()
    who = rng.choice([p for p in cal.people if p != persona])
    op = {"kind": "cancel", "date": date, "organiser": who, "count": 1 if cal.level <= 1 else 2 if cal.level <= 3 else 3}
    if cal.level >= 3:  # a colleague with the same first name
        first = who.split()[0]
        twin = f"{first} {rng.choice([x for x in LAST if f'{first} {x}' not in cal.people])}"
        cal.people.append(twin)
        op["twin"] = twin
    return op


def build_cancel(cal: Calendar, op: dict) -> None:
    rng, level = cal.rng, cal.level
    mine = [b for b in cal.bookings if b["date"] == op["date"] and b["organiser"] == op["organiser"]]
    for _ in range(max(0, op["count"] - len(mine))):
        t = rng.choice(range(OPEN, CLOSE - 60, STEP))
        cal.add(rng.choice(cal.rooms), op["date"], t, t + rng.choice([30, 60, 90]), organiser=op["organiser"], keep=True)
    for _ in range(1 if level <= 2 else 2):  # theirs on other days stay
        t = rng.choice(range(OPEN, CLOSE - 60, STEP))
        cal.add(rng.choice(cal.rooms), rng.choice([d for d in cal.days if d != op["date"]]), t, t + 60,
                organiser=op["organiser"], keep=True)
    if op.get("twin"):
        t = rng.choice(range(OPEN, CLOSE - 60, STEP))
        cal.add(rng.choice(cal.rooms), op["date"], t, t + 60, organiser=op["twin"], keep=True)
    for b in cal.bookings:
        if b["date"] == op["date"] and b["organiser"] == op["organiser"]:
            b["keep"] = True


# -- the task ------------------------------------------------------------------------------------

def need_words(need: dict) -> str:
    parts = [f"for {need['people']} people"]
    if need.get("equipment"):
        parts.append("with " + " and ".join(EQUIP_WORDS[e] for e in need["equipment"]))
    if need.get("building"):
        floor = f", floor {need['floor']}" if need.get("floor") is not None else ""
        parts.append(f"in building {need['building']}{floor}")
    return " ".join(parts)


def draw(rng: random.Random, level: int) -> tuple[Calendar, str, list[dict]]:
    cal = Calendar(rng, level)
    persona = rng.choice(cal.people)
    n_ops = SIZES[level][3]
    kinds = rng.sample(["reserve", "move", "cancel"], n_ops)
    days = rng.sample(cal.days, len(cal.days))  # each plan takes its own days off the end
    ops = [{"reserve": plan_reserve, "move": plan_move, "cancel": plan_cancel}[kind](cal, persona, days)
           for kind in kinds]
    for op in ops:  # a later plan may have refitted a room an earlier one counted on
        if op["kind"] != "cancel" and sum(fits(r, op["need"]) for r in cal.rooms) < (
                ties(level) if op["kind"] == "reserve" else 1):
            raise Retry
    cal.fill(exclude=tuple(op["organiser"] for op in ops if op["kind"] == "cancel") + tuple(
        op["twin"] for op in ops if op.get("twin")))
    for op in ops:
        {"reserve": build_reserve, "move": build_move, "cancel": build_cancel}[op["kind"]](cal, op)
    for op in ops:
        check(cal, op)
    return cal, persona, ops


def check(cal: Calendar, op: dict) -> None:
    """The answer still holds once every request is built (a later one may have added or refitted)."""
    if op["kind"] == "reserve":
        start, room = earliest(cal.rooms, cal.bookings, op["need"], op["date"], op["after"], op["duration"])
        ok = room is not None and (start, room["name"]) == (op["answer"]["start"], op["answer"]["room"])
    elif op["kind"] == "move":
        b = op["booking"]
        found = [r["name"] for r in cal.rooms
                 if fits(r, op["need"]) and free(cal.bookings, r["name"], op["to"], b["start"], b["end"])]
        same = [x for x in cal.bookings if x["date"] == op["from"] and x["organiser"] == op["organiser"]
                and x["start"] == b["start"]]
        ok = found == [op["answer"]["room"]] and same == [b] and b in cal.bookings
    else:
        op["targets"] = [b for b in cal.bookings if b["date"] == op["date"] and b["organiser"] == op["organiser"]]
        ok = len(op["targets"]) >= op["count"]
    if not ok:
        raise Retry


def build(rng: random.Random, level: int) -> Draft:
    for _ in range(200):
        with contextlib.suppress(Retry):
            cal, persona, ops = draw(rng, level)
            break
    else:  # pragma: no cover - the draws above succeed within a few tries
        raise RuntimeError("booking_reserve: no calendar fits the requests")
    rng.shuffle(cal.rooms)
    room_ids = {r["name"]: i for i, r in enumerate(cal.rooms, 1)}
    rng.shuffle(cal.bookings)
    for i, b in enumerate(cal.bookings, 1):
        b["id"] = i
    rows = {
        "days": [{"id": i, "date": d} for i, d in enumerate(cal.days, 1)],
        "rooms": [{"id": room_ids[r["name"]], "name": r["name"], "building": r["building"], "floor": r["floor"],
                   "capacity": r["capacity"], "equipment": ", ".join(r["equipment"])} for r in cal.rooms],
        "bookings": [{"id": b["id"], "room_id": room_ids[b["room"]], "date": b["date"], "start_time": hhmm(b["start"]),
                      "end_time": hhmm(b["end"]), "title": b["title"], "organiser": b["organiser"],
                      "attendees": b["attendees"]} for b in cal.bookings],
    }
    steps, expect, params = [], [], []
    for op in ops:
        if op["kind"] == "reserve":
            need, start = op["need"], op["answer"]["start"]
            values = {"room_id": room_ids[op["answer"]["room"]], "date": op["date"], "start_time": hhmm(start),
                      "end_time": hhmm(start + op["duration"]), "title": op["title"], "organiser": op["organiser"],
                      "attendees": need["people"]}
            steps.append(f"Book a room {need_words(need)} on {day_words(op['date'])} for {hours(op['duration'])}, "
                         f"starting at the earliest time from {hhmm(op['after'])} on when such a room is free for the "
                         "whole meeting (start times go in 30-minute steps). If several rooms qualify at that time, "
                         "take the one with the fewest seats, and if that still ties, the first by name. "
                         f"Title: \"{op['title']}\"; organiser: {op['organiser']}; attendees: {need['people']}.")
            expect.append({"what": f"\"{op['title']}\" booked in {op['answer']['room']} on {op['date']} "
                                   f"{values['start_time']}-{values['end_time']}", "table": "bookings", "insert": values,
                           "count": 1})
            params.append({"kind": "reserve", "date": op["date"], "after": hhmm(op["after"]), "duration": op["duration"],
                           "people": need["people"], "equipment": need.get("equipment", []),
                           "building": need.get("building"), "floor": need.get("floor"), "title": op["title"],
                           "organiser": op["organiser"]})
        elif op["kind"] == "move":
            b, need = op["booking"], op["need"]
            kit = (" with " + " and ".join(EQUIP_WORDS[e] for e in need["equipment"])) if need.get("equipment") else ""
            steps.append(f"Move my {day_words(op['from'])} {hhmm(b['start'])} booking (\"{b['title']}\") to the same "
                         f"time on {day_words(op['to'])}, in whichever room in building {need['building']}{kit} is "
                         f"free then and seats all {b['attendees']} attendees. Edit the booking itself; do not cancel "
                         "it and book again.")
            expect.append({"what": f"\"{b['title']}\" moved to {op['answer']['room']} on {op['to']}", "table": "bookings",
                           "key": {"id": b["id"]}, "values": {"room_id": room_ids[op["answer"]["room"]], "date": op["to"],
                                                             "start_time": hhmm(b["start"]), "end_time": hhmm(b["end"])}})
            params.append({"kind": "move", "organiser": op["organiser"], "from": op["from"], "to": op["to"],
                           "start": hhmm(b["start"]), "title": b["title"], "building": need["building"],
                           "equipment": need.get("equipment", [])})
        else:
            who, day = op["organiser"], day_words(op["date"])
            twin = f" (not {op['twin']}'s)" if op.get("twin") else ""
            steps.append(f"{who} is away on {day}: cancel all of {who}'s bookings that day{twin}, and none of "
                         f"{who.split()[0]}'s bookings on other days.")
            for t in sorted(op["targets"], key=lambda x: x["start"]):
                expect.append({"what": f"{who}'s \"{t['title']}\" on {op['date']} {hhmm(t['start'])} cancelled",
                               "table": "bookings", "deleted": {"id": t["id"]}})
            params.append({"kind": "cancel", "organiser": who, "date": op["date"]})
    listed = steps[0] if len(steps) == 1 else "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    instruction = (f"Our meeting-room booking system runs at http://127.0.0.1:8080/. I'm {persona}; please do this "
                   f"for me{' (the requests are independent of each other)' if len(steps) > 1 else ''}:\n\n{listed}\n\n"
                   "Rooms open 08:00-19:00. Change nothing else: no other booking should be added, edited or "
                   "cancelled.\n")
    kind = ops[0]["kind"] if len(ops) == 1 else "multi"
    return Draft(app="booking", rows=rows, instruction=instruction, expect=expect, params={"requests": params},
                 kind=kind, tags=["calendar", "constraints"] + sorted({op["kind"] for op in ops}),
                 parameters={"rooms": len(cal.rooms), "bookings": len(cal.bookings), "requests": [o["kind"] for o in ops],
                             "constraints": max((len(o.get("need", {})) for o in ops), default=0)},
                 agent_timeout_sec=600.0 + 300.0 * len(ops))
