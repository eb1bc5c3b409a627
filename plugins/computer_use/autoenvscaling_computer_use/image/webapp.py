"""A small framework for the computer-use domain's web applications (standard library only).

It runs inside the task's image (copied to /opt/aes/webapp.py) and is imported on the host by the
generators and the verifier tests, so it depends on nothing but Python.

    python3 /opt/aes/webapp.py serve --app crm --seed /opt/aes/seed.sql --port 8080

- The application's data lives in a real SQLite database held by the server process: loaded from the
  task's ``seed.sql`` at start, mirrored to ``/var/lib/aes-app/app.db`` after every change (the file a
  real app would use; the server never reads it back, so writing to it changes nothing).
- Pages are plain HTML forms, links and tables (no JavaScript needed): what the agent drives
  through its browser.
- Every request the UI serves is journaled (method, path, field names, status) so a verifier can
  check that a required step happened.
- The **state interface** is a Unix socket (``/run/aes-app/state.sock``) answering one JSON line:
  ``{"key": K, "op": "state" | "digest" | "reset"}``. The key is read from ``/etc/aes-app/state.key``
  at start and the file removed before the server listens, so only whoever holds the task's hidden
  copy (the verifier, in /tests) can read the state or reset it; a browser cannot reach a socket.
  ``reset`` restores the seeded database in place (SQLite's backup API: milliseconds).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import hashlib
import hmac
import html
import importlib
import json
import os
import re
import socket
import sqlite3
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, TypeVar

STATE_SOCKET = "/run/aes-app/state.sock"
KEY_FILE = "/etc/aes-app/state.key"
MIRROR = "/var/lib/aes-app/app.db"
JOURNAL_LIMIT = 2000
PER_PAGE = 10


# -- data ------------------------------------------------------------------------------------------

def load_seed(sql: str) -> sqlite3.Connection:
    """An in-memory database built from ``sql`` (schema and rows)."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA foreign_keys = ON")
    db.executescript(sql)
    return db


def tables(db: sqlite3.Connection) -> dict[str, list[dict]]:
    """Every user table's rows, ordered by rowid: the state a verifier compares."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                      "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    out = {}
    for name in names:
        cur = db.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
        cols = [c[0] for c in cur.description]
        out[name] = [dict(zip(cols, row)) for row in cur.fetchall()]
    return out


def digest(db: sqlite3.Connection) -> str:
    """A digest of the data (not of the file's bytes): identical data, identical digest."""
    return hashlib.sha256(json.dumps(tables(db), sort_keys=True, default=str).encode()).hexdigest()


def seed_digest(sql: str) -> str:
    return digest(load_seed(sql))


def sql_literal(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def seed_sql(schema: str, rows: dict[str, list[dict]]) -> str:
    """``schema`` followed by one INSERT per row (columns in the row's order): a task's seed.sql."""
    out = [schema.strip(), ""]
    for table, items in rows.items():
        for row in items:
            cols = ", ".join(row)
            vals = ", ".join(sql_literal(v) for v in row.values())
            out.append(f"INSERT INTO {table} ({cols}) VALUES ({vals});")
    return "\n".join(out) + "\n"


# -- HTML ------------------------------------------------------------------------------------------

def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


STYLE = """
body{font-family:DejaVu Sans,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#2b3a55;color:#fff;padding:10px 24px;display:flex;gap:24px;align-items:center}
header a{color:#dfe6f5;text-decoration:none}header strong{font-size:18px;margin-right:16px}
main{padding:18px 24px;max-width:1100px}table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid #d5d9e0;padding:6px 10px;text-align:left;font-size:14px}th{background:#e9edf3}
form.card,.card{background:#fff;border:1px solid #d5d9e0;padding:14px;margin:10px 0;border-radius:4px}
label{display:block;margin:8px 0 2px;font-weight:bold;font-size:13px}
input,select,textarea{padding:5px;font-size:14px;min-width:260px}button{padding:6px 14px;margin-top:10px}
.error{color:#a40000;background:#fde8e8;padding:6px 10px;border:1px solid #f3b3b3;margin:6px 0}
.flash{color:#0b5d1e;background:#e3f5e7;padding:6px 10px;border:1px solid #a9dcb5;margin:6px 0}
.pager a,.pager span{margin-right:10px}.muted{color:#6b7280}.cols{display:flex;gap:14px;align-items:flex-start}
.col{background:#e9edf3;padding:8px;min-width:220px;border-radius:4px}.col .card{margin:6px 0}
"""


def page(title: str, body: str, *, app_title: str, nav: list[tuple[str, str]], flash: str = "",
         errors: list[str] | None = None) -> str:
    links = "".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in nav)
    notes = "".join(f'<div class="error" role="alert">{esc(e)}</div>' for e in errors or [])
    if flash:
        notes = f'<div class="flash" role="status">{esc(flash)}</div>' + notes
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{esc(title)} - {esc(app_title)}</title>"
            f"<style>{STYLE}</style></head><body><header><strong>{esc(app_title)}</strong>{links}</header>"
            f"<main><h1>{esc(title)}</h1>{notes}{body}</main></body></html>")


def field(name: str, label: str, value: object = "", *, kind: str = "text", required: bool = False,
          options: list[tuple[str, str]] | None = None) -> str:
    """A labelled input (``kind`` text/email/number/date/time/textarea/select)."""
    ident = f"f-{name}"
    req = " required" if required else ""
    if kind == "select":
        opts = "".join(f'<option value="{esc(v)}"{" selected" if str(v) == str(value) else ""}>{esc(t)}</option>'
                       for v, t in options or [])
        control = f'<select id="{ident}" name="{esc(name)}"{req}>{opts}</select>'
    elif kind == "textarea":
        control = f'<textarea id="{ident}" name="{esc(name)}" rows=3{req}>{esc(value)}</textarea>'
    else:
        control = f'<input id="{ident}" name="{esc(name)}" type="{kind}" value="{esc(value)}"{req}>'
    return f'<label for="{ident}">{esc(label)}</label>{control}'


def grid(head: list[str], body: str) -> str:
    """A table: a header row of the column titles ``head`` over ``body`` (its rows, HTML)."""
    return f"<table><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead><tbody>{body}</tbody></table>"


def facts(rows: list[tuple[str, object]]) -> str:
    """A table of one header cell and one value (HTML) per row."""
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def hidden(name: str, value: object) -> str:
    return f'<input type="hidden" name="{esc(name)}" value="{esc(value)}">'


def pager(base: str, page_no: int, pages: int, params: dict[str, str] | None = None) -> str:
    """Previous/next links and "Page i of n" (query parameter ``page``)."""
    def href(n: int) -> str:
        return base + "?" + urllib.parse.urlencode({**(params or {}), "page": n})
    parts = []
    if page_no > 1:
        parts.append(f'<a href="{esc(href(page_no - 1))}">Previous page</a>')
    parts.append(f"<span>Page {page_no} of {max(pages, 1)}</span>")
    if page_no < pages:
        parts.append(f'<a href="{esc(href(page_no + 1))}">Next page</a>')
    return f'<nav class="pager" aria-label="pagination">{"".join(parts)}</nav>'


# -- requests and responses ------------------------------------------------------------------------

class Request:
    """One request: ``form`` holds urlencoded fields; a body sent as ``application/json`` is parsed
    into ``json`` instead (None when absent or not JSON)."""

    def __init__(self, method: str, path: str, query: dict[str, str], form: dict[str, str], db: sqlite3.Connection,
                 match: re.Match, json_body: object = None) -> None:
        self.method, self.path, self.query, self.form, self.db, self.match = method, path, query, form, db, match
        self.json = json_body

    def arg(self, name: str, default: str = "") -> str:
        return self.form.get(name, self.query.get(name, default)).strip()

    def int_arg(self, name: str, default: int = 0) -> int:
        try:
            return int(self.arg(name, str(default)))
        except ValueError:
            return default

    def page_of(self, total: int, per_page: int = PER_PAGE) -> tuple[int, int, int]:
        """(the page asked for, the number of pages, the offset of the page's first row) of a list of
        ``total`` rows: the ``page`` argument, kept within the pages there are."""
        pages = max(1, -(-total // per_page))
        page_no = min(max(1, self.int_arg("page", 1)), pages)
        return page_no, pages, (page_no - 1) * per_page

    def paged(self, count_sql: str, rows_sql: str, params: list | tuple = ()) -> tuple[int, int, int, list]:
        """(rows in all, the page asked for, pages, that page's rows) of a list ``PER_PAGE`` rows to a page:
        ``count_sql`` counts its rows and ``rows_sql`` (without LIMIT) selects them, both with ``params``."""
        total = self.db.execute(count_sql, params).fetchone()[0]
        page_no, pages, offset = self.page_of(total)
        rows = self.db.execute(f"{rows_sql} LIMIT ? OFFSET ?", [*params, PER_PAGE, offset]).fetchall()
        return total, page_no, pages, rows


class Response:
    def __init__(self, body: str = "", status: int = 200, location: str = "", content_type: str = "text/html; charset=utf-8") -> None:
        self.body, self.status, self.location, self.content_type = body, status, location, content_type


def redirect(location: str) -> Response:
    return Response(status=303, location=location)


def not_found(what: str = "page") -> Response:
    return Response(f"<!doctype html><title>Not found</title><h1>Not found</h1><p>No such {esc(what)}.</p>", 404)


class NotFound(Exception):
    """A handler asked for a row that is not there: the server answers with the 404 page for ``what``."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


Row = TypeVar("Row")


def found(row: Row | None, what: str) -> Row:
    """``row``, the one a handler looked up; raises NotFound(``what``) when it is None."""
    if row is None:
        raise NotFound(what)
    return row


Handler = Callable[[Request], Response]
Method = TypeVar("Method", bound=Callable[..., Response])


def route(method: str, pattern: str) -> Callable[[Method], Method]:
    """Mark an ``App`` method as the handler of ``method`` requests whose path matches ``pattern``
    (a regular expression matched against the whole path)."""
    def mark(handler: Method) -> Method:
        vars(handler).setdefault("aes_routes", []).append((method, pattern))
        return handler
    return mark


get = functools.partial(route, "GET")  # @get(pattern): the handler of GET requests to pattern
post = functools.partial(route, "POST")


class App:
    """An application: ``title``, ``nav`` links, ``home`` (where "/" redirects, unless a handler
    serves it) and its handlers, the methods marked with ``get``/``post``. Handlers read and write
    ``request.db``; a handler for POST runs in one transaction, rolled back when it raises. A handler
    that raises NotFound (``found``) is answered with the 404 page."""

    title = "App"
    nav: list[tuple[str, str]] = []
    home = ""

    def routes(self) -> list[tuple[str, str, Handler]]:
        """(method, pattern, handler) of every marked method, in the order the class defines them."""
        table: list[tuple[str, str, Handler]] = []
        if self.home:
            table.append(("GET", r"/", lambda r: redirect(self.home)))
        for name, value in vars(type(self)).items():
            for method, pattern in getattr(value, "aes_routes", ()):
                table.append((method, pattern, getattr(self, name)))
        return table

    def ok(self, title: str, body: str, *, status: int = 200, flash: str = "", errors: list[str] | None = None) -> Response:
        return Response(page(title, body, app_title=self.title, nav=self.nav, flash=flash, errors=errors), status)

    def confirm(self, title: str, action: str, message: str, button: str) -> Response:
        """The page that asks before a step that cannot be undone: ``message`` (HTML) and the button
        that POSTs to ``action``."""
        return self.ok(title, f'<form class="card" method="post" action="{action}"><p>{message}</p>'
                              f'<button type="submit">{esc(button)}</button></form>')


def load_app(name: str) -> App:
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise SystemExit(f"bad app name {name!r}")
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    module = importlib.import_module(f"aes_apps.{name}")
    return module.APP()


# -- the server ------------------------------------------------------------------------------------

class Server:
    """Holds the database, the pristine copy reset restores, the journal and the lock that
    serialises requests (one agent, one browser: simple and deterministic beats concurrent)."""

    def __init__(self, app: App, seed_sql: str, *, mirror: str | None = MIRROR) -> None:
        self.app, self.mirror = app, mirror
        self.pristine = load_seed(seed_sql)
        self.db = load_seed(seed_sql)
        self.lock = threading.RLock()
        self.journal: list[dict] = []
        self.routes = [(m, re.compile(p), h) for m, p, h in app.routes()]
        self.write_mirror()

    def write_mirror(self) -> None:
        if not self.mirror:
            return
        os.makedirs(os.path.dirname(self.mirror), exist_ok=True)
        tmp = self.mirror + ".tmp"
        if os.path.exists(tmp):
            os.unlink(tmp)
        out = sqlite3.connect(tmp)
        self.db.backup(out)
        out.close()
        os.replace(tmp, self.mirror)

    def handle(self, method: str, target: str, body: bytes, content_type: str = "") -> Response:
        parsed = urllib.parse.urlsplit(target)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
        form, json_body = {}, None
        if method == "POST" and content_type.split(";")[0].strip().lower() == "application/json":
            try:
                json_body = json.loads(body or b"null")
            except ValueError:
                json_body = None
        elif method == "POST":
            form = {k: v[-1] for k, v in urllib.parse.parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
        with self.lock:
            response = self._dispatch(method, parsed.path, query, form, json_body)
            self.journal.append({"method": method, "path": parsed.path, "query": sorted(query),
                                 "fields": sorted(form), "status": response.status, "t": round(time.time(), 3)})
            del self.journal[:-JOURNAL_LIMIT]
            return response

    def _dispatch(self, method: str, path: str, query: dict[str, str], form: dict[str, str],
                  json_body: object = None) -> Response:
        allowed = False
        for m, pattern, handler in self.routes:
            match = pattern.fullmatch(path)
            if not match:
                continue
            if m != method:
                allowed = True
                continue
            request = Request(method, path, query, form, self.db, match, json_body)
            if method != "POST":
                try:
                    return handler(request)
                except NotFound as missing:
                    return not_found(missing.what)
            self.db.execute("BEGIN IMMEDIATE")
            try:
                response = handler(request)
            except Exception as exc:
                self.db.execute("ROLLBACK")
                if isinstance(exc, NotFound):
                    return not_found(exc.what)
                raise
            self.db.execute("COMMIT")
            self.write_mirror()
            return response
        return Response("method not allowed", 405) if allowed else not_found()

    def reset(self) -> float:
        """Restore the seeded data in place; returns the milliseconds it took."""
        start = time.perf_counter()
        with self.lock:
            self.pristine.backup(self.db)
            self.journal.clear()
            self.write_mirror()
        return (time.perf_counter() - start) * 1000

    def state(self) -> dict:
        with self.lock:
            return {"app": type(self.app).__module__.rsplit(".", 1)[-1], "tables": tables(self.db),
                    "digest": digest(self.db), "journal": list(self.journal)}


def http_handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # The headers and the body leave in two writes. With Nagle's algorithm on, the body of a
        # kept-alive connection's answer waits for the browser's delayed ACK of the headers: 40 ms
        # on every page after the first, most of a page load here.
        disable_nagle_algorithm = True

        def log_message(self, *args: object) -> None:  # the journal keeps what matters
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(length, 1 << 20)) if length else b""
            try:
                response = server.handle(method, self.path, body, self.headers.get("Content-Type", ""))
            except Exception as exc:  # a bug in an app page: a 500 page, the server stays up
                response = Response(f"<!doctype html><h1>Server error</h1><pre>{esc(type(exc).__name__)}: {esc(exc)}</pre>", 500)
            data = response.body.encode()
            try:
                self.send_response(response.status)
                if response.location:
                    self.send_header("Location", response.location)
                self.send_header("Content-Type", response.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)
            except ConnectionError:  # the browser went away mid-answer (a page closed): nothing to tell
                self.close_connection = True

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return H


class QuietServer(ThreadingHTTPServer):
    """Connections a browser drops (a closed page) are not errors worth a traceback in the log."""

    def handle_error(self, request, client_address) -> None:  # noqa: ANN001
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve_state(server: Server, key: str, path: str = STATE_SOCKET) -> None:
    """Answer the state interface on a Unix socket, one JSON request per connection."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(8)

    def answer(conn: socket.socket) -> None:
        with conn:
            data = b""
            while not data.endswith(b"\n") and len(data) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            try:
                request = json.loads(data or b"{}")
            except ValueError:
                request = {}
            reply: dict
            if not hmac.compare_digest(str(request.get("key", "")).encode(), key.encode()):
                reply = {"error": "refused: the state interface is for the verifier"}
            elif request.get("op") == "state":
                reply = server.state()
            elif request.get("op") == "digest":
                with server.lock:
                    reply = {"digest": digest(server.db)}
            elif request.get("op") == "reset":
                reply = {"reset_ms": server.reset(), "digest": digest(server.db)}
            else:
                reply = {"error": "unknown op (state, digest, reset)"}
            conn.sendall(json.dumps(reply, default=str).encode() + b"\n")

    while True:
        conn, _ = sock.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()


def ask_state(key: str, op: str, path: str = STATE_SOCKET, timeout: float = 30.0) -> dict:
    """The verifier's side of the state interface."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall(json.dumps({"key": key, "op": op}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def undumpable() -> None:
    """PR_SET_DUMPABLE 0: processes of the same user cannot read this one's memory or environment
    through /proc or ptrace (matters where the agent shares the server's pid namespace)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="webapp")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve")
    serve.add_argument("--app", required=True)
    serve.add_argument("--seed", required=True)
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--key-file", default=KEY_FILE)
    serve.add_argument("--socket", default=STATE_SOCKET)
    serve.add_argument("--mirror", default=MIRROR)
    ask = sub.add_parser("ask")
    ask.add_argument("op", choices=["state", "digest", "reset"])
    ask.add_argument("--key-file", required=True)
    ask.add_argument("--socket", default=STATE_SOCKET)
    args = parser.parse_args(argv)
    if args.command == "ask":
        with open(args.key_file) as fh:
            print(json.dumps(ask_state(fh.read().strip(), args.op, args.socket)))
        return
    undumpable()
    with open(args.key_file) as fh:
        key = fh.read().strip()
    os.unlink(args.key_file)  # gone before the server listens, so before the agent's first command
    with open(args.seed, encoding="utf-8") as fh:
        server = Server(load_app(args.app), fh.read(), mirror=args.mirror or None)
    threading.Thread(target=serve_state, args=(server, key, args.socket), daemon=True).start()
    httpd = QuietServer(("127.0.0.1", args.port), http_handler(server))
    httpd.daemon_threads = True
    httpd.serve_forever()


if __name__ == "__main__":
    main()
