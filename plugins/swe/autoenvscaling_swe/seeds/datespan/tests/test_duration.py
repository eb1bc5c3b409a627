from datetime import timedelta

import pytest

from datespan import DurationParseError, format_duration, format_iso_duration, parse_duration


def test_format_days_and_hours():
    assert format_duration(3 * 86400 + 4 * 3600) == "3d 4h"


def test_format_zero():
    assert format_duration(0) == "0s"


def test_format_seconds_only():
    assert format_duration(59) == "59s"


def test_format_truncates_to_max_units():
    assert format_duration(3600 + 61) == "1h 1m"


def test_format_skips_zero_components():
    assert format_duration(86400 + 30) == "1d 30s"


def test_format_three_units():
    assert format_duration(90061, max_units=3) == "1d 1h 1m"


def test_format_one_unit():
    assert format_duration(7199, max_units=1) == "1h"


def test_format_weeks_disabled_by_default():
    assert format_duration(15 * 86400) == "15d"


def test_format_weeks_enabled():
    assert format_duration(15 * 86400, weeks=True) == "2w 1d"


def test_format_negative():
    assert format_duration(-90) == "-1m 30s"


def test_format_timedelta_truncates_fraction():
    assert format_duration(timedelta(minutes=2, seconds=5, milliseconds=900)) == "2m 5s"


def test_format_rejects_zero_max_units():
    with pytest.raises(ValueError):
        format_duration(10, max_units=0)


def test_format_rejects_string():
    with pytest.raises(TypeError):
        format_duration("10")


def test_parse_days_and_hours():
    assert parse_duration("3d 4h") == timedelta(days=3, hours=4)


def test_parse_without_spaces():
    assert parse_duration("1h30m") == timedelta(minutes=90)


def test_parse_weeks():
    assert parse_duration("2w") == timedelta(days=14)


def test_parse_decimal():
    assert parse_duration("1.5h") == timedelta(minutes=90)


def test_parse_negative():
    assert parse_duration("-1d 12h") == timedelta(hours=-36)


def test_parse_round_trip_with_format():
    assert parse_duration(format_duration(200000, max_units=4)) == timedelta(seconds=200000)


@pytest.mark.parametrize("text", ["", "  ", "-", "5", "3x", "4h 3d", "1h 1h", "1..5h", "h"])
def test_parse_rejects_invalid(text):
    with pytest.raises(DurationParseError):
        parse_duration(text)


def test_iso_days_and_time():
    assert format_iso_duration(86400 + 2 * 3600) == "P1DT2H"


def test_iso_seconds_only():
    assert format_iso_duration(45) == "PT45S"


def test_iso_zero():
    assert format_iso_duration(timedelta(0)) == "PT0S"


def test_iso_whole_days_have_no_time_section():
    assert format_iso_duration(timedelta(days=3)) == "P3D"


def test_iso_all_fields():
    assert format_iso_duration(timedelta(days=1, hours=1, minutes=1, seconds=1)) == "P1DT1H1M1S"


def test_iso_negative():
    assert format_iso_duration(-3660) == "-PT1H1M"
