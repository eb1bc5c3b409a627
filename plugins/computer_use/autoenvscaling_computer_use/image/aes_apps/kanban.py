"""Kanban board: boards of position-ordered columns holding cards, with a filter bar, per-card detail
and edit pages, labels, archiving and a "new card" form per column. No JavaScript, no drag and drop:
a card moves through its edit form's "Move to" select.

Tables: ``boards(id, name, description)``, ``columns(id, board_id, name, position)``,
``members(id, name, email)``, ``labels(id, name, color)``,
``cards(id, column_id, title, description, assignee_id, priority, due, archived, position)``,
``card_labels(id, card_id, label_id)``.

A column on the board shows its first ``COL_LIMIT`` cards; the rest are on the column's own page,
paginated ``PER_PAGE`` to a page. Moving a card puts it at the bottom of its new column and touches
no other card.
"""

from __future__ import annotations

import datetime
import re
import urllib.parse

from webapp import PER_PAGE, App, Request, Response, esc, facts, field, found, get, grid, pager, post, redirect

COL_LIMIT = 8
PRIORITIES = ["low", "medium", "high", "urgent"]
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
FILTERS = ["q", "label", "assignee", "priority"]
EDITABLE = ("title", "description", "assignee_id", "priority", "due", "column_id")

SCHEMA = """
CREATE TABLE boards (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE columns (
  id INTEGER PRIMARY KEY,
  board_id INTEGER NOT NULL REFERENCES boards(id),
  name TEXT NOT NULL,
  position INTEGER NOT NULL
);
CREATE TABLE members (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL DEFAULT ''
);
CREATE TABLE labels (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  color TEXT NOT NULL DEFAULT '#6b7280'
);
CREATE TABLE cards (
  id INTEGER PRIMARY KEY,
  column_id INTEGER NOT NULL REFERENCES columns(id),
  title TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  assignee_id INTEGER REFERENCES members(id),
  priority TEXT NOT NULL DEFAULT 'medium',
  due TEXT NOT NULL DEFAULT '',
  archived INTEGER NOT NULL DEFAULT 0,
  position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE card_labels (
  id INTEGER PRIMARY KEY,
  card_id INTEGER NOT NULL REFERENCES cards(id),
  label_id INTEGER NOT NULL REFERENCES labels(id),
  UNIQUE (card_id, label_id)
);
"""

FLASH = {"saved": "Card saved.", "moved": "Card saved and moved.", "archived": "Card archived.",
         "restored": "Card restored.", "label-added": "Label added.", "label-removed": "Label removed.",
         "created": "Card created."}


def valid_date(text: str) -> bool:
    if not DATE.match(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def label_chip(name: str, color: str) -> str:
    return (f'<span class="label" style="background:{esc(color)};color:#fff;border-radius:3px;'
            f'padding:1px 6px;margin-right:4px;font-size:12px">{esc(name)}</span>')


class Kanban(App):
    title = "TeamBoard"
    nav = [("Boards", "/boards")]
    home = "/boards"

    # -- lookups -----------------------------------------------------------------------------------

    def _board(self, r: Request, board_id: int):
        return r.db.execute("SELECT * FROM boards WHERE id = ?", [board_id]).fetchone()

    def _columns(self, r: Request, board_id: int):
        return r.db.execute("SELECT * FROM columns WHERE board_id = ? ORDER BY position, id", [board_id]).fetchall()

    def _members(self, r: Request):
        return r.db.execute("SELECT * FROM members ORDER BY name, id").fetchall()

    def _labels(self, r: Request):
        return r.db.execute("SELECT * FROM labels ORDER BY name, id").fetchall()

    def _card(self, r: Request):
        return found(r.db.execute("SELECT c.*, col.board_id, col.name AS column_name FROM cards c "
                                  "JOIN columns col ON col.id = c.column_id WHERE c.id = ?",
                                  [int(r.match.group(1))]).fetchone(), "card")

    def _card_labels(self, r: Request, card_ids: list[int]) -> dict[int, list]:
        out: dict[int, list] = {i: [] for i in card_ids}
        if card_ids:
            marks = ", ".join("?" * len(card_ids))
            for row in r.db.execute(f"SELECT cl.card_id, l.id, l.name, l.color FROM card_labels cl JOIN labels l "
                                    f"ON l.id = cl.label_id WHERE cl.card_id IN ({marks}) ORDER BY l.name", card_ids):
                out[row["card_id"]].append(row)
        return out

    # -- filtering ---------------------------------------------------------------------------------

    def _filters(self, r: Request) -> dict[str, str]:
        return {k: r.arg(k) for k in FILTERS if r.arg(k)}

    def _where(self, filters: dict[str, str]) -> tuple[str, list]:
        """SQL conditions (on cards ``c``) for the filter bar's values."""
        parts, params = [], []
        if filters.get("q"):
            parts.append("(c.title LIKE ? OR c.description LIKE ?)")
            params += [f"%{filters['q']}%"] * 2
        if filters.get("label"):
            parts.append("EXISTS (SELECT 1 FROM card_labels cl JOIN labels l ON l.id = cl.label_id "
                         "WHERE cl.card_id = c.id AND l.name = ?)")
            params.append(filters["label"])
        if filters.get("assignee") == "none":
            parts.append("c.assignee_id IS NULL")
        elif filters.get("assignee"):
            parts.append("c.assignee_id = ?")
            params.append(filters["assignee"])
        if filters.get("priority"):
            parts.append("c.priority = ?")
            params.append(filters["priority"])
        return "".join(" AND " + p for p in parts), params

    def _filter_form(self, r: Request, action: str, filters: dict[str, str]) -> str:
        labels = [("", "Any label")] + [(l["name"], l["name"]) for l in self._labels(r)]
        people = [("", "Anyone"), ("none", "Unassigned")] + [(str(m["id"]), m["name"]) for m in self._members(r)]
        prios = [("", "Any priority")] + [(p, p.title()) for p in PRIORITIES]
        clear = f' <a href="{esc(action)}">Clear filters</a>' if filters else ""
        return (f'<form class="card" method="get" action="{esc(action)}" role="search">'
                f'<div style="display:flex;gap:14px;flex-wrap:wrap">'
                f'<div>{field("q", "Search cards", filters.get("q", ""))}</div>'
                f'<div>{field("label", "Label", filters.get("label", ""), kind="select", options=labels)}</div>'
                f'<div>{field("assignee", "Assignee", filters.get("assignee", ""), kind="select", options=people)}</div>'
                f'<div>{field("priority", "Priority", filters.get("priority", ""), kind="select", options=prios)}</div>'
                f'</div><button type="submit">Filter</button>{clear}</form>')

    def _open_cards(self, r: Request, column_id: int, filters: dict[str, str], limit: int, offset: int = 0):
        where, params = self._where(filters)
        total = r.db.execute(f"SELECT COUNT(*) FROM cards c WHERE c.column_id = ? AND c.archived = 0{where}",
                             [column_id, *params]).fetchone()[0]
        rows = r.db.execute(f"SELECT c.*, m.name AS assignee FROM cards c LEFT JOIN members m ON m.id = c.assignee_id "
                            f"WHERE c.column_id = ? AND c.archived = 0{where} ORDER BY c.position, c.id LIMIT ? OFFSET ?",
                            [column_id, *params, limit, offset]).fetchall()
        return total, rows

    def _meta(self, c, labels: list) -> str:
        bits = [f"Assignee: {esc(c['assignee'] or 'unassigned')}", f"Priority: {esc(c['priority'])}",
                f"Due: {esc(c['due'] or 'none')}"]
        chips = "".join(label_chip(l["name"], l["color"]) for l in labels)
        return f'<div>{chips}</div><div class="muted" style="font-size:13px">{" · ".join(bits)}</div>'

    # -- pages -------------------------------------------------------------------------------------

    @get(r"/boards")
    def boards(self, r: Request) -> Response:
        _, page_no, pages, rows = r.paged("SELECT COUNT(*) FROM boards", (
            "SELECT b.*, (SELECT COUNT(*) FROM cards c JOIN columns col ON col.id = c.column_id "
            "WHERE col.board_id = b.id AND c.archived = 0) AS open_cards FROM boards b ORDER BY b.name, b.id"))
        body = "".join(f'<tr><td><a href="/boards/{b["id"]}">{esc(b["name"])}</a></td><td>{esc(b["description"])}</td>'
                       f'<td>{b["open_cards"]}</td></tr>' for b in rows)
        table = grid(["Board", "Description", "Open cards"], body) if rows else "<p>No boards yet.</p>"
        return self.ok("Boards", table + pager("/boards", page_no, pages))

    @get(r"/boards/(\d+)")
    def board(self, r: Request) -> Response:
        b = found(self._board(r, int(r.match.group(1))), "board")
        filters = self._filters(r)
        cols = []
        for col in self._columns(r, b["id"]):
            total, cards = self._open_cards(r, col["id"], filters, COL_LIMIT)
            labels = self._card_labels(r, [c["id"] for c in cards])
            items = "".join(f'<div class="card"><a href="/cards/{c["id"]}">{esc(c["title"])}</a>'
                            f'{self._meta(c, labels[c["id"]])}</div>' for c in cards)
            href = f"/columns/{col['id']}" + ("?" + urllib.parse.urlencode(filters) if filters else "")
            more = ""
            if total > len(cards):
                more = f'<p><a href="{esc(href)}">Show all {total} cards in {esc(col["name"])}</a></p>'
            cols.append(f'<section class="col" style="min-width:170px;flex:1" aria-label="{esc(col["name"])}">'
                        f'<h2 style="font-size:16px;margin:4px 0"><a href="{esc(href)}">{esc(col["name"])}</a> '
                        f'<span class="muted">({total})</span></h2>'
                        f'{items or "<p class=muted>No cards.</p>"}{more}'
                        f'<p><a href="/columns/{col["id"]}/new">Add a card to {esc(col["name"])}</a></p></section>')
        archived = r.db.execute("SELECT COUNT(*) FROM cards c JOIN columns col ON col.id = c.column_id "
                                "WHERE col.board_id = ? AND c.archived = 1", [b["id"]]).fetchone()[0]
        intro = (f'<p>{esc(b["description"])}</p>' if b["description"] else "") + \
            f'<p><a href="/boards/{b["id"]}/archived">Archived cards ({archived})</a></p>'
        note = "<p class=muted>Showing only cards that match the filters.</p>" if filters else ""
        flash = FLASH.get(r.query.get("done", ""), "")
        return self.ok(b["name"], intro + self._filter_form(r, f"/boards/{b['id']}", filters) + note
                       + f'<div class="cols">{"".join(cols)}</div>', flash=flash)

    def _card_table(self, r: Request, rows, *, with_column: bool = False) -> str:
        labels = self._card_labels(r, [c["id"] for c in rows])
        body = "".join(
            f'<tr><td><a href="/cards/{c["id"]}">{esc(c["title"])}</a></td>'
            + (f'<td>{esc(c["column_name"])}</td>' if with_column else "")
            + f'<td>{"".join(label_chip(l["name"], l["color"]) for l in labels[c["id"]])}</td>'
            f'<td>{esc(c["assignee"] or "unassigned")}</td><td>{esc(c["priority"])}</td><td>{esc(c["due"] or "none")}</td></tr>'
            for c in rows)
        return grid(["Title", *(["Column"] if with_column else []), "Labels", "Assignee", "Priority", "Due"], body)

    @get(r"/columns/(\d+)")
    def column(self, r: Request) -> Response:
        col = self._column(r)
        b = self._board(r, col["board_id"])
        filters = self._filters(r)
        total, _ = self._open_cards(r, col["id"], filters, 0)
        page_no, pages, offset = r.page_of(total)
        _, rows = self._open_cards(r, col["id"], filters, PER_PAGE, offset)
        listing = (f"<p>{total} card{'s' if total != 1 else ''} in {esc(col['name'])}"
                   f"{' matching the filters' if filters else ''}.</p>" + self._card_table(r, rows)) \
            if rows else "<p>No cards found.</p>"
        links = (f'<p><a href="/boards/{b["id"]}">Back to the {esc(b["name"])} board</a> · '
                 f'<a href="/columns/{col["id"]}/new">Add a card to {esc(col["name"])}</a></p>')
        return self.ok(f"{col['name']} ({b['name']})", links + self._filter_form(r, f"/columns/{col['id']}", filters)
                       + listing + pager(f"/columns/{col['id']}", page_no, pages, filters))

    @get(r"/boards/(\d+)/archived")
    def archived(self, r: Request) -> Response:
        b = found(self._board(r, int(r.match.group(1))), "board")
        base = ("FROM cards c JOIN columns col ON col.id = c.column_id LEFT JOIN members m ON m.id = c.assignee_id "
                "WHERE col.board_id = ? AND c.archived = 1")
        total, page_no, pages, rows = r.paged(
            f"SELECT COUNT(*) {base}",
            f"SELECT c.*, col.name AS column_name, m.name AS assignee {base} ORDER BY col.position, c.position, c.id",
            [b["id"]])
        listing = (f"<p>{total} archived card{'s' if total != 1 else ''}. Open a card to restore it.</p>"
                   + self._card_table(r, rows, with_column=True)) if rows else "<p>No archived cards.</p>"
        back = f'<p><a href="/boards/{b["id"]}">Back to the {esc(b["name"])} board</a></p>'
        return self.ok(f"Archived cards ({b['name']})", back + listing + pager(f"/boards/{b['id']}/archived", page_no, pages))

    # -- one card ----------------------------------------------------------------------------------

    def _card_fields(self, r: Request, values: dict) -> str:
        """The fields the edit and the new-card forms share."""
        people = [("", "Unassigned")] + [(str(m["id"]), m["name"]) for m in self._members(r)]
        return (field("title", "Title", values.get("title", ""), required=True)
                + field("description", "Description", values.get("description", ""), kind="textarea")
                + field("assignee_id", "Assignee", values.get("assignee_id", ""), kind="select", options=people)
                + field("priority", "Priority", values.get("priority", "medium"), kind="select",
                        options=[(p, p.title()) for p in PRIORITIES])
                + field("due", "Due date", values.get("due", ""), kind="date"))

    def _edit_form(self, r: Request, card, values: dict) -> str:
        columns = [(str(c["id"]), c["name"]) for c in self._columns(r, card["board_id"])]
        return (f'<form class="card" method="post" action="/cards/{card["id"]}" aria-label="Edit card">'
                f'<h2 style="font-size:16px;margin:0">Edit card</h2>' + self._card_fields(r, values)
                + field("column_id", "Move to", values["column_id"], kind="select", options=columns)
                + '<button type="submit">Save card</button></form>')

    def _card_page(self, r: Request, card, values: dict | None = None, *, status: int = 200,
                   errors: list[str] | None = None, flash: str = "") -> Response:
        b = self._board(r, card["board_id"])
        labels = self._card_labels(r, [card["id"]])[card["id"]]
        assignee = r.db.execute("SELECT name FROM members WHERE id = ?", [card["assignee_id"]]).fetchone()
        table = facts([("Board", esc(b["name"])), ("Column", esc(card["column_name"])),
                       ("Assignee", esc(assignee["name"] if assignee else "unassigned")),
                       ("Priority", esc(card["priority"])), ("Due date", esc(card["due"] or "none")),
                       ("Description", esc(card["description"]) or "<span class=muted>none</span>"),
                       ("Status", "archived" if card["archived"] else "open")])
        banner = ('<p role="note" style="background:#fff4d6;border:1px solid #e8c96a;padding:6px 10px">'
                  'This card is archived: it is hidden from the board.</p>') if card["archived"] else ""
        chips = "".join(
            f'<li>{label_chip(l["name"], l["color"])}<form method="post" style="display:inline" '
            f'action="/cards/{card["id"]}/labels/{l["id"]}/remove"><button type="submit" '
            f'aria-label="Remove label {esc(l["name"])}" style="margin:0 0 0 6px;padding:1px 8px">Remove</button>'
            f'</form></li>'
            for l in labels)
        have = {l["id"] for l in labels}
        choices = [(str(l["id"]), l["name"]) for l in self._labels(r) if l["id"] not in have]
        add = (f'<form method="post" action="/cards/{card["id"]}/labels" aria-label="Add label">'
               + field("label_id", "Add a label", "", kind="select", options=choices)
               + '<button type="submit">Add label</button></form>') if choices \
            else "<p class=muted>Every label is on this card.</p>"
        label_box = (f'<div class="card"><h2 style="font-size:16px;margin:0">Labels</h2>'
                     f'<ul>{chips or "<li class=muted>No labels.</li>"}</ul>{add}</div>')
        verb, action = ("Restore card", "restore") if card["archived"] else ("Archive card", "archive")
        archive = (f'<form class="card" method="post" action="/cards/{card["id"]}/{action}">'
                   f'<button type="submit" style="margin:0">{verb}</button></form>')
        back = f'<p><a href="/boards/{b["id"]}">Back to the {esc(b["name"])} board</a></p>'
        form = self._edit_form(r, card, values or self._current(card))
        return self.ok(card["title"], back + banner + table + archive + label_box + form,
                       status=status, errors=errors, flash=flash)

    @get(r"/cards/(\d+)")
    def card(self, r: Request) -> Response:
        card = self._card(r)
        return self._card_page(r, card, flash=FLASH.get(r.query.get("done", ""), ""))

    def _validate(self, r: Request, values: dict, board_id: int) -> list[str]:
        errors = []
        if not values["title"]:
            errors.append("Title is required.")
        elif len(values["title"]) > 120:
            errors.append("Title must be at most 120 characters.")
        if values["priority"] not in PRIORITIES:
            errors.append("Priority must be one of: " + ", ".join(PRIORITIES) + ".")
        if values["due"] and not valid_date(values["due"]):
            errors.append("Due date must be a real date written YYYY-MM-DD (for example 2026-03-15).")
        if values["assignee_id"] and not r.db.execute("SELECT 1 FROM members WHERE id = ?", [values["assignee_id"]]).fetchone():
            errors.append("Assignee must be a member of the team.")
        if "column_id" in values and not r.db.execute("SELECT 1 FROM columns WHERE id = ? AND board_id = ?",
                                                      [values["column_id"], board_id]).fetchone():
            errors.append("Move to must be a column of this board.")
        return errors

    @staticmethod
    def _current(card) -> dict:
        """The card's editable fields as the edit form shows them."""
        return {k: "" if card[k] is None else str(card[k]) for k in EDITABLE}

    def _values(self, r: Request, keys: list[str], current: dict) -> dict:
        out = {k: (r.arg(k) if k in r.form else current.get(k, "")) for k in keys}
        out["description"] = out.get("description", "").replace("\r\n", "\n")
        return out

    @post(r"/cards/(\d+)")
    def update(self, r: Request) -> Response:
        card = self._card(r)
        current = self._current(card)
        values = self._values(r, list(current), current)
        errors = self._validate(r, values, card["board_id"])
        if errors:
            return self._card_page(r, card, values, status=422, errors=errors)
        moved = int(values["column_id"]) != card["column_id"]
        position = card["position"]
        if moved:
            position = r.db.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM cards WHERE column_id = ?",
                                    [values["column_id"]]).fetchone()[0]
        changes = {"title": values["title"], "description": values["description"],
                   "assignee_id": int(values["assignee_id"]) if values["assignee_id"] else None,
                   "priority": values["priority"], "due": values["due"], "column_id": int(values["column_id"]),
                   "position": position}
        # only what differs is written, so an unchanged field keeps its exact stored value
        diff = {k: v for k, v in changes.items() if v != card[k]}
        if diff:
            r.db.execute(f"UPDATE cards SET {', '.join(k + ' = ?' for k in diff)} WHERE id = ?", [*diff.values(), card["id"]])
        return redirect(f"/cards/{card['id']}?done={'moved' if moved else 'saved'}")

    @post(r"/cards/(\d+)/(archive|restore)")
    def set_archived(self, r: Request) -> Response:
        card = self._card(r)
        archived = int(r.match.group(2) == "archive")
        r.db.execute("UPDATE cards SET archived = ? WHERE id = ?", [archived, card["id"]])
        return redirect(f"/cards/{card['id']}?done={'archived' if archived else 'restored'}")

    @post(r"/cards/(\d+)/labels")
    def add_label(self, r: Request) -> Response:
        card = self._card(r)
        label = r.db.execute("SELECT * FROM labels WHERE id = ?", [r.int_arg("label_id", -1)]).fetchone()
        if label is None:
            return self._card_page(r, card, status=422, errors=["Choose a label to add."])
        if r.db.execute("SELECT 1 FROM card_labels WHERE card_id = ? AND label_id = ?", [card["id"], label["id"]]).fetchone():
            return self._card_page(r, card, status=422, errors=[f"The card already has the label {label['name']}."])
        r.db.execute("INSERT INTO card_labels (card_id, label_id) VALUES (?, ?)", [card["id"], label["id"]])
        return redirect(f"/cards/{card['id']}?done=label-added")

    @post(r"/cards/(\d+)/labels/(\d+)/remove")
    def remove_label(self, r: Request) -> Response:
        card = self._card(r)
        r.db.execute("DELETE FROM card_labels WHERE card_id = ? AND label_id = ?", [card["id"], int(r.match.group(2))])
        return redirect(f"/cards/{card['id']}?done=label-removed")

    # -- new cards ---------------------------------------------------------------------------------

    def _new_page(self, r: Request, col, values: dict, *, status: int = 200, errors: list[str] | None = None) -> Response:
        b = self._board(r, col["board_id"])
        labels = [("", "No label")] + [(str(l["id"]), l["name"]) for l in self._labels(r)]
        form = (f'<form class="card" method="post" action="/columns/{col["id"]}/new">' + self._card_fields(r, values)
                + field("label_id", "Label", values.get("label_id", ""), kind="select", options=labels)
                + '<button type="submit">Create card</button></form>')
        back = f'<p><a href="/boards/{b["id"]}">Back to the {esc(b["name"])} board</a></p>'
        return self.ok(f"New card in {col['name']} ({b['name']})", back + form, status=status, errors=errors)

    def _column(self, r: Request):
        return found(r.db.execute("SELECT * FROM columns WHERE id = ?", [int(r.match.group(1))]).fetchone(), "column")

    @get(r"/columns/(\d+)/new")
    def new_form(self, r: Request) -> Response:
        col = self._column(r)
        return self._new_page(r, col, {})

    @post(r"/columns/(\d+)/new")
    def create(self, r: Request) -> Response:
        col = self._column(r)
        values = self._values(r, ["title", "description", "assignee_id", "priority", "due", "label_id"], {"priority": "medium"})
        values["priority"] = values["priority"] or "medium"
        errors = self._validate(r, values, col["board_id"])
        if values["label_id"] and not r.db.execute("SELECT 1 FROM labels WHERE id = ?", [values["label_id"]]).fetchone():
            errors.append("Label must be one of the board's labels.")
        if errors:
            return self._new_page(r, col, values, status=422, errors=errors)
        position = r.db.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM cards WHERE column_id = ?", [col["id"]]).fetchone()[0]
        cur = r.db.execute("INSERT INTO cards (column_id, title, description, assignee_id, priority, due, archived, position) "
                           "VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
                           [col["id"], values["title"], values["description"],
                            int(values["assignee_id"]) if values["assignee_id"] else None, values["priority"],
                            values["due"], position])
        if values["label_id"]:
            r.db.execute("INSERT INTO card_labels (card_id, label_id) VALUES (?, ?)", [cur.lastrowid, int(values["label_id"])])
        return redirect(f"/boards/{col['board_id']}?done=created")


APP = Kanban
