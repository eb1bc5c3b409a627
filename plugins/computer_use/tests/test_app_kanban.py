"""The kanban app through ``Server.handle`` (no sandbox) and the kanban_bulk family's builder: pages,
filters, pagination, validation, moving, archiving, labels, card creation, the journal; builds that
are deterministic and grow with the level, instructions that name every verified value, and a rule
applied through the app that the verifier scores 1 while touching a decoy scores 0."""

from __future__ import annotations

import random
import re
import urllib.parse

import pytest

from autoenvscaling_computer_use.apps import app_module, webapp
from autoenvscaling_computer_use.families import kanban_bulk
from autoenvscaling_computer_use.verifier import verify

KANBAN = app_module("kanban")


def small_rows() -> dict:
    """One board, three columns; To do holds 13 cards (more than a board column shows)."""
    cards = [{"id": i, "column_id": 2, "title": f"Task number {i:02d}", "description": "", "assignee_id": 1 if i % 2 else None,
              "priority": "high" if i % 3 == 0 else "low", "due": f"2026-03-{i + 1:02d}", "archived": 0, "position": i}
             for i in range(1, 14)]
    cards.append({"id": 14, "column_id": 3, "title": "Ship the release", "description": "Old notes.", "assignee_id": 2,
                  "priority": "urgent", "due": "", "archived": 0, "position": 1})
    cards.append({"id": 15, "column_id": 3, "title": "Forgotten spike", "description": "", "assignee_id": None,
                  "priority": "low", "due": "", "archived": 1, "position": 2})
    return {
        "boards": [{"id": 1, "name": "Website relaunch", "description": "The public site."},
                   {"id": 2, "name": "Mobile app", "description": ""}],
        "columns": [{"id": 1, "board_id": 1, "name": "Backlog", "position": 1},
                    {"id": 2, "board_id": 1, "name": "To do", "position": 2},
                    {"id": 3, "board_id": 1, "name": "Done", "position": 3},
                    {"id": 4, "board_id": 2, "name": "To do", "position": 1}],
        "members": [{"id": 1, "name": "Ada Novak", "email": ""}, {"id": 2, "name": "Wen Xu", "email": ""}],
        "labels": [{"id": 1, "name": "bug", "color": "#c62828"}, {"id": 2, "name": "q3", "color": "#00897b"}],
        "cards": cards,
        "card_labels": [{"id": 1, "card_id": 14, "label_id": 1}, {"id": 2, "card_id": 3, "label_id": 1}],
    }


def server(rows: dict | None = None) -> webapp.Server:
    return webapp.Server(KANBAN.APP(), webapp.seed_sql(KANBAN.SCHEMA, rows or small_rows()), mirror=None)


def post(s: webapp.Server, path: str, **form) -> webapp.Response:
    return s.handle("POST", path, urllib.parse.urlencode(form).encode())


def card_form(s: webapp.Server, card_id: int, **changes) -> dict:
    """The edit form's current values (as a browser would submit them) with ``changes`` applied."""
    c = s.db.execute("SELECT * FROM cards WHERE id = ?", [card_id]).fetchone()
    values = {"title": c["title"], "description": c["description"], "assignee_id": c["assignee_id"] or "",
              "priority": c["priority"], "due": c["due"], "column_id": c["column_id"]}
    return {**values, **changes}


def card(s: webapp.Server, card_id: int) -> dict:
    return dict(s.db.execute("SELECT * FROM cards WHERE id = ?", [card_id]).fetchone())


# -- the app -------------------------------------------------------------------------------------------

def test_board_shows_columns_side_by_side_and_truncates_long_ones():
    s = server()
    assert s.handle("GET", "/", b"").location == "/boards"
    boards = s.handle("GET", "/boards", b"").body
    assert 'href="/boards/1"' in boards and "Mobile app" in boards
    body = s.handle("GET", "/boards/1", b"").body
    assert body.count('class="col"') == 3 and 'class="cols"' in body
    assert "Task number 08" in body and "Task number 09" not in body  # 8 shown of 13
    assert "Show all 13 cards in To do" in body and 'href="/columns/2"' in body
    assert "Forgotten spike" not in body and "Archived cards (1)" in body
    assert 'href="/columns/3/new"' in body


def test_column_page_paginates_and_keeps_filters():
    s = server()
    first = s.handle("GET", "/columns/2", b"").body
    assert "13 cards in To do" in first and "Page 1 of 2" in first and "Task number 10" in first
    second = s.handle("GET", "/columns/2?page=2", b"").body
    assert "Task number 11" in second and "Task number 13" in second and "Task number 10" not in second
    filtered = s.handle("GET", "/columns/2?priority=high", b"").body
    assert "4 cards in To do matching the filters" in filtered and "Task number 01" not in filtered


def test_filter_bar_by_label_assignee_priority_and_text():
    s = server()
    by_label = s.handle("GET", "/boards/1?label=bug", b"").body
    assert "Task number 03" in by_label and "Ship the release" in by_label and "Task number 01" not in by_label
    nobody = s.handle("GET", "/boards/1?assignee=none", b"").body
    assert "Task number 02" in nobody and "Task number 01" not in nobody and "Ship the release" not in nobody
    ada = s.handle("GET", "/boards/1?assignee=1&priority=high", b"").body
    assert "Task number 03" in ada and "Task number 09" in ada and "Task number 06" not in ada
    text = s.handle("GET", "/boards/1?q=release", b"").body
    assert "Ship the release" in text and "Task number" not in text.split('class="cols"')[1]


def test_move_through_the_edit_form_goes_to_the_bottom_of_the_new_column():
    s = server()
    before = {c["id"]: dict(c) for c in s.db.execute("SELECT * FROM cards")}
    r = post(s, "/cards/5", **card_form(s, 5, column_id=3))
    assert r.status == 303 and r.location == "/cards/5?done=moved"
    assert "Card saved and moved." in s.handle("GET", r.location, b"").body
    assert card(s, 5)["column_id"] == 3 and card(s, 5)["position"] == 3
    after = {c["id"]: dict(c) for c in s.db.execute("SELECT * FROM cards")}
    assert [i for i in after if after[i] != before[i]] == [5]
    assert s.journal[-2]["method"] == "POST" and s.journal[-2]["path"] == "/cards/5"
    assert "column_id" in s.journal[-2]["fields"]


def test_saving_an_unchanged_form_changes_nothing_and_edits_write_fields():
    s = server()
    start = webapp.digest(s.db)
    assert post(s, "/cards/14", **card_form(s, 14)).status == 303
    assert webapp.digest(s.db) == start
    post(s, "/cards/14", **card_form(s, 14, assignee_id="", priority="low", due="2026-04-01", description="New\r\nnotes"))
    assert card(s, 14)["assignee_id"] is None
    assert (card(s, 14)["priority"], card(s, 14)["due"], card(s, 14)["description"]) == ("low", "2026-04-01", "New\nnotes")
    assert card(s, 14)["position"] == 1


@pytest.mark.parametrize("change, message", [
    ({"title": ""}, "Title is required."),
    ({"due": "2026-02-30"}, "Due date must be a real date"),
    ({"due": "next week"}, "Due date must be a real date"),
    ({"priority": "critical"}, "Priority must be one of"),
    ({"column_id": 4}, "Move to must be a column of this board."),
])
def test_invalid_edits_are_refused_with_422(change, message):
    s = server()
    start = webapp.digest(s.db)
    r = post(s, "/cards/1", **card_form(s, 1, **change))
    assert r.status == 422 and message in r.body and 'role="alert"' in r.body
    assert webapp.digest(s.db) == start


def test_archive_hides_a_card_and_restore_brings_it_back():
    s = server()
    assert post(s, "/cards/14/archive").location == "/cards/14?done=archived"
    assert card(s, 14)["archived"] == 1
    assert "Ship the release" not in s.handle("GET", "/boards/1", b"").body
    archived = s.handle("GET", "/boards/1/archived", b"").body
    assert "2 archived cards" in archived and "Ship the release" in archived and "Forgotten spike" in archived
    page = s.handle("GET", "/cards/14", b"").body
    assert "This card is archived" in page and "Restore card" in page
    post(s, "/cards/14/restore")
    assert card(s, 14)["archived"] == 0 and "Ship the release" in s.handle("GET", "/boards/1", b"").body


def test_labels_add_remove_and_refuse_duplicates():
    s = server()
    page = s.handle("GET", "/cards/14", b"").body
    assert 'aria-label="Remove label bug"' in page and '<option value="2">q3</option>' in page
    assert post(s, "/cards/14/labels", label_id=2).location == "/cards/14?done=label-added"
    dup = post(s, "/cards/14/labels", label_id=2)
    assert dup.status == 422 and "already has the label q3" in dup.body
    assert post(s, "/cards/14/labels/1/remove").status == 303
    assert [tuple(r) for r in s.db.execute("SELECT card_id, label_id FROM card_labels ORDER BY id")] == [(3, 1), (14, 2)]


def test_new_card_form_validates_and_creates_at_the_bottom():
    s = server()
    form = s.handle("GET", "/columns/3/new", b"").body
    assert 'for="f-title"' in form and 'name="due"' in form and "New card in Done (Website relaunch)" in form
    missing = post(s, "/columns/3/new", title="", due="", priority="medium", assignee_id="", label_id="")
    assert missing.status == 422 and "Title is required." in missing.body
    bad = post(s, "/columns/3/new", title="Write docs", due="31/12/2026", priority="medium", assignee_id="", label_id="")
    assert bad.status == 422 and "Due date must be a real date" in bad.body and 'value="Write docs"' in bad.body
    assert s.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0] == 15
    ok = post(s, "/columns/3/new", title="Write docs", due="2026-05-01", priority="high", assignee_id="2", label_id="2")
    assert ok.location == "/boards/1?done=created"
    new = card(s, 16)
    assert (new["column_id"], new["position"], new["assignee_id"], new["priority"]) == (3, 3, 2, "high")
    assert s.db.execute("SELECT label_id FROM card_labels WHERE card_id = 16").fetchone()[0] == 2
    assert "Card created." in s.handle("GET", ok.location, b"").body


def test_unknown_things_are_404():
    s = server()
    assert s.handle("GET", "/cards/999", b"").status == 404
    assert s.handle("GET", "/boards/9", b"").status == 404
    assert post(s, "/cards/999/archive").status == 404


# -- the family ----------------------------------------------------------------------------------------

def draft(level: int, seed: int = 1):
    return kanban_bulk.build(random.Random(f"kanban-test/{seed}/{level}"), level)


def test_builds_are_deterministic_and_grow_with_the_level():
    assert draft(3).rows == draft(3).rows and draft(3).instruction == draft(3).instruction
    assert draft(3, seed=2).rows != draft(3).rows
    sizes = [(len(draft(lv).rows["cards"]), len(draft(lv).expect), len(draft(lv).params["rules"])) for lv in range(6)]
    assert sizes[0][1] == 1 and sizes[5][1] == 12 and sizes[5][2] == 2
    assert all(a[0] < b[0] and a[1] < b[1] for a, b in zip(sizes, sizes[1:]))
    assert draft(5).parameters["longest_column"] > KANBAN.COL_LIMIT


@pytest.mark.parametrize("level", range(6))
def test_instruction_names_every_verified_value(level):
    for seed in range(3):
        d = draft(level, seed)
        rows = d.rows
        names = {("cards", "column_id"): {c["id"]: c["name"] for c in rows["columns"]},
                 ("cards", "assignee_id"): {m["id"]: m["name"] for m in rows["members"]}}
        labels = {l["id"]: l["name"] for l in rows["labels"]}
        assert "http://127.0.0.1:8080/" in d.instruction
        for rule in d.params["rules"]:
            assert f'"{rule["board"]}" board' in d.instruction
        for exp in d.expect:
            if "values" in exp:
                for col, value in exp["values"].items():
                    shown = names.get((exp["table"], col), {}).get(value, value)
                    if col != "archived":
                        assert str(shown) in d.instruction, (level, seed, col, shown)
                    else:
                        assert "archive it" in d.instruction
            else:
                body = exp.get("insert") or exp.get("deleted")
                assert f'"{labels[body["label_id"]]}"' in d.instruction


def run_rules(d, *, extra_card: int | None = None) -> float:
    """Apply the draft's rules through the app's forms (the oracle's steps) and score with the verifier;
    ``extra_card`` also gets the first rule's change (a decoy touched)."""
    sql = webapp.seed_sql(KANBAN.SCHEMA, d.rows)
    s = webapp.Server(KANBAN.APP(), sql, mirror=None)
    by_title = {c["title"]: c["id"] for c in d.rows["cards"]}
    work = [(rule, by_title[t]) for rule in d.params["rules"] for t in rule["cards"]]
    if extra_card is not None:
        work.append((d.params["rules"][0], extra_card))
    for rule, cid in work:
        action, value = rule["action"], rule["value"]
        board = s.db.execute("SELECT id FROM boards WHERE name = ?", [rule["board"]]).fetchone()[0]
        title = card(s, cid)["title"]
        found = s.handle("GET", f"/boards/{board}?" + urllib.parse.urlencode({"q": title}), b"").body
        assert re.search(rf'<a href="/cards/{cid}">{re.escape(title)}</a>', found) or extra_card == cid
        if action in ("archive",):
            r = post(s, f"/cards/{cid}/archive")
        elif action in ("add_label", "remove_label"):
            lid = s.db.execute("SELECT id FROM labels WHERE name = ?", [value]).fetchone()[0]
            r = post(s, f"/cards/{cid}/labels", label_id=lid) if action == "add_label" else \
                post(s, f"/cards/{cid}/labels/{lid}/remove")
        else:
            c = s.db.execute("SELECT cards.*, columns.board_id FROM cards JOIN columns ON columns.id = cards.column_id "
                             "WHERE cards.id = ?", [cid]).fetchone()
            change = {"priority": value} if action == "priority" else \
                {"assignee_id": s.db.execute("SELECT id FROM members WHERE name = ?", [value]).fetchone()[0]} \
                if action == "assign" else \
                {"column_id": s.db.execute("SELECT id FROM columns WHERE board_id = ? AND name = ?",
                                           [c["board_id"], value]).fetchone()[0]}
            r = post(s, f"/cards/{cid}", **card_form(s, cid, **change))
        assert r.status in (303, 422)
    return verify.score({"expect": d.expect, "free_tables": d.free_tables}, sql, s.state())[0]


@pytest.mark.parametrize("level", [0, 2, 5])
def test_the_rule_applied_through_the_app_scores_1_and_nothing_scores_0(level):
    d = draft(level, seed=4)
    assert run_rules(d) == 1.0
    sql = webapp.seed_sql(KANBAN.SCHEMA, d.rows)
    assert verify.score({"expect": d.expect, "free_tables": []}, sql, server(d.rows).state())[0] == 0.0


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_touching_a_card_the_rule_does_not_match_scores_0(seed):
    d = draft(3, seed=seed)
    rule = d.params["rules"][0]
    board = next(b["id"] for b in d.rows["boards"] if b["name"] == rule["board"])
    cols = {c["id"]: c for c in d.rows["columns"]}
    labels = {l["name"]: l["id"] for l in d.rows["labels"]}
    members = {m["name"]: m["id"] for m in d.rows["members"]}
    has = {(cl["card_id"], cl["label_id"]) for cl in d.rows["card_labels"]}

    def changes(c: dict) -> bool:  # the rule's change would alter this card
        v = rule["value"]
        return {"move": cols[c["column_id"]]["name"] != v, "assign": c["assignee_id"] != members.get(v),
                "archive": True, "priority": c["priority"] != v,
                "add_label": (c["id"], labels.get(v)) not in has, "remove_label": (c["id"], labels.get(v)) in has}[rule["action"]]

    others = [c for c in d.rows["cards"] if c["title"] not in rule["cards"] and not c["archived"]
              and cols[c["column_id"]]["board_id"] == board and changes(c)]
    assert others and run_rules(d, extra_card=others[0]["id"]) == 0.0
