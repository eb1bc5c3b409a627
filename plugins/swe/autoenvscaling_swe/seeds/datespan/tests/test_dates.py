from datetime import date

import pytest

from datespan import (
    DateParseError,
    day_of_year,
    days_in_month,
    format_date,
    from_iso_week,
    is_leap_year,
    iso_calendar,
    iso_week_start,
    iso_weeks_in_year,
    parse_date,
)


def test_leap_year_divisible_by_four():
    assert is_leap_year(2024) is True


def test_common_year():
    assert is_leap_year(2023) is False


def test_century_is_not_leap():
    assert is_leap_year(1900) is False


def test_quadricentennial_is_leap():
    assert is_leap_year(2000) is True


def test_first_and_last_supported_years():
    assert is_leap_year(1) is False and is_leap_year(9999) is False


def test_leap_year_rejects_year_zero():
    with pytest.raises(ValueError):
        is_leap_year(0)


def test_leap_year_rejects_year_above_9999():
    with pytest.raises(ValueError):
        is_leap_year(10000)


@pytest.mark.parametrize("month,expected", [(1, 31), (4, 30), (6, 30), (7, 31), (8, 31), (12, 31)])
def test_days_in_month_fixed_lengths(month, expected):
    assert days_in_month(2023, month) == expected


def test_days_in_february_leap():
    assert days_in_month(2024, 2) == 29


def test_days_in_february_common():
    assert days_in_month(2100, 2) == 28


def test_days_in_month_rejects_month_13():
    with pytest.raises(ValueError):
        days_in_month(2024, 13)


def test_days_in_month_rejects_month_zero():
    with pytest.raises(ValueError):
        days_in_month(2024, 0)


def test_day_of_year_first_day():
    assert day_of_year(date(2023, 1, 1)) == 1


def test_day_of_year_after_leap_february():
    assert day_of_year(date(2024, 3, 1)) == 61


def test_day_of_year_last_day_common_year():
    assert day_of_year(date(2023, 12, 31)) == 365


def test_iso_week_start_in_previous_year():
    # January 4th 2021 is a Monday; 2020 week 1 starts on Dec 30th 2019.
    assert iso_week_start(2020) == date(2019, 12, 30)


def test_iso_week_start_on_january_4th():
    assert iso_week_start(2021) == date(2021, 1, 4)


def test_iso_weeks_in_year_thursday_start():
    assert iso_weeks_in_year(2015) == 53


def test_iso_weeks_in_year_leap_wednesday_start():
    assert iso_weeks_in_year(2020) == 53


def test_iso_weeks_in_year_common_wednesday_start():
    assert iso_weeks_in_year(2025) == 52


def test_iso_calendar_mid_year():
    assert iso_calendar(date(2024, 6, 15)) == (2024, 24, 6)


def test_iso_calendar_january_belongs_to_previous_year():
    assert iso_calendar(date(2021, 1, 3)) == (2020, 53, 7)


def test_iso_calendar_december_belongs_to_next_year():
    assert iso_calendar(date(2024, 12, 30)) == (2025, 1, 1)


def test_iso_calendar_first_day_of_week_one():
    assert iso_calendar(date(2024, 1, 1)) == (2024, 1, 1)


def test_iso_calendar_last_supported_date():
    assert iso_calendar(date(9999, 12, 31)) == tuple(date(9999, 12, 31).isocalendar())


def test_iso_calendar_matches_stdlib_for_a_year():
    d = date(2026, 1, 1)
    for offset in range(0, 365, 3):
        current = date.fromordinal(d.toordinal() + offset)
        assert iso_calendar(current) == tuple(current.isocalendar())


def test_from_iso_week_defaults_to_monday():
    assert from_iso_week(2024, 2) == date(2024, 1, 8)


def test_from_iso_week_sunday():
    assert from_iso_week(2024, 1, 7) == date(2024, 1, 7)


def test_from_iso_week_rejects_week_53_in_short_year():
    with pytest.raises(ValueError):
        from_iso_week(2025, 53)


def test_from_iso_week_accepts_week_53_in_long_year():
    assert from_iso_week(2020, 53, 5) == date(2021, 1, 1)


def test_from_iso_week_rejects_weekday_8():
    with pytest.raises(ValueError):
        from_iso_week(2024, 10, 8)


def test_parse_extended_date():
    assert parse_date("2024-02-29") == date(2024, 2, 29)


def test_parse_basic_date():
    assert parse_date("19991231") == date(1999, 12, 31)


def test_parse_week_date():
    assert parse_date("2020-W53-5") == date(2021, 1, 1)


def test_parse_week_date_monday_of_first_week():
    assert parse_date("2025-W01-1") == date(2024, 12, 30)


def test_parse_year_one():
    assert parse_date("0001-01-01") == date(1, 1, 1)


def test_parse_strips_whitespace():
    assert parse_date("  2023-07-04\n") == date(2023, 7, 4)


@pytest.mark.parametrize(
    "text",
    ["2023-02-29", "2024-13-01", "2024-00-10", "2024-04-31", "2024-01-00", "0000-01-01"],
)
def test_parse_rejects_out_of_range_fields(text):
    with pytest.raises(DateParseError):
        parse_date(text)


def test_parse_rejects_non_digits():
    with pytest.raises(DateParseError):
        parse_date("2024-0a-01")


def test_parse_rejects_unknown_shape():
    with pytest.raises(DateParseError):
        parse_date("2024/01/01")


def test_parse_rejects_bad_week():
    with pytest.raises(DateParseError):
        parse_date("2024-W00-1")


def test_parse_rejects_non_string():
    with pytest.raises(TypeError):
        parse_date(20240101)


def test_date_parse_error_is_value_error():
    assert issubclass(DateParseError, ValueError)


def test_format_extended_pads_fields():
    assert format_date(date(987, 3, 5)) == "0987-03-05"


def test_format_basic():
    assert format_date(date(2024, 11, 9), "basic") == "20241109"


def test_format_ordinal():
    assert format_date(date(2024, 2, 5), "ordinal") == "2024-036"


def test_format_week_uses_iso_year():
    assert format_date(date(2019, 12, 30), "week") == "2020-W01-1"


def test_format_unknown_style():
    with pytest.raises(ValueError):
        format_date(date(2024, 1, 1), "american")
