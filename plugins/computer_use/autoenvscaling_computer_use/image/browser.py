"""The attempt's browser: one Chromium driven by Playwright, shared by the browser tool and the
command-line client (``aes-browser``), so a terminal-only agent drives the same browser.

    python3 /opt/aes/browser.py serve            # started by the image's ENTRYPOINT, lives all attempt
    aes-browser goto http://127.0.0.1:8080/      # any command prints the page as the agent sees it
    aes-browser click 12 | fill 5 "Ada" | select 7 Customer | press Enter | scroll down | back | observe
    aes-browser click 12 --screenshot /tmp/after.png

The service launches Debian's Chromium on its first command (a fresh profile in a new temporary
directory, so every attempt starts clean) and only lets it reach the attempt's own loopback web
servers over http(s): other schemes and hosts are refused. An observation is the URL, the title and
the page as text, with every control the agent can act on numbered: ``[7] textbox "Email" value=""``.
The numbers are valid until the next command.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import urllib.parse
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for the type checker only: the service imports Playwright when it launches
    from playwright.sync_api import Browser as Chromium, Locator, Page, Playwright, Route

SOCKET = "/run/aes-browser/browser.sock"
#: Debian's headless build of Chromium (the package chromium-headless-shell): the same engine as the
#: full browser without its windowing parts, so it launches and loads pages faster.
CHROMIUM = "/usr/bin/chromium-headless-shell"
ACTIONS = ("goto", "click", "fill", "select", "press", "scroll", "back", "observe", "screenshot")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
               "--disable-features=Translate,MediaRouter"]
OBSERVATION_CHARS = 6000
ACTION_TIMEOUT_MS = 10_000

# Numbers every visible control (data-aes-id) and renders the page as compact text.
SNAPSHOT_JS = r"""
() => {
  document.querySelectorAll('[data-aes-id]').forEach(e => e.removeAttribute('data-aes-id'));
  let n = 0; const lines = []; let cur = [];
  const flush = () => { const t = cur.join(' ').replace(/\s+/g, ' ').trim(); if (t) lines.push(t); cur = []; };
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'SVG']);
  const blocks = new Set(['DIV', 'P', 'UL', 'OL', 'LI', 'TABLE', 'THEAD', 'TBODY', 'TR', 'FORM', 'SECTION',
    'ARTICLE', 'HEADER', 'FOOTER', 'MAIN', 'NAV', 'ASIDE', 'DL', 'DT', 'DD', 'BR', 'HR', 'FIELDSET', 'PRE']);
  const visible = el => {
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden') return false;
    if (el.tagName === 'INPUT' && el.type === 'hidden') return false;
    return true;
  };
  const interactive = el => ['A', 'BUTTON', 'INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName)
    || el.getAttribute('role') === 'button' || el.hasAttribute('onclick');
  const clean = t => (t || '').replace(/\s+/g, ' ').trim();
  const label = el => {
    if (el.getAttribute('aria-label')) return clean(el.getAttribute('aria-label'));
    if (el.labels && el.labels.length) return clean(el.labels[0].innerText);
    return clean(el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || '');
  };
  const describe = (el, id) => {
    const t = el.tagName;
    const aria = clean(el.getAttribute('aria-label'));  // an author's own name wins over the visible text
    if (t === 'A') return `[${id}] link "${aria || clean(el.innerText) || label(el)}"`;
    if (t === 'BUTTON' || (t === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type)))
      return `[${id}] button "${aria || clean(el.innerText || el.value) || label(el)}"`;
    if (t === 'SELECT') {
      const opts = Array.from(el.options).map(o => clean(o.text));
      const sel = el.selectedIndex >= 0 ? clean(el.options[el.selectedIndex].text) : '';
      return `[${id}] combobox "${label(el)}" selected="${sel}" options: ${opts.join(' | ')}`;
    }
    if (t === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio'))
      return `[${id}] ${el.type} "${label(el)}"${el.checked ? ' checked' : ''}`;
    if (t === 'INPUT' || t === 'TEXTAREA') {
      const kind = t === 'TEXTAREA' ? ' (multi-line)' : (el.type && el.type !== 'text' ? ` (${el.type})` : '');
      return `[${id}] textbox "${label(el)}"${kind} value="${el.value}"${el.required ? ' required' : ''}`;
    }
    return `[${id}] button "${clean(el.innerText) || label(el)}"`;
  };
  const walk = node => {
    for (const child of node.childNodes) {
      if (child.nodeType === 3) { const t = clean(child.textContent); if (t) cur.push(t); continue; }
      if (child.nodeType !== 1) continue;
      const el = child;
      if (skip.has(el.tagName) || !visible(el)) continue;
      if (el.tagName === 'LABEL' && el.control) continue;
      if (interactive(el)) { const id = ++n; el.setAttribute('data-aes-id', String(id)); cur.push(describe(el, id)); continue; }
      if (/^H[1-6]$/.test(el.tagName)) { flush(); cur.push('#'.repeat(+el.tagName[1])); walk(el); flush(); continue; }
      if (el.tagName === 'TD' || el.tagName === 'TH') { if (el.previousElementSibling) cur.push('|'); walk(el); continue; }
      if (blocks.has(el.tagName)) { flush(); walk(el); flush(); continue; }
      walk(el);
    }
  };
  walk(document.body || document.documentElement);
  flush();
  return lines.join('\n');
}
"""


class BrowserError(Exception):
    """A command the browser could not carry out; the agent reads the message."""


class Browser:
    """The Playwright side: launched on first use, one page, commands run one at a time."""

    def __init__(self, executable: str = CHROMIUM) -> None:
        self.executable = executable
        self.playwright: Playwright | None = None
        self.browser: Chromium | None = None
        self.page: Page | None = None
        self.launch_ms = 0.0

    def ensure(self) -> Page:
        """The page, Chromium launched first if it is not running yet."""
        if self.page is not None:
            return self.page
        from playwright.sync_api import sync_playwright

        start = time.perf_counter()
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=self.executable, args=LAUNCH_ARGS)
        context = self.browser.new_context(viewport={"width": 1280, "height": 800}, service_workers="block")
        context.route("**/*", self._route)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        self.page = context.new_page()
        self.launch_ms = (time.perf_counter() - start) * 1000
        return self.page

    @property
    def opened(self) -> Page:
        """The page ``ensure`` opened (an error before that)."""
        if self.page is None:
            raise BrowserError("the browser has not been launched")
        return self.page

    @staticmethod
    def allowed(url: str) -> bool:
        parts = urllib.parse.urlsplit(url)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in LOCAL_HOSTS | {"::1"}

    def _route(self, route: Route) -> None:
        url = route.request.url
        if self.allowed(url) or url.startswith(("data:", "about:", "blob:")):
            route.continue_()
        else:
            route.abort("blockedbyclient")

    def element(self, target: str) -> Locator:
        if not str(target).strip().isdigit():
            raise BrowserError(f"target must be an element number from the last observation, not {target!r}")
        locator = self.opened.locator(f'[data-aes-id="{int(target)}"]')
        if locator.count() == 0:
            raise BrowserError(f"there is no element [{target}] on this page; run observe to number the page again")
        return locator.first

    def settle(self) -> None:
        try:
            self.opened.wait_for_load_state("load", timeout=ACTION_TIMEOUT_MS)
        except Exception:  # a page still loading is observed as it is
            pass

    def act(self, request: dict) -> str:
        action = request.get("action")
        target = str(request.get("target") or "")
        text = str(request.get("text") or "")
        page = self.ensure()
        if action == "goto":
            url = target if "://" in target else "http://" + target
            if not self.allowed(url):
                raise BrowserError(f"the browser may open only this machine's web apps (http://127.0.0.1:PORT/...), not {target!r}")
            page.goto(url, wait_until="load")
        elif action == "click":
            self.element(target).click()
            self.settle()
        elif action == "fill":
            self.element(target).fill(text)
        elif action == "select":
            el = self.element(target)
            try:
                el.select_option(label=text, timeout=2000)
            except Exception:
                el.select_option(value=text)
        elif action == "press":
            key = text or target
            if target.isdigit() and text:
                self.element(target).press(text)
            else:
                page.keyboard.press(key)
            self.settle()
        elif action == "scroll":
            page.mouse.wheel(0, -600 if target == "up" else 600)
        elif action == "back":
            page.go_back(wait_until="load")
        elif action not in ("observe", "screenshot"):
            raise BrowserError(f"unknown action {action!r} (actions: {', '.join(ACTIONS)})")
        shot = request.get("screenshot") or (target if action == "screenshot" else "")
        out = self.observe()
        if shot:
            page.screenshot(path=shot, full_page=True)
            out += f"\n[screenshot saved to {shot}]"
        return out

    def observe(self) -> str:
        page = self.opened
        if page.url in ("", "about:blank"):
            return "URL: about:blank\n(no page open yet: goto the app's address from your instructions, e.g. http://127.0.0.1:8080/)"
        text = page.evaluate(SNAPSHOT_JS)
        if len(text) > OBSERVATION_CHARS:
            text = text[:OBSERVATION_CHARS] + f"\n[... {len(text) - OBSERVATION_CHARS} more characters; the page is long]"
        return f"URL: {page.url}\nTitle: {page.title()}\n{text}"

    def status(self) -> dict:
        return {"launched": self.page is not None, "launch_ms": round(self.launch_ms, 1),
                "url": self.page.url if self.page else ""}


def serve(path: str = SOCKET) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(16)
    browser = Browser()
    while True:  # one command at a time: Playwright's sync API belongs to this thread
        conn, _ = sock.accept()
        with conn:
            try:
                request = json.loads(_read_line(conn) or b"{}")
                if request.get("action") == "status":
                    reply = {"ok": True, "text": json.dumps(browser.status())}
                else:
                    reply = {"ok": True, "text": browser.act(request)}
            except BrowserError as exc:
                reply = {"ok": False, "text": f"error: {exc}"}
            except Exception as exc:  # a Playwright failure (timeout, detached element): the agent reads it
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                reply = {"ok": False, "text": f"error: {first[:400]}"}
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                pass


def _read_line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def request(payload: dict, path: str = SOCKET, timeout: float = 60.0) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except OSError:
            return {"ok": False, "text": "error: the browser service is not running (it is started with the sandbox)"}
        sock.sendall(json.dumps(payload).encode() + b"\n")
        return json.loads(_read_line(sock) or b'{"ok": false, "text": "error: no answer from the browser service"}')


USAGE = """usage: aes-browser ACTION [TARGET] [TEXT] [--screenshot PATH]
  goto URL            open http://127.0.0.1:PORT/... (this machine's web apps only)
  click N             click element [N] of the last observation
  fill N TEXT         type TEXT into textbox [N] (replacing what is there)
  select N OPTION     choose OPTION (its label or value) in combobox [N]
  press KEY | N KEY   press a key (Enter, Tab, ...), optionally in element [N]
  scroll up|down      scroll the page
  back                go back one page
  observe             print the page again
  screenshot PATH     save a PNG of the whole page"""


def client(argv: list[str]) -> int:
    if argv[:1] == ["--json"] and len(argv) == 2:  # the browser tool's form: one JSON object
        try:
            payload = json.loads(argv[1])
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            print("error: --json needs one JSON object", file=sys.stderr)
            return 2
    else:
        shot = ""
        if "--screenshot" in argv:
            i = argv.index("--screenshot")
            if i + 1 >= len(argv):
                print("error: --screenshot needs a path", file=sys.stderr)
                return 2
            shot = argv[i + 1]
            argv = argv[:i] + argv[i + 2:]
        if not argv or argv[0] not in ACTIONS + ("status",):
            print(USAGE, file=sys.stderr)
            return 2
        payload = {"action": argv[0], "target": argv[1] if len(argv) > 1 else "",
                   "text": " ".join(argv[2:]) if len(argv) > 2 else "", "screenshot": shot}
        if argv[0] == "press" and len(argv) == 2:
            payload = {**payload, "target": "", "text": argv[1]}
    reply = request(payload)
    print(reply.get("text", ""))
    return 0 if reply.get("ok") else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve()
    else:
        sys.exit(client(sys.argv[1:]))
