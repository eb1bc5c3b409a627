"""Helpers the reference solutions share: a Playwright browser on the task's app, and screenshots
of the run when AES_SHOTS names a directory (the README's pictures come from there)."""

from __future__ import annotations

import contextlib
import json
import os
import re

BASE = "http://127.0.0.1:8080"
CHROMIUM = "/usr/bin/chromium-headless-shell"  # Debian's headless build of Chromium, in the image
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-sync",
        "--disable-background-networking", "--disable-component-update", "--disable-quic"]


def params() -> dict:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "params.json")) as fh:
        return json.load(fh)


@contextlib.contextmanager
def browser():
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("HOME", "/tmp")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = b.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(15000)
        try:
            yield page
        finally:
            b.close()


def shot(page, name: str) -> None:  # noqa: ANN001 - a playwright Page
    folder = os.environ.get("AES_SHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        page.screenshot(path=os.path.join(folder, f"{name}.png"), full_page=True)


@contextlib.contextmanager
def session(start: str = "/"):
    """The browser, opened on the app's page ``start``, with the "start" and "end" screenshots
    around what the solution does with it."""
    with browser() as page:
        page.goto(BASE + start)
        shot(page, "start")
        yield page
        shot(page, "end")


def go(page, locator) -> None:  # noqa: ANN001 - a playwright Page and Locator
    """Click ``locator`` and wait for the page it leads to."""
    with page.expect_navigation():
        locator.click()


def submit(page, label: str) -> None:  # noqa: ANN001
    """Click the button named ``label`` and wait for the page it leads to."""
    go(page, page.get_by_role("button", name=label, exact=True))


def follow(page, name: str, *, exact: bool = True) -> None:  # noqa: ANN001
    go(page, page.get_by_role("link", name=name, exact=exact).first)


def next_page(page) -> bool:  # noqa: ANN001
    """Follow a listing's "Next page" link; False on its last page."""
    if page.get_by_role("link", name="Next page").count() == 0:
        return False
    follow(page, "Next page")
    return True


def expect_ok(page) -> None:  # noqa: ANN001
    """Fail loudly when the app answered with validation errors."""
    errors = page.locator(".error").all_inner_texts()
    if errors:
        raise SystemExit("the app refused the form: " + "; ".join(errors))


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
