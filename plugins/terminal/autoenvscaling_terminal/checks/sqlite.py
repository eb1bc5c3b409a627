# Checks of the sqlite family. They read the database with Python's sqlite3 module.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
import sqlite3


def db():
    return sqlite3.connect(f"file:{need(APP / TRUTH['db'])}?mode=ro", uri=True)


def test_initial_database_tables():
    """The database exists and the tables the task must not change still hold their rows."""
    con = db()
    for table, count in TRUTH["counts"].items():
        assert con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == count, f"table {table} changed"


def same_cell(got, want):
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        try:
            return close(got, want)
        except ValueError:
            return False
    return got == str(want)


def check_answer(i):
    q = TRUTH["questions"][i - 1]
    rows = [[c.strip() for c in r] for r in csv_rows(APP / q["file"]) if r]
    assert rows, f"{q['file']} is empty"
    assert [c.lower() for c in rows[0]] == q["columns"], f"header {rows[0]} != {q['columns']}"
    body = rows[1:]
    assert len(body) == len(q["rows"]), f"{len(body)} rows, expected {len(q['rows'])}"
    for got, want in zip(body, q["rows"]):
        assert len(got) == len(want) and all(same_cell(g, w) for g, w in zip(got, want)), f"row {got} != {want}"


def test_answer_1():
    check_answer(1)


def test_answer_2():
    check_answer(2)


def test_answer_3():
    check_answer(3)


def test_answer_4():
    check_answer(4)


def test_answer_5():
    check_answer(5)


def test_answer_6():
    check_answer(6)


def test_answer_7():
    check_answer(7)


def test_orders_archived():
    got = {str(k): v for k, v in db().execute("SELECT id, status FROM orders").fetchall()}
    assert "archived" in got.values(), "no order is archived"
    assert got == TRUTH["status"]


def test_index_created():
    con = db()
    row = con.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = 'idx_orders_customer'").fetchone()
    assert row and row[0] == "orders", "index idx_orders_customer on orders is missing"
    assert [r[2] for r in con.execute("PRAGMA index_info(idx_orders_customer)")] == ["customer_id"]


def test_view_created():
    con = db()
    assert con.execute("SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = 'customer_totals'").fetchone(), "view customer_totals is missing"
    rows = [list(r) for r in con.execute("SELECT customer_id, name, orders, total FROM customer_totals ORDER BY customer_id")]
    assert len(rows) == len(TRUTH["view"])
    for got, want in zip(rows, TRUTH["view"]):
        assert got[:3] == want[:3] and close(got[3], want[3]), f"{got} != {want}"


def test_tier_column():
    con = db()
    got = {str(k): v for k, v in con.execute("SELECT id, tier FROM customers").fetchall()}
    assert got == TRUTH["tiers"]


def test_unused_products_deleted():
    assert [r[0] for r in db().execute("SELECT id FROM products ORDER BY id")] == TRUTH["products"]
