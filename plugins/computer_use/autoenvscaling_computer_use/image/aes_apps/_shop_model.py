"""The web shop's data (standard library only, beside shop.py in the image): its schema, the money
arithmetic its pages and orders share, and the fixed choices the pages offer."""

from __future__ import annotations

import re

POSTCODE = re.compile(r"^\d{4}-\d{3}$|^\d{5}$")
SORTS = [("name", "Name"), ("price_asc", "Price: low to high"), ("price_desc", "Price: high to low"),
         ("rating_desc", "Rating: high to low")]
ORDER_BY = {"name": "name, id", "price_asc": "price, id", "price_desc": "price DESC, id",
            "rating_desc": "rating DESC, id"}
REASONS = [("damaged", "Arrived damaged"), ("wrong_item", "Wrong item sent"), ("not_as_described", "Not as described"),
           ("no_longer_needed", "No longer needed"), ("too_late", "Arrived too late")]
SHIPPING = ["customer_name", "address", "city", "postcode"]

SCHEMA = """
CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  category TEXT NOT NULL,
  price INTEGER NOT NULL,
  stock INTEGER NOT NULL DEFAULT 0,
  rating REAL NOT NULL DEFAULT 0,
  description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE coupons (
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  percent_off INTEGER NOT NULL,
  min_subtotal INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE cart_items (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL
);
CREATE TABLE checkout (
  id INTEGER PRIMARY KEY,
  coupon TEXT NOT NULL DEFAULT '',
  customer_name TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  postcode TEXT NOT NULL DEFAULT ''
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  placed_on TEXT NOT NULL DEFAULT '',
  customer_name TEXT NOT NULL,
  address TEXT NOT NULL,
  city TEXT NOT NULL,
  postcode TEXT NOT NULL,
  coupon TEXT NOT NULL DEFAULT '',
  subtotal INTEGER NOT NULL,
  discount INTEGER NOT NULL DEFAULT 0,
  total INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'placed',
  reviewed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE order_items (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  qty INTEGER NOT NULL,
  price INTEGER NOT NULL
);
CREATE TABLE wishlist (
  id INTEGER PRIMARY KEY,
  product_id INTEGER NOT NULL UNIQUE REFERENCES products(id)
);
CREATE TABLE returns (
  id INTEGER PRIMARY KEY,
  order_id INTEGER NOT NULL REFERENCES orders(id),
  order_item_id INTEGER NOT NULL UNIQUE REFERENCES order_items(id),
  reason TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'requested'
);
CREATE TABLE settings (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  value TEXT NOT NULL DEFAULT ''
);
"""


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def discount_of(subtotal: int, percent: int) -> int:
    """The discount in cents, rounded half up (integer arithmetic, the same everywhere)."""
    return (subtotal * percent + 50) // 100


def parse_money(text: str) -> int | None:
    try:
        value = float(text.replace("$", "").replace(",", "").strip())
    except ValueError:
        return None
    return int(round(value * 100)) if value >= 0 else None


def stock_text(stock: int) -> str:
    return f"{stock} in stock" if stock > 0 else "Out of stock"
