from datetime import date, datetime

import pytest

from datespan import DateParseError, Interval, gaps, merge, total_days


def iv(a, b):
    return Interval(date.fromisoformat(a), date.fromisoformat(b))


def test_interval_rejects_reversed_bounds():
    with pytest.raises(ValueError):
        Interval(date(2024, 1, 2), date(2024, 1, 1))


def test_interval_rejects_datetime_bounds():
    with pytest.raises(TypeError):
        Interval(datetime(2024, 1, 1), date(2024, 1, 2))


def test_interval_rejects_string_bound():
    with pytest.raises(TypeError):
        Interval("2024-01-01", date(2024, 1, 2))


def test_empty_interval_allowed():
    empty = Interval(date(2024, 1, 1), date(2024, 1, 1))
    assert empty.is_empty() and empty.days == 0


def test_days_counts_dates():
    assert iv("2024-02-01", "2024-03-01").days == 29


def test_from_days():
    assert Interval.from_days(date(2024, 1, 30), 3) == Interval(date(2024, 1, 30), date(2024, 2, 2))


def test_from_days_zero_is_empty():
    assert Interval.from_days(date(2024, 1, 30), 0).is_empty()


def test_from_days_rejects_negative():
    with pytest.raises(ValueError):
        Interval.from_days(date(2024, 1, 30), -1)


def test_parse_with_day_count():
    assert Interval.parse("2024-01-01/+7") == Interval(date(2024, 1, 1), date(2024, 1, 8))


def test_parse_requires_single_slash():
    with pytest.raises(ValueError):
        Interval.parse("2024-01-01/2024-01-02/2024-01-03")


def test_parse_rejects_bad_day_count():
    with pytest.raises(ValueError):
        Interval.parse("2024-01-01/+x")


def test_parse_propagates_date_errors():
    with pytest.raises(DateParseError):
        Interval.parse("2024-01-01/2024-02-30")


def test_parse_plain_range():
    assert Interval.parse("2024-01-30/2024-02-02") == Interval(date(2024, 1, 30), date(2024, 2, 2))


def test_intervals_with_different_end_are_not_equal():
    assert iv("2024-01-01", "2024-01-03") != iv("2024-01-01", "2024-01-04")


def test_repr():
    assert repr(iv("2024-01-01", "2024-01-03")) == "Interval(datetime.date(2024, 1, 1), datetime.date(2024, 1, 3))"


def test_str_round_trips():
    assert str(iv("2024-01-01", "2024-01-09")) == "2024-01-01/2024-01-09"


def test_contains_start():
    assert date(2024, 1, 1) in iv("2024-01-01", "2024-01-05")


def test_does_not_contain_end():
    assert date(2024, 1, 5) not in iv("2024-01-01", "2024-01-05")


def test_does_not_contain_day_before_start():
    assert date(2023, 12, 31) not in iv("2024-01-01", "2024-01-05")


def test_iteration_yields_each_date():
    assert list(iv("2024-02-28", "2024-03-02")) == [
        date(2024, 2, 28),
        date(2024, 2, 29),
        date(2024, 3, 1),
    ]


def test_equal_intervals_hash_equal():
    assert hash(iv("2024-01-01", "2024-01-03")) == hash(Interval(date(2024, 1, 1), date(2024, 1, 3)))


def test_contains_interval_inner():
    assert iv("2024-01-01", "2024-02-01").contains_interval(iv("2024-01-10", "2024-02-01"))


def test_contains_identical_interval():
    assert iv("2024-01-01", "2024-02-01").contains_interval(iv("2024-01-01", "2024-02-01"))


def test_contains_interval_sticking_out():
    assert not iv("2024-01-01", "2024-02-01").contains_interval(iv("2024-01-10", "2024-02-02"))


def test_overlaps_partial():
    assert iv("2024-01-01", "2024-01-10").overlaps(iv("2024-01-09", "2024-01-20"))


def test_touching_intervals_do_not_overlap():
    assert not iv("2024-01-01", "2024-01-10").overlaps(iv("2024-01-10", "2024-01-20"))


def test_touching_intervals_do_not_overlap_reversed():
    assert not iv("2024-01-10", "2024-01-20").overlaps(iv("2024-01-01", "2024-01-10"))


def test_touching_intervals_are_adjacent():
    assert iv("2024-01-10", "2024-01-20").is_adjacent(iv("2024-01-01", "2024-01-10"))


def test_intersection():
    result = iv("2024-01-01", "2024-01-10").intersection(iv("2024-01-05", "2024-01-20"))
    assert result == iv("2024-01-05", "2024-01-10")


def test_intersection_of_touching_is_none():
    assert iv("2024-01-01", "2024-01-10").intersection(iv("2024-01-10", "2024-01-20")) is None


def test_union_of_adjacent():
    assert iv("2024-01-10", "2024-01-20").union(iv("2024-01-01", "2024-01-10")) == iv(
        "2024-01-01", "2024-01-20"
    )


def test_union_of_disjoint_raises():
    with pytest.raises(ValueError):
        iv("2024-01-01", "2024-01-05").union(iv("2024-01-06", "2024-01-09"))


def test_split_by_month():
    pieces = iv("2024-01-20", "2024-03-10").split_by_month()
    assert [str(p) for p in pieces] == [
        "2024-01-20/2024-02-01",
        "2024-02-01/2024-03-01",
        "2024-03-01/2024-03-10",
    ]


def test_split_by_month_across_year_end():
    pieces = iv("2023-12-31", "2024-01-02").split_by_month()
    assert pieces == [iv("2023-12-31", "2024-01-01"), iv("2024-01-01", "2024-01-02")]


def test_split_by_month_ending_on_boundary():
    assert len(iv("2024-04-01", "2024-05-01").split_by_month()) == 1


def test_split_empty_interval():
    assert iv("2024-04-01", "2024-04-01").split_by_month() == []


def test_merge_overlapping_and_touching():
    merged = merge([iv("2024-01-05", "2024-01-09"), iv("2024-01-01", "2024-01-06"), iv("2024-01-09", "2024-01-12")])
    assert merged == [iv("2024-01-01", "2024-01-12")]


def test_merge_keeps_disjoint_sorted():
    merged = merge([iv("2024-03-01", "2024-03-02"), iv("2024-01-01", "2024-01-02")])
    assert merged == [iv("2024-01-01", "2024-01-02"), iv("2024-03-01", "2024-03-02")]


def test_merge_contained_interval_does_not_shrink():
    merged = merge([iv("2024-01-01", "2024-01-31"), iv("2024-01-05", "2024-01-06")])
    assert merged == [iv("2024-01-01", "2024-01-31")]


def test_merge_drops_empty():
    assert merge([iv("2024-01-01", "2024-01-01")]) == []


def test_gaps_between():
    result = gaps([iv("2024-01-01", "2024-01-05"), iv("2024-01-10", "2024-01-12")])
    assert result == [iv("2024-01-05", "2024-01-10")]


def test_gaps_none_when_touching():
    assert gaps([iv("2024-01-01", "2024-01-05"), iv("2024-01-05", "2024-01-12")]) == []


def test_gaps_within_window_adds_edges():
    window = iv("2024-01-01", "2024-02-01")
    result = gaps([iv("2024-01-10", "2024-01-20")], within=window)
    assert result == [iv("2024-01-01", "2024-01-10"), iv("2024-01-20", "2024-02-01")]


def test_gaps_within_window_leading_gap_comes_first():
    window = iv("2024-01-01", "2024-01-31")
    result = gaps([iv("2024-01-05", "2024-01-10"), iv("2024-01-20", "2024-01-31")], within=window)
    assert result == [iv("2024-01-01", "2024-01-05"), iv("2024-01-10", "2024-01-20")]


def test_gaps_within_window_clips_intervals():
    window = iv("2024-01-10", "2024-01-20")
    result = gaps([iv("2024-01-01", "2024-01-12"), iv("2024-01-15", "2024-02-01")], within=window)
    assert result == [iv("2024-01-12", "2024-01-15")]


def test_gaps_within_window_no_coverage():
    window = iv("2024-01-10", "2024-01-20")
    assert gaps([iv("2024-03-01", "2024-03-05")], within=window) == [window]


def test_total_days_counts_overlap_once():
    assert total_days([iv("2024-01-01", "2024-01-10"), iv("2024-01-05", "2024-01-15")]) == 14
