"""What the shop's reference solutions share: reading the catalogue's listing pages, opening a product."""

from urllib.parse import urlencode

from uilib import BASE, go, next_page, words


def cents(text: str) -> int:
    return int(round(float(text.replace("$", "").replace(",", "")) * 100))


def cells(tr) -> list[str]:  # noqa: ANN001 - a playwright Locator
    return [words(c) for c in tr.locator("td").all_inner_texts()]


def listing(page) -> list[dict]:  # noqa: ANN001 - a playwright Page
    out = []
    for tr in page.locator("tbody tr").all():
        c = cells(tr)
        out.append({"name": c[0], "sku": c[1], "price": cents(c[3]), "rating": float(c[4].split("/")[0]),
                    "stock": 0 if c[5] == "Out of stock" else int(c[5].split()[0]), "url": page.url})
    return out


def scan(page, query: dict) -> list[dict]:  # noqa: ANN001
    """Every row of a catalogue listing, page after page."""
    page.goto(BASE + "/products?" + urlencode(query))
    rows = listing(page)
    while next_page(page):
        rows += listing(page)
    return rows


def open_product(page, row: dict) -> None:  # noqa: ANN001
    """The product page of a listing's ``row``, through its link on the listing (loaded again only
    when the browser has left it)."""
    if page.url != row["url"]:
        page.goto(row["url"])
    go(page, page.get_by_role("link", name=row["name"], exact=True))
