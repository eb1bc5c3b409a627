"""The run report opened in headless Chromium (Debian's, via Playwright): it renders, its charts have
size, and a screenshot is not blank. No network is used (the report must be self-contained)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.flywheel.rundb import RunDB

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
# Count colours and non-white pixels of a PNG by drawing it on a canvas (no imaging library needed).
PIXELS_JS = """async (b64) => {
  const img = new Image(); img.src = 'data:image/png;base64,' + b64; await img.decode();
  const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
  const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
  const d = ctx.getImageData(0, 0, c.width, c.height).data;
  const colours = new Set(); let ink = 0;
  for (let i = 0; i < d.length; i += 4) {
    colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) ink++;
  }
  return {colours: colours.size, ink: ink / (d.length / 4), width: c.width, height: c.height};
}"""


def test_report_renders_in_chromium(toy_run: Any) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    report = toy_run.out / "report.html"
    html = report.read_text()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    db = RunDB(toy_run.out / "run.sqlite")
    admitted = sum(u.outcome == "admitted" for u in db.units())
    requests: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.as_uri())
            assert page.title().startswith("AutoEnvScaling run")
            for section in ("valid-rate", "cost", "pass-rate", "domains", "rounds", "examples"):
                assert page.locator(f"h2#{section}").is_visible()
            assert page.locator("#summary .card").count() >= 6
            assert page.locator("#summary .card .value").nth(2).inner_text() == str(admitted)
            charts = page.locator("svg.chart")
            assert charts.count() == 3
            for i in range(3):
                box = charts.nth(i).bounding_box()
                assert box is not None and box["width"] > 300 and box["height"] > 150
            # One interval mark per (proposer, round), histogram bars and the calibration band.
            assert page.locator("svg.chart").nth(0).locator("g.mark circle").count() == 2
            assert page.locator("svg.chart").nth(1).locator("rect.band").count() == 1
            assert page.locator("svg.chart").nth(1).locator("rect.mark").count() == 10
            examples = page.locator(".example")
            assert examples.count() >= 1 and examples.first.locator("table.gates tbody tr").count() >= 8
            shot = base64.b64encode(page.screenshot(full_page=True)).decode()
            pixels = page.evaluate(PIXELS_JS, shot)
        finally:
            browser.close()
    assert pixels["height"] > 900 and pixels["colours"] > 20 and 0.01 < pixels["ink"] < 0.9, pixels
    assert all(url.startswith(("file://", "data:")) for url in requests), requests
