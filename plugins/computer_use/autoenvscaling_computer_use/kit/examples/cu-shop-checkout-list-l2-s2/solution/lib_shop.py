"""What the shop's reference solutions share: reading the catalogue's listing pages."""

from urllib.parse import urlencode

from uilib import BASE, follow, words


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
    while page.get_by_role("link", name="Next page").count():
        follow(page, "Next page")
        rows += listing(page)
    return rows
