"""shop_checkout: buy what a shopping list asks, under a budget and with the right coupon, through the
cart, the shipping form, the review page and "Place order".

The list mixes three kinds of item: a named product in a colour ("the Trail Backpack in Green"), the
cheapest product of a type above a rating that is in stock, and (levels 4-5) the best-rated product of
a type that keeps the subtotal within a budget. The order must come from the review page (``reviewed =
1`` and the review page requested before the order is placed), not from the shop's JSON shortcut.

Levels: more items and products (more pages per category); decoys (cheaper but rated lower, cheaper but
out of stock, the same model in other colours, "Pro"/"Lite" models of the same name); a preferred
coupon that the order does not qualify for, so the fallback must be used; leftovers in the cart and an
old shipping address prefilled in the form; a budget item.

This module also holds the catalogue vocabulary and builder that shop_browse shares.
"""

from __future__ import annotations

import datetime
import random

from ..apps import app_module
from .base import Draft
from .content import CITIES, FIRST, LAST

COLOURS = ["Black", "Green", "Blue", "Red", "Grey", "Orange", "Navy", "Olive", "White", "Yellow"]
# category: (SKU prefix, product types, variants, price range in cents)
CATEGORIES = {
    "Backpacks": ("BAG", ["Backpack", "Daypack", "Duffel Bag"], COLOURS, (3500, 18000)),
    "Bottles": ("BTL", ["Water Bottle", "Travel Mug", "Thermos Flask"], COLOURS, (900, 4500)),
    "Cables": ("CBL", ["USB-C Cable", "HDMI Cable", "Lightning Cable", "Ethernet Cable"], ["1 m", "2 m", "3 m"], (500, 3500)),
    "Footwear": ("FTW", ["Hiking Boots", "Trail Shoes", "Sandals"], COLOURS, (3000, 20000)),
    "Headphones": ("AUD", ["Wireless Headphones", "Earbuds", "Studio Headphones"], ["Black", "White", "Blue", "Red"],
                   (1500, 30000)),
    "Lamps": ("LMP", ["Desk Lamp", "Headlamp", "Camp Lantern"], ["Black", "White", "Brass", "Green"], (1200, 9000)),
    "Tents": ("TNT", ["2-Person Tent", "3-Person Tent", "Ultralight Tent", "Family Tent"], ["Green", "Orange", "Grey", "Sand"],
              (6000, 45000)),
    "Kitchen": ("KIT", ["Camp Stove", "Cook Set", "Chef Knife"], ["Steel", "Titanium", "Black"], (1500, 15000)),
}
COLOURED = ["Backpacks", "Bottles", "Footwear", "Headphones"]
MODELS = ["Trail", "Summit", "Metro", "Ridge", "Canyon", "Nomad", "Alpine", "Harbor", "Boreal", "Cascade", "Drift",
          "Ember", "Fjord", "Glacier", "Horizon", "Juniper", "Kestrel", "Lumen", "Mesa", "Nova", "Orbit", "Pioneer",
          "Quarry", "Sierra", "Tundra", "Vista", "Willow", "Zephyr", "Voltix", "Arcline", "Basalt", "Cirrus"]
STREETS = ["Rua Augusta", "Calle Mayor", "Rue Mercière", "Via Roma", "Harbour Street", "Lindenallee", "Kongensgade",
           "Rua das Flores", "Market Lane", "Bridge Road", "Oak Avenue", "Station Road"]
COUPON_BIG = ["BIG20", "TREK25", "SUMMER20", "GEAR15", "OUTDOOR25"]  # the number is the percentage off
COUPON_SMALL = ["SAVE10", "WELCOME5", "THANKS10", "HELLO5", "FRIEND10"]
COUPON_RARE = ["VIP30", "MEMBER30", "GOLD35"]
SIZES = {0: 12, 1: 20, 2: 35, 3: 50, 4: 70, 5: 90}
MODEL = app_module("_shop_model")  # the shop's own money arithmetic and return reasons
money = MODEL.money


def percent_of(code: str) -> int:
    return int("".join(ch for ch in code if ch.isdigit()))


def price_in(rng: random.Random, lo: int, hi: int) -> int:
    """A shop-like price in cents (ending in .99, .49 or .00) near [lo, hi] (at most a dollar under lo)."""
    return max(199, rng.randint(lo // 100, max(lo, hi) // 100) * 100 + rng.choice([99, 49, 0]) - 100)


def rating_of(rng: random.Random, lo: float = 2.5, hi: float = 5.0) -> float:
    return round(min(hi, max(lo, rng.triangular(lo, hi, min(hi, max(lo, 4.2))))), 1)


class Catalogue:
    """Products with unique names and SKUs; ``finish`` shuffles them and numbers the ids."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.items: list[dict] = []
        self.names: set[str] = set()
        self.skus: set[str] = set()

    def sku(self, category: str) -> str:
        while True:
            sku = f"{CATEGORIES[category][0]}-{self.rng.randint(1000, 9999)}"
            if sku not in self.skus:
                self.skus.add(sku)
                return sku

    def add(self, category: str, *, type_: str | None = None, model: str | None = None, variant: str | None = None,
            price: int | None = None, rating: float | None = None, stock: int | None = None, sku: str | None = None) -> dict:
        rng = self.rng
        code, types, variants, (lo, hi) = CATEGORIES[category]
        for _ in range(1000):
            t, m, v = type_ or rng.choice(types), model or rng.choice(MODELS), variant or rng.choice(variants)
            name = f"{m} {t} ({v})"
            if name not in self.names:
                break
        else:
            raise ValueError(f"no free name for {type_} {model} {variant}")
        self.names.add(name)
        if sku:
            self.skus.add(sku)
        item = {"id": 0, "sku": sku or self.sku(category), "name": name, "category": category,
                "price": price if price is not None else price_in(rng, lo, hi),
                "stock": stock if stock is not None else (0 if rng.random() < 0.12 else rng.randint(3, 40)),
                "rating": rating if rating is not None else rating_of(rng),
                "description": f"The {m} {t.lower()} in {v.lower()}: {rng.choice(DESCRIPTIONS)}"}
        item["_type"], item["_model"], item["_variant"] = t, m, v
        self.items.append(item)
        return item

    def fill(self, category: str, n: int, *, avoid_types: tuple[str, ...] = (), ok=None) -> None:  # noqa: ANN001
        """n more random products of ``category``, none of the types in ``avoid_types``."""
        types = [t for t in CATEGORIES[category][1] if t not in avoid_types]
        added = 0
        while added < n:
            item = self.add(category, type_=self.rng.choice(types))
            if ok is not None and not ok(item):
                self.items.remove(item)
                continue
            added += 1

    def finish(self) -> list[dict]:
        self.rng.shuffle(self.items)
        for i, item in enumerate(self.items, 1):
            item["id"] = i
        return self.items


DESCRIPTIONS = ["built for long days outdoors.", "light, tough and easy to pack.", "a customer favourite.",
                "backed by a two-year warranty.", "designed with recycled materials.", "our best value pick.",
                "made to last season after season.", "compact and dependable."]


def rows_of(items: list[dict]) -> list[dict]:
    """The products as seed rows (without the builder's private fields)."""
    return [{k: v for k, v in p.items() if not k.startswith("_")} for p in items]


def shipping_of(rng: random.Random) -> dict:
    return {"customer_name": f"{rng.choice(FIRST)} {rng.choice(LAST)}",
            "address": f"{rng.randint(1, 180)} {rng.choice(STREETS)}", "city": rng.choice(CITIES),
            "postcode": f"{rng.randint(1000, 9899)}-{rng.randint(0, 999):03d}"}


def today_of(rng: random.Random) -> datetime.date:
    return datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randint(120, 330))


def history(rng: random.Random, products: list[dict], shipping: dict, today: datetime.date, n: int,
            first_item_id: int = 1) -> tuple[list[dict], list[dict]]:
    """n past orders (oldest first, ids 1..n) of random products, and their items."""
    orders: list[dict] = []
    items: list[dict] = []
    day = today - datetime.timedelta(days=rng.randint(3, 9) * n + 5)
    for oid in range(1, n + 1):
        day += datetime.timedelta(days=rng.randint(3, 9))
        chosen = rng.sample(products, rng.randint(1, min(4, len(products))))
        subtotal = 0
        for p in chosen:
            qty = rng.choice([1, 1, 1, 2])
            items.append({"id": first_item_id + len(items), "order_id": oid, "product_id": p["id"], "qty": qty,
                          "price": p["price"]})
            subtotal += qty * p["price"]
        orders.append({"id": oid, "placed_on": day.isoformat(), **shipping, "coupon": "", "subtotal": subtotal,
                       "discount": 0, "total": subtotal, "status": "delivered", "reviewed": 1})
    return orders, items


# -- the shopping list -----------------------------------------------------------------------------

def named_item(rng: random.Random, cat: Catalogue, category: str, qty: int, level: int) -> dict:
    """A model in a colour, with the same model in other colours and (level 2+) Pro/Lite models in that colour."""
    _, types, variants, _ = CATEGORIES[category]
    type_, model, colour = rng.choice(types), rng.choice(MODELS), rng.choice(variants)
    target = cat.add(category, type_=type_, model=model, variant=colour, stock=qty + rng.randint(2, 15))
    for other in rng.sample([v for v in variants if v != colour], 2 if level < 3 else 3):
        cat.add(category, type_=type_, model=model, variant=other)
    if level >= 2:
        for suffix in rng.sample(["Pro", "Lite", "X"], 1 if level < 4 else 2):
            cat.add(category, type_=type_, model=f"{model} {suffix}", variant=colour)
    return {"kind": "named", "product": target, "qty": qty, "category": category,
            "text": f"the {model} {type_} in {colour}"}


def cheapest_item(rng: random.Random, cat: Catalogue, category: str, type_: str, qty: int, level: int) -> dict:
    """The cheapest in-stock product of a type rated at least R, with cheaper decoys rated lower or out of stock."""
    lo, hi = CATEGORIES[category][3]
    min_rating = rng.choice([3.5, 4.0, 4.5])
    span = (hi - lo) // 3
    best = price_in(rng, lo + span, lo + 2 * span)
    target = cat.add(category, type_=type_, price=best, rating=round(rng.uniform(min_rating, 5.0), 1),
                     stock=qty + rng.randint(3, 20))
    prices = {best}

    def fresh(a: int, b: int) -> int:
        while True:
            p = price_in(rng, a, b)
            if p not in prices and a <= p <= b:
                prices.add(p)
                return p

    n_lower = 1 if level <= 1 else 2 if level <= 3 else 3
    for _ in range(n_lower):  # cheaper, in stock, rated just under the bar
        cat.add(category, type_=type_, price=fresh(lo, best - 100),
                rating=round(min_rating - rng.choice([0.1, 0.2, 0.3, 0.6]), 1), stock=rng.randint(3, 30))
    if level >= 2:  # cheaper, well rated, out of stock
        cat.add(category, type_=type_, price=fresh(lo, best - 100), rating=round(rng.uniform(min_rating, 5.0), 1), stock=0)
    for _ in range(2 + level):  # dearer ones, any rating
        cat.add(category, type_=type_, price=fresh(best + 100, hi + span), stock=rng.randint(3, 30))
    return {"kind": "cheapest", "product": target, "qty": qty, "category": category, "type": type_,
            "min_rating": min_rating,
            "text": f"the cheapest {type_} rated {min_rating:.1f} or higher that is in stock"}


def budget_item(rng: random.Random, cat: Catalogue, category: str, type_: str, qty: int, fixed: int) -> dict:
    """The best-rated in-stock product of a type that keeps the subtotal within a budget: the better-rated
    ones cost too much, the best-rated of all is out of stock."""
    lo, hi = CATEGORIES[category][3]
    price = price_in(rng, lo, (lo + hi) // 2)
    budget = -(-(fixed + qty * price + rng.randint(200, 1500)) // 100) * 100
    ratings = rng.sample([x / 10 for x in range(30, 50)], 7)
    ratings.sort(reverse=True)
    n_above = rng.randint(1, 2)
    cat.add(category, type_=type_, price=price_in(rng, lo, price), rating=5.0, stock=0)
    for r in ratings[:n_above]:  # better rated, too dear for the budget
        too_dear = -(-(budget - fixed + 300) // qty)
        cat.add(category, type_=type_, price=price_in(rng, too_dear + 100, too_dear + (hi - lo) // 2) + 100,
                rating=r, stock=rng.randint(3, 30))
    target = cat.add(category, type_=type_, price=price, rating=ratings[n_above], stock=qty + rng.randint(3, 20))
    for r in ratings[n_above + 1:]:  # worse rated, any price
        cat.add(category, type_=type_, price=price_in(rng, lo, hi), rating=r, stock=rng.randint(0, 30))
    return {"kind": "budget", "product": target, "qty": qty, "category": category, "type": type_, "budget": budget,
            "text": f"the highest-rated {type_} that is in stock and keeps the order's subtotal (before any coupon) "
                    f"at or under {money(budget)}"}


def check_list(items: list[dict], products: list[dict]) -> None:
    """Each item's target is the one and only answer to its description (guards the generator)."""
    fixed = 0
    for it in items:
        t = it["product"]
        if it["kind"] == "named":
            assert sum(p["name"] == t["name"] for p in products) == 1
        elif it["kind"] == "cheapest":
            ok = [p for p in products if p["_type"] == it["type"] and p["rating"] >= it["min_rating"] and p["stock"] >= it["qty"]]
            assert min(ok, key=lambda p: p["price"]) is t and sorted(p["price"] for p in ok)[:2].count(t["price"]) == 1
        else:
            ok = [p for p in products if p["_type"] == it["type"] and p["stock"] >= it["qty"]
                  and fixed + it["qty"] * p["price"] <= it["budget"]]
            best = max(ok, key=lambda p: p["rating"])
            assert best is t and [p["rating"] for p in ok].count(t["rating"]) == 1
        if it["kind"] != "budget":
            fixed += it["qty"] * t["price"]


def build(rng: random.Random, level: int) -> Draft:
    cat = Catalogue(rng)
    n_items = {0: 1, 1: 2, 2: 2, 3: 3, 4: 3, 5: 4}[level]
    n_budget = 1 if level >= 4 else 0
    kinds = ["named", "cheapest", "cheapest", "named"][: n_items - n_budget]
    cats = rng.sample(list(CATEGORIES), len(kinds) + n_budget)
    items: list[dict] = []
    used_types: dict[str, list[str]] = {}
    for kind, category in zip(kinds, cats):
        qty = 1 if level == 0 else rng.randint(1, 3)
        if kind == "named":
            category = category if category in COLOURED else rng.choice([c for c in COLOURED if c not in cats])
            items.append(named_item(rng, cat, category, qty, level))
        else:
            type_ = rng.choice(CATEGORIES[category][1])
            items.append(cheapest_item(rng, cat, category, type_, qty, level))
        used_types.setdefault(items[-1]["category"], []).append(items[-1]["product"]["_type"])
    if n_budget:
        fixed = sum(it["qty"] * it["product"]["price"] for it in items)
        category = cats[-1]
        type_ = rng.choice(CATEGORIES[category][1])
        items.append(budget_item(rng, cat, category, type_, 1 if level == 4 else rng.randint(1, 2), fixed))
        used_types.setdefault(category, []).append(type_)
    # filler: the items' categories grow to several pages, plus other categories
    others = [c for c in CATEGORIES if c not in used_types]
    while len(cat.items) < SIZES[level]:
        category = rng.choice(list(used_types) * 3 + others)
        cat.fill(category, 1, avoid_types=tuple(used_types.get(category, [])))
    products = cat.finish()
    check_list(items, products)

    subtotal = sum(it["qty"] * it["product"]["price"] for it in items)
    big, small = rng.choice(COUPON_BIG), rng.choice(COUPON_SMALL)
    big_pct, small_pct = percent_of(big), percent_of(small)
    big_ok = level <= 1 or (level >= 4 and rng.random() < 0.4)  # levels 2-3: the fallback coupon
    step = 5000 if subtotal > 10000 else 1000
    big_min = (max(0, (subtotal - rng.randint(500, 3000)) // step * step) if big_ok
               else (subtotal + rng.randint(500, 6000)) // step * step + step)
    small_min = max(0, (subtotal // 3) // 1000 * 1000)
    rare, other = rng.choice(COUPON_RARE), rng.choice([c for c in COUPON_SMALL if c != small])
    coupons = [{"id": 0, "code": code_, "percent_off": percent_of(code_), "min_subtotal": least}
               for code_, least in [(big, big_min), (small, small_min), (rare, 150000), (other, 0)]]
    rng.shuffle(coupons)
    for i, c in enumerate(coupons, 1):
        c["id"] = i
    code, pct = (big, big_pct) if big_ok else (small, small_pct)
    discount = MODEL.discount_of(subtotal, pct)

    ship, old = shipping_of(rng), shipping_of(rng)
    old["customer_name"] = ship["customer_name"]
    today = today_of(rng)
    orders, order_items = history(rng, products, old, today, rng.randint(1, 3) + level // 2)
    checkout = {"id": 1, "coupon": "", "customer_name": "", "address": "", "city": "", "postcode": ""}
    leftovers = []
    if level >= 3:  # the form remembers the old address; the cart holds something not on the list
        checkout.update(old)
        listed = {it["product"]["id"] for it in items}
        spare = rng.choice([p for p in products if p["stock"] > 0 and p["id"] not in listed])
        leftovers = [{"id": 1, "product_id": spare["id"], "qty": 1}]
    rows = {"products": rows_of(products), "coupons": coupons, "cart_items": leftovers, "checkout": [checkout],
            "orders": orders, "order_items": order_items, "wishlist": [], "returns": [],
            "settings": [{"id": 1, "name": "today", "value": today.isoformat()}]}

    coupon_text = (f"Apply the coupon {big}." if level <= 1 else f"Use the coupon {big} if the order qualifies for it; "
                   f"if it does not, use {small} instead (only one coupon can be applied).")
    lines = [f"- {it['qty']} x {it['text']}" + (f" (in {it['category']})" if it["kind"] != "named" else "")
             for it in items]
    extra = " My cart still has something in it from before: remove anything that is not on this list." if leftovers else ""
    instruction = (
        "Please place an order for me in our web shop at http://127.0.0.1:8080/. Buy exactly this:\n\n"
        + "\n".join(lines) + "\n\n"
        + f"{coupon_text} Ship it to {ship['customer_name']}, {ship['address']}, {ship['postcode']} {ship['city']}."
        + extra + "\n\nGo through the normal checkout: cart, shipping details, then the review page, and place the "
        "order from the review page (do not use the shop's API). Place exactly one order, with nothing else in it.\n")

    k = len(orders)
    new = f"(SELECT id FROM orders WHERE id > {k})"
    bought = sorted((it["product"]["id"], it["qty"], it["product"]["price"]) for it in items)
    names = {it["product"]["id"]: it["product"]["name"] for it in items}
    expect: list[dict] = [
        {"what": f"one new order shipped to {ship['customer_name']}, {ship['address']}, {ship['postcode']} {ship['city']}",
         "table": "orders", "insert": {**ship, "status": "placed"}, "count": 1},
        {"what": "the new order holds " + ", ".join(f"{q} x {names[pid]}" for pid, q, _ in bought),
         "query": f"SELECT product_id, qty, price FROM order_items WHERE order_id IN {new} ORDER BY product_id, id",
         "rows": [list(b) for b in bought]},
        {"what": f"coupon {code}: subtotal {money(subtotal)}, discount {money(discount)}, total {money(subtotal - discount)}",
         "query": f"SELECT coupon, subtotal, discount, total FROM orders WHERE id > {k}",
         "rows": [[code, subtotal, discount, subtotal - discount]]},
        {"what": "the order was placed from the review page (reviewed = 1)", "required": True,
         "query": f"SELECT reviewed FROM orders WHERE id > {k}", "rows": [[1]]},
        {"what": "the review page was opened before the order was placed", "required": True,
         "journal": {"method": "GET", "path": "/checkout/review", "status": 200},  # a redirect away is no review
         "before": {"method": "POST", "path": "/checkout/place"}},
    ]
    for it in items:
        p = it["product"]
        expect.append({"what": f"stock of {p['name']} drops by {it['qty']} to {p['stock'] - it['qty']}",
                       "table": "products", "key": {"id": p["id"]}, "values": {"stock": p["stock"] - it["qty"]}})

    params = {"items": [{k2: v for k2, v in {"kind": it["kind"], "qty": it["qty"], "category": it["category"],
                                            "name": it["product"]["name"], "type": it.get("type"),
                                            "min_rating": it.get("min_rating"), "budget": it.get("budget")}.items()
                         if v is not None} for it in items],
              "coupons": [big] if level <= 1 else [big, small], "shipping": ship, "clear_cart": bool(leftovers)}
    return Draft(app="shop", rows=rows, instruction=instruction, expect=expect, params=params,
                 kind="budget" if n_budget else "list",
                 free_tables=["cart_items", "checkout", "order_items", "wishlist"],
                 tags=["cart", "checkout", "coupon", "comparison", "pagination"] + (["budget"] if n_budget else []),
                 parameters={"products": len(products), "items": len(items), "coupon_fallback": not big_ok,
                             "leftovers": bool(leftovers)},
                 agent_timeout_sec=600.0 + 240.0 * len(items))
