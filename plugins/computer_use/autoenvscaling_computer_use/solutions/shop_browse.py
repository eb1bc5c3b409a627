"""Reference solution for shop_browse: read every page of a category to pick the products that meet the
criteria and add each from its product page; find the SKU in its category; remove what is out of stock
from the wishlist page; page through the order history to the right order and request the returns."""


from lib_shop import cells, scan
from uilib import BASE, browser, expect_ok, follow, params, shot, submit, words


def wish(page, row: dict) -> None:  # noqa: ANN001
    page.goto(row["url"])
    with page.expect_navigation():
        page.get_by_role("link", name=row["name"], exact=True).click()
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
            with page.expect_navigation():
                gone.first.get_by_role("button").click()
            expect_ok(page)
        if sorted(removed) != w["expected_removed"]:
            raise SystemExit(f"removed {removed}, expected {w['expected_removed']}")


def open_order(page, ret: dict) -> None:  # noqa: ANN001
    page.goto(BASE + "/orders")
    while True:
        for tr in page.locator("tbody tr").all():
            c = cells(tr)
            if (ret["order_id"] and c[0] == f"Order #{ret['order_id']}") or (not ret["order_id"] and c[1] == ret["placed_on"]):
                with page.expect_navigation():
                    tr.get_by_role("link").click()
                return
        if not page.get_by_role("link", name="Next page").count():
            raise SystemExit(f"no order for {ret}")
        follow(page, "Next page")


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
    with browser() as page:
        page.goto(BASE + "/")
        shot(page, "start")
        if p.get("wishlist"):
            wishlist(page, p["wishlist"])
        for ret in p.get("returns", []):
            request_return(page, ret)
        shot(page, "end")


if __name__ == "__main__":
    main()
