"""Reference solution for shop_browse: read every page of a category to pick the products that meet the
criteria and add each from its product page; find the SKU in its category; remove what is out of stock
from the wishlist page; page through the order history to the right order and request the returns."""

from lib_shop import cells, open_product, scan
from uilib import BASE, expect_ok, go, next_page, params, session, submit, words


def wish(page, row: dict) -> None:  # noqa: ANN001 - a playwright Page
    open_product(page, row)
    if page.get_by_role("button", name="Add to wishlist").count():
        submit(page, "Add to wishlist")
        expect_ok(page)


def wishlist(page, w: dict) -> None:  # noqa: ANN001
    rows = scan(page, {"category": w["category"]})
    hits = [r for r in rows if r["price"] < w["max_price"] and r["rating"] >= w["min_rating"]
            and (r["stock"] > 0 or not w["in_stock"])]
    if sorted(r["name"] for r in hits) != w["expected"]:
        raise SystemExit(f"the criteria picked {sorted(r['name'] for r in hits)}, expected {w['expected']}")
    for row in hits:
        wish(page, row)
    if w["sku"]:
        hit = [r for r in scan(page, {"category": w["sku"]["category"]}) if r["sku"] == w["sku"]["sku"]]
        if [r["name"] for r in hit] != [w["sku"]["name"]]:
            raise SystemExit(f"SKU {w['sku']['sku']} gave {hit}")
        wish(page, hit[0])
    if w["remove_out_of_stock"]:
        page.goto(BASE + "/wishlist")
        removed: list[str] = []
        while len(removed) < 50:
            gone = page.locator("tbody tr").filter(has_text="Out of stock")
            if not gone.count():
                break
            removed.append(cells(gone.first)[0])
            go(page, gone.first.get_by_role("button"))
            expect_ok(page)
        if sorted(removed) != w["expected_removed"]:
            raise SystemExit(f"removed {removed}, expected {w['expected_removed']}")


def open_order(page, ret: dict) -> None:  # noqa: ANN001
    page.goto(BASE + "/orders")
    while True:
        for tr in page.locator("tbody tr").all():
            c = cells(tr)
            if (ret["order_id"] and c[0] == f"Order #{ret['order_id']}") or (not ret["order_id"] and c[1] == ret["placed_on"]):
                go(page, tr.get_by_role("link"))
                return
        if not next_page(page):
            raise SystemExit(f"no order for {ret}")


def request_return(page, ret: dict) -> None:  # noqa: ANN001
    open_order(page, ret)
    select = page.get_by_label("Item to return")
    options = select.locator("option").all()
    value = [o.get_attribute("value") for o in options if words(o.inner_text()).startswith(ret["product"] + " (x")]
    if len(value) != 1:
        raise SystemExit(f"the order has no single {ret['product']!r}")
    select.select_option(value=value[0])
    page.get_by_label("Reason for the return").select_option(label=ret["reason"])
    submit(page, "Request return")
    expect_ok(page)


def main() -> None:
    p = params()
    with session() as page:
        if p.get("wishlist"):
            wishlist(page, p["wishlist"])
        for ret in p.get("returns", []):
            request_return(page, ret)


if __name__ == "__main__":
    main()
