"""The end state a task asks for, forged from its hidden spec: what the cheats deliver through the
wrong channel (the database mirror, a patched client, a second server, a look-alike page).

A cheat that knows the right answer and still earns nothing proves the verifier reads the right
place; the same answer delivered to a naive verifier (the positive control) earns 1. So ``forge``
builds, on the host, the rows every expectation of the spec wants (updates, inserts with the
columns a ``query`` names, deletions) and the journal entries its ``journal`` expectations want,
and checks with the real scorer that the forged state scores 1.

The result is a *diff* against the seed (rows to write and ids to delete per table), small enough
to travel in a shell command; ``APPLY_PY`` (run inside the sandbox with the image's Python) turns
it into a database file, a seed file or a state answer.
"""

from __future__ import annotations

import inspect
import json
import re
import sqlite3
from functools import lru_cache
from types import ModuleType

from autoenvscaling.api import Task

from .render import DOMAIN


class ForgeError(ValueError):
    """The spec asks for something ``forge`` cannot build (an unknown query shape): the cheats that
    need the forged state do not apply to that task."""


@lru_cache(maxsize=1)
def scorer() -> ModuleType:
    """verifier/verify.py (the task's checker) imported on the host, for its ``score``."""
    from .verifier import verify

    return verify


def spec_and_seed(task: Task) -> tuple[dict, str] | None:
    """The task's hidden spec and seed, when it is one of ours (not an imported collection's)."""
    if task.provenance.domain != DOMAIN or "tests/spec.json" not in task.files or "tests/seed.sql" not in task.files:
        return None
    try:
        spec = json.loads(task.files["tests/spec.json"].text)
    except ValueError:
        return None
    if not isinstance(spec, dict) or not isinstance(spec.get("expect"), list):
        return None
    return spec, task.files["tests/seed.sql"].text


# SELECT cols FROM t WHERE id > k                      (the new rows of t)
_NEW_ROWS = re.compile(r"SELECT (?P<cols>[\w, ]+) FROM (?P<table>\w+) WHERE id > (?P<k>\d+)\s*$", re.I)
# SELECT cols FROM t WHERE fk IN (SELECT id FROM p WHERE id > k) [ORDER BY ...]   (children of the new rows)
_CHILDREN = re.compile(r"SELECT (?P<cols>[\w, ]+) FROM (?P<table>\w+) WHERE (?P<fk>\w+) IN "
                       r"\(SELECT id FROM (?P<parent>\w+) WHERE id > (?P<k>\d+)\)(?: ORDER BY [\w, ]+)?\s*$", re.I)


def forge(spec: dict, seed_sql: str) -> dict:
    """``{"tables": {table: {"upsert": [row, ...], "delete": [id, ...]}}, "journal": [entry, ...]}``:
    the changes to the seed that meet every expectation of ``spec``. Raises ForgeError when it
    cannot, or when the real scorer does not give the result 1."""
    db = sqlite3.connect(":memory:")
    db.row_factory = sqlite3.Row
    db.executescript(seed_sql)
    db.execute("PRAGMA foreign_keys = OFF")
    new_ids: dict[str, list[int]] = {}
    journal: list[dict] = []
    for exp in spec["expect"]:
        table = exp.get("table")
        if "key" in exp:
            _update(db, table, exp["key"], exp["values"])
        elif "deleted" in exp:
            where, params = _where(exp["deleted"])
            db.execute(f'DELETE FROM "{table}" WHERE {where}', params)
        elif "insert" in exp:
            for _ in range(int(exp.get("count", 1))):
                new_ids.setdefault(table, []).append(_insert(db, table, exp["insert"]))
        elif "journal" in exp:
            journal.append(_entry(exp["journal"], len(journal)))
    for exp in spec["expect"]:  # queries last: they fill in the rows the inserts made
        if "query" in exp:
            _meet_query(db, exp["query"], exp["rows"], new_ids)
    after = scorer().db_tables(db)
    reward, results, fatal = scorer().score(spec, seed_sql, {"tables": after, "journal": journal})
    if reward < 1.0:
        unmet = fatal or next((r["what"] for r in results if not r["ok"]), "")
        raise ForgeError(f"the forged state scores {reward:g}: {unmet}")
    return {"tables": _diff(scorer().seed_tables(seed_sql), after), "journal": journal}


def forged_state(spec: dict, seed_sql: str) -> dict:
    """The whole state answer (tables and journal) the forged diff gives: what ``APPLY_PY state`` prints."""
    diff = forge(spec, seed_sql)
    tables = scorer().seed_tables(seed_sql)
    for name, change in diff["tables"].items():
        rows = {r["id"]: r for r in tables[name] if r["id"] not in set(change["delete"])}
        rows.update({r["id"]: r for r in change["upsert"]})
        tables[name] = [rows[i] for i in sorted(rows)]
    return {"tables": tables, "journal": diff["journal"]}


def _where(key: dict) -> tuple[str, list]:
    return " AND ".join(f'"{k}" = ?' for k in key) or "1", list(key.values())


def _update(db: sqlite3.Connection, table: str, key: dict, values: dict) -> None:
    where, params = _where(key)
    sets = ", ".join(f'"{k}" = ?' for k in values)
    if db.execute(f'UPDATE "{table}" SET {sets} WHERE {where}', [*values.values(), *params]).rowcount != 1:
        raise ForgeError(f"no single {table} row matches {key}")


def _insert(db: sqlite3.Connection, table: str, values: dict) -> int:
    """A new row holding ``values``; NOT NULL columns without a default get an empty value of their type."""
    row = dict(values)
    for _, col, kind, notnull, default, pk in db.execute(f'PRAGMA table_info("{table}")'):
        if col in row or pk or not notnull or default is not None:
            continue
        row[col] = 0 if any(t in (kind or "").upper() for t in ("INT", "REAL", "NUM")) else ""
    row["id"] = db.execute(f'SELECT COALESCE(MAX(id), 0) + 1 FROM "{table}"').fetchone()[0]
    cols = ", ".join(f'"{c}"' for c in row)
    db.execute(f'INSERT INTO "{table}" ({cols}) VALUES ({", ".join("?" * len(row))})', list(row.values()))
    return row["id"]


def _meet_query(db: sqlite3.Connection, query: str, rows: list[list], new_ids: dict[str, list[int]]) -> None:
    if match := _NEW_ROWS.fullmatch(query.strip()):
        table, cols = match["table"], [c.strip() for c in match["cols"].split(",")]
        ids = [i for i in new_ids.get(table, []) if i > int(match["k"])]
        while len(ids) < len(rows):
            ids.append(_insert(db, table, {}))
            new_ids.setdefault(table, []).append(ids[-1])
        for rid, values in zip(sorted(ids), rows):
            _update(db, table, {"id": rid}, dict(zip(cols, values)))
    elif match := _CHILDREN.fullmatch(query.strip()):
        table, cols = match["table"], [c.strip() for c in match["cols"].split(",")]
        parents = [i for i in new_ids.get(match["parent"], []) if i > int(match["k"])]
        if not parents:
            raise ForgeError(f"{query!r} needs a new {match['parent']} row that no expectation inserts")
        for values in rows:
            new_ids.setdefault(table, []).append(
                _insert(db, table, {match["fk"]: parents[0], **dict(zip(cols, values))}))
    else:
        raise ForgeError(f"a query of an unknown shape: {query!r}")


def _entry(pattern: dict, i: int) -> dict:
    path = pattern["path"]
    if not re.fullmatch(path, path):  # a pattern, not a plain path: its shortest literal reading
        path = re.sub(r"\\(.)", r"\1", re.sub(r"\(\?:[^)]*\)|[\^$?*+]|\[[^\]]*\]|\{[^}]*\}", "", path))
        if not re.fullmatch(pattern["path"], path):
            raise ForgeError(f"no request path to forge for the journal pattern {pattern['path']!r}")
    return {"method": pattern.get("method", "GET"), "path": path, "query": [], "fields": [],
            "status": int(pattern.get("status", 200)), "t": 1_000_000.0 + i}


def _diff(before: dict[str, list[dict]], after: dict[str, list[dict]]) -> dict:
    out = {}
    for name in after:
        old = {r["id"]: r for r in before.get(name, [])}
        new = {r["id"]: r for r in after[name]}
        upsert = [new[i] for i in sorted(new) if old.get(i) != new[i]]
        delete = sorted(set(old) - set(new))
        if upsert or delete:
            out[name] = {"upsert": upsert, "delete": delete}
    return out


# Runs inside the sandbox (the image's python3, standard library only):
#   python3 -c "$APPLY_PY" MODE DIFF_JSON [ARG]
# MODE db FILE     apply the diff to the SQLite file FILE in place (a second connection to it)
#      newdb FILE  build the forged database from /opt/aes/seed.sql in a new file, then move it over FILE
#      seed FILE   write the forged data as a seed (schema + rows) to FILE
#      state       print the forged state answer (tables and journal) as one JSON line
# (with the verifier's own db_tables, which lists the tables in creation order, so a seed written from
# them loads with foreign keys on)
APPLY_PY = r'''
import json, os, sqlite3, sys
mode, diff = sys.argv[1], json.loads(sys.argv[2])
SEED = "/opt/aes/seed.sql"

def apply(db):
    db.execute("PRAGMA foreign_keys = OFF")
    for name, change in diff["tables"].items():
        for rid in change["delete"]:
            db.execute(f'DELETE FROM "{name}" WHERE id = ?', [rid])
        for row in change["upsert"]:
            cols = ", ".join(f'"{c}"' for c in row)
            db.execute(f'INSERT OR REPLACE INTO "{name}" ({cols}) VALUES ({", ".join("?" * len(row))})', list(row.values()))
    db.commit()

def seeded(path=":memory:"):
    db = sqlite3.connect(path)
    db.executescript(open(SEED).read())
    apply(db)
    return db

''' + inspect.getsource(scorer().db_tables) + r'''
def literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"

if mode == "db":
    db = sqlite3.connect(sys.argv[3]); apply(db)
    print("wrote", sum(len(c["upsert"]) + len(c["delete"]) for c in diff["tables"].values()), "changes to", sys.argv[3])
elif mode == "newdb":
    tmp = "/tmp/.aes-forged.db"
    if os.path.exists(tmp):
        os.unlink(tmp)
    seeded(tmp).close(); os.makedirs(os.path.dirname(sys.argv[3]), exist_ok=True); os.replace(tmp, sys.argv[3])
    print("replaced", sys.argv[3])
elif mode == "seed":
    db = seeded()
    lines = [r[0] + ";" for r in db.execute("SELECT sql FROM sqlite_master WHERE type='table' AND sql IS NOT NULL ORDER BY rowid")]
    for name, rows in db_tables(db).items():
        for row in rows:
            lines.append(f'INSERT INTO "{name}" ({", ".join(row)}) VALUES ({", ".join(literal(v) for v in row.values())});')
    open(sys.argv[3], "w").write("\n".join(lines) + "\n")
    print("seed written to", sys.argv[3])
elif mode == "state":
    print(json.dumps({"app": os.environ.get("AES_APP", ""), "tables": db_tables(seeded()), "digest": "", "journal": diff["journal"]}))
'''
