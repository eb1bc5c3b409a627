"""Reference solution for crm_search_edit: search each contact, open the one at the right company,
edit the fields through the form."""

from lib_crm import fill_contact, search
from uilib import expect_ok, follow, go, params, session, submit


def main() -> None:
    p = params()
    with session("/contacts") as page:
        for edit in p["edits"]:
            search(page, edit["name"])
            row = page.locator("tbody tr").filter(has_text=edit["company"]).filter(has_text=edit["name"])
            go(page, row.get_by_role("link", name=edit["name"]))
            follow(page, "Edit contact")
            fill_contact(page, edit["set"])
            submit(page, "Save changes")
            expect_ok(page)


if __name__ == "__main__":
    main()
