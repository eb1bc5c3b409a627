"""Reference solution for memo_docx: aggregate the data, read decisions and action items out of the
meeting notes, write the memo with python-docx (Heading 1 sections, tables, bullets).
``--wrong``: the plausible wrong answer (the action items lose their owners)."""

import csv
import datetime as dt
import json
import re
import sys

import docx

WRONG = "--wrong" in sys.argv
with open("/solution/params.json", encoding="utf-8") as fh:
    P = json.load(fh)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def money(x):
    return f"-${abs(x):,.2f}" if x < 0 else f"${x:,.2f}"


def load():
    """(current, reference, by sub-group, period label): the counted rows summed per group."""
    cur, by_sub = {}, {}
    if P["kind"] == "spend":
        with open("expenses.csv", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        with open("budgets.csv", encoding="utf-8") as fh:
            ref = {r["Department"]: float(r["Budget"]) for r in csv.DictReader(fh)}
        rows = [r for r in rows if not P["exclude_status"] or r["Status"] == "Approved"]
        for r in rows:
            cur[r["Department"]] = cur.get(r["Department"], 0) + float(r["Amount"])
            by_sub[r["Category"]] = by_sub.get(r["Category"], 0) + float(r["Amount"])
        first = dt.date.fromisoformat(rows[0]["Date"])
        period = f"{MONTHS[first.month - 1]} {first.year}"
    else:
        with open(P["data"][0], encoding="utf-8") as fh:
            data = json.load(fh)
        ref = data["previous_quarter"]["revenue_by_region"]
        for o in data["orders"]:
            if P["exclude_status"] and o["status"] == "Cancelled":
                continue
            cur[o["region"]] = cur.get(o["region"], 0) + o["amount"]
            by_sub[o["product"]] = by_sub.get(o["product"], 0) + o["amount"]
        period = data["quarter"]
    return ({g: round(v, 2) for g, v in cur.items()}, ref, {k: round(v, 2) for k, v in by_sub.items()}, period)


def notes():
    """(decisions, actions as (owner, task, due)) from meeting_notes.md, in any of its layouts."""
    text = open("meeting_notes.md", encoding="utf-8").read()
    people = re.search(r"^(?:Attendees:|\*\*Present:\*\*)\s*(.+)$", text, re.M).group(1)
    full = {n.split()[0]: n for n in re.findall(r"([^,(]+?)\s*\(", people)}
    decisions, actions, section = [], [], ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip().lower()
        elif m := re.match(r"- DECISION: (.+?)\.?$", line):
            decisions.append(m.group(1))
        elif section == "decisions" and line.startswith("- "):
            decisions.append(line[2:].rstrip("."))
        elif m := re.match(r"- ACTION: (.+?) to (.+) by (.+)$", line):
            actions.append(m.groups())
        elif m := re.match(r"- ACTION \((\w+)\): (.+), due (.+)$", line):
            actions.append((full[m.group(1)], m.group(2), m.group(3)))
        elif section == "action items" and line.startswith("- "):
            owner, task, due = line[2:].split(" — ")
            actions.append((owner, task, due.replace("due ", "")))
    return decisions, actions


def table(doc, header, rows):
    t = doc.add_table(rows=1, cols=len(header))
    t.style = "Table Grid"
    for cell, name in zip(t.rows[0].cells, header):
        cell.text = name
    for row in rows:
        for cell, value in zip(t.add_row().cells, row):
            cell.text = value


cur, ref, by_sub, period = load()
groups = sorted(ref)
cur = {g: cur.get(g, 0.0) for g in groups}
diff = {g: round(P["sign"] * (cur[g] - ref[g]), 2) for g in groups}
decisions, actions = notes()
total, ref_total = round(sum(cur.values()), 2), round(sum(ref[g] for g in groups), 2)
doc = docx.Document()
if P["header"]:
    hd = P["header"]
    day = dt.date.fromisoformat(hd["date"])
    for label, value in (("To", hd["to"]), ("From", hd["from"]), ("Date", f"{day.day} {MONTHS[day.month - 1]} {day.year}"),
                         ("Subject", hd["subject"])):
        doc.add_paragraph(f"{label}: {value}")
for role in P["order"]:
    doc.add_heading(P["heading"][role], level=1)
    if role == "summary":
        words = f"Total {P['kind']} for {period} was {money(total)}."
        if P["largest"]:
            top = max(groups, key=lambda g: cur[g])
            words += f" The largest was {top} at {money(cur[top])}."
        if P["percent"]:
            pct = 100 * total / ref_total if P["kind"] == "spend" else 100 * (total - ref_total) / ref_total
            words += f" That is {pct:.1f}% " + ("of the total budget." if P["kind"] == "spend" else "change on the previous quarter.")
        doc.add_paragraph(words)
    elif role == "figures":
        rows = [[g, money(cur[g]), money(ref[g]), money(diff[g])] for g in groups]
        if P["total_row"]:
            rows.append(["Total", money(total), money(ref_total), money(round(sum(diff.values()), 2))])
        table(doc, P["columns"], rows)
    elif role == "risks":
        for g in groups:
            if diff[g] < 0:
                doc.add_paragraph(f"{g}: {money(diff[g])}", style="List Bullet")
    elif role == "breakdown":
        table(doc, [P["sub"], P["columns"][1]], [[k, money(v)] for k, v in sorted(by_sub.items())])
    elif role == "decisions":
        for d in decisions:
            doc.add_paragraph(d + ".", style="List Bullet")
    elif role == "next":
        for owner, task, due in actions:
            task = task[0].upper() + task[1:]
            doc.add_paragraph(f"{task} (due {due})" if WRONG else f"{owner}: {task} (due {due})", style="List Bullet")
doc.save(P["file"])
print("wrote", P["file"])
