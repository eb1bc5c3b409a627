"""Computer-use verifier: reads the web app's state through its state interface and scores it
against the hidden spec (tests/spec.json). Standard library only; runs inside the task's image.

Every expectation in ``spec["expect"]`` is one requirement; the reward is the fraction met. It is
0 outright when the state cannot be read (the app is gone or does not answer with the task's key) or
when a row changed that no expectation covers (collateral damage: the agent edited, added or
deleted something nobody asked for). Expectation kinds:

- ``{"table", "key": {"id": 3}, "values": {...}, "also": [...]}``: that row exists and holds these
  values (only the listed columns, and those in ``also``, such as a moved card's position, may
  differ from the seed);
- ``{"table", "insert": {...}, "count": n}``: exactly n new rows hold these values;
- ``{"table", "deleted": {"id": 3}}``: that row is gone;
- ``{"query": SQL, "rows": [[...]]}``: SQL over the current data returns these rows;
- ``{"journal": {"method", "path", "status"}, "before": {"method", "path"}}``: the UI served that
  request (with that status when given, else any below 400), before the first request matching
  ``before`` when given.

An expectation marked ``"required": true`` is a step the instruction insists on ("place the order
from the review page, not through the API"): when it is unmet the reward is 0, whatever else is
right, so skipping the step by calling the app's endpoints directly earns nothing.

Tables in ``spec["free_tables"]`` change as side effects (a cart emptied at checkout) and are not
checked for collateral. Values compare case- and whitespace-insensitively, numbers within 0.005.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import sys
from typing import TYPE_CHECKING

TESTS = os.path.dirname(os.path.abspath(__file__))
if TYPE_CHECKING or __package__:  # imported on the host, as part of the plugin: the core's copy of the library
    from autoenvscaling.api import aes_verifier
else:  # the task's verifier: tests/aes_verifier.py beside it, first on sys.path (-I leaves TESTS off)
    sys.path.insert(0, TESTS)
    import aes_verifier
SOCKET = "/run/aes-app/state.sock"
LOGS = "/logs/verifier"


def request(path: str, payload: dict, timeout: float = 30) -> dict:
    """Send ``payload`` as one JSON line to the Unix socket ``path``; its one-line JSON answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def norm(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return round(float(value), 2)
    text = re.sub(r"\s+", " ", str(value if value is not None else "")).strip().casefold()
    try:
        return round(float(text.replace(",", "")), 2) if re.fullmatch(r"-?[\d,]*\.?\d+", text) else text
    except ValueError:
        return text


def same(a: object, b: object) -> bool:
    x, y = norm(a), norm(b)
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= 0.005
    return x == y


def matches(row: dict, values: dict) -> bool:
    return all(k in row and same(row[k], v) for k, v in values.items())


def database(seed_sql: str, tables: dict[str, list[dict]]) -> sqlite3.Connection:
    """The seed's schema holding the current rows, for ``query`` expectations."""
    db = sqlite3.connect(":memory:")
    db.executescript(seed_sql)
    db.execute("PRAGMA foreign_keys = OFF")
    for name, rows in tables.items():
        db.execute(f'DELETE FROM "{name}"')
        for row in rows:
            cols = ", ".join(f'"{c}"' for c in row)
            db.execute(f'INSERT INTO "{name}" ({cols}) VALUES ({", ".join("?" * len(row))})', list(row.values()))
    return db


def db_tables(db: sqlite3.Connection) -> dict[str, list[dict]]:
    """Every table's rows (by rowid), the tables in the order they were created."""
    out = {}
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"):
        cur = db.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
        cols = [c[0] for c in cur.description]
        out[name] = [dict(zip(cols, r)) for r in cur.fetchall()]
    return out


def seed_tables(seed_sql: str) -> dict[str, list[dict]]:
    db = sqlite3.connect(":memory:")
    db.executescript(seed_sql)
    return db_tables(db)


def journal_index(journal: list[dict], pattern: dict) -> int:
    for i, entry in enumerate(journal):
        status = entry.get("status", 500)
        served = status == pattern["status"] if "status" in pattern else status < 400
        if served and entry.get("method") == pattern.get("method", entry.get("method")) \
                and re.fullmatch(pattern["path"], entry.get("path", "")):
            return i
    return -1


def score(spec: dict, seed_sql: str, state: dict) -> tuple[float, list[dict], str]:
    """(reward, per-requirement results, fatal reason or "")."""
    before, after = seed_tables(seed_sql), state["tables"]
    if set(before) != set(after):
        return 0.0, [], f"the app's tables changed: {sorted(set(before) ^ set(after))}"
    free = set(spec.get("free_tables", []))
    results: list[dict] = []
    covered_rows: set[tuple[str, object]] = set()
    covered_cols: dict[tuple[str, str], set[str]] = {}
    for exp in spec["expect"]:
        table = exp.get("table")
        ok, detail = False, ""
        if "key" in exp:
            rows = [r for r in after[table] if matches(r, exp["key"])]
            ok = len(rows) == 1 and matches(rows[0], exp["values"])
            detail = json.dumps({k: rows[0].get(k) for k in exp["values"]}) if rows else "row not found"
            key = (table, json.dumps(exp["key"], sort_keys=True))
            covered_cols.setdefault(key, set()).update(exp["values"], exp.get("also", []))
        elif "insert" in exp:
            seeded = {r["id"] for r in before[table]}
            added = [r for r in after[table] if r["id"] not in seeded and matches(r, exp["insert"])]
            ok = len(added) == exp.get("count", 1)
            covered_rows.update((table, r["id"]) for r in added)
            detail = f"{len(added)} matching new row(s)"
        elif "deleted" in exp:
            ok = not any(matches(r, exp["deleted"]) for r in after[table])
            gone = [r for r in before[table] if matches(r, exp["deleted"])]
            covered_rows.update((table, r["id"]) for r in gone)
            detail = "deleted" if ok else "still there"
        elif "query" in exp:
            got = [list(r) for r in database(seed_sql, after).execute(exp["query"]).fetchall()]
            ok = len(got) == len(exp["rows"]) and all(len(g) == len(w) and all(same(a, b) for a, b in zip(g, w))
                                                      for g, w in zip(got, exp["rows"]))
            detail = json.dumps(got, default=str)[:300]
        elif "journal" in exp:
            at = journal_index(state.get("journal", []), exp["journal"])
            ok = at >= 0
            if ok and "before" in exp:
                later = journal_index(state.get("journal", []), exp["before"])
                ok = later < 0 or at < later
            detail = f"request #{at}" if at >= 0 else "never requested"
        results.append({"what": exp.get("what", ""), "ok": bool(ok), "detail": detail, "required": bool(exp.get("required"))})

    # collateral: every difference from the seed must be one an expectation covers
    for table in sorted(after):
        if table in free:
            continue
        old = {r["id"]: r for r in before[table]}
        new = {r["id"]: r for r in after[table]}
        for rid in sorted(set(old) | set(new)):
            if (table, rid) in covered_rows:
                continue
            if rid not in new:
                return 0.0, results, f"{table} row {rid} was deleted, which the task did not ask for"
            if rid not in old:
                return 0.0, results, f"{table} row {rid} was added, which the task did not ask for"
            changed = {c for c in new[rid] if new[rid][c] != old[rid].get(c)}
            if not changed:
                continue
            allowed = set()
            for (t, key_json), cols in covered_cols.items():
                if t == table and matches(old[rid], json.loads(key_json)):
                    allowed |= cols
            extra = sorted(changed - allowed)
            if extra:
                return 0.0, results, f"{table} row {rid} changed in {', '.join(extra)}, which the task did not ask for"
    skipped = [r["what"] for r in results if r["required"] and not r["ok"]]
    if skipped:
        return 0.0, results, f"a step the task requires was not taken: {skipped[0]}"
    return aes_verifier.fraction(r["ok"] for r in results), results, ""


def main() -> int:
    aes_verifier.clear(LOGS, ("reward.txt", "reward.json", "details.json"))
    with open(os.path.join(TESTS, "spec.json")) as fh:
        spec = json.load(fh)
    with open(os.path.join(TESTS, "seed.sql")) as fh:
        seed_sql = fh.read()
    with open(os.path.join(TESTS, "state.key")) as fh:
        key = fh.read().strip()
    try:
        state = request(SOCKET, {"key": key, "op": "state"})
    except (OSError, ValueError) as exc:
        state = {"error": f"the app's state interface did not answer ({type(exc).__name__}: {exc})"}
    if not isinstance(state, dict) or ("error" not in state and not isinstance(state.get("tables"), dict)):
        # something else bound to the socket (another service's socket linked there): no state, no reward
        state = {"error": f"the state interface answered something other than the app's state: {str(state)[:200]}"}
    results: list[dict] = []
    if "error" in state:
        reward, fatal = 0.0, str(state["error"])
    else:
        reward, results, fatal = score(spec, seed_sql, state)
    report(reward, results, fatal)
    return 0


def report(reward: float, results: list[dict], fatal: str) -> None:
    """Write the reward and the per-requirement details, and print them."""
    aes_verifier.write_json("details.json", {"reward": reward, "fatal": fatal, "requirements": results}, LOGS)
    aes_verifier.write_reward(reward, LOGS, fmt=".4f")
    for r in results:
        print(("PASS " if r["ok"] else "FAIL ") + r["what"] + (f" ({r['detail']})" if not r["ok"] else ""))
    if fatal:
        print("FATAL " + fatal)
    print(f"reward {reward:.4f}")


if __name__ == "__main__":
    sys.exit(main())
