"""Reference solution for crm_search_edit: search each contact, open the one at the right company,
edit the fields through the form."""

from uilib import BASE, browser, expect_ok, follow, params, shot, submit


def main() -> None:
    p = params()
    with browser() as page:
        page.goto(BASE + "/contacts")
        shot(page, "start")
        for edit in p["edits"]:
            page.goto(BASE + "/contacts")
            page.get_by_label("Search contacts").fill(edit["name"])
            submit(page, "Search")
            row = page.locator("tbody tr").filter(has_text=edit["company"]).filter(has_text=edit["name"])
            with page.expect_navigation():
                row.get_by_role("link", name=edit["name"]).click()
            follow(page, "Edit contact")
            for fieldname, value in edit["set"].items():
                control = page.locator(f'[name="{fieldname}"]')
                if fieldname == "status":
                    control.select_option(value)
                else:
                    control.fill(value)
            submit(page, "Save changes")
            expect_ok(page)
        shot(page, "end")


if __name__ == "__main__":
    main()
