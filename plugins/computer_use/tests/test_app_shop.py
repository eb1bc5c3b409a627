"""The shop app through ``Server.handle`` (no sandbox) and the shop_checkout / shop_browse builders,
scored by the real verifier against states reached through the app's own routes."""

from __future__ import annotations

import json
import random
import re
import urllib.parse

import pytest

from autoenvscaling_computer_use.apps import app_module, webapp
from autoenvscaling_computer_use.families import shop_browse, shop_checkout
from autoenvscaling_computer_use.verifier import verify

shop = app_module("shop")


def product(i: int, **kw) -> dict:
    row = {"id": i, "sku": f"TST-{1000 + i}", "name": f"Item {i:02d}", "category": "Tents" if i % 2 else "Cables",
           "price": 1000 + 100 * i, "stock": 5, "rating": round(3.0 + (i % 20) / 10, 1), "description": ""}
    row.update(kw)
    return row


def base_rows() -> dict:
    return {"products": [product(i) for i in range(1, 26)] + [product(26, name="Sold Out Tent", category="Tents", stock=0)],
            "coupons": [{"id": 1, "code": "SAVE10", "percent_off": 10, "min_subtotal": 0},
                        {"id": 2, "code": "BIG20", "percent_off": 20, "min_subtotal": 50000}],
            "checkout": [{"id": 1}],
            "orders": [{"id": 1, "placed_on": "2024-03-02", "customer_name": "Ada Novak", "address": "1 Via Roma",
                        "city": "Turin", "postcode": "1000-001", "subtotal": 1100, "total": 1100, "status": "delivered", "reviewed": 1},
                       {"id": 2, "placed_on": "2024-03-09", "customer_name": "Ada Novak", "address": "1 Via Roma",
                        "city": "Turin", "postcode": "1000-001", "subtotal": 1200, "total": 1200, "status": "shipped", "reviewed": 1}],
            "order_items": [{"id": 1, "order_id": 1, "product_id": 1, "qty": 1, "price": 1100},
                            {"id": 2, "order_id": 2, "product_id": 2, "qty": 1, "price": 1200}],
            "settings": [{"id": 1, "name": "today", "value": "2024-03-12"}]}


def server(rows: dict | None = None):
    return webapp.Server(shop.APP(), webapp.seed_sql(shop.SCHEMA, rows or base_rows()), mirror=None)


def post(s, path: str, **form):
    return s.handle("POST", path, urllib.parse.urlencode(form).encode())


def table(s, name: str) -> list[dict]:
    return s.state()["tables"][name]


def token(s) -> str:
    page = s.handle("GET", "/checkout/review", b"")
    assert page.status == 200, page.location
    return re.search(r'name="review_token" value="([0-9a-f]+)"', page.body).group(1)


SHIP = {"customer_name": "Ada Novak", "address": "7 Rua Augusta", "city": "Lisbon", "postcode": "1100-048"}


def test_pages_render_and_unknown_ids_are_404():
    s = server()
    for path in ["/", "/products", "/products/3", "/cart", "/wishlist", "/orders", "/orders/1"]:
        assert s.handle("GET", path, b"").status == 200, path
    assert s.handle("GET", "/products/999", b"").status == 404
    assert "$13.00" in s.handle("GET", "/products/3", b"").body
    assert "Out of stock" in s.handle("GET", "/products/26", b"").body


def test_catalogue_filters_sort_and_pages():
    s = server()
    first = s.handle("GET", "/products", b"").body
    assert "Page 1 of 3" in first and "Next page" in first and first.count("<tr><td><a href=\"/products/") == 10
    last = s.handle("GET", "/products?page=3", b"").body
    assert last.count("<tr><td><a href=\"/products/") == 6 and "Previous page" in last
    body = s.handle("GET", "/products?category=Tents&max_price=20&in_stock=1&sort=price_desc", b"").body
    names = re.findall(r'<a href="/products/\d+">([^<]+)</a>', body)
    assert names == ["Item 09", "Item 07", "Item 05", "Item 03", "Item 01"]  # <= $20.00, in stock, dearest first
    bad = s.handle("GET", "/products?max_price=cheap", b"")
    assert bad.status == 422 and "Max price must be an amount" in bad.body


def test_cart_add_update_remove_and_stock_limits():
    s = server()
    assert post(s, "/cart/add", product_id=3, qty=2).status == 303
    assert post(s, "/cart/add", product_id=3, qty=1).status == 303
    assert [(c["product_id"], c["qty"]) for c in table(s, "cart_items")] == [(3, 3)]
    too_many = post(s, "/cart/add", product_id=3, qty=3)
    assert too_many.status == 422 and "Only 5 left in stock" in too_many.body
    assert post(s, "/cart/add", product_id=26, qty=1).status == 422
    assert post(s, "/cart/add", product_id=4, qty=0).status == 422
    line = table(s, "cart_items")[0]["id"]
    assert post(s, f"/cart/{line}/update", qty=1).status == 303 and table(s, "cart_items")[0]["qty"] == 1
    assert post(s, f"/cart/{line}/update", qty=9).status == 422
    assert post(s, f"/cart/{line}/remove").status == 303 and table(s, "cart_items") == []


def test_coupons_unknown_ineligible_and_applied():
    s = server()
    post(s, "/cart/add", product_id=5, qty=2)  # $30.00
    unknown = post(s, "/cart/coupon", coupon="NOPE")
    assert unknown.status == 422 and "Unknown coupon code NOPE" in unknown.body
    low = post(s, "/cart/coupon", coupon="big20")
    assert low.status == 422 and "needs a subtotal of at least $500.00 (your cart: $30.00)" in low.body
    assert table(s, "checkout")[0]["coupon"] == ""
    assert post(s, "/cart/coupon", coupon="save10").status == 303
    cart = s.handle("GET", "/cart", b"").body
    assert table(s, "checkout")[0]["coupon"] == "SAVE10" and "-$3.00" in cart and "$27.00" in cart


def test_shipping_validation():
    s = server()
    assert s.handle("GET", "/checkout", b"").location == "/cart?done=empty"
    post(s, "/cart/add", product_id=5, qty=1)
    bad = post(s, "/checkout", **{**SHIP, "postcode": "11A", "city": ""})
    assert bad.status == 422 and "Postcode is not valid" in bad.body and "City is required." in bad.body
    assert post(s, "/checkout", **SHIP).location == "/checkout/review"
    assert table(s, "checkout")[0]["city"] == "Lisbon"


def test_place_order_needs_a_fresh_review_token():
    s = server()
    post(s, "/cart/add", product_id=5, qty=2)
    post(s, "/cart/coupon", coupon="SAVE10")
    post(s, "/checkout", **SHIP)
    assert post(s, "/checkout/place").status == 400
    stale = token(s)
    post(s, "/cart/add", product_id=6, qty=1)  # the cart changed after the review
    refused = post(s, "/checkout/place", review_token=stale)
    assert refused.status == 400 and "review your order again" in refused.body and len(table(s, "orders")) == 2
    fresh = token(s)
    placed = post(s, "/checkout/place", review_token=fresh)
    assert placed.status == 303 and placed.location == "/orders/3?done=placed"
    order = table(s, "orders")[-1]
    assert order["reviewed"] == 1 and order["coupon"] == "SAVE10" and order["placed_on"] == "2024-03-12"
    assert (order["subtotal"], order["discount"], order["total"]) == (4600, 460, 4140)
    lines = [(i["product_id"], i["qty"], i["price"]) for i in table(s, "order_items") if i["order_id"] == 3]
    assert lines == [(5, 2, 1500), (6, 1, 1600)]
    stock = {p["id"]: p["stock"] for p in table(s, "products")}
    assert (stock[5], stock[6]) == (3, 4) and table(s, "cart_items") == []
    post(s, "/cart/add", product_id=5, qty=2)
    assert post(s, "/checkout/place", review_token=fresh).status == 400  # one time only
    journal = [(e["method"], e["path"], e["status"]) for e in s.state()["journal"]]
    assert ("POST", "/checkout/place", 303) in journal and ("GET", "/checkout/review", 200) in journal


def test_api_orders_skip_the_review():
    s = server()
    made = post(s, "/api/orders", items="5:2,6:1", coupon="save10", **SHIP)
    assert made.status == 201 and json.loads(made.body)["order_id"] == 3
    raw = json.dumps({"items": [{"product_id": 7, "qty": 1}], **SHIP}).encode()
    assert s.handle("POST", "/api/orders", raw, "application/json").status == 201
    assert s.handle("POST", "/api/orders", b"[1, 2]", "application/json").status == 400
    orders = table(s, "orders")
    assert [o["reviewed"] for o in orders[2:]] == [0, 0] and orders[2]["total"] == 4140
    bad = post(s, "/api/orders", items="5:99", **SHIP)
    assert bad.status == 422 and "only" in json.loads(bad.body)["errors"][0]


def test_wishlist_add_is_idempotent_and_remove():
    s = server()
    assert post(s, "/wishlist/add", product_id=4).location == "/products/4?done=wished"
    post(s, "/wishlist/add", product_id=4)
    assert [w["product_id"] for w in table(s, "wishlist")] == [4]
    assert "Remove from wishlist" in s.handle("GET", "/products/4", b"").body
    post(s, "/wishlist/add", product_id=9)
    page = s.handle("GET", "/wishlist", b"").body
    assert 'action="/wishlist/4/remove"' in page and 'action="/wishlist/9/remove"' in page
    assert post(s, "/wishlist/9/remove").status == 303
    assert post(s, "/wishlist/4/remove").location == "/wishlist?done=removed" and table(s, "wishlist") == []


def test_return_requests():
    s = server()
    assert "Request a return" in s.handle("GET", "/orders/1", b"").body
    not_yet = post(s, "/orders/2/return", order_item_id=2, reason="damaged")
    assert not_yet.status == 422 and "once an order has been delivered" in not_yet.body
    no_reason = post(s, "/orders/1/return", order_item_id=1, reason="")
    assert no_reason.status == 422 and "Choose a reason" in no_reason.body
    assert post(s, "/orders/1/return", order_item_id=2, reason="damaged").status == 422  # another order's item
    assert post(s, "/orders/1/return", order_item_id=1, reason="damaged").location == "/orders/1?done=returned"
    assert table(s, "returns") == [{"id": 1, "order_id": 1, "order_item_id": 1, "reason": "damaged", "status": "requested"}]
    assert "Return requested (Arrived damaged)" in s.handle("GET", "/orders/1", b"").body
    assert post(s, "/orders/1/return", order_item_id=1, reason="too_late").status == 422


# -- the families ------------------------------------------------------------------------------------

def draft_of(module, seed: int, level: int):
    return module.build(random.Random(f"test/{module.__name__}/{seed}/{level}"), level)


def score(draft, s) -> float:
    spec = {"expect": draft.expect, "free_tables": draft.free_tables}
    return verify.score(spec, webapp.seed_sql(shop.SCHEMA, draft.rows), s.state())[0]


def checkout_like_a_shopper(draft, s) -> None:
    ids = {p["name"]: p["id"] for p in draft.rows["products"]}
    for line in table(s, "cart_items"):
        post(s, f"/cart/{line['id']}/remove")
    for item in draft.params["items"]:
        assert post(s, "/cart/add", product_id=ids[item["name"]], qty=item["qty"]).status == 303
    for code in draft.params["coupons"]:
        if post(s, "/cart/coupon", coupon=code).status == 303:
            break
    assert post(s, "/checkout", **draft.params["shipping"]).status == 303
    assert post(s, "/checkout/place", review_token=token(s)).status == 303


@pytest.mark.parametrize("module", [shop_checkout, shop_browse])
def test_builders_are_deterministic_and_grow(module):
    sizes = []
    for level in range(6):
        a, b = draft_of(module, 7, level), draft_of(module, 7, level)
        assert a.instruction == b.instruction and a.rows == b.rows and a.expect == b.expect
        assert "http://127.0.0.1:8080/" in a.instruction and a.expect
        sizes.append((len(a.rows["products"]) + len(a.rows["orders"]), len(a.expect)))
    assert sizes[5][0] > sizes[2][0] > sizes[0][0] and sizes[5][1] > sizes[0][1]


@pytest.mark.parametrize("level", range(6))
def test_checkout_instruction_names_every_value_and_scores(level):
    for seed in (1, 2):
        d = draft_of(shop_checkout, seed, level)
        text = d.instruction
        for value in d.params["shipping"].values():
            assert value in text
        assert all(code in text for code in d.params["coupons"])
        code = [e for e in d.expect if "SELECT coupon" in e.get("query", "")][0]["rows"][0][0]
        assert code in text
        for item in d.params["items"]:
            assert (item["name"].split(" (")[0] in text) if item["kind"] == "named" else (item["type"] in text)
        s = server(d.rows)
        assert score(d, s) == 0.0  # nothing done
        checkout_like_a_shopper(d, s)
        assert score(d, s) == 1.0
        shortcut = server(d.rows)  # the same items through the API: not reviewed
        rows = [e for e in d.expect if "FROM order_items" in e.get("query", "")][0]["rows"]
        items = ",".join(f"{pid}:{qty}" for pid, qty, _ in rows)
        assert post(shortcut, "/api/orders", items=items, coupon=code, **d.params["shipping"]).status == 201
        assert score(d, shortcut) == 0.0  # the review step the instruction requires was skipped


@pytest.mark.parametrize("level", range(6))
def test_browse_instruction_names_every_value_and_scores(level):
    for seed in (1, 2, 3):
        d = draft_of(shop_browse, seed, level)
        products = {p["id"]: p for p in d.rows["products"]}
        s = server(d.rows)
        assert score(d, s) == 0.0
        for e in d.expect:
            if e.get("table") == "wishlist" and "insert" in e:
                p = products[e["insert"]["product_id"]]
                assert (p["sku"] in d.instruction) or p["category"] in d.instruction
                assert post(s, "/wishlist/add", product_id=p["id"]).status == 303
            elif e.get("table") == "wishlist":
                assert post(s, f"/wishlist/{e['deleted']['product_id']}/remove").status == 303
            else:
                x = e["insert"]
                item = next(i for i in d.rows["order_items"] if i["id"] == x["order_item_id"])
                assert products[item["product_id"]]["name"] in d.instruction
                assert dict(shop.REASONS)[x["reason"]] in d.instruction
                done = post(s, f"/orders/{x['order_id']}/return", order_item_id=x["order_item_id"], reason=x["reason"])
                assert done.status == 303
        assert score(d, s) == 1.0
        if d.params.get("wishlist"):  # one wrong wishlist addition is collateral: 0
            extra = next(p for p in d.rows["products"] if p["name"] not in d.params["wishlist"]["expected"]
                         and p["id"] not in {w["product_id"] for w in d.rows["wishlist"]}
                         and not any(e.get("insert", {}).get("product_id") == p["id"] for e in d.expect))
            post(s, "/wishlist/add", product_id=extra["id"])
            assert score(d, s) == 0.0


@pytest.mark.parametrize("nagle_off", [True, False])
def test_answers_leave_without_waiting_for_nagle(nagle_off):
    """The server writes headers and body apart: with Nagle's algorithm on, a kept-alive connection's
    body waits for the browser's delayed ACK (40 ms a page). Each accepted connection has TCP_NODELAY;
    the control turns the handler's switch off and sees the option off."""
    import http.client
    import socket
    import threading

    seen: list[int] = []
    base = webapp.http_handler(server())

    class Recording(base):
        def setup(self) -> None:
            if not nagle_off:
                self.disable_nagle_algorithm = False
            super().setup()
            seen.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    assert base.disable_nagle_algorithm is True
    httpd = webapp.QuietServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", httpd.server_address[1], timeout=30)
        for path in ("/products", "/cart"):  # two answers on one kept-alive connection
            conn.request("GET", path)
            answer = conn.getresponse()
            assert answer.status == 200 and b"</html>" in answer.read()
        conn.close()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert len(seen) == 1 and bool(seen[0]) is nagle_off
