"""Cron schedules: write crontab entries from plain-language schedules, and reason about when
existing entries run. Crontabs are judged by meaning (see cron_engine), not by spelling.

Kinds:
- ``write_crontab``: one job per requested schedule (more jobs and harder schedules as the level
  rises: steps, ranges, weekdays, month lists; then MAILTO/SHELL/PATH lines and exact redirects).
- ``when_runs``: given a crontab, which jobs run at given moments (and, higher up, how many times
  each job runs on a given day; day-of-month/day-of-week OR rules).
"""

from __future__ import annotations

import datetime
import json
import random
from typing import Any

from . import vocab
from .base import Draft, Kind, Wording
from .cron_engine import cron_field, cron_fires_on, cron_runs_at

DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]


def _schedule(rng: random.Random, hardness: int) -> tuple[str, list[str]]:
    """(English description, canonical fields) of a schedule of about the given hardness (0-3)."""
    h, m = rng.randint(0, 23), rng.choice([0, 5, 10, 15, 20, 30, 45, 50])
    hm = f"{h:02d}:{m:02d}"
    n = rng.choice([5, 10, 15, 20, 30])
    d, dom, mo = rng.randint(0, 6), rng.randint(1, 28), rng.randint(1, 12)
    options = {
        0: [(f"every day at {hm}", [str(m), str(h), "*", "*", "*"]),
            (f"every hour at minute {m}", [str(m), "*", "*", "*", "*"])],
        1: [(f"every {n} minutes", [f"*/{n}", "*", "*", "*", "*"]),
            (f"every {DAYS[d]} at {hm}", [str(m), str(h), "*", "*", str(d)]),
            (f"at {hm} on day {dom} of every month", [str(m), str(h), str(dom), "*", "*"])],
        2: [(f"every weekday (Monday to Friday) at {hm}", [str(m), str(h), "*", "*", "1-5"]),
            (f"at {hm} on the 1st and the 15th of every month", [str(m), str(h), "1,15", "*", "*"]),
            (f"every {max(n, 10)} minutes between 09:00 and 17:59 on weekdays", [f"*/{max(n, 10)}", "9-17", "*", "*", "1-5"]),
            ("every 30 minutes on weekends", ["*/30", "*", "*", "*", "0,6"])],
        3: [(f"at {hm} on the first day of each quarter (January, April, July, October)", [str(m), str(h), "1", "1,4,7,10", "*"]),
            ("every 2 hours from 08:00 to 20:00 (at minute 0), Monday to Saturday", ["0", "8-20/2", "*", "*", "1-6"]),
            (f"at {hm} on every day of {MONTHS[mo - 1]}", [str(m), str(h), "*", str(mo), "*"])],
    }
    return rng.choice(options[min(hardness, 3)])


def build_write(rng: random.Random, level: int) -> Draft:
    n_jobs = 1 + level
    names = rng.sample(["backup", "rotate_logs", "report", "sync", "cleanup", "healthcheck", "reindex", "digest", "prune"], n_jobs)
    jobs: list[dict[str, Any]] = []
    seen = set()
    for i, name in enumerate(names):
        for _ in range(20):
            desc, fields = _schedule(rng, min(level, 3) if i == 0 else rng.randint(0, min(level, 3)))
            if desc not in seen:
                break
        seen.add(desc)
        command = f"/app/jobs/{name}.sh" + (f" >> /app/logs/{name}.log 2>&1" if level >= 4 and i == 0 else "")
        jobs.append({"name": name, "desc": desc, "fields": fields, "command": command})
    env_lines = {}
    if level >= 3:
        env_lines = {"MAILTO": f"{rng.choice(vocab.FIRST_NAMES)}@{rng.choice(vocab.EMAIL_DOMAINS)}", "SHELL": "/bin/bash"}
    if level >= 4:
        env_lines["PATH"] = "/usr/local/bin:/usr/bin:/bin"
    path = rng.choice(["crontab.txt", "cron/jobs.cron", "deploy/crontab"])
    truth = {"path": path, "jobs": [{"command": j["command"], "fields": j["fields"]} for j in jobs], "env": env_lines}
    checks = ["test_shape_crontab_commands", "test_crontab_schedules"] + (["test_shape_crontab_environment"] if env_lines else [])
    scripts = {f"jobs/{j['name']}.sh": f"#!/bin/bash\necho {j['name']} ran\n".encode() for j in jobs}
    w = Wording(rng)
    intro = w.intro(["We are moving our scheduled jobs to a new host.", "The maintenance jobs in `/app/jobs/` need to be scheduled."])
    ask = w.pick(["Write a crontab file at `/app/{p}` (the format `crontab -e` uses: five time fields, then the command) that schedules these jobs:",
                  "Create `/app/{p}` in standard crontab syntax (minute hour day-of-month month day-of-week command) with one entry per job below:",
                  "Please prepare the crontab `/app/{p}` — one line per job, five schedule fields followed by the command:"], p=path)
    details = [w.pick(["run `{c}` {d}.", "`{c}` must run {d}.", "{D}: `{c}`."], c=j["command"], d=j["desc"], D=j["desc"][0].upper() + j["desc"][1:]) for j in jobs]
    details = [d[0].upper() + d[1:] for d in details]
    notes = [w.pick(["Use exactly the commands given (each once); times are in the machine's local time.", "Each command appears in exactly one line, written exactly as given."])]
    if env_lines:
        notes.append(w.pick(["At the top, set {e}.", "The file must also define {e} before the jobs."],
                            e=", ".join(f"`{k}={v}`" for k, v in env_lines.items())))
    notes.append(w.pick(["You do not need to install it with `crontab`; just write the file.", "Only the file matters; no cron daemon runs here."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, notes=notes)
    body = [f"{k}={v}" for k, v in env_lines.items()] + [f"{' '.join(j['fields'])} {j['command']}" for j in jobs]
    sol = [f"mkdir -p \"$(dirname /app/{path})\"", f"cat > /app/{path} <<'EOF'", *body, "EOF"]
    return Draft(kind="write_crontab", outputs=[path], instruction=instruction, files=scripts, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"jobs": n_jobs, "env_lines": len(env_lines)}, executables=set(scripts), inline=["cron_engine"],
                 tags=["cron", "scheduling"])


def build_when(rng: random.Random, level: int) -> Draft:
    n_jobs = 3 + level
    names = rng.sample(["backup", "rotate", "report", "sync", "cleanup", "healthcheck", "reindex", "digest", "prune", "mailer"], n_jobs)
    entries = [(name, _schedule(rng, rng.randint(0, min(level + 1, 3)))[1]) for name in names]
    if level >= 3:  # both day fields restricted: cron runs when either matches
        entries[0] = (entries[0][0], [str(rng.choice([0, 30])), str(rng.randint(0, 23)), "13", "*", "5"])
    crontab = "# m h dom mon dow command\n" + "".join(f"{' '.join(f)} /app/jobs/{n}.sh\n" for n, f in entries)
    base = datetime.datetime(2025, rng.randint(1, 12), 1)
    target = 2 + 2 * level
    moments: set[datetime.datetime] = set()
    while len(moments) < target:
        if rng.random() < 0.6:  # a moment when a chosen job does run: a day it fires, one of its hours and minutes
            fields = rng.choice(entries)[1]
            days = [base.date() + datetime.timedelta(days=i) for i in range(60)]
            rng.shuffle(days)
            day = next((d for d in days if cron_fires_on(fields, d)), None)
            if day is None:
                continue
            hour, minute = rng.choice(sorted(cron_field(fields[1], 1))), rng.choice(sorted(cron_field(fields[0], 0)))
            moments.add(datetime.datetime.combine(day, datetime.time(hour, minute)))
        else:
            moments.add(base + datetime.timedelta(minutes=rng.randint(0, 60 * 24 * 60)))
    answers = {m.strftime("%Y-%m-%d %H:%M"): sorted(n for n, f in entries if cron_runs_at(f, m))
               for m in sorted(moments)}
    truth: dict = {"out": rng.choice(["when.json", "schedule_answers.json", "out/cron_check.json"]), "at": answers}
    checks = ["test_when_runs"]
    day = None
    if level >= 2:
        day = (base + datetime.timedelta(days=rng.randint(0, 60))).date()
        midnight = datetime.datetime.combine(day, datetime.time())
        counts = {n: sum(1 for i in range(24 * 60) if cron_runs_at(f, midnight + datetime.timedelta(minutes=i)))
                  for n, f in entries}
        truth["day"], truth["counts"] = day.isoformat(), counts
        checks.append("test_run_counts")
    w = Wording(rng)
    out = truth["out"]
    intro = w.intro(["`/app/crontab` is the crontab of our batch server.", "Our scheduled jobs are defined in `/app/crontab`."])
    ask = w.pick(["Work out which jobs run at given moments and write the answers to `/app/{o}`.",
                  "Answer the scheduling questions below in the JSON file `/app/{o}`."], o=out)
    listed = ", ".join(f"`{k}`" for k in answers)
    details = [w.pick(["Under the key `at`, map each of these moments (`YYYY-MM-DD HH:MM`, local time) to the sorted list of job names that run then: {l}.",
                       "Key `at`: an object whose keys are the moments {l} and whose values are sorted lists of the jobs starting at that minute."], l=listed),
               w.pick(["A job's name is its script's file name without `.sh` (e.g. `/app/jobs/backup.sh` is `backup`).",
                       "Name jobs by their script's base name minus `.sh`."])]
    if day:
        details.append(w.pick(["Under the key `counts`, give for every job how many times it runs on {d} (the whole day, 00:00-23:59).",
                               "Also add `counts`: job name -> number of runs during {d}."], d=day.isoformat()))
    if level >= 3:
        details.append(w.pick(["Remember cron's rule when both day-of-month and day-of-week are restricted.", "Mind the special case where a line restricts both day fields."]))
    instruction = w.compose(intro=intro, ask=ask, details=details, shuffle_details=False)
    sol = [f"mkdir -p \"$(dirname /app/{out})\"", "python3 - <<'EOF'", "import datetime, json, os",
           "def expand(field, lo, hi, names=()):",
           "    out = set()",
           "    for part in field.lower().split(','):",
           "        rng, _, step = part.partition('/')",
           "        step = int(step or 1)",
           "        if rng == '*':",
           "            a, b = lo, hi",
           "        elif '-' in rng:",
           "            a, b = (names.index(x) if x in names else int(x) for x in rng.split('-'))",
           "        else:",
           "            a = names.index(rng) if rng in names else int(rng)",
           "            b = hi if '/' in part else a",
           "        out |= set(range(a, b + 1, step))",
           "    return out",
           "jobs = []",
           "for line in open('/app/crontab'):",
           "    if line.strip() and not line.startswith('#'):",
           "        f = line.split()",
           "        jobs.append((os.path.basename(f[5])[:-3], f[:5]))",
           "def runs(f, t):",
           "    dow = {d % 7 for d in expand(f[4], 0, 7)}",
           "    dom_ok, dow_ok = t.day in expand(f[2], 1, 31), t.isoweekday() % 7 in dow",
           "    day_ok = (dom_ok or dow_ok) if not (f[2].startswith('*') or f[4].startswith('*')) else (dom_ok and dow_ok)",
           "    return t.minute in expand(f[0], 0, 59) and t.hour in expand(f[1], 0, 23) and t.month in expand(f[3], 1, 12) and day_ok",
           f"moments = {json.dumps(list(answers))}",
           "answer = {'at': {m: sorted(n for n, f in jobs if runs(f, datetime.datetime.strptime(m, '%Y-%m-%d %H:%M'))) for m in moments}}"]
    if day:
        sol += [f"day = datetime.datetime.fromisoformat('{day.isoformat()}')",
                "answer['counts'] = {n: sum(runs(f, day + datetime.timedelta(minutes=i)) for i in range(1440)) for n, f in jobs}"]
    sol += [f"json.dump(answer, open('/app/{out}', 'w'), indent=2)", "EOF"]
    return Draft(kind="when_runs", outputs=[out], instruction=instruction, files={"crontab": crontab.encode()}, truth=truth, checks=checks,
                 solution="\n".join(sol), parameters={"jobs": n_jobs, "moments": len(answers), "counts": bool(day), "or_rule": level >= 3},
                 inline=["cron_engine"], tags=["cron", "scheduling", "reasoning"])


KINDS = [Kind("write_crontab", build_write), Kind("when_runs", build_when)]
