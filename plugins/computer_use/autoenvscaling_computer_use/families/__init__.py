"""The computer-use families: each module has ``build(rng, level) -> Draft`` and a reference
solution solutions/<family>.py."""

from __future__ import annotations

import importlib
from types import ModuleType

from .base import FamilyInfo

CATALOG: dict[str, FamilyInfo] = {f.name: f for f in [
    FamilyInfo("crm_search_edit", "crm", "find contacts through search and pagination and edit their details",
               ("search", "pagination", "form editing", "disambiguation"), "crm_form_fill", "crm_search_edit"),
    FamilyInfo("crm_form_fill", "crm", "create contacts through a validated form; update instead of duplicating",
               ("form filling", "validation errors", "upsert"), "crm_search_edit", "crm_form_fill"),
    FamilyInfo("shop_checkout", "shop", "buy what a shopping list asks under a budget and a coupon, through cart, review and checkout",
               ("constrained choice", "cart", "checkout", "required steps"), "shop_browse", "shop_checkout"),
    FamilyInfo("shop_browse", "shop", "navigate categories, filters and pages to find products and act on them",
               ("multi-page navigation", "filtering", "comparison"), "shop_checkout", "shop_browse"),
    FamilyInfo("kanban_bulk", "kanban", "apply one change to every card that matches a rule on a kanban board",
               ("bulk operations", "filtering", "pagination"), "booking_reserve", "kanban_bulk"),
    FamilyInfo("booking_reserve", "booking", "book and cancel rooms in a calendar under capacity and time constraints",
               ("constraint satisfaction", "calendar", "forms"), "kanban_bulk", "booking_reserve"),
]}


def load(family: str) -> ModuleType:
    info = CATALOG[family]
    return importlib.import_module(f"{__package__}.{info.module}")
