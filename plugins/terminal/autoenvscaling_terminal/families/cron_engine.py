"""Cron semantics, standard library only: field expansion and whether a schedule fires.

The cron_schedule generator uses it to compute ground truth, and the renderer pastes this module
into that family's test files so the verifier judges crontabs by meaning (``*/15`` and
``0,15,30,45`` are the same schedule) without depending on this package.
"""

import datetime

CRON_NAMES = {
    3: {n: i for i, n in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)},
    4: {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])},
}
CRON_BOUNDS = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def cron_field(text, index):
    """The set of values a cron field allows (day-of-week 7 is folded into 0, Sunday)."""
    lo, hi = CRON_BOUNDS[index]
    names = CRON_NAMES.get(index, {})
    values = set()
    for part in text.lower().split(","):
        body, _, step = part.partition("/")
        step = int(step) if step else 1
        if step < 1:
            raise ValueError(f"bad step in {text!r}")
        if body == "*":
            start, end = lo, hi
        elif "-" in body:
            a, b = body.split("-", 1)
            start, end = int(names.get(a, a)), int(names.get(b, b))
        else:
            start = int(names.get(body, body))
            end = hi if step > 1 and "/" in part else start
        if not (lo <= start <= hi and lo <= end <= hi and start <= end):
            raise ValueError(f"value out of range in {text!r}")
        values.update(range(start, end + 1, step))
    if index == 4 and 7 in values:
        values = (values - {7}) | {0}
    return frozenset(values)


def cron_parse(line):
    """(fields, command) of a crontab job line, or None for blanks, comments and VAR=value lines."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    parts = stripped.split(None, 5)
    if len(parts) < 6 or "=" in parts[0]:
        return None
    return parts[:5], parts[5]


def cron_fires_on(fields, day):
    """Whether the schedule runs on ``day`` (a date), with cron's rule for day-of-month and
    day-of-week: when both are restricted (neither starts with '*'), either may match."""
    dom, mon, dow = cron_field(fields[2], 2), cron_field(fields[3], 3), cron_field(fields[4], 4)
    if day.month not in mon:
        return False
    dom_ok = day.day in dom
    dow_ok = (day.isoweekday() % 7) in dow
    if fields[2].startswith("*") or fields[4].startswith("*"):
        return dom_ok and dow_ok
    return dom_ok or dow_ok


def cron_signature(fields, start=datetime.date(2024, 1, 1), days=1461):
    """What a schedule means: its minutes, hours and the days it fires on over four years."""
    minutes, hours = cron_field(fields[0], 0), cron_field(fields[1], 1)
    fired = tuple(i for i in range(days) if cron_fires_on(fields, start + datetime.timedelta(days=i)))
    return minutes, hours, fired


def cron_runs_at(fields, moment):
    """Whether the schedule fires at ``moment`` (a datetime, seconds ignored)."""
    return (moment.minute in cron_field(fields[0], 0) and moment.hour in cron_field(fields[1], 1)
            and cron_fires_on(fields, moment.date()))
