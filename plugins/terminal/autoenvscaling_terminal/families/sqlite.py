"""SQLite from the command line.

The database is built at image build time from a generated SQL script (the script is removed
afterwards). Ground truth comes from running the reference SQL on the same script with Python's
sqlite3 at generation time; the reference solution runs that SQL with the sqlite3 CLI.

Kinds:
- ``report``: answer questions as CSV files (group-bys, joins over three or four tables, anti-joins,
  HAVING, per-month figures, window functions); more and harder questions as the level rises.
- ``modify``: change the database: archive old orders, add an index, a view, a derived column,
  delete unused rows.
"""

from __future__ import annotations

import random
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording, grow

SCHEMA = """CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, joined TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price REAL NOT NULL);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), order_date TEXT NOT NULL, status TEXT NOT NULL);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL REFERENCES products(id), quantity INTEGER NOT NULL, unit_price REAL NOT NULL);
"""
TABLES = ["customers", "products", "orders", "order_items"]


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def seed_sql(rng: random.Random, level: int) -> tuple[str, dict]:
    n_customers = grow(level, 12, 1.8)
    n_orders = grow(level, 30, 2.0)
    cities = rng.sample(vocab.CITIES, 5)
    lines = ["BEGIN;", SCHEMA.strip()]
    customers = []
    for i in range(1, n_customers + 1):
        name = f"{rng.choice(vocab.FIRST_NAMES).title()} {rng.choice(vocab.SURNAMES).title()}"
        joined = f"{rng.randint(2019, 2023)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        customers.append((i, name, rng.choice(cities), joined))
        lines.append(f"INSERT INTO customers VALUES ({i}, {_q(name)}, {_q(cities[i % 5] if i <= 5 else customers[-1][2])}, {_q(joined)});")
    products = rng.sample(vocab.PRODUCTS, 6 + 2 * min(level, 5))
    cats = rng.sample(vocab.CATEGORIES, 4)
    for i, p in enumerate(products, 1):
        lines.append(f"INSERT INTO products VALUES ({i}, {_q(p)}, {_q(cats[i % 4])}, {rng.randint(100, 25000) / 100:.2f});")
    years = [2022, 2023, 2024]
    buyers = rng.sample(range(1, n_customers + 1), max(2, n_customers - 2))  # some customers never order
    for o in range(1, n_orders + 1):
        date = f"{rng.choice(years)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        status = rng.choices(["delivered", "shipped", "cancelled", "pending"], weights=[6, 2, 2, 1])[0]
        lines.append(f"INSERT INTO orders VALUES ({o}, {rng.choice(buyers)}, {_q(date)}, {_q(status)});")
        for pid in rng.sample(range(1, len(products) - 1), rng.randint(1, 3)):  # the last two are never sold
            lines.append(f"INSERT INTO order_items VALUES ({o}, {pid}, {rng.randint(1, 6)}, {rng.randint(100, 25000) / 100:.2f});")
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n", {"cities": cities, "years": years, "customers": n_customers, "orders": n_orders}


def _db(sql: str) -> sqlite3.Connection:
    con = sqlite3.connect(":memory:")
    con.executescript(sql)
    return con


def _db_files(db: str) -> list[str]:
    """The database and the journal files SQLite may leave beside it (a WAL database keeps its
    latest changes there): what the verifier reads of the agent's work."""
    return [db, f"{db}-wal", f"{db}-journal"]


def _counts(con: sqlite3.Connection) -> dict[str, int]:
    return {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


@dataclass(frozen=True)
class Question:
    weight: int  # 1 easy, 2 medium, 3 hard
    text: str  # names the answer's columns: "Columns `a,b`"
    sql: str

    @property
    def columns(self) -> list[str]:
        """The answer's header, as the question names it."""
        found = re.search(r"Columns `([^`]+)`", self.text)
        assert found is not None, self.text
        return found.group(1).split(",")


def _questions(rng: random.Random, info: dict) -> list[Question]:
    city, year, k, n = rng.choice(info["cities"]), rng.choice(info["years"]), rng.randint(2, 3), rng.randint(3, 5)
    revenue = "SUM(oi.quantity * oi.unit_price)"
    return [
        Question(1, "How many orders are there in each status? Columns `status,orders`, sorted by status.",
                 "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status ORDER BY status;"),
        Question(1, f"Which customers live in {city}? Columns `id,name`, sorted by id.",
                 f"SELECT id, name FROM customers WHERE city = {_q(city)} ORDER BY id;"),
        Question(2, f"Who are the top {n} customers by amount spent on orders that were not cancelled (amount = quantity × unit_price summed over their order items)? Columns `name,total` with total rounded to 2 decimals, highest first, ties by name.",
                 f"SELECT c.name, ROUND({revenue}, 2) AS total FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id WHERE o.status != 'cancelled' GROUP BY c.id ORDER BY total DESC, c.name LIMIT {n};"),
        Question(2, "Which customers have never placed an order? Columns `id,name`, sorted by id.",
                 "SELECT id, name FROM customers WHERE id NOT IN (SELECT customer_id FROM orders) ORDER BY id;"),
        Question(3, f"What was the revenue per product category in {year}, counting only delivered orders? Columns `category,revenue` (rounded to 2 decimals), highest revenue first.",
                 f"SELECT p.category, ROUND({revenue}, 2) AS revenue FROM order_items oi JOIN orders o ON o.id = oi.order_id JOIN products p ON p.id = oi.product_id WHERE o.status = 'delivered' AND substr(o.order_date, 1, 4) = '{year}' GROUP BY p.category ORDER BY revenue DESC, p.category;"),
        Question(3, f"Which customers placed at least {k} orders (any status)? Columns `name,orders`, most orders first, ties by name.",
                 f"SELECT c.name, COUNT(o.id) AS orders FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id HAVING COUNT(o.id) >= {k} ORDER BY orders DESC, c.name;"),
        Question(3, f"How many orders were placed in each month of {year}? Columns `month,orders` where month is `YYYY-MM`, in calendar order; months without orders are omitted.",
                 f"SELECT substr(order_date, 1, 7) AS month, COUNT(*) AS orders FROM orders WHERE substr(order_date, 1, 4) = '{year}' GROUP BY month ORDER BY month;"),
        Question(4, "For each category, which product sold the most units (sum of quantity over all order items, any status)? Columns `category,product,units`, sorted by category; on a tie pick the product name that sorts first.",
                 "SELECT category, product, units FROM (SELECT p.category, p.name AS product, SUM(oi.quantity) AS units, ROW_NUMBER() OVER (PARTITION BY p.category ORDER BY SUM(oi.quantity) DESC, p.name) AS rk FROM order_items oi JOIN products p ON p.id = oi.product_id GROUP BY p.id) WHERE rk = 1 ORDER BY category;"),
    ]


def build_report(rng: random.Random, level: int) -> Draft:
    sql, info = seed_sql(rng, level)
    con = _db(sql)
    pool = _questions(rng, info)
    count = min(len(pool), 1 + level)
    eligible = [q for q in pool if q.weight <= 1 + level]
    picked = sorted(rng.sample(eligible, min(count, len(eligible))), key=lambda q: (q.weight, q.text))
    db = rng.choice(["shop.db", "data/store.sqlite", "db/sales.db"])
    answers = rng.choice(["answers", "results", "out"])
    qs: list[dict[str, Any]] = [{"file": f"{answers}/q{i}.csv", "columns": q.columns,
                                 "rows": [list(r) for r in con.execute(q.sql).fetchall()]}
                                for i, q in enumerate(picked, 1)]
    truth = {"db": db, "questions": qs, "counts": _counts(con)}
    w = Wording(rng)
    intro = w.intro([f"The shop's SQLite database is `/app/{db}` (tables `customers`, `products`, `orders`, `order_items`).",
                     f"Our sales data lives in the SQLite file `/app/{db}`; look at its schema with `.schema`."])
    ask = w.pick(["Answer the questions below; write each answer as a CSV file with a header row.",
                  "Please run some queries for me and save each result as CSV (first line = column names).",
                  "I need a few numbers from it. Put every answer in its own CSV file, header included."])
    details = [f"`/app/{q['file']}`: {p.text}" for q, p in zip(qs, picked)]
    notes = [w.pick(["Do not modify the database.", "The database must stay unchanged.", "Read-only: don't change any table."])]
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes, shuffle_details=False)
    sol = [f"mkdir -p /app/{answers}"] + [f"sqlite3 -header -csv /app/{db} \"{p.sql}\" > /app/{q['file']}" for q, p in zip(qs, picked)]
    checks = ["test_initial_database_tables"] + [f"test_answer_{i}" for i in range(1, len(qs) + 1)]
    return Draft(kind="report", outputs=[*_db_files(db), *(q["file"] for q in qs)], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"questions": len(qs), "max_weight": max(p.weight for p in picked), "orders": info["orders"]},
                 setup=f"mkdir -p \"$(dirname /app/{db})\"\nsqlite3 /app/{db} < /tmp/setup/seed.sql",
                 setup_files={"seed.sql": sql.encode()}, tags=["sqlite", "sql"])


def build_modify(rng: random.Random, level: int) -> Draft:
    sql, info = seed_sql(rng, level)
    con = _db(sql)
    db = rng.choice(["shop.db", "data/store.sqlite", "db/sales.db"])
    delivered = sorted({r[0] for r in con.execute("SELECT order_date FROM orders WHERE status = 'delivered'")})
    # a cutoff with delivered orders on both sides, so archiving is neither nothing nor everything
    cutoff = delivered[rng.randint(1, len(delivered) - 1)] if len(delivered) > 1 else "2030-01-01"
    lo, hi = sorted(rng.sample([150, 300, 500, 800, 1200], 2))
    amount = ("COALESCE((SELECT SUM(oi.quantity * oi.unit_price) FROM orders o JOIN order_items oi ON oi.order_id = o.id "
              "WHERE o.customer_id = customers.id AND o.status != 'cancelled'), 0)")  # a customer's non-cancelled amount
    # (the lowest level that asks for it, the step as the instruction says it, its SQL, its check)
    every_step = [
        (0, f"Mark every `delivered` order placed before {cutoff} as `archived` (column `status`).",
         f"UPDATE orders SET status = 'archived' WHERE status = 'delivered' AND order_date < '{cutoff}';", "test_orders_archived"),
        (1, "Create an index named `idx_orders_customer` on `orders(customer_id)`.",
         "CREATE INDEX idx_orders_customer ON orders(customer_id);", "test_index_created"),
        (2, "Create a view `customer_totals` with columns `customer_id`, `name`, `orders` (number of non-cancelled orders) and `total` (their amount: quantity × unit_price, rounded to 2 decimals), one row per customer with at least one non-cancelled order.",
         "CREATE VIEW customer_totals AS SELECT c.id AS customer_id, c.name, COUNT(DISTINCT o.id) AS orders, ROUND(SUM(oi.quantity * oi.unit_price), 2) AS total FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id WHERE o.status != 'cancelled' GROUP BY c.id;",
         "test_view_created"),
        (3, f"Add a TEXT column `tier` to `customers`: `gold` if the customer's non-cancelled amount is above {hi}, `silver` if above {lo}, otherwise `bronze` (customers without orders are `bronze`).",
         f"ALTER TABLE customers ADD COLUMN tier TEXT;\nUPDATE customers SET tier = CASE WHEN {amount} > {hi} THEN 'gold' WHEN {amount} > {lo} THEN 'silver' ELSE 'bronze' END;",
         "test_tier_column"),
        (4, "Delete the products that appear in no order item.",
         "DELETE FROM products WHERE id NOT IN (SELECT product_id FROM order_items);", "test_unused_products_deleted"),
    ]
    steps = [(text, statement) for min_level, text, statement, _ in every_step if level >= min_level]
    checks = ["test_initial_database_tables"] + [check for min_level, _, _, check in every_step if level >= min_level]
    counts_before = _counts(con)
    for _, statement in steps:
        con.executescript(statement)
    truth: dict = {"db": db, "status": {str(k): v for k, v in con.execute("SELECT id, status FROM orders ORDER BY id")},
                   "counts": {t: c for t, c in counts_before.items() if t in ("orders", "order_items")}}
    if level >= 2:
        truth["view"] = [list(r) for r in con.execute("SELECT customer_id, name, orders, total FROM customer_totals ORDER BY customer_id")]
    if level >= 3:
        truth["tiers"] = {str(k): v for k, v in con.execute("SELECT id, tier FROM customers ORDER BY id")}
    if level >= 4:
        truth["products"] = [r[0] for r in con.execute("SELECT id FROM products ORDER BY id")]
    w = Wording(rng)
    intro = w.intro([f"The SQLite database `/app/{db}` needs some maintenance.",
                     f"A few changes have to be made to our SQLite database at `/app/{db}`."])
    ask = w.pick(["Apply the following changes directly to the database file.", "Make these changes in place (edit the database itself):",
                  "Please carry out these steps on the database."])
    details = [s for s, _ in steps]
    notes = [w.pick(["Don't delete or alter any other data.", "Everything not mentioned must stay as it is."])]
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes, shuffle_details=False)
    sol = [f"sqlite3 /app/{db} <<'SQL'", *[s for _, s in steps], "SQL"]
    return Draft(kind="modify", outputs=_db_files(db), instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"steps": len(steps), "orders": info["orders"], "customers": info["customers"]},
                 setup=f"mkdir -p \"$(dirname /app/{db})\"\nsqlite3 /app/{db} < /tmp/setup/seed.sql",
                 setup_files={"seed.sql": sql.encode()}, tags=["sqlite", "sql", "ddl"])


KINDS = [Kind("report", build_report), Kind("modify", build_modify)]
