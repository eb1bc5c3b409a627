"""Date arithmetic: months with end-of-month clamping, weekdays and business days."""

import datetime as _dt

from .dates import MAX_YEAR, MIN_YEAR, days_in_month

MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY = range(7)


def add_months(d, months):
    """Return the date ``months`` calendar months after ``d`` (before it if negative).

    When the target month is shorter than ``d.day`` the day is clamped to the
    last day of that month, e.g. January 31st plus one month is February 28th
    (29th in leap years).  Raises OverflowError if the result falls outside
    years 1..9999.
    """
    total = d.year * 12 + (d.month - 1) + months
    year, month_index = divmod(total, 12)
    if year < MIN_YEAR or year > MAX_YEAR:
        raise OverflowError("date out of range after adding %d months" % months)
    month = month_index + 1
    day = min(d.day, days_in_month(year, month))
    return _dt.date(year, month, day)


def add_years(d, years):
    """Return the date ``years`` years after ``d`` (before it if negative).

    February 29th is clamped to February 28th in non-leap target years.
    Raises OverflowError if the result falls outside years 1..9999.
    """
    return add_months(d, years * 12)


def months_between(start, end):
    """Return the number of whole calendar months from ``start`` to ``end``.

    The result is positive when ``end`` is later, negative when it is earlier
    and counts only complete months, so that
    ``add_months(start, result)`` never passes ``end``.  For example
    2024-01-15 to 2024-03-14 is 1 month and 2024-01-15 to 2024-03-15 is 2.
    """
    months = (end.year - start.year) * 12 + (end.month - start.month)
    if months > 0 and add_months(start, months) > end:
        months -= 1
    elif months < 0 and add_months(start, months) < end:
        months += 1
    return months


def next_weekday(d, weekday, include_start=False):
    """Return the first date after ``d`` that falls on ``weekday`` (0=Monday).

    If ``include_start`` is True and ``d`` itself falls on ``weekday``, ``d``
    is returned; otherwise the result is 1 to 7 days after ``d``.  Raises
    ValueError if ``weekday`` is not in 0..6.
    """
    if weekday < 0 or weekday > 6:
        raise ValueError("weekday must be in 0..6, got %r" % (weekday,))
    ahead = (weekday - d.weekday()) % 7
    if ahead == 0 and not include_start:
        ahead = 7
    return d + _dt.timedelta(days=ahead)


def previous_weekday(d, weekday, include_start=False):
    """Return the last date before ``d`` that falls on ``weekday`` (0=Monday).

    If ``include_start`` is True and ``d`` itself falls on ``weekday``, ``d``
    is returned; otherwise the result is 1 to 7 days before ``d``.  Raises
    ValueError if ``weekday`` is not in 0..6.
    """
    if weekday < 0 or weekday > 6:
        raise ValueError("weekday must be in 0..6, got %r" % (weekday,))
    back = (d.weekday() - weekday) % 7
    if back == 0 and not include_start:
        back = 7
    return d - _dt.timedelta(days=back)


def nth_weekday(year, month, weekday, n):
    """Return the ``n``-th ``weekday`` (0=Monday) of ``month`` in ``year``.

    ``n`` counts from 1 for the first occurrence; negative values count from
    the end of the month (-1 is the last occurrence).  Raises ValueError if
    ``n`` is 0 or the month has no such occurrence (e.g. a 5th Monday that
    does not exist).
    """
    if n == 0:
        raise ValueError("n must not be 0")
    if n > 0:
        first = next_weekday(_dt.date(year, month, 1), weekday, include_start=True)
        result = first + _dt.timedelta(weeks=n - 1)
    else:
        last = previous_weekday(
            _dt.date(year, month, days_in_month(year, month)), weekday, include_start=True
        )
        result = last - _dt.timedelta(weeks=-n - 1)
    if result.month != month or result.year != year:
        raise ValueError("month %d/%d has no occurrence number %d" % (year, month, n))
    return result


def is_business_day(d, holidays=()):
    """Return True if ``d`` is a Monday..Friday that is not in ``holidays``."""
    return d.weekday() < SATURDAY and d not in holidays


def _weekdays_in_span(first_weekday, days):
    """Count Monday..Friday days among ``days`` consecutive days starting on ``first_weekday``."""
    full_weeks, extra = divmod(days, 7)
    count = full_weeks * 5
    for offset in range(extra):
        if (first_weekday + offset) % 7 < SATURDAY:
            count += 1
    return count


def business_days_between(start, end, holidays=()):
    """Return the number of business days in the half-open range ``[start, end)``.

    Business days are Monday..Friday dates not listed in ``holidays`` (any
    iterable of dates; duplicates and weekend holidays are ignored).  ``start``
    is counted and ``end`` is not.  If ``end`` is before ``start`` the result
    is the negated count for ``[end, start)``; equal dates give 0.
    """
    if end < start:
        return -business_days_between(end, start, holidays)
    count = _weekdays_in_span(start.weekday(), (end - start).days)
    for holiday in set(holidays):
        if start <= holiday < end and holiday.weekday() < SATURDAY:
            count -= 1
    return count


def add_business_days(d, n, holidays=()):
    """Return the date ``n`` business days after ``d`` (before it if ``n`` < 0).

    Weekends and dates in ``holidays`` are skipped and are never returned
    when ``n`` is non-zero.  ``d`` itself is not counted, so adding 1 to a
    Friday gives the following Monday.  ``n == 0`` returns ``d`` unchanged,
    even if ``d`` is not a business day.
    """
    holidays = frozenset(holidays)
    step = _dt.timedelta(days=1 if n > 0 else -1)
    remaining = abs(n)
    current = d
    while remaining > 0:
        current += step
        if is_business_day(current, holidays):
            remaining -= 1
    return current
