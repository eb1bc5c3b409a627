"""Reference solution for crm_form_fill: look up the values given as "the same as X's", search each
email to tell a known person (edit their record) from a new one (the new-contact form), fill every
field and save."""

from uilib import BASE, browser, expect_ok, follow, params, shot, submit


def search(page, text: str) -> list[dict]:  # noqa: ANN001 - a playwright Page
    """The contact rows the search finds (every page): name, email and the link to the contact."""
    page.goto(BASE + "/contacts")
    page.get_by_label("Search contacts").fill(text)
    submit(page, "Search")
    found = []
    while True:
        for row in page.locator("tbody tr").all():
            cells = [c.inner_text().strip() for c in row.locator("td").all()]
            found.append({"name": cells[0], "email": cells[2], "href": row.locator("a").first.get_attribute("href")})
        if page.get_by_role("link", name="Next page").count() == 0:
            return found
        follow(page, "Next page")


def looked_up(page, name: str, fieldname: str) -> str:  # noqa: ANN001
    rows = [r for r in search(page, name) if r["name"] == name]
    if len(rows) != 1:
        raise SystemExit(f"expected one contact named {name}, found {len(rows)}")
    page.goto(BASE + rows[0]["href"])
    return page.locator("tr").filter(has=page.locator("th", has_text=fieldname.title())).locator("td").inner_text().strip()


def main() -> None:
    p = params()
    with browser() as page:
        page.goto(BASE + "/contacts")
        shot(page, "start")
        for person in p["people"]:
            values = {k: v for k, v in person.items() if k != "same_as"}
            for fieldname, whose in person["same_as"].items():
                values[fieldname] = looked_up(page, whose, fieldname)
            known = [r for r in search(page, values["email"]) if r["email"].lower() == values["email"].lower()]
            if known:
                page.goto(BASE + known[0]["href"])
                follow(page, "Edit contact")
                button = "Save changes"
            else:
                follow(page, "New contact")
                button = "Create contact"
            for fieldname, value in values.items():
                control = page.locator(f'[name="{fieldname}"]')
                if fieldname == "status":
                    control.select_option(value)
                else:
                    control.fill(value)
            submit(page, button)
            expect_ok(page)
        shot(page, "end")


if __name__ == "__main__":
    main()
