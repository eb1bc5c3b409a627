"""Room booking: a day view per date (rooms x half-hours), a filterable room list, a booking form
with real validation (opening hours, 30-minute steps, capacity, overlaps), booking detail, edit and
cancel pages, and a bookings list searchable by organiser ("my bookings").

Tables: ``days(id, date)`` (the bookable week, from the seed: the app never reads the clock),
``rooms(id, name, building, floor, capacity, equipment)`` (equipment: comma-separated, e.g.
"projector, video") and ``bookings(id, room_id, date, start_time, end_time, title, organiser,
attendees)`` with times as HH:MM.
"""

from __future__ import annotations

import datetime
import re

from webapp import App, Request, Response, esc, facts, field, found, get, grid, not_found, pager, post, redirect

OPEN, CLOSE, STEP = 8 * 60, 19 * 60, 30
EQUIPMENT = ["projector", "whiteboard", "video"]
TIME = re.compile(r"^(\d{1,2}):(\d{2})$")

SCHEMA = """
CREATE TABLE days (
  id INTEGER PRIMARY KEY,
  date TEXT NOT NULL UNIQUE
);
CREATE TABLE rooms (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  building TEXT NOT NULL,
  floor INTEGER NOT NULL DEFAULT 0,
  capacity INTEGER NOT NULL,
  equipment TEXT NOT NULL DEFAULT ''
);
CREATE TABLE bookings (
  id INTEGER PRIMARY KEY,
  room_id INTEGER NOT NULL REFERENCES rooms(id),
  date TEXT NOT NULL,
  start_time TEXT NOT NULL,
  end_time TEXT NOT NULL,
  title TEXT NOT NULL,
  organiser TEXT NOT NULL,
  attendees INTEGER NOT NULL
);
"""
FIELDS = ["date", "start_time", "end_time", "title", "organiser", "attendees"]
GRID_STYLE = ("<style>main{max-width:none}table.grid{table-layout:fixed}"
              "table.grid td,table.grid th{padding:2px 3px;font-size:12px}"
              "table.grid td.busy{background:#dbe6fb;border:1px solid #8aa6d8;font-size:11px;overflow:hidden}"
              "table.grid th.room{white-space:nowrap}</style>")


def minutes(text: str) -> int | None:
    """'9:30' or '09:30' -> 570; None when the text is not a time of day."""
    m = TIME.match(text.strip())
    if not m or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        return None
    return int(m.group(1)) * 60 + int(m.group(2))


def stored_minutes(text: str) -> int:
    """A booking's time as the database holds it (checked when it was written) -> minutes."""
    value = minutes(text)
    if value is None:
        raise ValueError(f"a stored booking time is not a time of day: {text!r}")
    return value


def hhmm(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


def day_label(date: str) -> str:
    """'2025-03-12' -> 'Wednesday 12 March 2025'."""
    d = datetime.date.fromisoformat(date)
    return f"{d:%A} {d.day} {d:%B %Y}"


def room_label(room) -> str:  # noqa: ANN001 - a rooms row
    return f"{room['name']} (building {room['building']}, floor {room['floor']}, {room['capacity']} seats)"


def validate(db, room, values: dict[str, str], exclude: int | None = None) -> list[str]:  # noqa: ANN001
    """The form's errors (an empty list when it may be saved); normalises the times in ``values``."""
    errors = []
    days = [r[0] for r in db.execute("SELECT date FROM days ORDER BY date")]
    if values["date"] not in days:
        errors.append("Date must be one of the bookable days: " + ", ".join(days) + ".")
    start, end = minutes(values["start_time"]), minutes(values["end_time"])
    if start is None:
        errors.append("Start time must be given as HH:MM, for example 09:30.")
    if end is None:
        errors.append("End time must be given as HH:MM, for example 10:30.")
    if not values["title"]:
        errors.append("Title is required.")
    if not values["organiser"]:
        errors.append("Organiser is required.")
    try:
        attendees = int(values["attendees"])
    except ValueError:
        attendees = 0
    if attendees < 1:
        errors.append("Attendees must be a whole number, at least 1.")
    elif room is not None and attendees > room["capacity"]:
        errors.append(f"{attendees} attendees do not fit in {room['name']}, which seats {room['capacity']}.")
    if room is None:
        errors.append("Choose a room.")
    if start is None or end is None:
        return errors
    values["start_time"], values["end_time"] = hhmm(start), hhmm(end)
    if end <= start:
        errors.append("End time must be after the start time.")
    elif start < OPEN or end > CLOSE:
        errors.append(f"Bookings must lie within opening hours, {hhmm(OPEN)} to {hhmm(CLOSE)}.")
    elif start % STEP or end % STEP:
        errors.append("Start and end times must be on the hour or half past (30-minute steps).")
    elif room is not None and not errors:
        clash = db.execute("SELECT * FROM bookings WHERE room_id = ? AND date = ? AND start_time < ? AND end_time > ? "
                           "AND id IS NOT ? ORDER BY start_time", [room["id"], values["date"], values["end_time"],
                                                                  values["start_time"], exclude]).fetchone()
        if clash is not None:
            errors.append(f"Overlaps \"{clash['title']}\" ({clash['start_time']}-{clash['end_time']}, organiser "
                          f"{clash['organiser']}) in {room['name']} on {day_label(values['date'])}.")
    return errors


class Booking(App):
    title = "RoomDesk"
    nav = [("Day view", "/days"), ("Rooms", "/rooms"), ("My bookings", "/bookings")]
    home = "/days"

    # -- helpers -----------------------------------------------------------------------------------

    def _days(self, r: Request) -> list[str]:
        return [row[0] for row in r.db.execute("SELECT date FROM days ORDER BY date")]

    def _room(self, r: Request, room_id: object):
        return r.db.execute("SELECT * FROM rooms WHERE id = ?", [room_id]).fetchone()

    def _booking(self, r: Request):
        return found(r.db.execute("SELECT b.*, r.name AS room, r.building, r.floor FROM bookings b JOIN rooms r "
                                  "ON r.id = b.room_id WHERE b.id = ?", [int(r.match.group(1))]).fetchone(), "booking")

    def _form(self, r: Request, action: str, values: dict, button: str, *, room_choice: bool) -> str:
        days = [(d, day_label(d)) for d in self._days(r)]
        room = ""
        if room_choice:
            rooms = r.db.execute("SELECT * FROM rooms ORDER BY building, floor, name").fetchall()
            room = field("room_id", "Room", values.get("room_id", ""), kind="select",
                         options=[(str(x["id"]), room_label(x)) for x in rooms])
        return (f'<form class="card" method="post" action="{esc(action)}">' + room
                + field("date", "Date", values.get("date", ""), kind="select", options=days)
                + field("start_time", "Start time (HH:MM)", values.get("start_time", ""), required=True)
                + field("end_time", "End time (HH:MM)", values.get("end_time", ""), required=True)
                + field("title", "Title", values.get("title", ""), required=True)
                + field("organiser", "Organiser", values.get("organiser", ""), required=True)
                + field("attendees", "Attendees", values.get("attendees", ""), kind="number", required=True)
                + f'<p class="muted">Open {hhmm(OPEN)}-{hhmm(CLOSE)}; times in 30-minute steps.</p>'
                + f'<button type="submit">{esc(button)}</button></form>')

    # -- day view ----------------------------------------------------------------------------------

    @get(r"/days")
    def first_day(self, r: Request) -> Response:
        days = self._days(r)
        return redirect(f"/days/{days[0]}") if days else self.ok("Day view", "<p>No bookable days.</p>")

    @get(r"/days/(\d{4}-\d{2}-\d{2})")
    def day(self, r: Request) -> Response:
        date, days = r.match.group(1), self._days(r)
        if date not in days:
            return not_found("day")
        i = days.index(date)
        nav = []
        if i > 0:
            nav.append(f'<a href="/days/{days[i - 1]}">Previous day</a>')
        if i + 1 < len(days):
            nav.append(f'<a href="/days/{days[i + 1]}">Next day</a>')
        week = " · ".join(f"<strong>{esc(day_label(d)[:-5])}</strong>" if d == date
                          else f'<a href="/days/{d}">{esc(day_label(d)[:-5])}</a>' for d in days)
        slots = list(range(OPEN, CLOSE, STEP))
        head = "".join(f'<th colspan=2 scope="col">{hhmm(t)}</th>' for t in slots[::2])
        rows = []
        rooms = r.db.execute("SELECT * FROM rooms ORDER BY building, floor, name").fetchall()
        for room in rooms:
            cells, at = [], OPEN
            for b in r.db.execute("SELECT * FROM bookings WHERE room_id = ? AND date = ? ORDER BY start_time",
                                  [room["id"], date]):
                start, end = stored_minutes(b["start_time"]), stored_minutes(b["end_time"])
                cells += ["<td></td>"] * max(0, (start - at) // STEP)
                span = max(1, (end - max(start, at)) // STEP)
                cells.append(f'<td class="busy" colspan={span}><a href="/bookings/{b["id"]}">{esc(b["title"])}</a> '
                             f'{b["start_time"]}-{b["end_time"]} <span class="muted">{esc(b["organiser"])}</span></td>')
                at = max(at, end)
            cells += ["<td></td>"] * max(0, (CLOSE - at) // STEP)
            rows.append(f'<tr><th class="room" scope="row"><a href="/rooms/{room["id"]}">{esc(room["name"])}</a> '
                        f'<span class="muted">{esc(room["building"])}{room["floor"]} · {room["capacity"]} seats</span> '
                        f'<a href="/rooms/{room["id"]}/book?date={date}">Book</a></th>{"".join(cells)}</tr>')
        table = (f'<table class="grid"><colgroup><col style="width:185px"><col span={len(slots)}></colgroup>'
                 f'<thead><tr><th scope="col">Room</th>{head}</tr></thead>'
                 f'<tbody>{"".join(rows)}</tbody></table>')
        flash = {"cancelled": "Booking cancelled."}.get(r.query.get("done", ""), "")
        body = (GRID_STYLE + f'<nav class="pager" aria-label="days">{" ".join(nav)}</nav><p>{week}</p>' + table
                + '<p class="muted">Room column: building and floor (B2 = building B, floor 2) and seats.</p>')
        return self.ok(day_label(date), body, flash=flash)

    # -- rooms -------------------------------------------------------------------------------------

    @get(r"/rooms")
    def rooms(self, r: Request) -> Response:
        capacity, equipment, building = r.int_arg("capacity", 0), r.arg("equipment"), r.arg("building")
        where, params = ["capacity >= ?"], [capacity]
        if equipment in EQUIPMENT:
            where.append("equipment LIKE ?")
            params.append(f"%{equipment}%")
        if building:
            where.append("building = ?")
            params.append(building)
        clause = " AND ".join(where)
        total, page_no, pages, found = r.paged(f"SELECT COUNT(*) FROM rooms WHERE {clause}",
                                               f"SELECT * FROM rooms WHERE {clause} ORDER BY building, floor, name",
                                               params)
        buildings = [row[0] for row in r.db.execute("SELECT DISTINCT building FROM rooms ORDER BY building")]
        filters = ('<form class="card" method="get" action="/rooms" role="search">'
                   + field("capacity", "Seats at least", capacity or "", kind="number")
                   + field("equipment", "Equipment", equipment, kind="select",
                           options=[("", "Any")] + [(e, e.title()) for e in EQUIPMENT])
                   + field("building", "Building", building, kind="select",
                           options=[("", "Any")] + [(b, f"Building {b}") for b in buildings])
                   + '<button type="submit">Filter rooms</button></form>')
        body = "".join(f'<tr><td><a href="/rooms/{x["id"]}">{esc(x["name"])}</a></td><td>{esc(x["building"])}</td>'
                       f'<td>{x["floor"]}</td><td>{x["capacity"]}</td><td>{esc(x["equipment"]) or "-"}</td></tr>'
                       for x in found)
        table = (f"<p>{total} room{'s' if total != 1 else ''}.</p>"
                 + grid(["Room", "Building", "Floor", "Seats", "Equipment"], body)
                 if found else "<p>No rooms match.</p>")
        kept = {k: v for k, v in {"capacity": str(capacity) if capacity else "", "equipment": equipment,
                                  "building": building}.items() if v}
        return self.ok("Rooms", filters + table + pager("/rooms", page_no, pages, kept))

    @get(r"/rooms/(\d+)")
    def room(self, r: Request) -> Response:
        room = found(self._room(r, int(r.match.group(1))), "room")
        info = facts([("Building", esc(room["building"])), ("Floor", room["floor"]), ("Seats", room["capacity"]),
                      ("Equipment", esc(room["equipment"]) or "none")])
        week = []
        for d in self._days(r):
            items = r.db.execute("SELECT * FROM bookings WHERE room_id = ? AND date = ? ORDER BY start_time",
                                 [room["id"], d]).fetchall()
            listed = "".join(f'<li>{b["start_time"]}-{b["end_time"]} <a href="/bookings/{b["id"]}">{esc(b["title"])}</a>'
                             f' ({esc(b["organiser"])})</li>' for b in items) or "<li class=muted>free all day</li>"
            week.append(f"<h3>{esc(day_label(d))}</h3><ul>{listed}</ul>")
        links = f'<p><a href="/rooms/{room["id"]}/book">Book this room</a> · <a href="/rooms">Back to rooms</a></p>'
        return self.ok(room["name"], info + links + "<h2>This week</h2>" + "".join(week))

    # -- booking -----------------------------------------------------------------------------------

    @get(r"/rooms/(\d+)/book")
    def book_form(self, r: Request) -> Response:
        room = found(self._room(r, int(r.match.group(1))), "room")
        values = {"date": r.arg("date")}
        return self.ok(f"Book {room['name']}", f"<p>{esc(room_label(room))}; {esc(room['equipment']) or 'no equipment'}.</p>"
                       + self._form(r, f"/rooms/{room['id']}/book", values, "Book room", room_choice=False))

    @post(r"/rooms/(\d+)/book")
    def book(self, r: Request) -> Response:
        room = found(self._room(r, int(r.match.group(1))), "room")
        values = {k: r.arg(k) for k in FIELDS}
        errors = validate(r.db, room, values)
        if errors:
            return self.ok(f"Book {room['name']}", self._form(r, f"/rooms/{room['id']}/book", values, "Book room",
                                                              room_choice=False), status=422, errors=errors)
        cur = r.db.execute(f"INSERT INTO bookings (room_id, {', '.join(FIELDS)}) VALUES (?{', ?' * len(FIELDS)})",
                           [room["id"], *(values[k] for k in FIELDS[:-1]), int(values["attendees"])])
        return redirect(f"/bookings/{cur.lastrowid}?done=booked")

    @get(r"/bookings")
    def bookings(self, r: Request) -> Response:
        q = r.arg("organiser")
        where, params = ("WHERE b.organiser LIKE ?", [f"%{q}%"]) if q else ("", [])
        total, page_no, pages, found = r.paged(
            f"SELECT COUNT(*) FROM bookings b {where}", f"SELECT b.*, r.name AS room FROM bookings b JOIN rooms r "
            f"ON r.id = b.room_id {where} ORDER BY b.date, b.start_time, r.name", params)
        search = (f'<form class="card" method="get" action="/bookings" role="search">'
                  f'{field("organiser", "Organiser", q)}<button type="submit">Search</button></form>')
        body = "".join(f'<tr><td>{esc(day_label(b["date"]))}</td><td>{b["start_time"]}-{b["end_time"]}</td>'
                       f'<td><a href="/bookings/{b["id"]}">{esc(b["title"])}</a></td><td>{esc(b["room"])}</td>'
                       f'<td>{esc(b["organiser"])}</td><td>{b["attendees"]}</td></tr>' for b in found)
        table = (f"<p>{total} booking{'s' if total != 1 else ''}{' by ' + esc(repr(q)) if q else ''}.</p>"
                 + grid(["Date", "Time", "Title", "Room", "Organiser", "Attendees"], body)
                 if found else "<p>No bookings found.</p>")
        return self.ok("Bookings", search + table + pager("/bookings", page_no, pages, {"organiser": q} if q else None))

    @get(r"/bookings/(\d+)")
    def show(self, r: Request) -> Response:
        b = self._booking(r)
        rows = [("Room", f'<a href="/rooms/{b["room_id"]}">{esc(b["room"])}</a> (building {esc(b["building"])}, '
                         f'floor {b["floor"]})'),
                ("Date", esc(day_label(b["date"]))), ("Time", f'{b["start_time"]}-{b["end_time"]}'),
                ("Organiser", esc(b["organiser"])), ("Attendees", str(b["attendees"]))]
        links = (f'<p><a href="/bookings/{b["id"]}/edit">Edit booking</a> · <a href="/bookings/{b["id"]}/cancel">'
                 f'Cancel booking</a> · <a href="/days/{b["date"]}">Day view</a></p>')
        flash = {"booked": "Room booked.", "saved": "Changes saved."}.get(r.query.get("done", ""), "")
        return self.ok(b["title"], facts(rows) + links, flash=flash)

    @get(r"/bookings/(\d+)/edit")
    def edit_form(self, r: Request) -> Response:
        b = self._booking(r)
        return self.ok(f"Edit {b['title']}", self._form(r, f"/bookings/{b['id']}/edit", dict(b), "Save changes",
                                                        room_choice=True))

    @post(r"/bookings/(\d+)/edit")
    def update(self, r: Request) -> Response:
        b = self._booking(r)
        values = {k: r.arg(k) if k in r.form else str(b[k]) for k in ["room_id", *FIELDS]}
        room = self._room(r, values["room_id"])
        errors = validate(r.db, room, values, exclude=b["id"])
        if errors:
            return self.ok(f"Edit {b['title']}", self._form(r, f"/bookings/{b['id']}/edit", values, "Save changes",
                                                            room_choice=True), status=422, errors=errors)
        r.db.execute(f"UPDATE bookings SET room_id = ?, {', '.join(k + ' = ?' for k in FIELDS)} WHERE id = ?",
                     [room["id"], *(values[k] for k in FIELDS[:-1]), int(values["attendees"]), b["id"]])
        return redirect(f"/bookings/{b['id']}?done=saved")

    @get(r"/bookings/(\d+)/cancel")
    def cancel_form(self, r: Request) -> Response:
        b = self._booking(r)
        return self.confirm(f"Cancel {b['title']}?", f"/bookings/{b['id']}/cancel",
                            f'This cancels "{esc(b["title"])}" in {esc(b["room"])} on {esc(day_label(b["date"]))}, '
                            f'{b["start_time"]}-{b["end_time"]} (organiser {esc(b["organiser"])}).', "Cancel booking")

    @post(r"/bookings/(\d+)/cancel")
    def cancel(self, r: Request) -> Response:
        b = self._booking(r)
        r.db.execute("DELETE FROM bookings WHERE id = ?", [b["id"]])
        return redirect(f"/days/{b['date']}?done=cancelled")


APP = Booking
