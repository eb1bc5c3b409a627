"""Half-open date intervals and operations on lists of intervals."""

import datetime as _dt

from .arith import add_months
from .dates import format_date, parse_date


class Interval:
    """A half-open range of dates ``[start, end)``.

    ``start`` is included and ``end`` is excluded, so ``Interval(d, d)`` is
    empty and ``Interval(d, d + 1 day)`` holds exactly one date.
    """

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        """Create the interval ``[start, end)``.

        Raises TypeError if either bound is not a ``datetime.date`` (datetimes
        are rejected too) and ValueError if ``end`` is before ``start``.
        """
        for bound in (start, end):
            if not isinstance(bound, _dt.date) or isinstance(bound, _dt.datetime):
                raise TypeError("Interval bounds must be dates, got %r" % (bound,))
        if end < start:
            raise ValueError("interval end %s is before start %s" % (end, start))
        self.start = start
        self.end = end

    @classmethod
    def from_days(cls, start, days):
        """Return the interval starting at ``start`` and holding ``days`` dates.

        Raises ValueError if ``days`` is negative.
        """
        if days < 0:
            raise ValueError("days must be non-negative, got %r" % (days,))
        return cls(start, start + _dt.timedelta(days=days))

    @classmethod
    def parse(cls, text):
        """Parse ``"START/END"`` where both parts are ISO dates accepted by ``parse_date``.

        The end part may instead be ``+N`` meaning N days after the start,
        e.g. ``"2024-01-01/+7"``.  Raises ValueError (DateParseError for bad
        dates) if there is not exactly one ``/`` or the end is before the start.
        """
        parts = text.split("/")
        if len(parts) != 2:
            raise ValueError("expected START/END, got %r" % (text,))
        start = parse_date(parts[0])
        end_text = parts[1].strip()
        if end_text.startswith("+"):
            if not end_text[1:].isdigit():
                raise ValueError("invalid day count in %r" % (text,))
            return cls.from_days(start, int(end_text[1:]))
        return cls(start, parse_date(end_text))

    @property
    def days(self):
        """Return the number of dates in the interval (``end - start`` in days)."""
        return (self.end - self.start).days

    def is_empty(self):
        """Return True if the interval contains no dates (``start == end``)."""
        return self.start == self.end

    def __contains__(self, d):
        """Return True if date ``d`` satisfies ``start <= d < end``."""
        return self.start <= d < self.end

    def __iter__(self):
        """Yield every date in the interval in ascending order."""
        current = self.start
        one = _dt.timedelta(days=1)
        while current < self.end:
            yield current
            current += one

    def __eq__(self, other):
        """Return True if ``other`` is an Interval with the same start and end."""
        if not isinstance(other, Interval):
            return NotImplemented
        return self.start == other.start and self.end == other.end

    def __hash__(self):
        """Return a hash of ``(start, end)``, consistent with ``__eq__``."""
        return hash((self.start, self.end))

    def __repr__(self):
        """Return ``"Interval(<repr of start>, <repr of end>)"``."""
        return "Interval(%r, %r)" % (self.start, self.end)

    def __str__(self):
        """Return ``"YYYY-MM-DD/YYYY-MM-DD"``, the form accepted by ``Interval.parse``."""
        return "%s/%s" % (format_date(self.start), format_date(self.end))

    def contains_interval(self, other):
        """Return True if every date of ``other`` lies inside this interval.

        An empty ``other`` is contained when its start lies in
        ``[self.start, self.end]``.
        """
        return self.start <= other.start and other.end <= self.end

    def overlaps(self, other):
        """Return True if the two intervals share at least one date.

        Touching intervals such as ``[a, b)`` and ``[b, c)`` do not overlap,
        and an empty interval overlaps nothing.
        """
        return self.start < other.end and other.start < self.end

    def is_adjacent(self, other):
        """Return True if one interval ends exactly where the other starts."""
        return self.end == other.start or other.end == self.start

    def intersection(self, other):
        """Return the interval of dates common to both, or None if they do not overlap."""
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        if start >= end:
            return None
        return Interval(start, end)

    def union(self, other):
        """Return the smallest interval covering both intervals.

        Raises ValueError if the intervals neither overlap nor touch, because
        their union would not be a single interval.
        """
        if not (self.overlaps(other) or self.is_adjacent(other)):
            raise ValueError("%s and %s are disjoint" % (self, other))
        return Interval(min(self.start, other.start), max(self.end, other.end))

    def split_by_month(self):
        """Return a list of non-empty intervals cutting this one at month boundaries.

        Each piece lies within one calendar month; concatenated they equal
        this interval.  An empty interval gives an empty list.
        """
        pieces = []
        current = self.start
        while current < self.end:
            next_month = add_months(current.replace(day=1), 1)
            piece_end = min(next_month, self.end)
            pieces.append(Interval(current, piece_end))
            current = piece_end
        return pieces


def _bounds(interval):
    return (interval.start, interval.end)


def merge(intervals):
    """Return a sorted list of disjoint intervals covering the same dates as ``intervals``.

    Overlapping and touching intervals are combined; empty intervals are
    dropped.  The input iterable is not modified.
    """
    ordered = sorted((iv for iv in intervals if not iv.is_empty()), key=_bounds)
    merged = []
    for iv in ordered:
        if merged and iv.start <= merged[-1].end:
            last = merged[-1]
            if iv.end > last.end:
                merged[-1] = Interval(last.start, iv.end)
        else:
            merged.append(iv)
    return merged


def gaps(intervals, within=None):
    """Return the sorted list of uncovered intervals between ``intervals``.

    Without ``within`` only the holes between the first start and the last
    end are reported.  With ``within`` (an Interval) the holes inside that
    window are reported, including a leading and trailing gap, and the
    intervals are clipped to the window first.
    """
    merged = merge(intervals)
    if within is not None:
        clipped = [within.intersection(iv) for iv in merged]
        merged = [iv for iv in clipped if iv is not None]
        if not merged:
            return [] if within.is_empty() else [within]
    result = []
    for left, right in zip(merged, merged[1:]):
        result.append(Interval(left.end, right.start))
    if within is not None:
        if within.start < merged[0].start:
            result.insert(0, Interval(within.start, merged[0].start))
        if merged[-1].end < within.end:
            result.append(Interval(merged[-1].end, within.end))
    return result


def total_days(intervals):
    """Return the number of distinct dates covered by ``intervals`` (overlaps counted once)."""
    return sum(iv.days for iv in merge(intervals))
