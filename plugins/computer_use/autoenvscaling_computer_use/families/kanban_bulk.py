"""kanban_bulk: apply a bulk rule ("move every card labelled bug in Review to Done") to every open
card it matches on a kanban board, and to nothing else.

Each rule names a board, a column and one to three conditions (label, assignee or nobody, priority,
due earlier/later than a date or no due date) and one change (move, assign, archive, set priority,
add or remove a label). Each matching card is one requirement, so the reward is partial per card;
touching anything else scores 0. Decoys match all but one condition: the same column on another
board, another column of the board, an archived card, or a card that fails one condition.

Levels: 1 match with one condition on two small boards (level 0) up to about 12 matches split over
two rules with three conditions each, as many decoys, and columns long enough that the board shows
only part of them (level 5).
"""

from __future__ import annotations

import datetime
import itertools
import random

from .base import Draft
from .content import FIRST, LAST

BOARDS = [("Website relaunch", "The new public site: pages, search and the blog."),
          ("Mobile app", "iOS and Android releases."),
          ("Data platform", "Pipelines, warehouse and reporting."),
          ("Customer support", "Tooling and fixes the support team asked for."),
          ("Billing", "Invoices, payments and the pricing page."),
          ("Internal tools", "The admin console and the scripts around it.")]
COLUMNS = ["Backlog", "To do", "In progress", "Review", "Done"]
LABELS = [("bug", "#c62828"), ("feature", "#2e7d32"), ("design", "#8e24aa"), ("docs", "#0277bd"),
          ("backend", "#5d4037"), ("frontend", "#ef6c00"), ("customer", "#ad1457"), ("blocked", "#37474f"),
          ("tech-debt", "#546e7a"), ("q3", "#00897b")]
PRIORITIES = ["low", "medium", "high", "urgent"]
VERBS = ["Fix", "Refactor", "Document", "Redesign", "Test", "Review", "Migrate", "Update", "Speed up", "Audit",
         "Simplify", "Localise", "Monitor", "Clean up"]
OBJECTS = ["login redirect", "pricing page", "invoice export", "search results", "onboarding emails", "password reset",
           "CSV import", "dark mode", "checkout form", "order history", "push notifications", "user settings",
           "admin dashboard", "audit log", "image uploads", "session timeout", "API rate limits", "error pages",
           "sitemap", "release notes", "team invites", "billing alerts", "report builder", "cache layer",
           "webhook retries", "profile page", "help center", "nightly backup", "feature flags", "SSO setup"]
DESCRIPTIONS = ["", "", "Reported by support last week.", "Needs a quick look from design first.",
                "Follow-up from the sprint review.", "Small change, should fit in a day.",
                "Customer-facing; keep the wording short.", "Check with the platform team before merging.",
                "Part of the quarterly clean-up.", "Steps to reproduce are in the support ticket."]
START = datetime.date(2026, 3, 2)
SPAN = 56  # due dates fall in eight weeks from START

# boards, filler cards per board, matches per rule, conditions per rule, effects allowed
LEVELS = {
    0: (2, 8, [1], [1], ["move", "archive", "assign"]),
    1: (2, 10, [2], [1], ["move", "archive", "assign"]),
    2: (3, 14, [4], [2], None),
    3: (3, 18, [6], [2], None),
    4: (4, 22, [5, 3], [3, 2], None),
    5: (4, 26, [7, 5], [3, 3], None),
}
EFFECTS = ["move", "assign", "archive", "priority", "add_label", "remove_label"]
EASY_CONDS = ["label", "assignee", "priority"]
CONDS = ["label", "assignee", "unassigned", "priority", "due_before", "due_after", "no_due"]
# the field a card-changing effect sets: on the model's cards, and in the cards table
CARD_FIELD = {"move": "col", "assign": "assignee", "archive": "archived", "priority": "priority"}
ROW_FIELD = {"move": "column_id", "assign": "assignee_id", "archive": "archived", "priority": "priority"}
GROUP = {"label": "label", "assignee": "who", "unassigned": "who", "priority": "priority",
         "due_before": "due", "due_after": "due", "no_due": "due"}


def day(offset: int) -> str:
    return (START + datetime.timedelta(days=offset)).isoformat()


# -- the rule model (cards are dicts: board, col, labels, assignee, priority, due, archived) -----------

def cond_ok(card: dict, cond: tuple) -> bool:
    kind, v = cond
    return {"label": lambda: v in card["labels"], "assignee": lambda: card["assignee"] == v,
            "unassigned": lambda: card["assignee"] is None, "priority": lambda: card["priority"] == v,
            "due_before": lambda: bool(card["due"]) and card["due"] < v,
            "due_after": lambda: bool(card["due"]) and card["due"] > v, "no_due": lambda: not card["due"]}[kind]()


def needs_change(card: dict, effect: tuple) -> bool:
    kind, v = effect
    return {"move": card["col"] != v, "assign": card["assignee"] != v, "archive": not card["archived"],
            "priority": card["priority"] != v, "add_label": v not in card["labels"],
            "remove_label": v in card["labels"]}[kind]


def targets(rule: dict, cards: list[dict]) -> list[dict]:
    """The open cards in the rule's board and column that meet every condition and that the change alters."""
    return [c for c in cards if c["board"] == rule["board"] and c["col"] == rule["col"] and not c["archived"]
            and all(cond_ok(c, k) for k in rule["conds"]) and needs_change(c, rule["effect"])]


def apply(rule: dict, cards: list[dict]) -> list[dict]:
    hit = {c["title"] for c in targets(rule, cards)}
    kind, v = rule["effect"]
    out = []
    for c in cards:
        c = dict(c, labels=set(c["labels"]))
        if c["title"] in hit and kind in ("add_label", "remove_label"):
            (c["labels"].add if kind == "add_label" else c["labels"].discard)(v)
        elif c["title"] in hit:
            c[CARD_FIELD[kind]] = 1 if kind == "archive" else v
        out.append(c)
    return out


def titles(cards: list[dict]) -> set[str]:
    return {c["title"] for c in cards}


# -- building ------------------------------------------------------------------------------------------

def make_rule(rng: random.Random, board: int, n_conds: int, effects: list[str], easy: bool,
              members: list[str], taken_cols: set[str]) -> dict:
    effect = rng.choice(effects)
    col = rng.choice([c for c in COLUMNS if c not in taken_cols])
    if effect == "move":
        later = [c for c in COLUMNS if COLUMNS.index(c) > COLUMNS.index(col)] or [c for c in COLUMNS if c != col]
        value = rng.choice(later)
    elif effect == "assign":
        value = rng.choice(members)
    elif effect == "priority":
        value = rng.choice(PRIORITIES)
    elif effect in ("add_label", "remove_label"):
        value = rng.choice(LABELS)[0]
    else:
        value = None
    pool = EASY_CONDS if easy else CONDS
    conds: list[tuple[str, str | None]] = []
    groups = set()
    for kind in rng.sample(pool, len(pool)):
        if len(conds) == n_conds or GROUP[kind] in groups:
            continue
        if kind in ("label", "assignee", "priority"):  # any but the value the effect sets
            pool = {"label": [name for name, _ in LABELS], "assignee": members, "priority": PRIORITIES}[kind]
            v = rng.choice([x for x in pool if x != value])
        elif kind == "due_before":
            v = day(rng.randint(18, SPAN - 14))
        elif kind == "due_after":
            v = day(rng.randint(14, SPAN - 18))
        else:
            v = None
        conds.append((kind, v))
        groups.add(GROUP[kind])
    return {"board": board, "col": col, "conds": conds, "effect": (effect, value)}


def random_card(rng: random.Random, board: int, col: str, members: list[str]) -> dict:
    labels = {name for name, _ in rng.sample(LABELS, rng.choice([0, 1, 1, 2]))}
    return {"board": board, "col": col, "labels": labels,
            "assignee": rng.choice(members) if rng.random() < 0.75 else None,
            "priority": rng.choices(PRIORITIES, [3, 4, 2, 1])[0],
            "due": day(rng.randrange(SPAN)) if rng.random() < 0.8 else "",
            "archived": 1 if rng.random() < 0.08 else 0, "description": rng.choice(DESCRIPTIONS)}


def satisfy(rng: random.Random, card: dict, rule: dict, members: list[str]) -> dict:
    """``card`` changed so that it is a target of ``rule``."""
    card = dict(card, board=rule["board"], col=rule["col"], archived=0, labels=set(card["labels"]))
    for kind, v in rule["conds"]:
        if kind == "label":
            card["labels"].add(v)
        elif kind == "assignee":
            card["assignee"] = v
        elif kind == "unassigned":
            card["assignee"] = None
        elif kind == "priority":
            card["priority"] = v
        elif kind == "due_before":
            card["due"] = (datetime.date.fromisoformat(v) - datetime.timedelta(days=rng.randint(1, 14))).isoformat()
        elif kind == "due_after":
            card["due"] = (datetime.date.fromisoformat(v) + datetime.timedelta(days=rng.randint(1, 14))).isoformat()
        else:
            card["due"] = ""
    kind, v = rule["effect"]
    if kind == "assign" and card["assignee"] == v:
        card["assignee"] = rng.choice([None] + [m for m in members if m != v])
    elif kind == "priority" and card["priority"] == v:
        card["priority"] = rng.choice([p for p in PRIORITIES if p != v])
    elif kind == "add_label":
        card["labels"].discard(v)
    elif kind == "remove_label":
        card["labels"].add(v)
    return card


def break_one(rng: random.Random, card: dict, rule: dict, how: str, n_boards: int, members: list[str]) -> dict:
    """A decoy: ``card`` (a target) changed so that exactly one part of the rule no longer holds."""
    card = dict(card, labels=set(card["labels"]))
    if how == "column":
        card["col"] = rng.choice([c for c in COLUMNS if c != rule["col"]])
    elif how == "board":
        card["board"] = rng.choice([b for b in range(n_boards) if b != rule["board"]])
    elif how == "archived":
        card["archived"] = 1
    else:
        kind, v = rule["conds"][int(how)]
        if kind == "label":
            card["labels"].discard(v)
            card["labels"].add(rng.choice([name for name, _ in LABELS if name != v]))
        elif kind == "assignee":
            card["assignee"] = rng.choice([None] + [m for m in members if m != v])
        elif kind == "unassigned":
            card["assignee"] = rng.choice(members)
        elif kind == "priority":
            card["priority"] = rng.choice([p for p in PRIORITIES if p != v])
        elif kind in ("due_before", "due_after"):
            sign = 1 if kind == "due_before" else -1
            card["due"] = "" if rng.random() < 0.3 else \
                (datetime.date.fromisoformat(v) + datetime.timedelta(days=sign * rng.randint(0, 10))).isoformat()
        else:
            card["due"] = day(rng.randrange(SPAN))
    return card


def attempt(rng: random.Random, level: int) -> tuple | None:
    n_boards, fill, match_counts, cond_counts, effects = LEVELS[level]
    boards = rng.sample(BOARDS, n_boards)
    members: list[str] = []
    while len(members) < 7:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in members and name.split()[0] not in {m.split()[0] for m in members}:
            members.append(name)
    rules = []
    used: dict[int, set[str]] = {}
    for i, n_conds in enumerate(cond_counts):
        board = rng.randrange(n_boards)
        rules.append(make_rule(rng, board, n_conds, effects or EFFECTS, level <= 1, members, used.get(board, set())))
        used.setdefault(board, set()).add(rules[-1]["col"])
        if rules[-1]["effect"][0] == "move":
            used[board].add(rules[-1]["effect"][1])
    names = iter(rng.sample([f"{v} {o}" for v, o in itertools.product(VERBS, OBJECTS)], 400))
    cards, designated = [], []
    for rule, n in zip(rules, match_counts):
        hits = [satisfy(rng, random_card(rng, rule["board"], rule["col"], members), rule, members) for _ in range(n)]
        ways = ["column", "board", "archived"] + [str(i) for i in range(len(rule["conds"]))] * 2
        rng.shuffle(ways)
        decoys = [break_one(rng, rng.choice(hits), rule, ways[i % len(ways)], n_boards, members) for i in range(n)]
        for c in hits + decoys:
            c["title"] = next(names)
        designated.append(titles(hits))
        cards += hits + decoys
    scopes = {(r["board"], r["col"]) for r in rules}
    for b in range(n_boards):
        weights = [3 if (b, c) in scopes and level >= 3 else 1 for c in COLUMNS]
        for _ in range(fill):
            card = random_card(rng, b, rng.choices(COLUMNS, weights)[0], members)
            card["title"] = next(names)
            safe = [c for c in COLUMNS if (b, c) not in scopes]
            if any(card in targets(r, [card]) for r in rules):
                card["col"] = rng.choice(safe)
            cards.append(card)
    # exactly the designated cards are targets, whichever order the rules are applied in
    for rule, want in zip(rules, designated):
        if titles(targets(rule, cards)) != want:
            return None
    if len(rules) == 2:
        (r1, r2), (t1, t2) = rules, designated
        if titles(targets(r2, apply(r1, cards))) != t2 or titles(targets(r1, apply(r2, cards))) != t1:
            return None
    return boards, members, rules, cards, designated


def build(rng: random.Random, level: int) -> Draft:
    made = next(filter(None, (attempt(rng, level) for _ in range(200))), None)
    if made is None:
        raise RuntimeError("kanban_bulk: no consistent board after 200 attempts")
    boards, members, rules, cards, designated = made
    rng.shuffle(cards)

    # ids: boards, columns (board-major), members, labels, cards in shuffled order, positions per column
    col_id = {(b, c): b * len(COLUMNS) + i + 1 for b in range(len(boards)) for i, c in enumerate(COLUMNS)}
    member_id = {m: i + 1 for i, m in enumerate(members)}
    label_id = {name: i + 1 for i, (name, _) in enumerate(LABELS)}
    position: dict[tuple, int] = {}
    card_rows, card_id = [], {}
    link_rows: list[dict] = []
    for i, c in enumerate(cards, 1):
        key = (c["board"], c["col"])
        position[key] = position.get(key, 0) + 1
        card_id[c["title"]] = i
        card_rows.append({"id": i, "column_id": col_id[key], "title": c["title"], "description": c["description"],
                          "assignee_id": member_id.get(c["assignee"]), "priority": c["priority"], "due": c["due"],
                          "archived": c["archived"], "position": position[key]})
        for name in sorted(c["labels"], key=lambda n: label_id[n]):
            link_rows.append({"id": len(link_rows) + 1, "card_id": i, "label_id": label_id[name]})
    rows = {
        "boards": [{"id": i + 1, "name": n, "description": d} for i, (n, d) in enumerate(boards)],
        "columns": [{"id": col_id[(b, c)], "board_id": b + 1, "name": c, "position": i + 1}
                    for b in range(len(boards)) for i, c in enumerate(COLUMNS)],
        "members": [{"id": member_id[m], "name": m,
                     "email": f"{m.split()[0].lower()}.{m.split()[1].lower()}@teamboard.example"} for m in members],
        "labels": [{"id": label_id[n], "name": n, "color": color} for n, color in LABELS],
        "cards": card_rows,
        "card_labels": link_rows,
    }

    sentences, expect, plan = [], [], []
    for rule, want in zip(rules, designated):
        board = boards[rule["board"]][0]
        kind, v = rule["effect"]
        sentences.append(f'On the "{board}" board, {rule_text(rule)}.')
        hit = sorted(want, key=lambda t: card_id[t])
        done = {"move": f"moved to {v}", "assign": f"assigned to {v}", "archive": "archived",
                "priority": f"has priority {v}", "add_label": f"has the label {v}",
                "remove_label": f"no longer has the label {v}"}[kind]
        for title in hit:
            cid, what = card_id[title], f'"{title}" ({board}) {done}'
            if kind in ("add_label", "remove_label"):
                link = {"card_id": cid, "label_id": label_id[v]}
                expect.append({"table": "card_labels", "what": what, **(
                    {"insert": link, "count": 1} if kind == "add_label" else {"deleted": link})})
                continue
            value = (col_id[(rule["board"], v)] if kind == "move" else member_id[v] if kind == "assign"
                     else 1 if kind == "archive" else v)
            expect.append({"table": "cards", "key": {"id": cid}, "values": {ROW_FIELD[kind]: value}, "what": what,
                           **({"also": ["position"]} if kind == "move" else {})})
        plan.append({"board": board, "action": kind, "value": v, "cards": hit})

    n = len(expect)
    opener = rng.choice(["Our team's kanban boards run at http://127.0.0.1:8080/.",
                         "The team tracks its work on the kanban boards at http://127.0.0.1:8080/.",
                         "Our boards are in TeamBoard at http://127.0.0.1:8080/."])
    if len(sentences) == 1:
        ask = f"{opener} Please do this bulk update:\n\n{sentences[0]}\n"
    else:
        ask = f"{opener} Please do these two bulk updates:\n\n" + \
            "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, 1)) + \
            "\n\nEach rule applies to the cards as they are now, before either update.\n"
    instruction = (ask + "\nA rule covers only open cards (archived cards stay as they are) in the board and column "
                   "it names, and a card must meet every condition it lists. A card without a due date is neither "
                   "due earlier nor later than any date. Change nothing else: leave every other card, field and label "
                   "as it is.\n")
    longest = max(sum(1 for c in cards if (c["board"], c["col"]) == (r["board"], r["col"]) and not c["archived"])
                  for r in rules)
    return Draft(app="kanban", rows=rows, instruction=instruction, expect=expect, params={"rules": plan},
                 kind=rules[0]['effect'][0].replace('_', '-') if len(rules) == 1 else "two-rules",
                 tags=["bulk", "filtering", "decoys"] + (["pagination"] if longest > 8 else [])
                 + (["two-rules"] if len(rules) == 2 else []),
                 parameters={"boards": len(boards), "cards": len(cards), "matches": n, "rules": len(rules),
                             "conditions": [len(r["conds"]) for r in rules],
                             "effects": [r["effect"][0] for r in rules], "longest_column": longest},
                 agent_timeout_sec=600.0 + 60.0 * n)


def rule_text(rule: dict) -> str:
    """"take every card in the Review column that has the label "bug" and is assigned to Ada Novak, and move it to Done"."""
    kind, v = rule["effect"]
    frags = [f'has the label "{v}"'] if kind == "remove_label" else []
    for k, value in rule["conds"]:
        frags.append({"label": f'has the label "{value}"', "assignee": f"is assigned to {value}",
                      "unassigned": "is not assigned to anyone", "priority": f'has priority "{value}"',
                      "due_before": f"is due earlier than {value}", "due_after": f"is due later than {value}",
                      "no_due": "has no due date"}[k])
    that = ""
    if frags:
        that = " that " + (frags[0] if len(frags) == 1 else ", ".join(frags[:-1]) + " and " + frags[-1]) + ","
    action = {"move": f"move it to {v}", "assign": f"assign it to {v}", "archive": "archive it",
              "priority": f'set its priority to "{v}"', "add_label": f'add the label "{v}" to it',
              "remove_label": f'remove the label "{v}" from it'}[kind]
    return f"take every card in the {rule['col']} column{that} and {action}"
