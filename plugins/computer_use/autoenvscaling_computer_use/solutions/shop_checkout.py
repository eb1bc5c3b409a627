"""Reference solution for shop_checkout: empty the cart of leftovers, find each product on the list
through the catalogue (search for named products; filtered, sorted category pages for "cheapest" and
"best within budget"), add it, try the coupons in order, fill in shipping, open the review page and
place the order from there."""

from lib_shop import cents, listing, open_product, scan
from uilib import BASE, expect_ok, follow, go, params, session, submit, words


def of_type(row: dict, type_: str) -> bool:
    return f" {type_} (" in row["name"]


def subtotal(page) -> int:  # noqa: ANN001
    page.goto(BASE + "/cart")
    if not page.locator("table.totals").count():
        return 0
    return cents(words(page.locator("table.totals tr").filter(has_text="Subtotal").locator("td").inner_text()))


def find(page, item: dict) -> dict:  # noqa: ANN001
    if item["kind"] == "named":
        page.goto(BASE + "/products")
        page.get_by_label("Search products").fill(item["name"])
        submit(page, "Apply filters")
        found = [r for r in listing(page) if r["name"] == item["name"]]
    elif item["kind"] == "cheapest":
        rows = scan(page, {"category": item["category"], "in_stock": "1", "sort": "price_asc"})
        found = [r for r in rows if of_type(r, item["type"]) and r["rating"] >= item["min_rating"] and r["stock"] >= item["qty"]]
    else:
        fixed = subtotal(page)
        rows = scan(page, {"category": item["category"], "in_stock": "1", "sort": "rating_desc"})
        found = [r for r in rows if of_type(r, item["type"]) and r["stock"] >= item["qty"]
                 and fixed + item["qty"] * r["price"] <= item["budget"]]
    if not found or found[0]["name"] != item["name"]:
        raise SystemExit(f"expected {item['name']!r} for {item}, the catalogue gave {found[:1]}")
    return found[0]


def add(page, row: dict, qty: int) -> None:  # noqa: ANN001
    open_product(page, row)
    page.get_by_label("Quantity", exact=True).fill(str(qty))
    submit(page, "Add to cart")
    expect_ok(page)


def main() -> None:
    p = params()
    with session() as page:
        page.goto(BASE + "/cart")
        while page.get_by_role("button", name="Remove", exact=True).count():
            go(page, page.get_by_role("button", name="Remove", exact=True).first)
        for item in sorted(p["items"], key=lambda it: it["kind"] == "budget"):  # the budget item comes last
            add(page, find(page, item), item["qty"])
        page.goto(BASE + "/cart")
        for code in p["coupons"]:
            page.get_by_label("Coupon code").fill(code)
            submit(page, "Apply coupon")
            if not page.locator(".error").count():
                break
        else:
            raise SystemExit("no coupon applied: " + "; ".join(page.locator(".error").all_inner_texts()))
        follow(page, "Proceed to checkout")
        ship = p["shipping"]
        for label, key in [("Full name", "customer_name"), ("Street address", "address"), ("City", "city"),
                           ("Postcode", "postcode")]:
            page.get_by_label(label, exact=True).fill(ship[key])
        submit(page, "Continue to review")
        expect_ok(page)
        if not page.url.endswith("/checkout/review"):
            raise SystemExit(f"expected the review page, got {page.url}")
        submit(page, "Place order")
        expect_ok(page)
        if "has been placed" not in page.locator(".flash").inner_text():
            raise SystemExit("the order was not confirmed")


if __name__ == "__main__":
    main()
