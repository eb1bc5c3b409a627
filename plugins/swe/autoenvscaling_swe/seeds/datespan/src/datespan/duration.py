"""Formatting and parsing of durations such as ``"3d 4h"`` and ``"P3DT4H"``."""

import datetime as _dt

MINUTE = 60
HOUR = 60 * MINUTE
DAY = 24 * HOUR
WEEK = 7 * DAY

_UNITS = (("w", WEEK), ("d", DAY), ("h", HOUR), ("m", MINUTE), ("s", 1))
_UNIT_SECONDS = dict(_UNITS)
_UNIT_RANK = {name: rank for rank, (name, _) in enumerate(_UNITS)}
_DIGITS = "0123456789"


class DurationParseError(ValueError):
    """Raised when a string is not a valid duration."""


def _to_seconds(value):
    """Return ``value`` (int seconds or timedelta) as whole seconds, truncated toward zero."""
    if isinstance(value, _dt.timedelta):
        return int(value.total_seconds())
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("expected seconds or timedelta, got %r" % (value,))
    return int(value)


def format_duration(value, max_units=2, weeks=False):
    """Return a compact human readable form of a duration, e.g. ``"3d 4h"``.

    ``value`` is a number of seconds or a ``timedelta``; fractions of a second
    are truncated toward zero.  Components are listed largest first, zero
    components are skipped and at most ``max_units`` components are shown
    (smaller remainders are truncated, not rounded).  Weeks (``w``) are used
    only when ``weeks`` is True; otherwise days may exceed 6.  A zero
    duration gives ``"0s"`` and negative durations are prefixed with ``-``.
    Raises ValueError if ``max_units`` is less than 1 and TypeError for
    values that are neither numbers nor timedeltas.
    """
    if max_units < 1:
        raise ValueError("max_units must be at least 1")
    seconds = _to_seconds(value)
    if seconds < 0:
        return "-" + format_duration(-seconds, max_units, weeks)
    parts = []
    remaining = seconds
    for name, size in _UNITS:
        if name == "w" and not weeks:
            continue
        count = remaining // size
        if count:
            parts.append("%d%s" % (count, name))
            remaining -= count * size
            if len(parts) == max_units:
                break
    if not parts:
        return "0s"
    return " ".join(parts)


def parse_duration(text):
    """Parse a compact duration string such as ``"3d 4h"`` and return a ``timedelta``.

    The string is a sequence of number/unit pairs with units ``w`` (weeks),
    ``d``, ``h``, ``m`` and ``s``, in strictly decreasing unit order and
    optionally separated by spaces, e.g. ``"1h30m"`` or ``"1.5h"`` (decimal
    numbers allowed).  A leading ``-`` negates the whole duration and
    surrounding whitespace is ignored.  Raises DurationParseError (a
    ValueError) for empty input, unknown units, repeated or out-of-order
    units, malformed numbers and numbers without a unit.
    """
    s = text.strip()
    sign = 1
    pos = 0
    if s.startswith("-"):
        sign = -1
        pos = 1
    total = 0.0
    last_rank = -1
    found = False
    while pos < len(s):
        if s[pos] == " ":
            pos += 1
            continue
        start = pos
        while pos < len(s) and (s[pos] in _DIGITS or s[pos] == "."):
            pos += 1
        number = s[start:pos]
        if not number or number.count(".") > 1 or number in (".",):
            raise DurationParseError("expected a number at offset %d in %r" % (start, text))
        if pos >= len(s):
            raise DurationParseError("missing unit after %r in %r" % (number, text))
        unit = s[pos]
        rank = _UNIT_RANK.get(unit)
        if rank is None:
            raise DurationParseError("unknown unit %r in %r" % (unit, text))
        if rank <= last_rank:
            raise DurationParseError("unit %r is repeated or out of order in %r" % (unit, text))
        last_rank = rank
        if "." in number:
            total += float(number) * _UNIT_SECONDS[unit]
        else:
            total += int(number) * _UNIT_SECONDS[unit]
        found = True
        pos += 1
    if not found:
        raise DurationParseError("empty duration: %r" % (text,))
    return _dt.timedelta(seconds=sign * total)


def format_iso_duration(value):
    """Return ``value`` (seconds or timedelta) as an ISO 8601 duration string.

    Days go in the date section and hours, minutes and seconds in the time
    section; zero fields are omitted, e.g. ``"P1DT2H"`` or ``"PT45S"``.  A
    zero duration gives ``"PT0S"`` and negative durations are prefixed with
    ``-``.  Fractions of a second are truncated toward zero.
    """
    seconds = _to_seconds(value)
    if seconds < 0:
        return "-" + format_iso_duration(-seconds)
    if seconds == 0:
        return "PT0S"
    days, rest = divmod(seconds, DAY)
    hours, rest = divmod(rest, HOUR)
    minutes, secs = divmod(rest, MINUTE)
    out = "P"
    if days:
        out += "%dD" % days
    if hours or minutes or secs:
        out += "T"
        if hours:
            out += "%dH" % hours
        if minutes:
            out += "%dM" % minutes
        if secs:
            out += "%dS" % secs
    return out
