"""Contacts CRM: a searchable, paginated contact list with detail, edit, create and delete pages.

Tables: ``contacts(id, name, company, email, phone, city, status, notes)``.
"""

from __future__ import annotations

import re

from webapp import App, Request, Response, esc, facts, field, found, get, grid, pager, post, redirect

STATUSES = ["lead", "active", "customer", "inactive"]
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{6,18}[0-9]$")

SCHEMA = """
CREATE TABLE contacts (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  company TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'lead',
  notes TEXT NOT NULL DEFAULT ''
);
"""
FIELDS = ["name", "company", "email", "phone", "city", "status", "notes"]


def validate(form: dict[str, str]) -> list[str]:
    errors = []
    if not form.get("name"):
        errors.append("Name is required.")
    if form.get("email") and not EMAIL.match(form["email"]):
        errors.append("Email address is not valid.")
    if form.get("phone") and not PHONE.match(form["phone"]):
        errors.append("Phone number is not valid (digits, spaces, dashes, an optional leading +).")
    if form.get("status", "lead") not in STATUSES:
        errors.append("Status must be one of: " + ", ".join(STATUSES) + ".")
    return errors


class Crm(App):
    title = "Acme CRM"
    nav = [("Contacts", "/contacts"), ("New contact", "/contacts/new")]
    home = "/contacts"

    @get(r"/contacts")
    def list(self, r: Request) -> Response:
        q = r.arg("q")
        where, params = "", []
        if q:
            where = "WHERE name LIKE ? OR company LIKE ? OR email LIKE ? OR city LIKE ?"
            params = [f"%{q}%"] * 4
        total, page_no, pages, rows = r.paged(f"SELECT COUNT(*) FROM contacts {where}",
                                              f"SELECT * FROM contacts {where} ORDER BY name, id", params)
        search = (f'<form class="card" method="get" action="/contacts" role="search">'
                  f'{field("q", "Search contacts", q)}<button type="submit">Search</button></form>')
        body = "".join(f'<tr><td><a href="/contacts/{c["id"]}">{esc(c["name"])}</a></td><td>{esc(c["company"])}</td>'
                       f'<td>{esc(c["email"])}</td><td>{esc(c["city"])}</td><td>{esc(c["status"])}</td></tr>' for c in rows)
        table = (f"<p>{total} contact{'s' if total != 1 else ''}{' matching ' + esc(repr(q)) if q else ''}.</p>"
                 + grid(["Name", "Company", "Email", "City", "Status"], body) if rows else "<p>No contacts found.</p>")
        flash = {"created": "Contact created.", "deleted": "Contact deleted."}.get(r.query.get("done", ""), "")
        return self.ok("Contacts", search + table + pager("/contacts", page_no, pages, {"q": q} if q else None), flash=flash)

    def _contact(self, r: Request):
        return found(r.db.execute("SELECT * FROM contacts WHERE id = ?", [int(r.match.group(1))]).fetchone(), "contact")

    @get(r"/contacts/(\d+)")
    def show(self, r: Request) -> Response:
        c = self._contact(r)
        links = (f'<p><a href="/contacts/{c["id"]}/edit">Edit contact</a> · '
                 f'<a href="/contacts/{c["id"]}/delete">Delete contact</a> · <a href="/contacts">Back to contacts</a></p>')
        flash = "Changes saved." if r.query.get("saved") else ""
        return self.ok(c["name"], facts([(k.title(), esc(c[k])) for k in FIELDS[1:]]) + links, flash=flash)

    def _form(self, action: str, values: dict, button: str) -> str:
        return (f'<form class="card" method="post" action="{action}">'
                + field("name", "Name", values.get("name", ""), required=True)
                + field("company", "Company", values.get("company", ""))
                + field("email", "Email", values.get("email", ""), kind="email")
                + field("phone", "Phone", values.get("phone", ""))
                + field("city", "City", values.get("city", ""))
                + field("status", "Status", values.get("status", "lead"), kind="select", options=[(s, s.title()) for s in STATUSES])
                + field("notes", "Notes", values.get("notes", ""), kind="textarea")
                + f'<button type="submit">{esc(button)}</button></form>')

    @get(r"/contacts/new")
    def new_form(self, r: Request) -> Response:
        return self.ok("New contact", self._form("/contacts/new", {}, "Create contact"))

    @post(r"/contacts/new")
    def create(self, r: Request) -> Response:
        values = {k: r.arg(k) for k in FIELDS}
        values["status"] = values["status"] or "lead"
        errors = validate(values)
        if errors:
            return self.ok("New contact", self._form("/contacts/new", values, "Create contact"), status=422, errors=errors)
        r.db.execute(f"INSERT INTO contacts ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))})",
                     [values[k] for k in FIELDS])
        return redirect("/contacts?done=created")

    @get(r"/contacts/(\d+)/edit")
    def edit_form(self, r: Request) -> Response:
        c = self._contact(r)
        return self.ok(f"Edit {c['name']}", self._form(f"/contacts/{c['id']}/edit", dict(c), "Save changes"))

    @post(r"/contacts/(\d+)/edit")
    def update(self, r: Request) -> Response:
        c = self._contact(r)
        values = {k: r.arg(k) if k in r.form else c[k] for k in FIELDS}
        errors = validate(values)
        if errors:
            return self.ok(f"Edit {c['name']}", self._form(f"/contacts/{c['id']}/edit", values, "Save changes"),
                           status=422, errors=errors)
        r.db.execute(f"UPDATE contacts SET {', '.join(k + ' = ?' for k in FIELDS)} WHERE id = ?",
                     [*(values[k] for k in FIELDS), c["id"]])
        return redirect(f"/contacts/{c['id']}?saved=1")

    @get(r"/contacts/(\d+)/delete")
    def delete_form(self, r: Request) -> Response:
        c = self._contact(r)
        return self.confirm(f"Delete {c['name']}?", f"/contacts/{c['id']}/delete",
                            f'This removes {esc(c["name"])} ({esc(c["company"])}) for good.', "Delete contact")

    @post(r"/contacts/(\d+)/delete")
    def delete(self, r: Request) -> Response:
        c = self._contact(r)
        r.db.execute("DELETE FROM contacts WHERE id = ?", [c["id"]])
        return redirect("/contacts?done=deleted")


APP = Crm
