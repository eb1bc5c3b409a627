"""What the CRM's reference solutions share: its contact search and its contact form."""

from uilib import BASE, submit


def search(page, text: str) -> None:  # noqa: ANN001 - a playwright Page
    """Search the contacts for ``text`` (the list's first page of results is then open), from the
    contact list's search box (the list is loaded first unless it is the open page)."""
    if page.url.split("?")[0] != BASE + "/contacts":
        page.goto(BASE + "/contacts")
    page.get_by_label("Search contacts").fill(text)
    submit(page, "Search")


def fill_contact(page, values: dict) -> None:  # noqa: ANN001
    """Enter ``values`` ({field name: value}) into the open contact form (status is a select)."""
    for fieldname, value in values.items():
        control = page.locator(f'[name="{fieldname}"]')
        if fieldname == "status":
            control.select_option(value)
        else:
            control.fill(value)
