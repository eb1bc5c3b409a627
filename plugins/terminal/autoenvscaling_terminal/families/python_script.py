"""Python scripting: a module or command-line tool that the checks exercise on unseen inputs.

Kinds:
- ``durations``: ``parse_duration``/``format_duration`` for strings like ``1h30m`` (more units,
  spaces between parts, ValueError on invalid input as the level rises).
- ``inventory``: a CLI applying stock transactions from JSON (rejections, unknown items, an
  ``adjust`` type and a CSV report, an exit code for malformed input).
- ``semver``: a CLI that sorts and bumps semantic versions (pre-releases, ``latest --major``,
  invalid lines reported and skipped).
"""

from __future__ import annotations

import json
import random
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording

UNITS = [("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)]


def _fmt(seconds: int, units: list[tuple[str, int]]) -> str:
    if seconds == 0:
        return "0s"
    out = []
    for name, size in units:
        if seconds >= size:
            out.append(f"{seconds // size}{name}")
            seconds %= size
    return "".join(out)


def build_durations(rng: random.Random, level: int) -> Draft:
    module = rng.choice(["durations.py", "timefmt.py", "duration_utils.py"])
    allowed = "hms" + ("d" if level >= 2 else "") + ("w" if level >= 3 else "")
    units = [u for u in UNITS if u[0] in allowed]
    spaced = level >= 3
    cases_parse = []
    for _ in range(6 + 2 * level):
        parts = sorted(rng.sample(units, rng.randint(1, len(units))), key=lambda u: -u[1])
        amounts = [rng.randint(1, 59) for _ in parts]
        sep = " " if spaced and rng.random() < 0.5 else ""
        text = sep.join(f"{a}{u}" for a, (u, _) in zip(amounts, parts))
        cases_parse.append([text, sum(a * s for a, (_, s) in zip(amounts, parts))])
    cases_format = [[v, _fmt(v, units)] for v in [0] + [rng.randint(1, 3 * units[0][1]) for _ in range(5 + level)]]
    invalid = ["", "10", "5x", "1h1h", "-3m", "h", "1.5h", "3m2h"] if level >= 4 else []
    truth = {"module": module, "parse": cases_parse, "format": cases_format, "invalid": invalid}
    checks = ["test_parse_duration"] + (["test_format_duration"] if level >= 1 else []) + (["test_parse_rejects_invalid"] if invalid else [])
    unit_text = ", ".join(f"`{u}` ({s} s)" for u, s in units)
    w = Wording(rng)
    intro = w.intro(["Our config files describe timeouts as compact strings such as `1h30m`.",
                     "Durations in our tooling are written like `2h15m10s`."])
    ask = w.pick(["Write a Python module `/app/{m}` with a function `parse_duration(text)` that returns the number of seconds as an int.",
                  "Implement `parse_duration(text) -> int` (seconds) in a new module `/app/{m}`.",
                  "Create `/app/{m}` exposing `parse_duration(text)`, which converts such a string to whole seconds."], m=module)
    details = [w.pick(["The units are {u}; each part is a positive integer followed by a unit, largest unit first.",
                       "Supported units: {u}. A string is a sequence of `<integer><unit>` parts ordered from the largest unit to the smallest."], u=unit_text)]
    w.describe_if(details, [
        (level >= 1, ["Also add `format_duration(seconds)`, the inverse: largest units first, zero parts omitted, and `0s` for zero (e.g. 3661 -> `1h1m1s`).",
                      "Add `format_duration(seconds) -> str` producing the canonical form: biggest unit first, no zero parts, `0s` for 0 (5400 -> `1h30m`)."]),
        (spaced, ["Parts may be separated by single spaces (`1h 30m`).", "Accept an optional space between parts, as in `2d 4h`."]),
        (invalid, ["Anything else must raise `ValueError`: empty strings, numbers without a unit, unknown units, decimals, negative values, a unit used twice, or units out of order.",
                   "Raise `ValueError` for invalid input — e.g. `''`, `'10'`, `'5x'`, `'1.5h'`, `'-3m'`, a repeated unit, or units not in descending order."]),
    ])
    details.append(w.pick(["Use only the standard library.", "No third-party packages."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    table = ", ".join(f"'{u}': {s}" for u, s in units)
    sep_re = "[ ]?" if spaced else ""
    unit_chars = "".join(u for u, _ in units)
    code = ["import re", "", f"UNITS = {{{table}}}", "PART = re.compile(r'(\\d+)([a-z])')", "",
            "def parse_duration(text):",
            f"    if not re.fullmatch(r'(\\d+[{unit_chars}]{sep_re})+', text) or text.endswith(' '):",
            "        raise ValueError(f'invalid duration: {text!r}')",
            "    total, last = 0, None",
            "    for amount, unit in PART.findall(text):",
            "        if last is not None and UNITS[unit] >= UNITS[last]:",
            "            raise ValueError(f'units out of order in {text!r}')",
            "        total += int(amount) * UNITS[unit]",
            "        last = unit",
            "    return total", "",
            "def format_duration(seconds):",
            "    if seconds == 0:", "        return '0s'", "    out = []",
            "    for unit, size in UNITS.items():",
            "        if seconds >= size:", "            out.append(f'{seconds // size}{unit}')", "            seconds %= size",
            "    return ''.join(out)"]
    sol = [f"cat > /app/{module} <<'EOF'", *code, "EOF"]
    return Draft(kind="durations", outputs=[module], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"units": [u for u, _ in units], "spaces": spaced, "invalid_cases": len(invalid),
                             "cases": len(cases_parse) + len(cases_format)}, tags=["python", "parsing"])


def _apply(stock: dict, txs: list, level: int) -> tuple[dict, list[int]]:
    stock, rejected = dict(stock), []
    for i, tx in enumerate(txs):
        item, qty = tx["item"], tx["qty"]
        if tx["type"] == "restock":
            stock[item] = stock.get(item, 0) + qty
        elif tx["type"] == "adjust":
            stock[item] = qty
        elif item not in stock or (level >= 1 and stock[item] < qty):
            rejected.append(i)
        else:
            stock[item] -= qty
    return dict(sorted(stock.items())), rejected


def _inventory_case(rng: random.Random, level: int) -> dict:
    items = rng.sample([p.replace(" ", "-") for p in vocab.PRODUCTS], 4 + level)
    stock = {it: rng.randint(0, 30) for it in items[:-1]}
    types = ["sell", "sell", "restock"] + (["adjust"] if level >= 3 else [])
    txs: list[dict[str, Any]] = [{"type": rng.choice(types), "item": rng.choice(items if level >= 2 else items[:-1]),
                                  "qty": rng.randint(1, 25)} for _ in range(6 + 3 * level)]
    final, rejected = _apply(stock, txs, level)
    report: dict[str, list[int]] = {}  # item -> [sold, restocked]
    for i, tx in enumerate(txs):
        if i in rejected or tx["type"] == "adjust":
            continue
        row = report.setdefault(tx["item"], [0, 0])
        row[0 if tx["type"] == "sell" else 1] += tx["qty"]
    return {"stock": stock, "transactions": txs, "final": final, "rejected": rejected,
            "report": [[k, v[0], v[1]] for k, v in sorted(report.items())]}


def build_inventory(rng: random.Random, level: int) -> Draft:
    tool = rng.choice(["inventory.py", "stockctl.py", "apply_tx.py"])
    cases = [_inventory_case(rng, level) for _ in range(2)]
    truth = {"tool": tool, "cases": cases, "level": level}
    checks = ["test_inventory_final_stock"] + (["test_inventory_rejections"] if level >= 1 else [])
    if level >= 3:
        checks.append("test_inventory_report")
    if level >= 4:
        checks.append("test_inventory_bad_input")
    w = Wording(rng)
    intro = w.intro(["The warehouse sends us stock movements as JSON.", "We track stock levels in JSON files and update them from transaction logs."])
    ask = w.pick(["Write a command-line tool `/app/{t}`, run as `python3 /app/{t} STOCK.json TRANSACTIONS.json`.",
                  "Create `/app/{t}` (invoked as `python3 /app/{t} STOCK.json TRANSACTIONS.json`) that applies the transactions to the stock."], t=tool)
    out_keys = "`stock`" + (" and `rejected`" if level >= 1 else "")
    details = [w.pick(["STOCK.json is an object mapping item names to quantities; TRANSACTIONS.json is a list of objects with `type`, `item` and `qty`.",
                       "Inputs: a stock object (`{{\"item\": quantity}}`) and a JSON array of transactions, each `{{\"type\", \"item\", \"qty\"}}`."]),
               w.pick(["Apply the transactions in order: `restock` adds qty (creating the item if needed), `sell` subtracts it.",
                       "Process them in order; `restock` increases the item's quantity (new items start at 0) and `sell` decreases it."]),
               w.pick(["Print one JSON object to stdout with the key(s) {k}; `stock` is the final stock with keys sorted.",
                       "The output (stdout) is a JSON object with {k}; `stock` holds the final quantities, keys in sorted order."], k=out_keys)]
    w.describe_if(details, [
        (level >= 1, ["A `sell` of more than is in stock is rejected (no change); `rejected` lists the 0-based positions of rejected transactions.",
                      "Reject sells that would make the quantity negative — they change nothing — and list their 0-based indexes in `rejected`."]),
        (level >= 2, ["Selling an item that is not in stock at all is rejected too.", "A `sell` of an unknown item is also rejected."]),
        (level >= 3, ["Type `adjust` sets the quantity to qty outright (it is never rejected).", "Support `adjust`, which sets the item's quantity to exactly qty."]),
        (level >= 3, ["With `--report FILE` (after the two inputs), also write a CSV `item,sold,restocked` with the totals of applied sells and restocks per item (items with at least one, sorted by name; `adjust` is not counted).",
                      "Optional `--report FILE` after the inputs writes CSV with header `item,sold,restocked`: per item (sorted), the quantities actually sold and restocked; skip items with neither; adjustments do not count."]),
        (level >= 4, ["If an input file is not valid JSON, print `error: <file name>: invalid JSON` to stderr and exit with status 1.",
                      "Malformed JSON input: message `error: <file name>: invalid JSON` on stderr, exit status 1, nothing on stdout."]),
    ])
    example = cases[0]
    files = {"examples/stock.json": (json.dumps(example["stock"], indent=2) + "\n").encode(),
             "examples/transactions.json": (json.dumps(example["transactions"][:4], indent=2) + "\n").encode()}
    details.append(w.pick(["Example inputs are in `/app/examples/`.", "You will find sample files in `/app/examples/`."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    code = ["import csv, json, sys", "", "def load(path):", "    try:", "        with open(path) as fh:", "            return json.load(fh)",
            "    except json.JSONDecodeError:", "        print(f'error: {path}: invalid JSON', file=sys.stderr)", "        sys.exit(1)", "",
            "args = sys.argv[1:]", "report_path = None", "if '--report' in args:", "    i = args.index('--report')",
            "    report_path = args[i + 1]", "    del args[i:i + 2]",
            "stock, txs = load(args[0]), load(args[1])", "rejected, moved = [], {}",
            "for i, tx in enumerate(txs):", "    item, qty = tx['item'], tx['qty']",
            "    if tx['type'] == 'restock':", "        stock[item] = stock.get(item, 0) + qty",
            "        moved.setdefault(item, [0, 0])[1] += qty",
            "    elif tx['type'] == 'adjust':", "        stock[item] = qty",
            f"    elif item not in stock{' or stock[item] < qty' if level >= 1 else ''}:", "        rejected.append(i)",
            "    else:", "        stock[item] -= qty", "        moved.setdefault(item, [0, 0])[0] += qty",
            "out = {'stock': dict(sorted(stock.items()))}",
            *(["out['rejected'] = rejected"] if level >= 1 else []),
            "print(json.dumps(out))",
            "if report_path:", "    with open(report_path, 'w', newline='') as fh:", "        w = csv.writer(fh, lineterminator='\\n')",
            "        w.writerow(['item', 'sold', 'restocked'])", "        for item, (sold, restocked) in sorted(moved.items()):",
            "            w.writerow([item, sold, restocked])"]
    sol = [f"cat > /app/{tool} <<'EOF'", *code, "EOF"]
    return Draft(kind="inventory", outputs=[tool], instruction=instruction, files=files, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"transactions": sum(len(c["transactions"]) for c in cases), "rejections": level >= 1,
                             "adjust_and_report": level >= 3, "bad_input": level >= 4}, tags=["python", "json", "cli"])


PRE = {"alpha": 0, "beta": 1, "rc": 2}


def _vkey(v: str) -> tuple:
    core, _, pre = v.partition("-")
    nums = tuple(int(x) for x in core.split("."))
    if not pre:
        return nums + (1, 0, 0)
    label, _, n = pre.partition(".")
    return nums + (0, PRE[label], int(n))


def build_semver(rng: random.Random, level: int) -> Draft:
    tool = rng.choice(["versions.py", "semver_tool.py", "vtool.py"])
    pre = level >= 2
    versions: set[str] = set()
    while len(versions) < 8 + 3 * level:
        v = f"{rng.randint(0, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 20)}"
        if pre and rng.random() < 0.3:
            v += f"-{rng.choice(list(PRE))}.{rng.randint(1, 4)}"
        versions.add(v)
    listing = sorted(versions)
    rng.shuffle(listing)
    invalid = ["1.2", "v1.0.0", "1.0.0-gamma.1", "01.2.3x", "latest"][: 2 + level] if level >= 4 else []
    lines_in = listing + invalid
    rng.shuffle(lines_in)
    ordered = sorted(versions, key=_vkey)
    bumps = []
    for part in ["major", "minor", "patch"]:
        v = rng.choice(sorted(versions))
        a, b, c = (int(x) for x in v.split("-")[0].split("."))
        new = {"major": f"{a + 1}.0.0", "minor": f"{a}.{b + 1}.0", "patch": f"{a}.{b}.{c + 1}"}[part]
        if "-" in v and part == "patch":
            new = v.split("-")[0]  # bumping the patch of a pre-release releases it
        bumps.append([part, v, new])
    majors = sorted({int(v.split(".")[0]) for v in versions})
    latest = [[m, max((v for v in versions if int(v.split(".")[0]) == m and "-" not in v), key=_vkey, default=None)] for m in majors]
    latest = [x for x in latest if x[1] is not None]
    truth = {"tool": tool, "input": "\n".join(lines_in) + "\n", "sorted": ordered, "bumps": bumps, "latest": latest, "invalid": invalid}
    checks = ["test_semver_sort"] + (["test_semver_bump"] if level >= 1 else []) + (["test_semver_latest"] if level >= 3 else []) + (["test_semver_invalid_lines"] if invalid else [])
    w = Wording(rng)
    intro = w.intro(["Release engineering keeps asking which version is newest.", "We juggle many release tags and need a small helper.",
                     "Comparing version strings by hand keeps going wrong (`1.10.0` is newer than `1.9.3`)."])
    ask = w.pick(["Write `/app/{t}`, a Python command-line tool for semantic versions (MAJOR.MINOR.PATCH).",
                  "Create a Python CLI at `/app/{t}` that works with semantic version numbers like `1.4.2`."], t=tool)
    first = [w.pick(["`python3 /app/{t} sort FILE` prints the versions listed in FILE (one per line) from oldest to newest, one per line, comparing MAJOR, MINOR and PATCH numerically.",
                     "Subcommand `sort FILE`: read one version per line and print them in ascending version order (numeric comparison of each component), one per line.",
                     "The `sort` subcommand takes a file with one version per line and outputs those versions oldest first (each of the three numbers compared as an integer), one per line."], t=tool)]
    details: list[str] = []
    w.describe_if(details, [
        (level >= 1, ["`python3 /app/{t} bump PART VERSION` (PART is major, minor or patch) prints the next version: bumping resets the lower parts to 0.",
                      "Subcommand `bump major|minor|patch VERSION` prints the incremented version, zeroing the parts to the right of the bumped one.",
                      "`bump` takes the part to raise (major, minor or patch) and a version, and prints the result; parts after the raised one go back to 0 (so `bump minor 1.4.2` gives `1.5.0`)."]),
        (pre, ["Versions may carry a pre-release suffix `-alpha.N`, `-beta.N` or `-rc.N`. A pre-release sorts before the same version without suffix; alpha < beta < rc, then by N numerically. Bumping the patch of a pre-release drops the suffix without incrementing (`1.2.3-rc.1` -> `1.2.3`); major/minor bumps drop it too.",
               "Support pre-release suffixes `-alpha.N`, `-beta.N`, `-rc.N`: `X.Y.Z-…` is older than `X.Y.Z`; among suffixes alpha < beta < rc, then N numerically. `bump patch` on a pre-release just removes the suffix; `bump minor`/`major` work as usual and drop it.",
               "Pre-releases exist too (`1.3.0-alpha.2`, `1.3.0-beta.1`, `1.3.0-rc.3`): they come before the plain release with the same numbers, ordered alpha, then beta, then rc, then by their number. Bumping the patch of a pre-release yields the release itself (`1.3.0-rc.3` -> `1.3.0`); a minor or major bump discards the suffix."]),
        (level >= 3, ["`python3 /app/{t} latest FILE --major N` prints the newest non-pre-release version with major number N (nothing and exit 1 if there is none).",
                      "Add `latest FILE --major N`: print the highest released (no suffix) version whose MAJOR is N; exit 1 silently when there is none."]),
        (invalid, ["Lines that are not valid versions are skipped by `sort`, each reported on stderr as `invalid: <line>`.",
                   "`sort` ignores malformed lines but prints `invalid: <line>` to stderr for each one."]),
    ], t=tool)
    sample = listing[:5]
    details.append(w.pick(["A sample list is in `/app/releases.txt`.", "`/app/releases.txt` contains a few versions to try it on.",
                           "Try it on the versions in `/app/releases.txt`."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, first=first)
    code = ["import re, sys", "", "PRE = {'alpha': 0, 'beta': 1, 'rc': 2}",
            "VERSION = re.compile(r'(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-(alpha|beta|rc)\\.(\\d+))?')", "",
            "def key(v):", "    m = VERSION.fullmatch(v)", "    a, b, c, label, n = m.groups()",
            "    return (int(a), int(b), int(c)) + ((1, 0, 0) if label is None else (0, PRE[label], int(n)))", "",
            "cmd = sys.argv[1]",
            "if cmd == 'sort':", "    good = []", "    for line in open(sys.argv[2]).read().splitlines():", "        line = line.strip()",
            "        if not line:", "            continue", "        if VERSION.fullmatch(line):", "            good.append(line)",
            "        else:", "            print(f'invalid: {line}', file=sys.stderr)", "    print('\\n'.join(sorted(good, key=key)))",
            "elif cmd == 'bump':", "    part, v = sys.argv[2], sys.argv[3]", "    a, b, c = (int(x) for x in v.split('-')[0].split('.'))",
            "    if part == 'major':", "        print(f'{a + 1}.0.0')", "    elif part == 'minor':", "        print(f'{a}.{b + 1}.0')",
            "    else:", "        print(v.split('-')[0] if '-' in v else f'{a}.{b}.{c + 1}')",
            "elif cmd == 'latest':", "    major = int(sys.argv[sys.argv.index('--major') + 1])",
            "    found = [l.strip() for l in open(sys.argv[2]) if VERSION.fullmatch(l.strip()) and '-' not in l and int(l.split('.')[0]) == major]",
            "    if not found:", "        sys.exit(1)", "    print(max(found, key=key))"]
    sol = [f"cat > /app/{tool} <<'EOF'", *code, "EOF"]
    return Draft(kind="semver", outputs=[tool], instruction=instruction, files={"releases.txt": ("\n".join(sample) + "\n").encode()}, truth=truth,
                 checks=checks, solution="\n".join(sol),
                 parameters={"versions": len(versions), "prerelease": pre, "latest": level >= 3, "invalid": len(invalid)},
                 tags=["python", "cli", "sorting"])


KINDS = [Kind("durations", build_durations), Kind("inventory", build_inventory), Kind("semver", build_semver)]
