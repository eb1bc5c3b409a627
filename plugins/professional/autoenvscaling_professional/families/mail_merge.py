"""mail_merge: merge a letter template with a recipient list, one Word letter per recipient.

The workspace holds ``recipients.csv`` (name, company, address, a key such as the account number,
an amount and from level 1 a date, plus columns the letter does not use) and the letter template:
``template.md`` at level 0 (one paragraph a line), ``template.docx`` from level 1. Its placeholders
are either ``{{column}}`` or Word-merge style ``«Column»``. The letters are either overdue-balance
reminders or membership renewals. Output: ``letters/<key>.docx`` per recipient, from level 3 one
``letters.docx`` with a page break between letters instead.

Levels: amounts as $1,234.50 always; dates written out (4 March 2025 or March 4, 2025) from level 1;
only some rows get a letter from level 2 (status Overdue / Active), and from level 4 a second
condition (a minimum balance / a renewal month). From level 2 some placeholders in template.docx are
split across runs, as Word leaves them after editing.

Checks per letter: the recipient's fields merged into the template's wording, no placeholder left
(counting lines the template does not have as a penalty); then the amount and date formatted as
asked. Letters for excluded rows must be absent. Mistake of the wrong answer: the amount is merged
as it stands in the CSV (1234.5), not as $1,234.50.
"""

from __future__ import annotations

import datetime as dt
import io
import random

from . import content
from .base import Draft, csv_bytes, dated_zip, grow

#: canonical field -> (snake_case column, CamelCase column), per kind for the key, amount and date
COLUMNS = {"first": ("first_name", "FirstName"), "last": ("last_name", "LastName"), "company": ("company", "Company"),
           "street": ("address_line1", "AddressLine1"), "city": ("city", "City"), "postcode": ("postcode", "Postcode")}
KINDS = {
    "reminder": {"key": ("account_number", "AccountNumber"), "money": ("amount_due", "AmountDue"),
                 "date": ("due_date", "DueDate"), "prefix": "AC", "who": "customer", "status": ("Overdue", ["Paid", "Current"]),
                 "signer": "Credit Controller", "key_label": "Account number",
                 "subject": "Re: overdue balance on account {key}",
                 "main": ("Our records show an outstanding balance of {money} on your account", ", which was due on {date}", "."),
                 "body": ("If you have already sent payment, please accept our thanks and disregard this letter.",
                          "You can pay by bank transfer, quoting your account number as the reference, or by card over the phone.",
                          "If there is a problem with the invoice, please contact our accounts team within seven days so we can put it right.",
                          "We value your business and would much prefer to settle this without involving a collection agency.")},
    "renewal": {"key": ("member_id", "MemberID"), "money": ("annual_fee", "AnnualFee"),
                "date": ("renewal_date", "RenewalDate"), "prefix": "M", "who": "member", "status": ("Active", ["Lapsed", "Cancelled"]),
                "signer": "Membership Secretary", "key_label": "Membership number",
                "subject": "Your membership renewal ({key})",
                "main": ("Your annual membership fee is {money}", " and your membership renews on {date}", "."),
                "body": ("Renewing keeps your access to the member workshops, the resource library and the quarterly networking evenings.",
                         "If your details have changed, please reply to this letter or call the membership office so we can update our records.",
                         "Nothing needs to be done if you pay by direct debit: the fee will be collected automatically.",
                         "Members who renew on time keep their current rate for another year.")},
}


def _segments(text: str) -> list[list[str]]:
    """'Dear {first},' -> [["text", "Dear "], ["field", "first"], ["text", ","]]."""
    out, rest = [], text
    while "{" in rest:
        before, _, after = rest.partition("{")
        name, _, rest = after.partition("}")
        out += ([["text", before]] if before else []) + [["field", name]]
    return out + ([["text", rest]] if rest else [])


def _template(rng: random.Random, level: int, kind: dict, sender: content.Person, firm: str, today: dt.date) -> list[str]:
    """The letter as paragraphs with canonical {field} slots."""
    main = kind["main"][0] + (kind["main"][1] if level >= 1 else "") + kind["main"][2]
    return [firm, sender.address, content.long_date(today), "{first} {last}", "{company}", "{street}",
            "{city} {postcode}", f"{kind['key_label']}: {{key}}", kind["subject"],
            rng.choice(["Dear {first},", "Dear {first} {last},"]), main, *rng.sample(kind["body"], 2 if level < 2 else 3),
            rng.choice(["Kind regards,", "Yours sincerely,"]), sender.name, f"{kind['signer']}, {firm}"]


def _column(field: str, kind: dict, camel: bool) -> str:
    """The CSV column of a canonical field, in the task's naming style."""
    if field in COLUMNS:
        return COLUMNS[field][camel]
    if field in ("key", "money", "date"):
        return kind[field][camel]
    return field.title() if camel else field


def _token(field: str, kind: dict, camel: bool) -> str:
    column = _column(field, kind, camel)
    return f"«{column}»" if camel else f"{{{{{column}}}}}"


def _docx(rng: random.Random, level: int, paragraphs: list[list[list[str]]], kind: dict, camel: bool,
          stamp: dt.datetime) -> bytes:
    """template.docx; from level 2 some placeholders are split over two runs, the amount is bold."""
    import docx

    doc = docx.Document()
    for segments in paragraphs:
        p = doc.add_paragraph()
        for typ, value in segments:
            if typ == "text":
                p.add_run(value)
                continue
            token = _token(value, kind, camel)
            if level >= 2 and rng.random() < 0.5:
                cut = rng.randint(1, len(token) - 1)
                p.add_run(token[:cut])
                p.add_run(token[cut:]).italic = False
            else:
                p.add_run(token).bold = value == "money" or None
    doc.core_properties.created = doc.core_properties.modified = stamp
    doc.core_properties.last_modified_by = doc.core_properties.author = "Office"
    buf = io.BytesIO()
    doc.save(buf)
    return dated_zip(buf.getvalue(), stamp)


def build(rng: random.Random, level: int) -> Draft:
    name = rng.choice(sorted(KINDS))
    kind = KINDS[name]
    camel = level >= 1 and rng.random() < 0.5
    date_style = rng.choice(["dmy", "mdy"])
    year, month = content.period(rng)
    today = dt.date(year, month, rng.randint(3, 20))
    firm = content.company(rng)
    n_in = grow(level, 4, 1.45)
    n_out = 2 + level // 2 if level >= 2 else 0
    folks = content.people(rng, n_in + n_out + 1)
    sender, folks = folks[0], folks[1:]
    keys = rng.sample(range(10000, 99999), len(folks))
    want, other = kind["status"]
    renew_month = (today.replace(day=28) + dt.timedelta(days=10)).replace(day=1)
    rows: list[dict] = []
    expected: list[dict] = []  # {"key", "values", "name"} of each recipient who gets a letter
    excluded: list[dict] = []  # and of each who does not
    for i, person in enumerate(folks):
        mailed = i < n_in
        status = want if mailed or (level >= 4 and i % 2) else rng.choice(other)
        if name == "reminder":
            small = level >= 4 and not mailed and status == want
            amount = content.money(rng, 5, 49) if small else content.money(rng, 60, 9500)
            when = today - dt.timedelta(days=rng.randint(10, 75))
        else:
            amount = rng.choice([content.money(rng, 150, 900), float(rng.choice([1250, 1800, 2400]))])
            late = level >= 4 and not mailed and status == want
            first = renew_month + dt.timedelta(days=40 if late else 0)
            when = first.replace(day=rng.randint(1, 28))
        key = f"{kind['prefix']}-{keys[i]}"
        values = {"key": key, "first": person.first, "last": person.last, "company": person.company,
                  "street": person.street, "city": person.city, "postcode": person.postcode,
                  "money": f"${amount:,.2f}", "date": content.long_date(when, date_style)}
        raw = {**values, "money": f"{amount:.2f}".rstrip("0").rstrip("."), "date": when.isoformat(),
               "email": person.email, "phone": person.phone, "status": status}
        rows.append(raw)
        (expected if mailed else excluded).append({"key": key, "values": values, "name": person.name})
    rng.shuffle(rows)
    position = {r["key"]: i for i, r in enumerate(rows)}
    expected.sort(key=lambda e: position[e["key"]])
    columns = ["key", "first", "last", "company", "street", "city", "postcode", "money", "date", "email", "phone"]
    if level >= 2:
        columns.append("status")
    header = [_column(c, kind, camel) for c in columns]

    paragraphs = [_segments(p) for p in _template(rng, level, kind, sender, firm, today)]
    files = {"recipients.csv": csv_bytes(header, [[r[c] for c in columns] for r in rows])}
    if level == 0:
        files["template.md"] = "\n".join("".join(v if t == "text" else _token(v, kind, camel) for t, v in p)
                                         for p in paragraphs).encode() + b"\n"
    else:
        stamp = dt.datetime(year, month, 1, 9, 30)
        files["template.docx"] = _docx(rng, level, paragraphs, kind, camel, stamp)
    key_col = kind["key"][camel]
    combined = level >= 3
    outputs = {"letters.docx": "docx"} if combined else {f"letters/{e['key']}.docx": "docx" for e in expected}
    money_col, date_col, status_col = (_column(c, kind, camel) for c in ("money", "date", "status"))
    filt = None
    if level >= 2:
        filt = f"Only write to {kind['who']}s whose {status_col} is {want} (no letter for {' or '.join(other)})"
        if level >= 4:
            filt += (", and only where the balance is at least $50.00: smaller balances are written off" if name == "reminder"
                     else f", and only those whose {date_col} falls in {content.month_name(renew_month.month)} {renew_month.year}")
        filt += "."
    tpl = "template.md" if level == 0 else "template.docx"
    example = _token("first", kind, camel)
    intro = rng.choice([
        f"The {'overdue-balance reminders' if name == 'reminder' else 'membership renewal letters'} have to go out this week.",
        f"Can you do the mail merge for this month's {'payment reminders' if name == 'reminder' else 'renewal letters'}?",
        f"I need the {'reminder' if name == 'reminder' else 'renewal'} letters produced from our {kind['who']} list.",
    ])
    asks = [
        ("Put all the letters in one Word document, letters.docx, in the order of recipients.csv, each letter starting on a new page "
         "(a page break between letters)." if combined else
         f"Write each letter as its own Word document, letters/<{key_col}>.docx (for example letters/{expected[0]['key']}.docx)."),
        f"Replace every placeholder (like {example}) with that {kind['who']}'s value from the matching column; no placeholder may be left.",
        "Keep the template's wording exactly, one paragraph per template paragraph" + (" (each line of template.md is one paragraph)"
                                                                                         if level == 0 else "") + "; add nothing.",
        f"Write {money_col} as dollars with a thousands separator and two decimals, e.g. $1,234.50.",
    ]
    if level >= 1:
        asks.append(f"Write {date_col} in full, like {content.long_date(dt.date(2025, 3, 4), date_style)}.")
    if filt:
        asks.append(filt)
    instruction = (f"{intro} recipients.csv is the list and {tpl} is the approved letter; its placeholders name "
                   "columns of the CSV.\n\n" + "\n".join(f"- {a}" for a in asks) + "\n\nSave everything under /app.\n")
    spec = {"combined": combined, "template": paragraphs, "letters": expected,
            "excluded": [{"key": e["key"], "name": e["name"]} for e in excluded]}
    params = {"template": tpl, "camel": camel, "key": key_col, "money": money_col, "date": date_col if level >= 1 else None,
              "date_style": date_style, "combined": combined,
              "filter": {"column": status_col, "value": want,
                         "min": 50.0 if level >= 4 and name == "reminder" else None,
                         "month": renew_month.isoformat()[:7] if level >= 4 and name == "renewal" else None} if filt else None}
    return Draft(kind=name, instruction=instruction, files=files, spec=spec, params=params, outputs=outputs,
                 mistake="the amount is merged as it stands in the CSV (e.g. 1234.5), not as $1,234.50",
                 parameters={"recipients": len(rows), "letters": n_in, "excluded": n_out, "combined": combined,
                             "placeholders": "guillemets" if camel else "braces"},
                 tags=["docx", "csv", "mail-merge"], agent_timeout_sec=900.0)
