"""Outfitters web shop: catalogue, cart with coupons, checkout with review, wishlist, orders and returns.

The catalogue is browsed by category with filters (max price, in stock), sorting and pages; product
pages add to the cart and the wishlist; the checkout goes shipping form -> review page -> "Place order";
the order history has a return-request form on each delivered order; and a JSON shortcut
``POST /api/orders`` creates an order without the review step (tasks forbid it; it leaves ``reviewed = 0``).

Money is kept in cents (integers) and shown as "$12.34". Tables: ``products``, ``coupons``,
``cart_items``, ``checkout`` (the one shopper's coupon and shipping details), ``orders``,
``order_items``, ``wishlist``, ``returns``, ``settings`` (``today``: the date new orders carry); the
schema and the money arithmetic are in _shop_model.py.

The review page issues a one-time token (an HMAC, under a key drawn when the app starts, of the
cart's lines, the coupon, the shipping details and the next order number): "Place order" creates the
order with ``reviewed = 1`` only when the token matches the current cart, so it cannot be reused
after the order is placed or the cart changes. Orders made through the API carry ``reviewed = 0``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import urllib.parse

from webapp import App, Request, Response, esc, facts, field, found, get, grid, hidden, pager, post, redirect

from ._shop_model import SCHEMA  # noqa: F401 - every app module names its schema (render.py seeds from it)
from ._shop_model import ORDER_BY, POSTCODE, REASONS, SHIPPING, SORTS, discount_of, money, parse_money, stock_text


def returned(reason: str | None) -> str:
    return f"Return requested ({esc(dict(REASONS).get(reason, reason))})" if reason else ""


class Shop(App):
    title = "Outfitters"
    nav = [("Shop", "/products"), ("Categories", "/"), ("Wishlist", "/wishlist"), ("Cart", "/cart"),
           ("Orders", "/orders")]

    def __init__(self) -> None:
        self.secret = os.urandom(16)  # signs review tokens; never stored, so the data stays deterministic

    # -- catalogue ---------------------------------------------------------------------------------

    @get(r"/")
    def categories(self, r: Request) -> Response:
        rows = r.db.execute("SELECT category, COUNT(*) AS n FROM products GROUP BY category ORDER BY category").fetchall()
        items = "".join(f'<li><a href="/products?{urllib.parse.urlencode({"category": c["category"]})}">'
                        f'{esc(c["category"])}</a> <span class="muted">({c["n"]} products)</span></li>' for c in rows)
        return self.ok("Categories", f'<ul class="card">{items}</ul><p><a href="/products">All products</a></p>')

    @get(r"/products")
    def catalogue(self, r: Request) -> Response:
        category, q, sort = r.arg("category"), r.arg("q"), r.arg("sort") or "name"
        max_price_text, in_stock = r.arg("max_price"), r.arg("in_stock") == "1"
        errors, where, params = [], [], []
        if category:
            where.append("category = ?")
            params.append(category)
        if q:
            where.append("name LIKE ?")
            params.append(f"%{q}%")
        if max_price_text:
            max_price = parse_money(max_price_text)
            if max_price is None:
                errors.append("Max price must be an amount in dollars, like 49.99.")
            else:
                where.append("price <= ?")
                params.append(max_price)
        if in_stock:
            where.append("stock > 0")
        if sort not in ORDER_BY:
            sort = "name"
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        total, page_no, pages, rows = r.paged(f"SELECT COUNT(*) FROM products {clause}",
                                              f"SELECT * FROM products {clause} ORDER BY {ORDER_BY[sort]}", params)
        cats = [c[0] for c in r.db.execute("SELECT DISTINCT category FROM products ORDER BY category")]
        checked = " checked" if in_stock else ""
        filters = ('<form class="card" method="get" action="/products" role="search">'
                   + field("q", "Search products", q)
                   + field("category", "Category", category, kind="select",
                           options=[("", "All categories")] + [(c, c) for c in cats])
                   + field("max_price", "Max price ($)", max_price_text)
                   + f'<label for="f-in_stock"><input id="f-in_stock" type="checkbox" name="in_stock" value="1"'
                     f' style="min-width:0"{checked}> In stock only</label>'
                   + field("sort", "Sort by", sort, kind="select", options=SORTS)
                   + '<button type="submit">Apply filters</button></form>')
        body = "".join(f'<tr><td><a href="/products/{p["id"]}">{esc(p["name"])}</a></td><td>{esc(p["sku"])}</td>'
                       f'<td>{esc(p["category"])}</td><td>{money(p["price"])}</td><td>{p["rating"]:.1f} / 5</td>'
                       f'<td>{stock_text(p["stock"])}</td></tr>' for p in rows)
        table = (f"<p>{total} product{'s' if total != 1 else ''}.</p>"
                 + grid(["Product", "SKU", "Category", "Price", "Rating", "Availability"], body)
                 if rows else "<p>No products match.</p>")
        keep = {k: v for k, v in {"category": category, "q": q, "max_price": max_price_text,
                                  "in_stock": "1" if in_stock else "", "sort": sort if sort != "name" else ""}.items() if v}
        title = category or "All products"
        return self.ok(title, filters + table + pager("/products", page_no, pages, keep),
                       status=422 if errors else 200, errors=errors)

    def _product(self, db, pid: int):
        return db.execute("SELECT * FROM products WHERE id = ?", [pid]).fetchone()

    def _product_page(self, r: Request, p, *, qty: str = "1", status: int = 200, errors=None, flash: str = "") -> Response:
        info = facts([("SKU", esc(p["sku"])), ("Category", esc(p["category"])), ("Price", money(p["price"])),
                      ("Rating", f'{p["rating"]:.1f} / 5'), ("Availability", stock_text(p["stock"])),
                      ("Description", esc(p["description"]))])
        if p["stock"] > 0:
            buy = (f'<form class="card" method="post" action="/cart/add">{hidden("product_id", p["id"])}'
                   + field("qty", "Quantity", qty, kind="number") + '<button type="submit">Add to cart</button></form>')
        else:
            buy = '<p class="card">Out of stock: this product cannot be added to the cart.</p>'
        wished = r.db.execute("SELECT 1 FROM wishlist WHERE product_id = ?", [p["id"]]).fetchone()
        if wished:
            wish = (f'<form class="card" method="post" action="/wishlist/{p["id"]}/remove">{hidden("back", "product")}'
                    '<p>This product is on your wishlist.</p><button type="submit">Remove from wishlist</button></form>')
        else:
            wish = (f'<form class="card" method="post" action="/wishlist/add">{hidden("product_id", p["id"])}'
                    '<button type="submit">Add to wishlist</button></form>')
        back = f'<p><a href="/products?{urllib.parse.urlencode({"category": p["category"]})}">Back to {esc(p["category"])}</a></p>'
        return self.ok(p["name"], info + buy + wish + back, status=status, errors=errors, flash=flash)

    @get(r"/products/(\d+)")
    def product(self, r: Request) -> Response:
        p = found(self._product(r.db, int(r.match.group(1))), "product")
        flash = {"wished": "Added to your wishlist.", "unwished": "Removed from your wishlist."}.get(r.query.get("done", ""), "")
        return self._product_page(r, p, flash=flash)

    # -- cart and coupons --------------------------------------------------------------------------

    def _lines(self, db) -> list:
        return db.execute("SELECT c.id, c.product_id, c.qty, p.name, p.sku, p.price, p.stock FROM cart_items c "
                          "JOIN products p ON p.id = c.product_id ORDER BY c.id").fetchall()

    def _checkout(self, db):
        row = db.execute("SELECT * FROM checkout ORDER BY id LIMIT 1").fetchone()
        if row is None:
            db.execute("INSERT INTO checkout (id) VALUES (1)")
            row = db.execute("SELECT * FROM checkout WHERE id = 1").fetchone()
        return row

    def _totals(self, db, subtotal: int, code: str) -> tuple[str, int, str]:
        """(coupon that applies or "", discount, a note when the chosen coupon does not apply)."""
        if not code:
            return "", 0, ""
        c = db.execute("SELECT * FROM coupons WHERE code = ?", [code]).fetchone()
        if c is None:
            return "", 0, f"Coupon {code} is not valid."
        if subtotal < c["min_subtotal"]:
            return "", 0, f"Coupon {code} needs a subtotal of at least {money(c['min_subtotal'])}; it does not apply."
        return c["code"], discount_of(subtotal, c["percent_off"]), ""

    def _summary(self, db, lines, code: str) -> tuple[str, int, str, int, int]:
        subtotal = sum(line["price"] * line["qty"] for line in lines)
        applied, discount, note = self._totals(db, subtotal, code)
        rows = (f"<tr><th>Subtotal</th><td>{money(subtotal)}</td></tr>"
                f"<tr><th>Discount{' (' + esc(applied) + ')' if applied else ''}</th><td>-{money(discount)}</td></tr>"
                f"<tr><th>Shipping</th><td>Free</td></tr><tr><th>Total</th><td><strong>{money(subtotal - discount)}</strong></td></tr>")
        html = f'<table class="totals">{rows}</table>' + (f'<p class="muted">{esc(note)}</p>' if note else "")
        return html, subtotal, applied, discount, subtotal - discount

    @get(r"/cart")
    def cart(self, r: Request, *, status: int = 200, errors=None, coupon_text: str = "") -> Response:
        lines, co = self._lines(r.db), self._checkout(r.db)
        flash = {"added": "Added to your cart.", "updated": "Quantity updated.", "removed": "Item removed from your cart.",
                 "coupon": f"Coupon {co['coupon']} applied.", "uncoupon": "Coupon removed.",
                 "empty": "Your cart is empty: add something before checking out."}.get(r.query.get("done", ""), "")
        if not lines:
            return self.ok("Your cart", '<p>Your cart is empty. <a href="/products">Browse the shop</a>.</p>',
                           status=status, errors=errors, flash=flash)
        body = "".join(
            f'<tr><td><a href="/products/{x["product_id"]}">{esc(x["name"])}</a></td><td>{money(x["price"])}</td>'
            f'<td><form method="post" action="/cart/{x["id"]}/update">'
            f'<label for="qty-{x["id"]}">Quantity of {esc(x["name"])}</label>'
            f'<input id="qty-{x["id"]}" name="qty" type="number" value="{x["qty"]}" style="min-width:0;width:70px">'
            f'<button type="submit">Update</button></form></td><td>{money(x["price"] * x["qty"])}</td>'
            f'<td><form method="post" action="/cart/{x["id"]}/remove"><button type="submit">Remove</button></form></td></tr>'
            for x in lines)
        table = grid(["Product", "Price", "Quantity", "Line total", ""], body)
        summary, *_ = self._summary(r.db, lines, co["coupon"])
        if co["coupon"]:
            coupon = (f'<form class="card" method="post" action="/cart/coupon/remove"><p>Coupon: <strong>{esc(co["coupon"])}</strong></p>'
                      '<button type="submit">Remove coupon</button></form>')
        else:
            coupon = ('<form class="card" method="post" action="/cart/coupon">' + field("coupon", "Coupon code", coupon_text)
                      + '<button type="submit">Apply coupon</button></form>')
        return self.ok("Your cart", table + summary + coupon + '<p><a href="/checkout">Proceed to checkout</a></p>',
                       status=status, errors=errors, flash=flash)

    @post(r"/cart/add")
    def cart_add(self, r: Request) -> Response:
        p = found(self._product(r.db, r.int_arg("product_id", -1)), "product")
        qty = r.int_arg("qty", -1)  # -1: not a whole number
        have = r.db.execute("SELECT * FROM cart_items WHERE product_id = ?", [p["id"]]).fetchone()
        already = have["qty"] if have else 0
        if qty < 1:
            error = "Quantity must be a whole number of at least 1."
        elif p["stock"] <= 0:
            error = "This product is out of stock."
        elif qty + already > p["stock"]:
            error = f"Only {p['stock']} left in stock" + (f" (you already have {already} in your cart)." if already else ".")
        else:
            error = ""
        if error:
            return self._product_page(r, p, qty=r.arg("qty"), status=422, errors=[error])
        if have:
            r.db.execute("UPDATE cart_items SET qty = qty + ? WHERE id = ?", [qty, have["id"]])
        else:
            r.db.execute("INSERT INTO cart_items (product_id, qty) VALUES (?, ?)", [p["id"], qty])
        return redirect("/cart?done=added")

    def _line(self, r: Request):
        return found(r.db.execute("SELECT c.*, p.stock, p.name FROM cart_items c JOIN products p "
                                  "ON p.id = c.product_id WHERE c.id = ?", [int(r.match.group(1))]).fetchone(), "cart item")

    @post(r"/cart/(\d+)/update")
    def cart_update(self, r: Request) -> Response:
        line = self._line(r)
        qty = r.int_arg("qty", -1)  # -1: not a whole number
        if qty < 0:
            return self.cart(r, status=422, errors=["Quantity must be a whole number (0 removes the item)."])
        if qty > line["stock"]:
            return self.cart(r, status=422, errors=[f"Only {line['stock']} of {line['name']} left in stock."])
        if qty == 0:
            return self.cart_remove(r)
        r.db.execute("UPDATE cart_items SET qty = ? WHERE id = ?", [qty, line["id"]])
        return redirect("/cart?done=updated")

    @post(r"/cart/(\d+)/remove")
    def cart_remove(self, r: Request) -> Response:
        line = self._line(r)
        r.db.execute("DELETE FROM cart_items WHERE id = ?", [line["id"]])
        return redirect("/cart?done=removed")

    @post(r"/cart/coupon")
    def coupon_apply(self, r: Request) -> Response:
        code = r.arg("coupon").upper()
        co = self._checkout(r.db)
        if not code:
            return self.cart(r, status=422, errors=["Enter a coupon code."])
        c = r.db.execute("SELECT * FROM coupons WHERE code = ?", [code]).fetchone()
        subtotal = sum(x["price"] * x["qty"] for x in self._lines(r.db))
        if c is None:
            return self.cart(r, status=422, errors=[f"Unknown coupon code {code}."], coupon_text=code)
        if subtotal < c["min_subtotal"]:
            return self.cart(r, status=422, coupon_text=code, errors=[
                f"Coupon {code} needs a subtotal of at least {money(c['min_subtotal'])} (your cart: {money(subtotal)})."])
        r.db.execute("UPDATE checkout SET coupon = ? WHERE id = ?", [code, co["id"]])
        return redirect("/cart?done=coupon")

    @post(r"/cart/coupon/remove")
    def coupon_remove(self, r: Request) -> Response:
        r.db.execute("UPDATE checkout SET coupon = '' WHERE id = ?", [self._checkout(r.db)["id"]])
        return redirect("/cart?done=uncoupon")

    # -- checkout ----------------------------------------------------------------------------------

    def _shipping_form(self, values) -> str:
        return ('<form class="card" method="post" action="/checkout">'
                + field("customer_name", "Full name", values["customer_name"], required=True)
                + field("address", "Street address", values["address"], required=True)
                + field("city", "City", values["city"], required=True)
                + field("postcode", "Postcode", values["postcode"], required=True)
                + '<button type="submit">Continue to review</button></form>')

    @get(r"/checkout")
    def shipping_form(self, r: Request) -> Response:
        if not self._lines(r.db):
            return redirect("/cart?done=empty")
        return self.ok("Checkout: shipping", self._shipping_form(self._checkout(r.db)))

    @post(r"/checkout")
    def shipping_save(self, r: Request) -> Response:
        if not self._lines(r.db):
            return redirect("/cart?done=empty")
        values = {k: r.arg(k) for k in SHIPPING}
        errors = []
        for k, label in [("customer_name", "Full name"), ("address", "Street address"), ("city", "City")]:
            if not values[k]:
                errors.append(f"{label} is required.")
        if not POSTCODE.match(values["postcode"]):
            errors.append("Postcode is not valid (four digits, a dash and three digits like 1100-048, or five digits).")
        if errors:
            return self.ok("Checkout: shipping", self._shipping_form(values), status=422, errors=errors)
        r.db.execute("UPDATE checkout SET customer_name = ?, address = ?, city = ?, postcode = ? WHERE id = ?",
                     [*(values[k] for k in SHIPPING), self._checkout(r.db)["id"]])
        return redirect("/checkout/review")

    def _token(self, db) -> str:
        co = self._checkout(db)
        lines = [(x["product_id"], x["qty"], x["price"]) for x in self._lines(db)]
        next_id = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM orders").fetchone()[0]
        data = json.dumps([lines, co["coupon"], [co[k] for k in SHIPPING], next_id])
        return hmac.new(self.secret, data.encode(), hashlib.sha256).hexdigest()[:32]

    @get(r"/checkout/review")
    def review(self, r: Request) -> Response:
        lines, co = self._lines(r.db), self._checkout(r.db)
        if not lines:
            return redirect("/cart?done=empty")
        if not all(co[k] for k in SHIPPING):
            return redirect("/checkout")
        body = "".join(f'<tr><td>{esc(x["name"])}</td><td>{esc(x["sku"])}</td><td>{x["qty"]}</td><td>{money(x["price"])}</td>'
                       f'<td>{money(x["price"] * x["qty"])}</td></tr>' for x in lines)
        items = "<h2>Items</h2>" + grid(["Product", "SKU", "Quantity", "Price", "Line total"], body)
        summary, *_ = self._summary(r.db, lines, co["coupon"])
        ship = (f'<h2>Ship to</h2><p class="card">{esc(co["customer_name"])}<br>{esc(co["address"])}<br>'
                f'{esc(co["postcode"])} {esc(co["city"])}</p><p><a href="/checkout">Edit shipping details</a> · '
                '<a href="/cart">Back to cart</a></p>')
        place = (f'<form class="card" method="post" action="/checkout/place">{hidden("review_token", self._token(r.db))}'
                 '<p>Check the order above, then place it.</p><button type="submit">Place order</button></form>')
        return self.ok("Review your order", items + summary + ship + place)

    def _create_order(self, db, lines: list[tuple[int, int, int]], shipping: dict, code: str, reviewed: int) -> tuple[int, int]:
        subtotal = sum(qty * price for _, qty, price in lines)
        applied, discount, _ = self._totals(db, subtotal, code)
        today = db.execute("SELECT value FROM settings WHERE name = 'today'").fetchone()
        cur = db.execute("INSERT INTO orders (placed_on, customer_name, address, city, postcode, coupon, subtotal, "
                         "discount, total, status, reviewed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'placed', ?)",
                         [today[0] if today else "", *(shipping[k] for k in SHIPPING), applied, subtotal, discount,
                          subtotal - discount, reviewed])
        for pid, qty, price in lines:
            db.execute("INSERT INTO order_items (order_id, product_id, qty, price) VALUES (?, ?, ?, ?)",
                       [cur.lastrowid, pid, qty, price])
            db.execute("UPDATE products SET stock = stock - ? WHERE id = ?", [qty, pid])
        return cur.lastrowid, subtotal - discount

    @post(r"/checkout/place")
    def place(self, r: Request) -> Response:
        lines, co = self._lines(r.db), self._checkout(r.db)
        back = '<p><a href="/checkout/review">Review your order again</a> · <a href="/cart">Back to cart</a></p>'
        if not lines:
            return self.ok("Order not placed", back, status=400, errors=["Your cart is empty."])
        token = r.arg("review_token")
        if not token or not hmac.compare_digest(token, self._token(r.db)):
            return self.ok("Order not placed", back, status=400, errors=[
                "This order was not reviewed as it stands (the review is missing, already used, or the cart changed "
                "since): review your order again, then place it."])
        short = [x["name"] for x in lines if x["qty"] > x["stock"]]
        if short:
            return self.ok("Order not placed", back, status=400, errors=["Not enough stock for: " + ", ".join(short) + "."])
        order_id, _ = self._create_order(r.db, [(x["product_id"], x["qty"], x["price"]) for x in lines], dict(co),
                                         co["coupon"], 1)
        r.db.execute("DELETE FROM cart_items")
        r.db.execute("UPDATE checkout SET coupon = '' WHERE id = ?", [co["id"]])
        return redirect(f"/orders/{order_id}?done=placed")

    # -- wishlist ----------------------------------------------------------------------------------

    @get(r"/wishlist")
    def wishlist(self, r: Request) -> Response:
        rows = r.db.execute("SELECT p.* FROM wishlist w JOIN products p ON p.id = w.product_id ORDER BY w.id").fetchall()
        flash = {"removed": "Removed from your wishlist."}.get(r.query.get("done", ""), "")
        if not rows:
            return self.ok("Your wishlist", "<p>Your wishlist is empty.</p>", flash=flash)
        body = "".join(f'<tr><td><a href="/products/{p["id"]}">{esc(p["name"])}</a></td><td>{esc(p["sku"])}</td>'
                       f'<td>{money(p["price"])}</td><td>{p["rating"]:.1f} / 5</td><td>{stock_text(p["stock"])}</td>'
                       f'<td><form method="post" action="/wishlist/{p["id"]}/remove"><button type="submit" '
                       f'aria-label="Remove {esc(p["name"])} from wishlist">Remove</button></form></td></tr>' for p in rows)
        return self.ok("Your wishlist", grid(["Product", "SKU", "Price", "Rating", "Availability", ""], body),
                       flash=flash)

    @post(r"/wishlist/add")
    def wishlist_add(self, r: Request) -> Response:
        p = found(self._product(r.db, r.int_arg("product_id", -1)), "product")
        r.db.execute("INSERT OR IGNORE INTO wishlist (product_id) VALUES (?)", [p["id"]])
        return redirect(f"/products/{p['id']}?done=wished")

    @post(r"/wishlist/(\d+)/remove")
    def wishlist_remove(self, r: Request) -> Response:
        pid = int(r.match.group(1))
        found(self._product(r.db, pid), "product")
        r.db.execute("DELETE FROM wishlist WHERE product_id = ?", [pid])
        return redirect(f"/products/{pid}?done=unwished" if r.arg("back") == "product" else "/wishlist?done=removed")

    # -- orders and returns ------------------------------------------------------------------------

    @get(r"/orders")
    def orders(self, r: Request) -> Response:
        total, page_no, pages, rows = r.paged("SELECT COUNT(*) FROM orders", (
            "SELECT o.*, (SELECT SUM(qty) FROM order_items i WHERE i.order_id = o.id) AS n FROM orders o "
            "ORDER BY o.id DESC"))
        body = "".join(f'<tr><td><a href="/orders/{o["id"]}">Order #{o["id"]}</a></td><td>{esc(o["placed_on"])}</td>'
                       f'<td>{o["n"] or 0}</td><td>{money(o["total"])}</td><td>{esc(o["status"])}</td></tr>' for o in rows)
        table = (grid(["Order", "Placed on", "Items", "Total", "Status"], body) if rows
                 else "<p>You have no orders yet.</p>")
        api = ('<p class="muted">Developers: <code>POST /api/orders</code> with <code>items=ID:QTY,ID:QTY</code>, '
               '<code>customer_name</code>, <code>address</code>, <code>city</code>, <code>postcode</code> and an optional '
               '<code>coupon</code> (form fields or a JSON object) creates an order directly.</p>')
        return self.ok("Your orders", f"<p>{total} order{'s' if total != 1 else ''}.</p>" + table
                       + pager("/orders", page_no, pages) + api)

    def _order(self, r: Request):
        return found(r.db.execute("SELECT * FROM orders WHERE id = ?", [int(r.match.group(1))]).fetchone(), "order")

    def _order_page(self, r: Request, o, *, status: int = 200, errors=None, flash: str = "", chosen=None) -> Response:
        items = r.db.execute("SELECT i.*, p.name, p.sku, x.reason FROM order_items i JOIN products p ON p.id = i.product_id "
                             "LEFT JOIN returns x ON x.order_item_id = i.id WHERE i.order_id = ? ORDER BY i.id",
                             [o["id"]]).fetchall()
        body = "".join(f'<tr><td>{esc(i["name"])}</td><td>{esc(i["sku"])}</td><td>{i["qty"]}</td><td>{money(i["price"])}</td>'
                       f'<td>{money(i["price"] * i["qty"])}</td><td>{returned(i["reason"])}</td></tr>' for i in items)
        info = facts([("Placed on", esc(o["placed_on"])), ("Status", esc(o["status"])),
                      ("Ship to", f'{esc(o["customer_name"])}, {esc(o["address"])}, '
                                  f'{esc(o["postcode"])} {esc(o["city"])}'),
                      ("Coupon", esc(o["coupon"]) or "none"), ("Subtotal", money(o["subtotal"])),
                      ("Discount", "-" + money(o["discount"])), ("Total", money(o["total"]))])
        lines = "<h2>Items</h2>" + grid(["Product", "SKU", "Quantity", "Price", "Line total", "Return"], body)
        open_items = [i for i in items if not i["reason"]]
        chosen = chosen or {}
        if o["status"] != "delivered":
            ret = '<p class="muted">Returns can be requested once an order has been delivered.</p>'
        elif not open_items:
            ret = '<p class="muted">A return has been requested for every item of this order.</p>'
        else:
            ret = (f'<form class="card" method="post" action="/orders/{o["id"]}/return"><h2>Request a return</h2>'
                   + field("order_item_id", "Item to return", chosen.get("order_item_id", ""), kind="select",
                           options=[("", "Choose an item")] + [(i["id"], f'{i["name"]} (x{i["qty"]})') for i in open_items])
                   + field("reason", "Reason for the return", chosen.get("reason", ""), kind="select",
                           options=[("", "Choose a reason")] + REASONS)
                   + '<button type="submit">Request return</button></form>')
        flash = flash or {"placed": f"Thank you! Order #{o['id']} has been placed.",
                          "returned": "Return requested."}.get(r.query.get("done", ""), "")
        return self.ok(f"Order #{o['id']}", info + lines + ret + '<p><a href="/orders">Back to your orders</a></p>',
                       status=status, errors=errors, flash=flash)

    @get(r"/orders/(\d+)")
    def order(self, r: Request) -> Response:
        return self._order_page(r, self._order(r))

    @post(r"/orders/(\d+)/return")
    def request_return(self, r: Request) -> Response:
        o = self._order(r)
        chosen = {"order_item_id": r.arg("order_item_id"), "reason": r.arg("reason")}
        item = r.db.execute("SELECT * FROM order_items WHERE id = ? AND order_id = ?",
                            [r.int_arg("order_item_id", -1), o["id"]]).fetchone()
        errors = []
        if o["status"] != "delivered":
            errors.append("Returns can be requested once an order has been delivered.")
        if item is None:
            errors.append("Choose the item to return.")
        elif r.db.execute("SELECT 1 FROM returns WHERE order_item_id = ?", [item["id"]]).fetchone():
            errors.append("A return was already requested for that item.")
        if chosen["reason"] not in dict(REASONS):
            errors.append("Choose a reason for the return.")
        if errors:
            return self._order_page(r, o, status=422, errors=errors, chosen=chosen)
        r.db.execute("INSERT INTO returns (order_id, order_item_id, reason, status) VALUES (?, ?, ?, 'requested')",
                     [o["id"], item["id"], chosen["reason"]])
        return redirect(f"/orders/{o['id']}?done=returned")

    # -- the API shortcut --------------------------------------------------------------------------

    @post(r"/api/orders")
    def api_order(self, r: Request) -> Response:
        """Creates an order straight from product ids and quantities (no cart, no review: ``reviewed = 0``),
        from form fields or a JSON body (Content-Type: application/json)."""
        if r.json is not None and not isinstance(r.json, dict):
            return self._json({"errors": ["the JSON body must be an object"]}, 400)
        data: dict = dict(r.json) if isinstance(r.json, dict) else dict(r.form)
        errors, lines = [], []
        items = data.get("items", "")
        pairs: list  # (product id, quantity) as sent: anything a JSON body holds
        if isinstance(items, str):
            pairs = [p.split(":", 1) if ":" in p else p.split("x", 1) for p in items.replace(" ", "").split(",") if p]
        elif isinstance(items, list):
            pairs = [(p.get("product_id"), p.get("qty")) if isinstance(p, dict) else p for p in items]
        else:
            pairs = []
        for pair in pairs:
            try:
                pid, qty = int(pair[0]), int(pair[1])
            except (TypeError, ValueError, IndexError):
                errors.append(f"bad item {pair!r} (use product id and quantity)")
                continue
            p = self._product(r.db, pid)
            if p is None or qty < 1:
                errors.append(f"no product {pid} or bad quantity {qty}")
            elif qty > p["stock"]:
                errors.append(f"only {p['stock']} of product {pid} in stock")
            else:
                lines.append((pid, qty, p["price"]))
        if not pairs:
            errors.append("items is required")
        shipping = {k: str(data.get(k, "")).strip() for k in SHIPPING}
        errors += [f"{k} is required" for k in SHIPPING[:3] if not shipping[k]]
        if not POSTCODE.match(shipping["postcode"]):
            errors.append("postcode is not valid")
        if errors:
            return self._json({"errors": errors}, 422)
        order_id, total = self._create_order(r.db, lines, shipping, str(data.get("coupon", "")).strip().upper(), 0)
        return self._json({"order_id": order_id, "total": money(total), "reviewed": False}, 201)

    def _json(self, data: dict, status: int) -> Response:
        return Response(json.dumps(data), status, content_type="application/json")


APP = Shop
