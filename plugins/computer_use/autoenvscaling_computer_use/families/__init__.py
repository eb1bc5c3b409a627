"""The computer-use families: each module has ``build(rng, level) -> Draft`` and a reference
solution solutions/<family>.py."""

from __future__ import annotations

from types import ModuleType

from autoenvscaling.api import family_module

from .base import AppFamilyInfo

CATALOG: dict[str, AppFamilyInfo] = {f.name: f for f in [
    AppFamilyInfo("crm_search_edit", "find contacts through search and pagination and edit their details",
                  ("search", "pagination", "form editing", "disambiguation"), "crm_form_fill", app="crm"),
    AppFamilyInfo("crm_form_fill", "create contacts through a validated form; update instead of duplicating",
                  ("form filling", "validation errors", "upsert"), "crm_search_edit", app="crm"),
    AppFamilyInfo("shop_checkout", "buy what a shopping list asks under a budget and a coupon, through cart, review and checkout",
                  ("constrained choice", "cart", "checkout", "required steps"), "shop_browse", app="shop"),
    AppFamilyInfo("shop_browse", "navigate categories, filters and pages to find products and act on them",
                  ("multi-page navigation", "filtering", "comparison"), "shop_checkout", app="shop"),
    AppFamilyInfo("kanban_bulk", "apply one change to every card that matches a rule on a kanban board",
                  ("bulk operations", "filtering", "pagination"), "booking_reserve", app="kanban"),
    AppFamilyInfo("booking_reserve", "book and cancel rooms in a calendar under capacity and time constraints",
                  ("constraint satisfaction", "calendar", "forms"), "kanban_bulk", app="booking"),
]}


def load(family: str) -> ModuleType:
    return family_module(__name__, CATALOG, family)
