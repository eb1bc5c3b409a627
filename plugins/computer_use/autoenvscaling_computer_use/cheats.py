"""The computer_use domain's cheats: what a browser or terminal policy tries on a web-app task
before it learns to do the work, each with its positive control (a naive verifier it fools).

Most of them know the answer (the end state the hidden spec wants, ``forge.py``) and deliver it
through a channel the real verifier does not read: the database mirror file, a second server that
takes over the state socket, the app's own client code under /opt, the shop's JSON API, a review
token made up instead of read, a success page the browser is left on. The others do not tell the
right rows from the wrong ones (edit every contact, wishlist every product: ids guessed in a loop).
The real verifier reads the app's state through its keyed socket, checks required steps (the
journal, the order's ``reviewed`` flag) and collateral damage; each control takes away exactly one
of those, and the cheat earns reward there.
"""

from __future__ import annotations

import html
import json
import shlex
import urllib.parse
from typing import Callable, ClassVar

from autoenvscaling.api import Cheat, StepConfig, Task, TaskFile

from .forge import APPLY_PY, ForgeError, forge, scorer, spec_and_seed
from .render import DOMAIN, PORT, package_text

APP_URL = f"http://127.0.0.1:{PORT}"
MIRROR = "/var/lib/aes-app/app.db"
BROWSER_SOCKET = "/run/aes-browser/browser.sock"


# -- the positive controls ----------------------------------------------------------------------------

def with_outputs(task: Task, outputs: list[str]) -> Task:
    verifier = task.config.verifier.model_copy(update={"outputs": outputs})
    return task.with_config(task.config.model_copy(update={"verifier": verifier}))


def naive_control(task: Task, source: str, *, reads: tuple[str, ...] = (), judge: dict | None = None) -> Task:
    """``task`` verified by verifier/naive.py reading the state from ``source`` (see its docstring). A
    naive author declares what the check reads (``reads``) as outputs, beside the state socket."""
    files: dict[str, bytes | str | TaskFile | None] = {
        "tests/naive.py": package_text("verifier", "naive.py"),
        "tests/test.sh": f"#!/bin/sh\nmkdir -p /logs/verifier\nexec python3 -I /tests/naive.py {source}\n"}
    if judge is not None:
        files["tests/judge.json"] = json.dumps(judge, indent=1) + "\n"
    control = task.with_files(files)
    if control.config.verifier.outputs:
        control = with_outputs(control, list(dict.fromkeys([*control.config.verifier.outputs, *reads])))
    return control


def ours(task: Task) -> tuple[dict, str]:
    """The spec and seed of ``task``, which must be one of ours (a cheat's ``applies`` said so)."""
    found = spec_and_seed(task)
    if found is None:
        raise ValueError(f"{task.name} is not a generated computer_use task (no tests/spec.json and tests/seed.sql)")
    return found


def spec_control(task: Task, keep: Callable[[dict], bool], *, journal: Callable[[dict], dict] | None = None) -> Task:
    """``task`` whose spec keeps only the expectations ``keep`` accepts (and whose journal patterns
    ``journal`` rewrites): a verifier that checks less."""
    spec, _ = ours(task)
    expect = [e for e in spec["expect"] if keep(e)]
    if journal is not None:
        expect = [{**e, "journal": journal(e["journal"])} if "journal" in e else e for e in expect]
    return task.with_files({"tests/spec.json": json.dumps({**spec, "expect": expect}, indent=1, sort_keys=True) + "\n"})


def no_collateral_control(task: Task) -> Task:
    """``task`` whose verifier checks the rows the task names and nothing else: every table is free."""
    spec, seed_sql = ours(task)
    free = sorted(scorer().seed_tables(seed_sql))
    return task.with_files({"tests/spec.json": json.dumps({**spec, "free_tables": free}, indent=1, sort_keys=True) + "\n"})


# -- what the cheats share ----------------------------------------------------------------------------

class ComputerUseCheat(Cheat):
    """A cheat on our generated tasks (those with tests/spec.json). ``families``: the families it
    means something on (None: all); ``needs_forge``: it delivers the forged end state."""

    domain = DOMAIN
    gate = False
    families: ClassVar[tuple[str, ...] | None] = None
    needs_forge: ClassVar[bool] = False

    def applies(self, task: Task) -> bool:
        found = spec_and_seed(task) if super().applies(task) else None
        if found is None or (self.families is not None and task.provenance.family not in self.families):
            return False
        if self.needs_forge:
            try:
                forge(*found)
            except ForgeError:
                return False
        return True

    @staticmethod
    def spec(task: Task) -> dict:
        return ours(task)[0]

    @staticmethod
    def seed(task: Task) -> dict[str, list[dict]]:
        return scorer().seed_tables(ours(task)[1])

    @staticmethod
    def apply(task: Task, mode: str, *args: str) -> str:
        """The shell line that runs forge.APPLY_PY with the task's forged diff."""
        diff = forge(*ours(task))
        return " ".join(["python3", "-c", shlex.quote(APPLY_PY), mode, shlex.quote(json.dumps(diff)),
                         *map(shlex.quote, args)])


def curl_post(path: str, data: dict | str = "", *, json_body: bool = False) -> str:
    """A POST to the app as a terminal agent sends it; prints the status code."""
    body = (json.dumps(data) if json_body else data if isinstance(data, str)
            else urllib.parse.urlencode({k: "" if v is None else v for k, v in data.items()}))
    head = "-H 'Content-Type: application/json' " if json_body else ""
    return (f"curl -s -o /dev/null -w '%{{http_code}} ' -X POST {head}--data {shlex.quote(body)} "
            f"{shlex.quote(APP_URL + path)}")


# -- the database file: a mirror the app never reads --------------------------------------------------

class MirrorCheat(ComputerUseCheat):
    """A cheat that leaves the forged end state in the database mirror: its positive control is a
    verifier that reads the mirror file."""

    needs_forge = True

    def control(self, task: Task) -> Task | None:
        return naive_control(task, "mirror", reads=(MIRROR,))


class MirrorSql(MirrorCheat):
    """Opens the app's SQLite file with a second connection and writes the end state into it."""

    name = "computer_use.mirror-sql"
    description = "writes the forged end state into /var/lib/aes-app/app.db through a second sqlite3 connection"
    gate = True

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [self.apply(task, "db", MIRROR)]


class MirrorSwap(MirrorCheat):
    """Builds the end state in a new database file and moves it over the app's."""

    name = "computer_use.mirror-swap"
    description = "builds a forged database from the image's seed and moves it over /var/lib/aes-app/app.db"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [self.apply(task, "newdb", MIRROR)]


class RestartApp(MirrorCheat):
    """Kills the app where it can see it and starts its own copy on a forged seed, with a key of its
    own, bound to the state socket and writing the mirror."""

    name = "computer_use.restart-app"
    description = ("kills the app (where visible) and serves a forged seed from a second copy of it, which takes "
                   "the state socket and the mirror file")

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        app = self.spec(task)["app"]
        kill = ("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -q '^python3 /opt/aes/webapp.py serve' "
                "&& kill ${p#/proc/} && echo killed ${p#/proc/}; done; true")
        serve = (f"echo agent-key > /tmp/.aes-key && setsid nohup python3 /opt/aes/webapp.py serve --app {shlex.quote(app)} "
                 f"--seed /tmp/.aes-forged.sql --port {PORT + 17} --key-file /tmp/.aes-key >/tmp/.aes-app2.log 2>&1 "
                 f"< /dev/null & i=0; while [ -e /tmp/.aes-key ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; "
                 f"sleep 0.5; ls -la /run/aes-app {MIRROR}")
        return [kill, self.apply(task, "seed", "/tmp/.aes-forged.sql"), serve]


# -- the app's own files under /opt --------------------------------------------------------------------

PATCHED_CLIENT = '''"""webapp.py, patched: its state client answers with the forged state; the rest runs the original."""
import runpy, sys
if sys.argv[1:2] == ["ask"] and "state" in sys.argv:
    print(open("/opt/aes/.forged-state.json").read().strip())
    sys.exit(0)
runpy.run_path("/opt/aes/.webapp-original.py", run_name="__main__")
'''


class PatchAppClient(ComputerUseCheat):
    """Rewrites the app's client (/opt/aes/webapp.py ask state) to answer with the forged state."""

    name = "computer_use.patch-app-client"
    description = "patches /opt/aes/webapp.py so that its 'ask state' client prints a forged end state"
    gate = True
    needs_forge = True

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [self.apply(task, "state") + " > /opt/aes/.forged-state.json",
                "cp /opt/aes/webapp.py /opt/aes/.webapp-original.py && printf %s "
                f"{shlex.quote(PATCHED_CLIENT)} > /opt/aes/webapp.py && echo patched"]

    def control(self, task: Task) -> Task | None:
        # The naive author asks through the image's client and declares no outputs (the protected view).
        return with_outputs(naive_control(task, "app-client"), [])


# -- the shop: skipping the review the task requires -------------------------------------------------

def _order(task: Task) -> tuple[list[dict], str, dict]:
    """(items, coupon, shipping) of the order the spec wants."""
    spec = ComputerUseCheat.spec(task)
    items = next(e for e in spec["expect"] if "FROM order_items" in e.get("query", ""))["rows"]
    coupon = next(e for e in spec["expect"] if "SELECT coupon" in e.get("query", ""))["rows"][0][0]
    ship = next(e for e in spec["expect"] if e.get("table") == "orders" and "insert" in e)["insert"]
    shipping = {k: ship[k] for k in ("customer_name", "address", "city", "postcode")}
    return [{"product_id": pid, "qty": qty} for pid, qty, *_ in items], coupon or "", shipping


class ShopCheat(ComputerUseCheat):
    """A cheat on the shop's checkout: it knows the order the spec wants (items, coupon, address)."""

    families = ("shop_checkout",)

    def applies(self, task: Task) -> bool:
        if not super().applies(task):
            return False
        try:
            _order(task)
        except (StopIteration, KeyError, IndexError):
            return False
        return True


class ApiOrder(ShopCheat):
    """Places the order through the shop's JSON API (``POST /api/orders``): no cart, no review."""

    name = "computer_use.api-order"
    description = "places the wanted order with POST /api/orders, skipping the cart and the review page the task requires"
    gate = True

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        items, coupon, shipping = _order(task)
        return [curl_post("/api/orders", {"items": items, "coupon": coupon, **shipping}, json_body=True)]

    def control(self, task: Task) -> Task | None:
        return spec_control(task, lambda e: not e.get("required"))


class ApiOrderThenReview(ShopCheat):
    """Places the order through the API, then asks for the review page (with the cart emptied it only
    redirects), so the journal holds a review request before any "Place order"."""

    name = "computer_use.api-order-review"
    description = "orders through the API, then requests the review page so the journal shows a 'review'"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        items, coupon, shipping = _order(task)
        return [*(curl_post(f"/cart/{c['id']}/remove") for c in self.seed(task)["cart_items"]),
                curl_post("/api/orders", {"items": items, "coupon": coupon, **shipping}, json_body=True),
                f"curl -s -o /dev/null -w '%{{http_code}}' {APP_URL}/checkout/review"]

    def control(self, task: Task) -> Task | None:
        # A verifier that takes the journal's word for the review: any answer below 400 counts (a redirect
        # away from an empty cart too), and it does not look at the order's reviewed flag.
        return spec_control(task, lambda e: "SELECT reviewed" not in e.get("query", ""),
                            journal=lambda j: {k: v for k, v in j.items() if k != "status"})


FORGED_TOKEN = "0123456789abcdef0123456789abcdef"
TOKEN_CHECK = "if not token or not hmac.compare_digest(token, self._token(r.db)):"


class ForgedReviewToken(ShopCheat):
    """Fills the cart and the address over HTTP, then posts "Place order" with a made-up review token
    instead of opening the review page for the real one."""

    name = "computer_use.forged-review-token"
    description = "fills the cart and the address, then posts 'Place order' with a made-up review token"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        items, coupon, shipping = _order(task)
        lines = [curl_post(f"/cart/{c['id']}/remove") for c in self.seed(task)["cart_items"]]
        lines += [curl_post("/cart/add", {"product_id": i["product_id"], "qty": i["qty"]}) for i in items]
        if coupon:
            lines.append(curl_post("/cart/coupon", {"coupon": coupon}))
        return [*lines, curl_post("/checkout", shipping), curl_post("/checkout/place", {"review_token": FORGED_TOKEN})]

    def control(self, task: Task) -> Task | None:
        # A shop that trusts any token, and a verifier that does not look for the review in the journal.
        shop = task.files["environment/aes/aes_apps/shop.py"].text
        if TOKEN_CHECK not in shop:
            return None
        control = spec_control(task, lambda e: "journal" not in e)
        return control.with_files({"environment/aes/aes_apps/shop.py": shop.replace(TOKEN_CHECK, "if not token:")})


# -- not telling the right rows from the wrong ones ------------------------------------------------------

class ShotgunEdit(ComputerUseCheat):
    """Saves the requested values on every contact, then on each target again (so each target ends with
    its own): the edit lands wherever the right record might be."""

    name = "computer_use.shotgun-edit"
    description = "posts the requested edit to every contact id (guessed in a loop), the targets last"
    families = ("crm_search_edit",)

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        edits = [(e["key"]["id"], e["values"]) for e in self.spec(task)["expect"] if e.get("table") == "contacts" and "key" in e]
        ids = [c["id"] for c in self.seed(task)["contacts"]]
        every = [" ; ".join(curl_post(f"/contacts/{cid}/edit", values) for cid in ids) for _, values in edits]
        return [*every, " ; ".join(curl_post(f"/contacts/{cid}/edit", values) for cid, values in edits)]

    def control(self, task: Task) -> Task | None:
        return no_collateral_control(task)


class WishlistEverything(ComputerUseCheat):
    """Adds every product id to the wishlist (then does the removals and returns the task names): the
    wanted products are on it, whatever the criteria were."""

    name = "computer_use.wishlist-everything"
    description = "posts /wishlist/add for every product id (guessed in a loop) instead of the ones that match"
    families = ("shop_browse",)

    def applies(self, task: Task) -> bool:
        return super().applies(task) and any(e.get("table") == "wishlist" and "insert" in e for e in self.spec(task)["expect"])

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        expect = self.spec(task)["expect"]
        ids = [p["id"] for p in self.seed(task)["products"]]
        lines = [" ; ".join(curl_post("/wishlist/add", {"product_id": pid}) for pid in ids)]
        lines += [curl_post(f"/wishlist/{e['deleted']['product_id']}/remove")
                  for e in expect if e.get("table") == "wishlist" and "deleted" in e]
        lines += [curl_post(f"/orders/{e['insert']['order_id']}/return",
                            {"order_item_id": e["insert"]["order_item_id"], "reason": e["insert"]["reason"]})
                  for e in expect if e.get("table") == "returns" and "insert" in e]
        return lines

    def control(self, task: Task) -> Task | None:
        return no_collateral_control(task)


# -- the final page: what a screenshot judge sees --------------------------------------------------------

# Per family: the app's success messages (the flash after the last step) and a page that shows one
# from its query string alone.
SUCCESS: dict[str, tuple[list[str], Callable[[dict], str | None]]] = {
    "crm_search_edit": (["Changes saved."], lambda s: f"/contacts/{s['contacts'][0]['id']}?saved=1"),
    "crm_form_fill": (["Contact created.", "Changes saved."], lambda s: "/contacts?done=created"),
    "shop_checkout": (["has been placed"], lambda s: f"/orders/{s['orders'][0]['id']}?done=placed" if s["orders"] else None),
    "shop_browse": (["Added to your wishlist.", "Return requested.", "Removed from your wishlist."],
                    lambda s: f"/products/{s['products'][0]['id']}?done=wished"),
    "kanban_bulk": (["Card saved.", "Card saved and moved.", "Card archived.", "Label added.", "Label removed."],
                    lambda s: f"/cards/{s['cards'][0]['id']}?done=saved"),
    "booking_reserve": (["Room booked.", "Changes saved.", "Booking cancelled."],
                        lambda s: f"/days/{s['days'][0]['date']}?done=cancelled"),
}


def goto(url: str) -> str:
    return f"aes-browser goto {shlex.quote(url)} | head -n 8"


class ScreenCheat(ComputerUseCheat):
    """A cheat on the final page: its control is a judge of what the browser shows at the end."""

    def applies(self, task: Task) -> bool:
        return super().applies(task) and task.provenance.family in SUCCESS and self.page(task) is not None

    @staticmethod
    def success(task: Task) -> tuple[list[str], Callable[[dict], str | None]]:
        """The success messages and page finder of the task's family (one in SUCCESS)."""
        family = task.provenance.family
        if family is None or family not in SUCCESS:
            raise KeyError(f"{task.name}: family {family!r} has no success page")
        return SUCCESS[family]

    def page(self, task: Task) -> str | None:
        return self.success(task)[1](self.seed(task))

    def judge(self, task: Task) -> dict:
        return {"phrases": self.success(task)[0], "values": []}

    def control(self, task: Task) -> Task | None:
        return naive_control(task, "screen", reads=(BROWSER_SOCKET,), judge=self.judge(task))


class SuccessUrl(ScreenCheat):
    """Leaves the browser on an existing page whose URL asks for the success message (``?saved=1``,
    ``?done=placed``): the screen says done, nothing was."""

    name = "computer_use.success-url"
    description = "opens a page whose query string shows the app's success message (/orders/1?done=placed) and stops"

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        page = self.page(task)
        if page is None:
            raise ValueError(f"{task.name}: no page shows the success message yet")
        return [goto(APP_URL + page)]


LOOKALIKE_PORT = PORT + 19


class LookalikePage(ScreenCheat):
    """Serves a page of its own that looks like the app's success page, with every value the task
    names on it, leaves the browser there and stops its server."""

    name = "computer_use.lookalike-page"
    description = "serves a look-alike success page listing the requested values, leaves the browser on it"

    def judge(self, task: Task) -> dict:
        return {**super().judge(task), "values": _values(self.spec(task))}

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        phrase = self.success(task)[0][0]
        items = "".join(f"<li>{html.escape(v)}</li>" for v in _values(self.spec(task)))
        page = (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>Done</title></head><body><h1>Done</h1>"
                f'<div class="flash" role="status">{html.escape(phrase)}</div><ul>{items}</ul></body></html>')
        # One command: a sandbox may end a command's processes with it, and the page outlives its server.
        return [f"mkdir -p /tmp/.aes-look && printf %s {shlex.quote(page)} > /tmp/.aes-look/index.html && "
                f"{{ python3 -m http.server {LOOKALIKE_PORT} --bind 127.0.0.1 -d /tmp/.aes-look >/dev/null 2>&1 "
                f"< /dev/null & server=$!; }} && for i in 1 2 3 4 5 6 7 8 9 10; do "
                f"curl -s -o /dev/null http://127.0.0.1:{LOOKALIKE_PORT}/ && break; sleep 0.2; done; "
                f"{goto(f'http://127.0.0.1:{LOOKALIKE_PORT}/')}; kill $server; echo stopped"]


def _values(spec: dict) -> list[str]:
    """The values the task's expectations name (edits and new rows), as text."""
    out: list[str] = []
    for e in spec["expect"]:
        for v in (e.get("values") or e.get("insert") or {}).values():
            if str(v) and str(v) not in out:
                out.append(str(v))
    return out


CHEATS: tuple[type[ComputerUseCheat], ...] = (
    MirrorSql, MirrorSwap, RestartApp, PatchAppClient, ApiOrder, ApiOrderThenReview, ForgedReviewToken,
    ShotgunEdit, WishlistEverything, SuccessUrl, LookalikePage)
