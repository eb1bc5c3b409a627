"""Reference solution for booking_reserve: read the qualifying rooms from the filtered room list and
their bookings from the day view, work out the slot or room the request names, then book, edit or
cancel through the app's forms."""

import datetime
import re

from uilib import BASE, expect_ok, follow, go, next_page, params, session, submit

CLOSE, STEP = 19 * 60, 30


def mins(text: str) -> int:
    h, m = text.split(":")
    return int(h) * 60 + int(m)


def hhmm(total: int) -> str:
    return f"{total // 60:02d}:{total % 60:02d}"


def day_of(label: str) -> str:
    """A date as the app shows it ('Wednesday 12 March 2025') -> '2025-03-12'."""
    return datetime.datetime.strptime(label, "%A %d %B %Y").date().isoformat()


def qualifying_rooms(page, people: int, equipment: list, building, floor) -> list[dict]:  # noqa: ANN001
    """The rooms with enough seats, all the equipment, in the building and on the floor asked for."""
    page.goto(BASE + "/rooms")
    page.get_by_label("Seats at least").fill(str(people))
    if equipment:
        page.get_by_label("Equipment").select_option(equipment[0])
    if building:
        page.get_by_label("Building").select_option(building)
    submit(page, "Filter rooms")
    found = []
    while True:
        for row in page.locator("tbody tr").all():
            name, _, fl, seats, kit = (c.inner_text().strip() for c in row.locator("td").all())
            kit = [k.strip() for k in kit.split(",")] if kit != "-" else []
            if all(e in kit for e in equipment) and (floor is None or int(fl) == floor):
                found.append({"name": name, "seats": int(seats)})
        if not next_page(page):
            return found


def day_bookings(page, date: str) -> dict[str, list[tuple[int, int]]]:  # noqa: ANN001
    """Each room's booked (start, end) pairs on ``date``, read from the day view."""
    page.goto(BASE + f"/days/{date}")
    out = {}
    for row in page.locator("table.grid tbody tr").all():
        name = row.locator("th a").first.inner_text().strip()
        text = " ".join(c.inner_text() for c in row.locator("td.busy").all())
        out[name] = [(mins(a), mins(b)) for a, b in re.findall(r"(\d\d:\d\d)-(\d\d:\d\d)", text)]
    return out


def is_free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(e <= start or s >= end for s, e in taken)


def find_bookings(page, organiser: str, date: str, start: str = "") -> list[str]:  # noqa: ANN001
    """URLs of ``organiser``'s bookings on ``date`` (starting at ``start`` when given), from "My bookings"."""
    page.goto(BASE + "/bookings")
    page.get_by_label("Organiser").fill(organiser)
    submit(page, "Search")
    urls = []
    while True:
        for row in page.locator("tbody tr").all():
            cells = [c.inner_text().strip() for c in row.locator("td").all()]
            if day_of(cells[0]) == date and cells[4] == organiser and cells[1].startswith(start):
                urls.append(BASE + row.locator("a").first.get_attribute("href"))
        if not next_page(page):
            return urls


def reserve(page, req: dict) -> None:  # noqa: ANN001
    rooms = qualifying_rooms(page, req["people"], req["equipment"], req["building"], req["floor"])
    taken = day_bookings(page, req["date"])
    for start in range(mins(req["after"]), CLOSE - req["duration"] + 1, STEP):
        ok = [r for r in rooms if is_free(taken[r["name"]], start, start + req["duration"])]
        if ok:
            room = min(ok, key=lambda r: (r["seats"], r["name"]))["name"]
            break
    else:
        raise SystemExit("no room is free for the meeting")
    row = page.locator("table.grid tbody tr").filter(has=page.get_by_role("link", name=room, exact=True))
    go(page, row.get_by_role("link", name="Book", exact=True))
    page.get_by_label("Date").select_option(req["date"])
    page.get_by_label("Start time (HH:MM)").fill(hhmm(start))
    page.get_by_label("End time (HH:MM)").fill(hhmm(start + req["duration"]))
    page.get_by_label("Title").fill(req["title"])
    page.get_by_label("Organiser").fill(req["organiser"])
    page.get_by_label("Attendees").fill(str(req["people"]))
    submit(page, "Book room")
    expect_ok(page)


def move(page, req: dict) -> None:  # noqa: ANN001
    urls = find_bookings(page, req["organiser"], req["from"], req["start"])
    if len(urls) != 1:
        raise SystemExit(f"expected one booking to move, found {len(urls)}")
    page.goto(urls[0])
    details = {th.inner_text().strip(): td.inner_text().strip()
               for th, td in zip(page.locator("th").all(), page.locator("td").all())}
    start, end = (mins(t) for t in details["Time"].split("-"))
    rooms = qualifying_rooms(page, int(details["Attendees"]), req["equipment"], req["building"], None)
    taken = day_bookings(page, req["to"])
    free = [r["name"] for r in rooms if is_free(taken[r["name"]], start, end)]
    if len(free) != 1:
        raise SystemExit(f"expected one free room, found {free}")
    page.goto(urls[0])
    follow(page, "Edit booking")
    option = page.locator('select[name="room_id"] option').filter(has_text=re.compile("^" + re.escape(free[0]) + r" \("))
    page.get_by_label("Room").select_option(option.get_attribute("value"))
    page.get_by_label("Date").select_option(req["to"])
    submit(page, "Save changes")
    expect_ok(page)


def cancel(page, req: dict) -> None:  # noqa: ANN001
    while True:
        urls = find_bookings(page, req["organiser"], req["date"])
        if not urls:
            return
        page.goto(urls[0])
        follow(page, "Cancel booking")
        submit(page, "Cancel booking")
        expect_ok(page)


def main() -> None:
    p = params()
    with session() as page:
        for req in p["requests"]:
            {"reserve": reserve, "move": move, "cancel": cancel}[req["kind"]](page, req)


if __name__ == "__main__":
    main()
