"""The booking app through Server.handle, and the booking_reserve and crm_form_fill builders: their
answers are accepted by the apps' own forms and then score 1, while the untouched seed scores 0."""

from __future__ import annotations

import random
import re
import urllib.parse

import pytest

from autoenvscaling_computer_use.apps import app_module, webapp
from autoenvscaling_computer_use.families import booking_reserve, crm_form_fill
from autoenvscaling_computer_use.verifier import verify


booking = app_module("booking")
DAYS = ["2025-03-10", "2025-03-11", "2025-03-12", "2025-03-13", "2025-03-14"]
ROOMS = [{"id": i, "name": f"Room {chr(64 + i)}", "building": "AB"[i % 2], "floor": i % 3, "capacity": 4 + 2 * i,
          "equipment": "projector, video" if i % 3 == 0 else "whiteboard" if i % 3 == 1 else ""} for i in range(1, 13)]
BOOKINGS = [{"id": 1, "room_id": 1, "date": "2025-03-12", "start_time": "10:00", "end_time": "11:00",
             "title": "Standup", "organiser": "Hugo Sato", "attendees": 4},
            {"id": 2, "room_id": 2, "date": "2025-03-12", "start_time": "09:00", "end_time": "10:30",
             "title": "Design review", "organiser": "Maya Okafor", "attendees": 5}]


def form(**values: object) -> bytes:
    return urllib.parse.urlencode(values).encode()


def good(**changes: object) -> bytes:
    values = {"date": "2025-03-12", "start_time": "11:00", "end_time": "12:00", "title": "Roadmap sync",
              "organiser": "Maya Okafor", "attendees": 5}
    return form(**{**values, **changes})


@pytest.fixture
def server() -> webapp.Server:
    rows = {"days": [{"id": i, "date": d} for i, d in enumerate(DAYS, 1)], "rooms": ROOMS, "bookings": BOOKINGS}
    return webapp.Server(booking.APP(), webapp.seed_sql(booking.SCHEMA, rows), mirror=None)


def rows(server: webapp.Server) -> list[dict]:
    return webapp.tables(server.db)["bookings"]


def errors(body: str) -> list[str]:
    return re.findall(r'role="alert">([^<]*)<', body)


def test_pages_render(server: webapp.Server) -> None:
    assert server.handle("GET", "/", b"").location == "/days"
    assert server.handle("GET", "/days", b"").location == "/days/2025-03-10"
    day = server.handle("GET", "/days/2025-03-12", b"")
    assert day.status == 200 and "Wednesday 12 March 2025" in day.body
    assert "Standup</a> 10:00-11:00" in day.body and 'href="/days/2025-03-11">Previous day' in day.body
    assert server.handle("GET", "/days/2025-03-15", b"").status == 404
    assert "Next day" not in server.handle("GET", "/days/2025-03-14", b"").body
    detail = server.handle("GET", "/bookings/1", b"").body
    assert "Hugo Sato" in detail and 'href="/bookings/1/cancel"' in detail and 'href="/bookings/1/edit"' in detail
    assert "free all day" in server.handle("GET", "/rooms/3", b"").body


def test_room_filters_and_pages(server: webapp.Server) -> None:
    first = server.handle("GET", "/rooms", b"").body
    assert "12 rooms." in first and "Page 1 of 2" in first and "Next page" in first
    assert "Room K" in server.handle("GET", "/rooms?page=2", b"").body
    big = server.handle("GET", "/rooms?capacity=20", b"").body
    assert "5 rooms." in big and "Room G<" not in big and "Room H<" in big
    kit = server.handle("GET", "/rooms?equipment=projector&building=B", b"").body
    assert re.findall(r">(Room [A-L])<", kit) == ["Room C", "Room I"]


def test_my_bookings_search(server: webapp.Server) -> None:
    body = server.handle("GET", "/bookings?organiser=hugo", b"").body
    assert "1 booking by" in body and "Standup" in body and "Design review" not in body
    assert "2 bookings." in server.handle("GET", "/bookings", b"").body


@pytest.mark.parametrize("changes, message", [
    ({"end_time": "10:30", "start_time": "11:00"}, "End time must be after the start time."),
    ({"start_time": "07:30"}, "within opening hours"),
    ({"start_time": "18:30", "end_time": "19:30"}, "within opening hours"),
    ({"start_time": "11:15"}, "30-minute steps"),
    ({"start_time": "eleven"}, "Start time must be given as HH:MM"),
    ({"attendees": 7}, "7 attendees do not fit in Room A, which seats 6."),
    ({"start_time": "10:30"}, 'Overlaps "Standup" (10:00-11:00, organiser Hugo Sato)'),
    ({"title": ""}, "Title is required."),
    ({"date": "2025-03-17"}, "Date must be one of the bookable days"),
])
def test_booking_validation(server: webapp.Server, changes: dict, message: str) -> None:
    response = server.handle("POST", "/rooms/1/book", good(**{"attendees": 5, **changes}))
    assert response.status == 422
    assert any(message in e.replace("&quot;", '"') for e in errors(response.body)), errors(response.body)
    assert len(rows(server)) == 2


def test_book_edit_cancel(server: webapp.Server) -> None:
    response = server.handle("POST", "/rooms/1/book", good(start_time="9:00", end_time="10:00"))
    assert response.status == 303 and response.location == "/bookings/3?done=booked"
    assert rows(server)[-1] == {"id": 3, "room_id": 1, "date": "2025-03-12", "start_time": "09:00", "end_time": "10:00",
                                "title": "Roadmap sync", "organiser": "Maya Okafor", "attendees": 5}
    assert "Room booked." in server.handle("GET", response.location, b"").body
    # an edit does not clash with the booking itself, but does with the others
    moved = good(room_id=2, start_time="10:30", end_time="11:30")
    assert server.handle("POST", "/bookings/3/edit", moved).status == 303
    assert rows(server)[-1]["room_id"] == 2 and rows(server)[-1]["start_time"] == "10:30"
    assert server.handle("POST", "/bookings/3/edit", good(room_id=2, start_time="10:00", end_time="11:00")).status == 422
    assert server.handle("GET", "/bookings/1/cancel", b"").status == 200 and len(rows(server)) == 3
    assert server.handle("POST", "/bookings/1/cancel", b"").location == "/days/2025-03-12?done=cancelled"
    assert [r["id"] for r in rows(server)] == [2, 3]
    assert [(j["method"], j["path"], j["status"]) for j in server.journal if j["method"] == "POST"] == [
        ("POST", "/rooms/1/book", 303), ("POST", "/bookings/3/edit", 303), ("POST", "/bookings/3/edit", 422),
        ("POST", "/bookings/1/cancel", 303)]
    assert "fields" in server.journal[0] and "attendees" in server.journal[0]["fields"]


# -- the builders ----------------------------------------------------------------------------------

def draft_server(draft) -> tuple[webapp.Server, str]:  # noqa: ANN001 - a Draft
    sql = webapp.seed_sql(app_module(draft.app).SCHEMA, draft.rows)
    return webapp.Server(app_module(draft.app).APP(), sql, mirror=None), sql


def score(draft, server: webapp.Server, sql: str) -> float:  # noqa: ANN001
    reward, _, fatal = verify.score({"expect": draft.expect, "free_tables": draft.free_tables}, sql, server.state())
    assert not fatal, fatal
    return reward


def apply_booking(draft, server: webapp.Server) -> None:  # noqa: ANN001
    """Carry out the expected changes through the app's own forms (so its validation must agree)."""
    for exp in draft.expect:
        if "insert" in exp:
            v = exp["insert"]
            response = server.handle("POST", f"/rooms/{v['room_id']}/book", form(**{k: v[k] for k in booking.FIELDS}))
        elif "key" in exp:
            response = server.handle("POST", f"/bookings/{exp['key']['id']}/edit", form(**exp["values"]))
        else:
            response = server.handle("POST", f"/bookings/{exp['deleted']['id']}/cancel", b"")
        assert response.status == 303, errors(response.body)


@pytest.mark.parametrize("level", range(6))
def test_booking_reserve_levels(level: int) -> None:
    a = booking_reserve.build(random.Random(f"t/{level}"), level)
    b = booking_reserve.build(random.Random(f"t/{level}"), level)
    assert (a.instruction, a.rows, a.expect, a.params) == (b.instruction, b.rows, b.expect, b.params)
    assert "http://127.0.0.1:8080/" in a.instruction and len(a.params["requests"]) == (1 if level <= 3 else level - 2)
    names = {r["id"]: r["name"] for r in a.rows["rooms"]}
    for exp in a.expect:  # the instruction states what the request needs, not the answer
        if "insert" in exp:
            v = exp["insert"]
            assert v["title"] in a.instruction and v["organiser"] in a.instruction
            assert names[v["room_id"]] not in a.instruction
        elif "key" in exp:
            booked = next(r for r in a.rows["bookings"] if r["id"] == exp["key"]["id"])
            assert booked["title"] in a.instruction and booked["start_time"] in a.instruction
        else:
            gone = next(r for r in a.rows["bookings"] if r["id"] == exp["deleted"]["id"])
            assert gone["organiser"] in a.instruction
    server, sql = draft_server(a)
    assert score(a, server, sql) == 0
    apply_booking(a, server)
    assert score(a, server, sql) == 1


def test_booking_reserve_grows_and_needs_the_tie_rule() -> None:
    small, big = (booking_reserve.build(random.Random("g"), lv) for lv in (0, 5))
    assert len(big.rows["rooms"]) > 3 * len(small.rows["rooms"])
    assert len(big.rows["bookings"]) > 3 * len(small.rows["bookings"]) and len(big.expect) > len(small.expect)
    # from level 2 several rooms are free at the answer's time: fewest seats, then the name, decide
    for seed in range(4):
        rng = random.Random(f"tie/{seed}")
        while True:
            try:
                cal, _, ops = booking_reserve.draw(rng, 4)
                break
            except booking_reserve.Retry:
                continue
        for op in (o for o in ops if o["kind"] == "reserve"):
            start, dur = op["answer"]["start"], op["duration"]
            free = [r for r in cal.rooms if booking_reserve.fits(r, op["need"])
                    and booking_reserve.free(cal.bookings, r["name"], op["date"], start, start + dur)]
            assert len(free) >= 2 and min(free, key=lambda r: r["name"])["name"] != op["answer"]["room"]


def apply_crm(draft, server: webapp.Server) -> None:  # noqa: ANN001
    for exp in draft.expect:
        if "insert" in exp:
            response = server.handle("POST", "/contacts/new", form(**exp["insert"]))
        else:
            response = server.handle("POST", f"/contacts/{exp['key']['id']}/edit", form(**exp["values"]))
        assert response.status == 303, errors(response.body)


@pytest.mark.parametrize("level", range(6))
def test_crm_form_fill_levels(level: int) -> None:
    a = crm_form_fill.build(random.Random(f"t/{level}"), level)
    b = crm_form_fill.build(random.Random(f"t/{level}"), level)
    assert (a.instruction, a.rows, a.expect, a.params) == (b.instruction, b.rows, b.expect, b.params)
    old = {r["id"]: r for r in a.rows["contacts"]}
    emails = {r["email"] for r in old.values()}
    lookups = [p["same_as"] for p in a.params["people"] if p["same_as"]]
    for exp in a.expect:
        values = exp.get("insert") or exp["values"]
        looked = {k for p in a.params["people"] if p["email"] == values["email"] for k in p["same_as"]}
        for k, v in values.items():  # every value is stated, or named through the person to look up
            assert k in looked or str(v) in a.instruction, (k, v)
        assert ("insert" in exp) == (values["email"] not in emails)
        if "key" in exp:
            assert old[exp["key"]["id"]]["email"] == values["email"]
    for p in a.params["people"]:
        for k, whose in p["same_as"].items():
            assert f"the same as {whose}'s" in a.instruction and k not in p
    assert len(lookups) == {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2}[level]
    assert sum("key" in e for e in a.expect) == {0: 0, 1: 0, 2: 1, 3: 1, 4: 1, 5: 2}[level]
    if level >= 4:  # a new person shares an existing contact's name
        names = [r["name"] for r in old.values()]
        assert any(e["insert"]["name"] in names for e in a.expect if "insert" in e)
    server, sql = draft_server(a)
    assert score(a, server, sql) == 0
    apply_crm(a, server)
    assert score(a, server, sql) == 1
    # adding the known person again instead of updating them is collateral: 0
    if level >= 2:
        server.reset()
        dup = next(e for e in a.expect if "key" in e)
        server.handle("POST", "/contacts/new", form(**dup["values"]))
        reward, _, fatal = verify.score({"expect": a.expect}, sql, server.state())
        assert reward == 0 and "was added" in fatal


def test_crm_form_fill_grows() -> None:
    small, big = (crm_form_fill.build(random.Random("g"), lv) for lv in (0, 5))
    assert len(big.rows["contacts"]) >= 10 * len(small.rows["contacts"]) and len(big.expect) > len(small.expect)
