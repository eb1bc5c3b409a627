"""shop_browse: navigate the shop's categories, filters and pages (and the order history) to find
products and act on them.

Two kinds of request, and both at once on levels 4-5:
- wishlist: add to the wishlist every product of a category under a price and above a rating (in stock
  from level 2), spread over several pages; from level 2 also the product with a given SKU (similar SKUs
  nearby); from level 3 also remove from the wishlist whatever is out of stock.
- returns: find an order in the paginated order history (by number, then by its date) and request a
  return of one of its items with a reason; the same product sits in other orders, and from level 3
  the order holds a same-model product in another colour and an undelivered order is nearby.

Levels: more products and orders (more pages), more criteria, more targets; decoys just over the
price (one exactly at it: "under" is strict), just under the rating, out of stock.
"""

from __future__ import annotations

import datetime
import random
from typing import Any

from .base import Draft
from .shop_checkout import (CATEGORIES, COLOURED, MODEL, Catalogue, money, price_in, rows_of, shipping_of,
                            today_of)

CATEGORY_SIZE = {0: 8, 1: 16, 2: 27, 3: 38, 4: 34, 5: 48}
N_TARGETS = {0: 2, 1: 2, 2: 3, 3: 4, 4: 3, 5: 5}
N_ORDERS = {0: 4, 1: 13, 2: 22, 3: 32, 4: 24, 5: 36}
N_RETURNS = {0: 1, 1: 1, 2: 1, 3: 2, 4: 1, 5: 2}


def sweep(rng: random.Random, cat: Catalogue, level: int) -> dict:
    """The wishlist category: targets that meet every criterion and decoys that miss exactly one."""
    category = rng.choice(list(CATEGORIES))
    lo, hi = CATEGORIES[category][3]
    cap = int(lo + (hi - lo) * rng.uniform(0.35, 0.6)) // 1000 * 1000 + 1000
    min_rating, in_stock = rng.choice([4.0, 4.5]), level >= 2
    crit = {"category": category, "max_price": cap, "min_rating": min_rating, "in_stock": in_stock}

    def meets(p: dict) -> bool:
        return p["price"] < cap and p["rating"] >= min_rating and (p["stock"] > 0 or not in_stock)

    def good_rating() -> float:
        return round(rng.uniform(min_rating, 5.0), 1)

    targets = [cat.add(category, price=price_in(rng, lo, cap - 100), rating=good_rating(), stock=rng.randint(1, 30))
               for _ in range(N_TARGETS[level])]
    decoys = [cat.add(category, price=price_in(rng, cap + 100, cap + 2500), rating=good_rating(), stock=rng.randint(1, 30)),
              cat.add(category, price=price_in(rng, lo, cap - 100), rating=round(min_rating - rng.choice([0.1, 0.2]), 1),
                      stock=rng.randint(1, 30))]
    if in_stock:
        decoys.append(cat.add(category, price=price_in(rng, lo, cap - 100), rating=good_rating(), stock=0))
    if level >= 3:
        decoys.append(cat.add(category, price=cap, rating=good_rating(), stock=rng.randint(1, 30)))
    size = CATEGORY_SIZE[level]
    cat.fill(category, size - len(targets) - len(decoys), ok=lambda p: not meets(p) and p["price"] != cap)
    assert [p for p in cat.items if p["category"] == category and meets(p)] == targets
    return {"criteria": crit, "targets": targets}


def sku_target(rng: random.Random, cat: Catalogue, avoid: str, level: int) -> dict:
    """A product known by its SKU, in a category of its own with SKUs that differ by a swapped digit."""
    category = rng.choice([c for c in CATEGORIES if c != avoid])
    code = CATEGORIES[category][0]
    digits = list(str(rng.randint(1000, 9999)))
    while len(set(digits)) < 4:
        digits = list(str(rng.randint(1000, 9999)))
    target = cat.add(category, sku=f"{code}-{''.join(digits)}", stock=rng.randint(1, 30))
    for i in rng.sample(range(3), 2):
        swapped = digits[:]
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        cat.add(category, sku=f"{code}-{''.join(swapped)}")
    cat.fill(category, 6 + 3 * level)
    return {"product": target, "category": category}


def return_products(rng: random.Random, cat: Catalogue, level: int, avoid: str | None) -> list[tuple[dict, dict | None]]:
    """The products to send back and, from level 3, a twin of each (same model, another colour) that
    will sit in the same order."""
    out = []
    for _ in range(N_RETURNS[level]):
        category = rng.choice([c for c in COLOURED if c != avoid])
        product = cat.add(category, stock=rng.randint(1, 30))
        twin = cat.add(category, type_=product["_type"], model=product["_model"]) if level >= 3 else None
        out.append((product, twin))
    return out


def order_history(rng: random.Random, products: list[dict], wanted: list[tuple[dict, dict | None]], level: int,
                  today: datetime.date, ship: dict) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """The orders (oldest first, the newest not yet delivered), their items, a few earlier return
    requests and the return targets."""
    gaps = [rng.randint(3, 9) for _ in range(N_ORDERS[level])]
    day = today - datetime.timedelta(days=sum(gaps) + 2)
    orders = []
    for oid, gap in enumerate(gaps, 1):
        day += datetime.timedelta(days=gap)
        age = (today - day).days
        status = "placed" if age < 3 else "shipped" if age < 7 else "cancelled" if rng.random() < 0.08 else "delivered"
        orders.append({"id": oid, "placed_on": day.isoformat(), **ship, "coupon": "", "subtotal": 0, "discount": 0,
                       "total": 0, "status": status, "reviewed": 1})
    delivered = [o for o in orders if o["status"] == "delivered"]
    chosen = rng.sample(delivered[len(delivered) // 4:], len(wanted))
    bags: dict[int, list[dict]] = {o["id"]: [] for o in orders}
    targets: list[dict] = []
    for o, (product, twin) in zip(chosen, wanted):
        bags[o["id"]] += [product] + ([twin] if twin else [])
        if level >= 2:  # the same product in two other orders, so the date must tell them apart
            for other in rng.sample([x for x in orders if x not in chosen], 2):
                bags[other["id"]].append(product)
        targets.append({"order": o, "product": product, "reason": rng.choice(MODEL.REASONS)})
    items: list[dict] = []
    for o in orders:
        bag = bags[o["id"]]
        want = max(len(bag), rng.randint(1, 4))
        while len(bag) < want:
            p = rng.choice(products)
            if p not in bag:
                bag.append(p)
        rng.shuffle(bag)
        for p in bag:
            qty = rng.choice([1, 1, 1, 2])
            items.append({"id": len(items) + 1, "order_id": o["id"], "product_id": p["id"], "qty": qty, "price": p["price"]})
            o["subtotal"] += qty * p["price"]
        o["total"] = o["subtotal"]
    for t in targets:
        t["item"] = next(i for i in items if i["order_id"] == t["order"]["id"] and i["product_id"] == t["product"]["id"])
    returns: list[dict] = []  # earlier requests on other delivered orders
    spare = [o for o in delivered if o not in chosen]
    for o in rng.sample(spare, min(2, len(spare))):
        item = next(i for i in items if i["order_id"] == o["id"])
        returns.append({"id": len(returns) + 1, "order_id": o["id"], "order_item_id": item["id"],
                        "reason": rng.choice(MODEL.REASONS)[0], "status": "requested"})
    return orders, items, returns, targets


def build(rng: random.Random, level: int) -> Draft:
    kind = "both" if level >= 4 else rng.choice(["wishlist", "returns"])
    cat = Catalogue(rng)
    do_wish, do_returns = kind in ("wishlist", "both"), kind in ("returns", "both")
    wish = sweep(rng, cat, level) if do_wish else None
    sku = sku_target(rng, cat, wish["criteria"]["category"], level) if wish is not None and level >= 2 else None
    wanted = return_products(rng, cat, level, wish["criteria"]["category"] if wish else None) if do_returns else []
    others = [c for c in CATEGORIES if c not in {wish and wish["criteria"]["category"], sku and sku["category"]}]
    for category in rng.sample(others, 3 if do_returns else 2):
        cat.fill(category, 5 + 2 * level)
    products = cat.finish()

    ship, today = shipping_of(rng), today_of(rng)
    seed_wish, remove = [], []
    if wish is not None:
        crit = wish["criteria"]
        outside = [p for p in products if p["category"] != crit["category"] and p is not (sku and sku["product"])]
        if level >= 2:  # one target is already there, and something unrelated that stays
            seed_wish += [wish["targets"][0], rng.choice([p for p in outside if p["stock"] > 0])]
        if level >= 3:  # out-of-stock products to clear
            gone = [p for p in outside if p["stock"] == 0]
            while len(gone) < 2:
                p = rng.choice([p for p in outside if p["stock"] > 0 and p not in seed_wish])
                p["stock"] = 0
                gone.append(p)
            remove = rng.sample(gone, 2)
            seed_wish += remove
    orders, items, returns, targets = (order_history(rng, products, wanted, level, today, ship) if do_returns
                                       else ([], [], [], []))
    wish_rows = [{"id": i, "product_id": p["id"]} for i, p in enumerate(seed_wish, 1)]
    rows = {"products": rows_of(products),
            "coupons": [{"id": 1, "code": "SAVE10", "percent_off": 10, "min_subtotal": 0}],
            "cart_items": [], "checkout": [{"id": 1}],
            "orders": orders, "order_items": items, "wishlist": wish_rows, "returns": returns,
            "settings": [{"id": 1, "name": "today", "value": today.isoformat()}]}

    parts, expect = [], []
    params: dict[str, Any] = {}
    if wish is not None:
        crit = wish["criteria"]
        stock = " that is in stock" if crit["in_stock"] else ""
        text = (f"add to my wishlist every product in the {crit['category']} category priced under {money(crit['max_price'])} "
                f"and rated {crit['min_rating']:.1f} or higher{stock}")
        notes = (["it has several pages"] if level >= 1 else []) + (["some may already be on my wishlist"] if seed_wish else [])
        text += f" ({'; '.join(notes)})." if notes else "."
        parts.append(text[0].upper() + text[1:])
        new = [p for p in wish["targets"] if p not in seed_wish]
        if sku:
            parts.append(f"Also add the product with SKU {sku['product']['sku']} (it is in {sku['category']}).")
            new.append(sku["product"])
        if remove:
            parts.append("Then remove from my wishlist everything that is out of stock; leave the rest of it as it is.")
        for p in new:
            expect.append({"what": f"{p['name']} ({p['sku']}) is added to the wishlist", "table": "wishlist",
                           "insert": {"product_id": p["id"]}, "count": 1})
        for p in remove:
            expect.append({"what": f"{p['name']} (out of stock) is removed from the wishlist", "table": "wishlist",
                           "deleted": {"product_id": p["id"]}})
        params["wishlist"] = {**crit, "expected": sorted(p["name"] for p in wish["targets"]),
                              "sku": sku and {"sku": sku["product"]["sku"], "category": sku["category"],
                                              "name": sku["product"]["name"]},
                              "remove_out_of_stock": bool(remove), "expected_removed": sorted(p["name"] for p in remove)}
    if do_returns:
        lines, params["returns"] = [], []
        for t in targets:
            o, label = t["order"], t["reason"][1]
            day = datetime.date.fromisoformat(o["placed_on"])
            which = f"order #{o['id']}" if level <= 1 else f"the order I placed on {day:%B} {day.day}, {day.year}"
            lines.append(f"- from {which}: the {t['product']['name']}, reason \"{label}\"")
            expect.append({"what": f"a return of {t['product']['name']} from order #{o['id']} ({label})", "table": "returns",
                           "insert": {"order_id": o["id"], "order_item_id": t["item"]["id"], "reason": t["reason"][0],
                                      "status": "requested"}, "count": 1})
            params["returns"].append({"order_id": o["id"] if level <= 1 else None, "placed_on": o["placed_on"],
                                      "product": t["product"]["name"], "reason": label})
        parts.append("In my order history, request a return (the form is on the order's page) of:\n" + "\n".join(lines))
    instruction = ("I shop at our web shop at http://127.0.0.1:8080/. "
                   + ("Please do the following.\n\n" if len(parts) > 1 else "") + "\n\n".join(parts) + "\n\nDo not change anything else: no orders, no other wishlist changes.\n")
    return Draft(app="shop", rows=rows, instruction=instruction, expect=expect, params=params, kind=kind,
                 free_tables=["cart_items", "checkout"],
                 tags=["pagination", "filtering", "multi-page navigation"] + (["returns"] if do_returns else [])
                 + (["wishlist"] if do_wish else []),
                 parameters={"products": len(products), "orders": len(orders),
                             "wishlist_adds": len(expect) - len(targets) - len(remove), "removals": len(remove),
                             "returns": len(targets), "criteria": 3 if level >= 2 else 2},
                 agent_timeout_sec=600.0 + 120.0 * len(expect))
