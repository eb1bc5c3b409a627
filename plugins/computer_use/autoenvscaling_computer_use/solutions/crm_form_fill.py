"""Reference solution for crm_form_fill: look up the values given as "the same as X's", search each
email to tell a known person (edit their record) from a new one (the new-contact form), fill every
field and save."""

from lib_crm import fill_contact, search
from uilib import BASE, expect_ok, follow, next_page, params, session, submit


def found(page, text: str) -> list[dict]:  # noqa: ANN001 - a playwright Page
    """The contact rows the search finds (every page): name, email and the link to the contact."""
    search(page, text)
    rows = []
    while True:
        for row in page.locator("tbody tr").all():
            cells = [c.inner_text().strip() for c in row.locator("td").all()]
            rows.append({"name": cells[0], "email": cells[2], "href": row.locator("a").first.get_attribute("href")})
        if not next_page(page):
            return rows


def looked_up(page, name: str, fieldname: str) -> str:  # noqa: ANN001
    rows = [r for r in found(page, name) if r["name"] == name]
    if len(rows) != 1:
        raise SystemExit(f"expected one contact named {name}, found {len(rows)}")
    page.goto(BASE + rows[0]["href"])
    return page.locator("tr").filter(has=page.locator("th", has_text=fieldname.title())).locator("td").inner_text().strip()


def main() -> None:
    p = params()
    with session("/contacts") as page:
        for person in p["people"]:
            values = {k: v for k, v in person.items() if k != "same_as"}
            for fieldname, whose in person["same_as"].items():
                values[fieldname] = looked_up(page, whose, fieldname)
            known = [r for r in found(page, values["email"]) if r["email"].lower() == values["email"].lower()]
            if known:
                page.goto(BASE + known[0]["href"])
                follow(page, "Edit contact")
                button = "Save changes"
            else:
                follow(page, "New contact")
                button = "Create contact"
            fill_contact(page, values)
            submit(page, button)
            expect_ok(page)


if __name__ == "__main__":
    main()
