"""CSV and JSON data processing.

Kinds:
- ``aggregate``: orders per group with revenue, from a CSV. Higher levels add a month filter,
  quoted fields with commas, cancelled orders to exclude, and a join with a JSON product catalogue.
- ``convert``: CSV rows to typed JSON records. Higher levels rename keys, convert booleans, filter
  and sort, nest columns into objects, and clean whitespace and case.
- ``events``: JSON Lines events to a CSV of flattened fields. Higher levels filter event types,
  tolerate missing fields, and skip malformed lines.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import defaultdict
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording, grow


def _csv(rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode()


def build_aggregate(rng: random.Random, level: int) -> Draft:
    n = grow(level, 40, 2.3)
    products = rng.sample(vocab.PRODUCTS, 8 + level)
    if level >= 3:  # names with commas need CSV quoting
        products = [p if rng.random() < 0.6 else f"{p}, {rng.choice(['large', 'blue', 'pack of 4', 'v2'])}" for p in products]
    regions = rng.sample(vocab.REGIONS, 3 + min(level, 4))
    prices = {p: round(rng.uniform(1, 250), 2) for p in products}
    with_status = level >= 3
    by_category = level >= 4
    catalogue = {p: rng.choice(vocab.CATEGORIES[:3 + level]) for p in products}
    year = rng.randint(2021, 2024)
    month = rng.randint(1, 12) if level >= 2 else None
    header = ["order_id", "date", "region", "product", "quantity", "unit_price"] + (["status"] if with_status else [])
    rows = [header]
    agg: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for i in range(n):
        m = month if (month and rng.random() < 0.5) else rng.randint(1, 12)
        date = f"{year}-{m:02d}-{rng.randint(1, 28):02d}"
        product, region, qty = rng.choice(products), rng.choice(regions), rng.randint(1, 20)
        status = rng.choices(["shipped", "delivered", "cancelled"], weights=[5, 5, 2])[0]
        row = [str(1000 + i), date, region, product, str(qty), f"{prices[product]:.2f}"] + ([status] if with_status else [])
        rows.append(row)
        if month and m != month or (with_status and status == "cancelled"):
            continue
        key = catalogue[product] if by_category else region
        agg[key][0] += 1
        agg[key][1] += qty * prices[product]
    group = "category" if by_category else "region"
    order_by_revenue = level >= 1
    groups = sorted(agg.items(), key=(lambda kv: (-round(kv[1][1], 2), kv[0])) if order_by_revenue else (lambda kv: kv[0]))
    truth_rows = [[g, int(v[0]), round(v[1], 2)] for g, v in groups]
    files = {"data/orders.csv": _csv(rows)}
    if by_category:
        files["data/products.json"] = (json.dumps([{"name": p, "category": c} for p, c in sorted(catalogue.items())], indent=2) + "\n").encode()
    out = rng.choice(["output/summary.csv", "reports/revenue.csv", "out/totals.csv", f"{group}_revenue.csv"])
    truth = {"out": out, "header": [group, "orders", "revenue"], "rows": truth_rows}
    w = Wording(rng)
    intro = w.intro(["Order data is exported to `/app/data/orders.csv`.",
                     "`/app/data/orders.csv` holds one line per order (with a header row).",
                     "Our shop exports its orders as CSV to `/app/data/orders.csv`."])
    ask = w.pick(["Summarise the orders per {g} into `/app/{o}`.", "Build a per-{g} revenue table in `/app/{o}`.",
                  "Compute, for each {g}, how many orders there were and how much revenue they brought; save it as `/app/{o}`."], g=group, o=out)
    details = [w.pick(["The output is CSV with the header `{g},orders,revenue`.", "Write a header line `{g},orders,revenue` followed by one row per {g}."], g=group),
               w.pick(["Revenue of an order is quantity × unit_price; print revenue with exactly two decimals.",
                       "An order's revenue is `quantity * unit_price`; format the totals with 2 decimal places."]),
               w.pick(["Sort the rows by revenue, highest first (ties: by {g} name)." if order_by_revenue else "Sort rows alphabetically by {g}.",
                       "Order rows by descending revenue, breaking ties alphabetically." if order_by_revenue else "Rows go in alphabetical order of the {g}."], g=group)]
    w.describe_if(details, [
        (month, ["Only include orders dated in {y}-{m:02d}.", "Consider just the orders from month {m:02d} of {y} (the `date` column is YYYY-MM-DD)."]),
        (with_status, ["Cancelled orders (status `cancelled`) do not count.", "Leave out orders whose status is `cancelled`."]),
        (with_status, ["Note that some product names contain commas and are quoted.", "Product names may contain commas, so parse the CSV properly."]),
        (by_category, ["Group by product category, which you find in `/app/data/products.json` (a list of `{{name, category}}` objects).",
                       "The category of each product is listed in `/app/data/products.json`; aggregate per category, not per region."]),
    ], y=year, m=month)
    instruction = w.compose(intro=intro, ask=ask, details=details)
    outdir = out.rsplit("/", 1)[0] if "/" in out else "."
    if level < 3:
        cond = f"substr($2, 1, 7) == \"{year}-{month:02d}\"" if month else "1"
        sort_cmd = "LC_ALL=C sort -t, -k3,3nr -k1,1" if order_by_revenue else "LC_ALL=C sort -t, -k1,1"
        sol = [f"mkdir -p {outdir}",
               f"echo '{group},orders,revenue' > {out}",
               f"tail -n +2 data/orders.csv | awk -F, '{cond} {{n[$3]++; r[$3] += $5 * $6}} END {{for (g in n) printf \"%s,%d,%.2f\\n\", g, n[g], r[g]}}' \\",
               f"    | {sort_cmd} >> {out}"]
    else:
        sol = [f"mkdir -p {outdir}", "python3 - <<'EOF'", "import csv, json", "from collections import defaultdict"]
        if by_category:
            sol.append("category = {p['name']: p['category'] for p in json.load(open('data/products.json'))}")
        sol += ["agg = defaultdict(lambda: [0, 0.0])",
                "for row in csv.DictReader(open('data/orders.csv', newline='')):",
                "    if row['status'] == 'cancelled':", "        continue"]
        if month:
            sol += [f"    if not row['date'].startswith('{year}-{month:02d}'):", "        continue"]
        key_expr = "category[row['product']]" if by_category else "row['region']"
        sol += [f"    key = {key_expr}",
                "    agg[key][0] += 1", "    agg[key][1] += int(row['quantity']) * float(row['unit_price'])",
                f"with open('{out}', 'w', newline='') as fh:",
                "    out = csv.writer(fh, lineterminator='\\n')",
                f"    out.writerow(['{group}', 'orders', 'revenue'])",
                "    for key, (count, revenue) in sorted(agg.items(), key=lambda kv: (-round(kv[1][1], 2), kv[0])):",
                "        out.writerow([key, count, f'{revenue:.2f}'])", "EOF"]
    return Draft(kind="aggregate", outputs=[out], instruction=instruction, files=files, truth=truth,
                 checks=["test_shape_table_header", "test_table_groups", "test_table_values"], solution="\n".join(sol),
                 parameters={"rows": n, "month": month, "status": with_status, "group": group}, tags=["csv", "aggregation"])


def build_convert(rng: random.Random, level: int) -> Draft:
    n = grow(level, 12, 2.2)
    cities = rng.sample(vocab.CITIES, 5)
    rename = level >= 1
    drop_inactive = level >= 2
    nested = level >= 3
    messy = level >= 4
    rows = [["id", "full_name" if rename else "name", "email", "age", "active", "city", "zip"]]
    records = []
    ids = rng.sample(range(1, 10 * n + 10), n)
    for uid in ids:
        first, last = rng.choice(vocab.FIRST_NAMES), rng.choice(vocab.SURNAMES)
        name = f"{first.title()} {last.title()}" if not (nested and rng.random() < 0.2) else f"{last.title()}, {first.title()}"
        email = f"{first}.{last}@{rng.choice(vocab.EMAIL_DOMAINS)}"
        shown_email = (f"  {email.upper() if rng.random() < 0.5 else email.title()} " if messy and rng.random() < 0.4
                       else email)
        active = rng.random() < 0.7
        age, city, zipcode = rng.randint(18, 80), rng.choice(cities), f"{rng.randint(0, 99999):05d}"
        rows.append([str(uid), name, shown_email, str(age), ("yes" if active else "no") if level >= 1 else str(active).lower(), city, zipcode])
        rec: dict = {"id": uid, "name": name, "email": email if messy else shown_email, "age": age,
                     "active": active if level >= 1 else str(active).lower()}
        rec.update({"address": {"city": city, "zip": zipcode}} if nested else {"city": city, "zip": zipcode})
        if drop_inactive and not active:
            continue
        records.append(rec)
    records.sort(key=(lambda r: (-r["age"], r["id"])) if drop_inactive else (lambda r: r["id"]))
    out = rng.choice(["output/users.json", "users.json", "export/people.json", "out/members.json"])
    truth = {"out": out, "records": records}
    w = Wording(rng)
    intro = w.intro(["The member list is in `/app/data/users.csv`.", "`/app/data/users.csv` is an export of our user table."])
    ask = w.pick(["Convert it into a JSON array of objects at `/app/{o}`.", "Turn the CSV into JSON: one object per user, all in an array, written to `/app/{o}`.",
                  "I need the same data as a JSON list of records in `/app/{o}`."], o=out)
    keys = "`id`, `name`, `email`, `age`, `active`, " + ("and `address`" if nested else "`city` and `zip`")
    details = [w.pick(["Each object has exactly the keys {k}.", "Use the keys {k} (no others)."], k=keys),
               w.pick(["`id` and `age` are JSON integers; `zip` stays a string (leading zeros matter).",
                       "Numbers: `id` and `age` as integers. Keep `zip` as a string so leading zeros survive."])]
    if rename:
        details.append(w.pick(["The CSV column `full_name` becomes the key `name`.", "Rename `full_name` to `name`."]))
        details.append(w.pick(["`active` is `yes`/`no` in the CSV and must become a JSON boolean.", "Map `active` from yes/no to true/false (booleans)."]))
    else:
        details.append("Keep `active` as the string it is in the CSV (`true` or `false`).")
    if drop_inactive:
        details.append(w.pick(["Only include active users, sorted by age (oldest first), then by id.",
                               "Drop inactive users; order the rest by descending age and then ascending id."]))
    else:
        details.append(w.pick(["Order the objects by id, ascending.", "Sort by `id`."]))
    if nested:
        details.append(w.pick(["Put `city` and `zip` inside a nested object under the key `address`.",
                               "Instead of top-level `city`/`zip`, nest them as `address: {{city, zip}}`."]))
        details.append("Some names contain a comma (they are quoted in the CSV).")
    if messy:
        details.append(w.pick(["Emails must be trimmed of surrounding spaces and lower-cased.", "Normalise emails: strip whitespace, make them lower case."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    src_name = "full_name" if rename else "name"
    active_expr = "row['active'] == 'yes'" if level >= 1 else "row['active']"
    email_expr = "row['email'].strip().lower()" if messy else "row['email']"
    sol = [f"mkdir -p \"$(dirname /app/{out})\"", "python3 - <<'EOF'", "import csv, json", "records = []",
           "for row in csv.DictReader(open('/app/data/users.csv', newline='')):",
           f"    rec = {{'id': int(row['id']), 'name': row['{src_name}'], 'email': {email_expr}, 'age': int(row['age']), 'active': {active_expr}}}"]
    sol.append("    rec['address'] = {'city': row['city'], 'zip': row['zip']}" if nested
               else "    rec.update(city=row['city'], zip=row['zip'])")
    if drop_inactive:
        sol += ["    if rec['active']:", "        records.append(rec)", "records.sort(key=lambda r: (-r['age'], r['id']))"]
    else:
        sol += ["    records.append(rec)", "records.sort(key=lambda r: r['id'])"]
    sol += [f"json.dump(records, open('/app/{out}', 'w'), indent=2)", "EOF"]
    return Draft(kind="convert", outputs=[out], instruction=instruction, files={"data/users.csv": _csv(rows)}, truth=truth,
                 checks=["test_shape_records_array", "test_record_ids_and_order", "test_record_fields"], solution="\n".join(sol),
                 parameters={"rows": n, "rename": rename, "filter": drop_inactive, "nested": nested, "normalise": messy},
                 tags=["csv", "json", "conversion"])


def build_events(rng: random.Random, level: int) -> Draft:
    n = grow(level, 30, 2.3)
    types = rng.sample(["login", "logout", "purchase", "view", "signup", "refund", "search"], 4)
    wanted = rng.sample(types, 2) if level >= 1 else types
    missing = level >= 2
    malformed = level >= 3
    users = rng.sample(range(100, 999), 6 + level)
    ts = 1_700_000_000 + rng.randint(0, 10_000_000)
    lines, rows = [], []
    for i in range(n):
        ts += rng.randint(1, 500)
        ev: dict[str, Any] = {"ts": ts, "event": rng.choice(types), "user": {"id": rng.choice(users), "plan": rng.choice(["free", "pro", "team"])}}
        if rng.random() < 0.5:
            ev["meta"] = {"ip": f"10.0.{rng.randint(0, 9)}.{rng.randint(1, 200)}"}
        if missing and rng.random() < 0.2:
            del ev["user"]["plan"]
        lines.append(json.dumps(ev, sort_keys=rng.random() < 0.5))
        if malformed and rng.random() < 0.06:
            lines.append(rng.choice(['{"ts": 17000, "event": "view"', "not json at all", "{}garbage"]))
        if ev["event"] in wanted:
            rows.append([str(ev["ts"]), ev["event"], str(ev["user"]["id"]), ev["user"].get("plan", "")])
    rows.sort(key=lambda r: int(r[0]))
    out = rng.choice(["output/events.csv", "events.csv", "export/activity.csv"])
    truth = {"out": out, "header": ["ts", "event", "user_id", "plan"], "rows": rows}
    w = Wording(rng)
    intro = w.intro(["Our analytics pipeline dumps events as JSON Lines to `/app/data/events.jsonl`.",
                     "`/app/data/events.jsonl` has one JSON event per line."])
    ask = w.pick(["Flatten the events into `/app/{o}`.", "Extract a CSV of the events to `/app/{o}`.", "Produce `/app/{o}` from the events."], o=out)
    details = [w.pick(["Columns, in this order: `ts,event,user_id,plan` (header included), taken from `ts`, `event`, `user.id` and `user.plan`.",
                       "Write the header `ts,event,user_id,plan`; the values come from the fields `ts`, `event`, `user.id` and `user.plan`."]),
               w.pick(["Rows sorted by `ts` ascending.", "Keep the rows in ascending timestamp order."])]
    w.describe_if(details, [
        (level >= 1, ["Only keep events of type `{a}` or `{b}`.", "Ignore every event whose `event` is not `{a}` or `{b}`."]),
        (missing, ["Some events have no `user.plan`; leave that cell empty.", "If `user.plan` is missing, write an empty value."]),
        (malformed, ["A few lines are not valid JSON objects — skip them.", "Skip lines that do not parse as JSON."]),
    ], a=wanted[0], b=wanted[1])
    instruction = w.compose(intro=intro, ask=ask, details=details)
    select = f"select(.event == \"{wanted[0]}\" or .event == \"{wanted[1]}\")" if level >= 1 else "."
    # -c: the first jq passes the objects on one per line, for the second
    reader = "jq -R -c 'fromjson? | select(type == \"object\" and has(\"ts\"))'" if malformed else "cat"
    sol = [f"mkdir -p \"$(dirname /app/{out})\"",
           f"{{ echo 'ts,event,user_id,plan'; {reader} data/events.jsonl | jq -s -r 'sort_by(.ts) | .[] | {select} | [.ts, .event, .user.id, (.user.plan // \"\")] | @csv'; }} > /app/{out}"]
    return Draft(kind="events", outputs=[out], instruction=instruction, files={"data/events.jsonl": ("\n".join(lines) + "\n").encode()}, truth=truth,
                 checks=["test_shape_table_header", "test_table_rows_exact"], solution="\n".join(sol),
                 parameters={"events": n, "types": wanted, "missing": missing, "malformed": malformed}, tags=["jsonl", "jq", "csv"])


KINDS = [Kind("aggregate", build_aggregate), Kind("convert", build_convert), Kind("events", build_events)]
