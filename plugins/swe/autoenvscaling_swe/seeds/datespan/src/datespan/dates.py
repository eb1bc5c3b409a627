"""Calendar primitives: leap years, month lengths, ISO weeks and ISO 8601 dates."""

import datetime as _dt

MIN_YEAR = 1
MAX_YEAR = 9999

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DIGITS = "0123456789"


class DateParseError(ValueError):
    """Raised when a string is not a valid ISO 8601 calendar date."""


def _check_year(year):
    if year < MIN_YEAR or year > MAX_YEAR:
        raise ValueError("year %r is out of range %d..%d" % (year, MIN_YEAR, MAX_YEAR))


def is_leap_year(year):
    """Return True if ``year`` is a leap year in the proleptic Gregorian calendar.

    A year is a leap year when it is divisible by 4, except century years,
    which are leap years only when divisible by 400 (2000 is, 1900 is not).
    Raises ValueError if ``year`` is outside 1..9999.
    """
    _check_year(year)
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_month(year, month):
    """Return the number of days (28, 29, 30 or 31) in ``month`` of ``year``.

    Raises ValueError if ``month`` is not in 1..12 or ``year`` is outside 1..9999.
    """
    _check_year(year)
    if month < 1 or month > 12:
        raise ValueError("month %r is out of range 1..12" % (month,))
    if month == 2 and is_leap_year(year):
        return 29
    return _MONTH_DAYS[month - 1]


def day_of_year(d):
    """Return the 1-based ordinal day of date ``d`` within its year (1..366).

    January 1st is day 1 and December 31st is day 365 (366 in leap years).
    """
    total = d.day
    for month in range(1, d.month):
        total += days_in_month(d.year, month)
    return total


def iso_week_start(year):
    """Return the Monday (a ``date``) that starts ISO week 1 of ``year``.

    ISO week 1 is the week that contains January 4th, so the result lies
    between December 29th of the previous year and January 4th of ``year``.
    """
    jan4 = _dt.date(year, 1, 4)
    return jan4 - _dt.timedelta(days=jan4.weekday())


def iso_weeks_in_year(year):
    """Return the number of ISO weeks (52 or 53) in ISO year ``year``.

    A year has 53 weeks when January 1st is a Thursday, or when it is a leap
    year whose January 1st is a Wednesday.  Raises ValueError for years
    outside 1..9999.
    """
    first = _dt.date(year, 1, 1).weekday()
    if first == 3:
        return 53
    if first == 2 and is_leap_year(year):
        return 53
    return 52


def iso_calendar(d):
    """Return the ISO calendar triple ``(iso_year, week, weekday)`` for date ``d``.

    ``week`` is 1..53 and ``weekday`` is 1 (Monday) .. 7 (Sunday).  The ISO
    year differs from ``d.year`` for some days near the turn of the year.
    """
    year = d.year
    if year < MAX_YEAR and d >= iso_week_start(year + 1):
        year += 1
    elif d < iso_week_start(year):
        year -= 1
    week = (d - iso_week_start(year)).days // 7 + 1
    return (year, week, d.weekday() + 1)


def from_iso_week(year, week, weekday=1):
    """Return the ``date`` for ISO ``year``, ``week`` (1..53) and ``weekday`` (1..7).

    Raises ValueError if ``week`` exceeds the number of ISO weeks in ``year``
    or ``weekday`` is not in 1..7.
    """
    if week < 1 or week > iso_weeks_in_year(year):
        raise ValueError("week %r is out of range for ISO year %r" % (week, year))
    if weekday < 1 or weekday > 7:
        raise ValueError("weekday %r is out of range 1..7" % (weekday,))
    return iso_week_start(year) + _dt.timedelta(weeks=week - 1, days=weekday - 1)


def _read_int(text, start, width, what):
    """Return the integer made of exactly ``width`` ASCII digits at ``text[start:]``."""
    chunk = text[start:start + width]
    if len(chunk) != width or any(ch not in _DIGITS for ch in chunk):
        raise DateParseError("invalid %s in %r" % (what, text))
    return int(chunk)


def _build_date(text, year, month, day):
    if year < MIN_YEAR:
        raise DateParseError("year 0000 is not allowed: %r" % (text,))
    if month < 1 or month > 12:
        raise DateParseError("month out of range in %r" % (text,))
    if day < 1 or day > days_in_month(year, month):
        raise DateParseError("day out of range in %r" % (text,))
    return _dt.date(year, month, day)


def parse_date(text):
    """Parse an ISO 8601 date string and return a ``datetime.date``.

    Supported forms (surrounding whitespace is ignored):

    * ``YYYY-MM-DD`` extended calendar date, e.g. ``2024-02-29``
    * ``YYYYMMDD`` basic calendar date, e.g. ``20240229``
    * ``YYYY-Www-D`` ISO week date, e.g. ``2024-W09-4``

    Raises DateParseError (a ValueError) for any other shape, for non-digit
    characters, for year 0000 and for out-of-range month, day, week or
    weekday values.  Ordinal dates (``YYYY-DDD``) are not accepted.
    """
    if not isinstance(text, str):
        raise TypeError("parse_date() expects a string, got %s" % type(text).__name__)
    s = text.strip()
    if len(s) == 10 and s[4] == "-" and s[5] == "W" and s[8] == "-":
        year = _read_int(s, 0, 4, "year")
        week = _read_int(s, 6, 2, "week")
        weekday = _read_int(s, 9, 1, "weekday")
        try:
            return from_iso_week(year, week, weekday)
        except ValueError as exc:
            raise DateParseError("%s in %r" % (exc, text)) from None
    if len(s) == 10 and s[4] == "-" and s[7] == "-":
        year = _read_int(s, 0, 4, "year")
        month = _read_int(s, 5, 2, "month")
        day = _read_int(s, 8, 2, "day")
        return _build_date(text, year, month, day)
    if len(s) == 8:
        year = _read_int(s, 0, 4, "year")
        month = _read_int(s, 4, 2, "month")
        day = _read_int(s, 6, 2, "day")
        return _build_date(text, year, month, day)
    raise DateParseError("unrecognised date format: %r" % (text,))


def format_date(d, style="extended"):
    """Return date ``d`` formatted as an ISO 8601 string.

    ``style`` selects the form: ``"extended"`` gives ``YYYY-MM-DD``,
    ``"basic"`` gives ``YYYYMMDD``, ``"ordinal"`` gives ``YYYY-DDD`` and
    ``"week"`` gives ``YYYY-Www-D`` (using the ISO year).  All fields are
    zero padded.  Raises ValueError for an unknown style.
    """
    if style == "extended":
        return "%04d-%02d-%02d" % (d.year, d.month, d.day)
    if style == "basic":
        return "%04d%02d%02d" % (d.year, d.month, d.day)
    if style == "ordinal":
        return "%04d-%03d" % (d.year, day_of_year(d))
    if style == "week":
        year, week, weekday = iso_calendar(d)
        return "%04d-W%02d-%d" % (year, week, weekday)
    raise ValueError("unknown date style %r" % (style,))
