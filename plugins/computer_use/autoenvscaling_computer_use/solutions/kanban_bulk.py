"""Reference solution for kanban_bulk: for every card a rule matches, open its board, find the card
with the board's search filter, open it and make the change through the card page's forms."""

from uilib import BASE, expect_ok, follow, go, params, session, submit


def open_board(page, board: str) -> None:  # noqa: ANN001 - a playwright Page
    """The board's page: through the open card's "Back to the ... board" link when it has one, else
    from the list of boards."""
    back = page.get_by_role("link", name=f"Back to the {board} board", exact=True)
    if back.count():
        go(page, back.first)
        return
    if page.url.split("?")[0] != BASE + "/boards":
        page.goto(BASE + "/boards")
    follow(page, board)


def open_card(page, board: str, title: str) -> None:  # noqa: ANN001
    open_board(page, board)
    page.get_by_label("Search cards").fill(title)
    submit(page, "Filter")
    go(page, page.get_by_role("link", name=title, exact=True).first)


def change(page, action: str, value: str) -> None:  # noqa: ANN001
    if action == "archive":
        submit(page, "Archive card")
    elif action == "add_label":
        page.get_by_label("Add a label").select_option(label=value)
        submit(page, "Add label")
    elif action == "remove_label":
        submit(page, f"Remove label {value}")
    else:
        name = {"move": "Move to", "assign": "Assignee", "priority": "Priority"}[action]
        control = page.get_by_label(name, exact=True)
        if action == "priority":
            control.select_option(value=value)
        else:
            control.select_option(label=value)
        submit(page, "Save card")
    expect_ok(page)


def main() -> None:
    p = params()
    with session("/boards") as page:
        for rule in p["rules"]:
            for title in rule["cards"]:
                open_card(page, rule["board"], title)
                change(page, rule["action"], rule["value"])
        open_board(page, p["rules"][-1]["board"])  # end on the board the last rule changed, to show the result


if __name__ == "__main__":
    main()
