from datetime import date

import pytest

from datespan import (
    add_business_days,
    add_months,
    add_years,
    business_days_between,
    is_business_day,
    months_between,
    next_weekday,
    nth_weekday,
    previous_weekday,
)
from datespan.arith import FRIDAY, MONDAY, SUNDAY, THURSDAY, WEDNESDAY


def test_add_one_month_simple():
    assert add_months(date(2024, 3, 15), 1) == date(2024, 4, 15)


def test_add_months_clamps_to_end_of_february():
    assert add_months(date(2023, 1, 31), 1) == date(2023, 2, 28)


def test_add_months_clamps_to_leap_day():
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)


def test_add_months_into_leap_february_of_next_year():
    assert add_months(date(2023, 12, 31), 2) == date(2024, 2, 29)


def test_add_months_clamps_to_thirty_day_month():
    assert add_months(date(2024, 5, 31), -1) == date(2024, 4, 30)


def test_add_months_across_year_end():
    assert add_months(date(2023, 11, 10), 3) == date(2024, 2, 10)


def test_add_negative_months_across_year_start():
    assert add_months(date(2024, 2, 10), -2) == date(2023, 12, 10)


def test_add_twelve_months_to_december():
    assert add_months(date(2023, 12, 5), 12) == date(2024, 12, 5)


def test_add_months_in_year_one():
    assert add_months(date(1, 1, 31), 1) == date(1, 2, 28)


def test_add_months_up_to_last_supported_month():
    assert add_months(date(9999, 1, 31), 11) == date(9999, 12, 31)


def test_add_months_overflow():
    with pytest.raises(OverflowError):
        add_months(date(9999, 12, 1), 1)


def test_add_months_underflow():
    with pytest.raises(OverflowError):
        add_months(date(1, 1, 1), -1)


def test_add_years_from_leap_day():
    assert add_years(date(2024, 2, 29), 1) == date(2025, 2, 28)


def test_add_years_to_leap_day():
    assert add_years(date(2020, 2, 29), 4) == date(2024, 2, 29)


def test_months_between_whole_months():
    assert months_between(date(2024, 1, 15), date(2024, 3, 15)) == 2


def test_months_between_incomplete_month():
    assert months_between(date(2024, 1, 15), date(2024, 3, 14)) == 1


def test_months_between_negative():
    assert months_between(date(2024, 3, 15), date(2024, 1, 16)) == -1


def test_months_between_same_day():
    assert months_between(date(2024, 3, 15), date(2024, 3, 15)) == 0


def test_months_between_across_years():
    assert months_between(date(2023, 11, 30), date(2024, 2, 28)) == 2


def test_months_between_extra_days():
    assert months_between(date(2024, 1, 15), date(2024, 3, 20)) == 2


def test_months_between_less_than_a_month():
    assert months_between(date(2024, 1, 15), date(2024, 2, 14)) == 0


def test_months_between_earlier_day_same_month():
    assert months_between(date(2024, 3, 15), date(2024, 3, 10)) == 0


def test_months_between_later_day_same_month():
    assert months_between(date(2024, 3, 10), date(2024, 3, 15)) == 0


def test_months_between_negative_whole_months():
    assert months_between(date(2024, 3, 15), date(2024, 1, 15)) == -2


def test_months_between_end_of_month():
    assert months_between(date(2024, 1, 31), date(2024, 2, 29)) == 1


def test_next_weekday_later_in_week():
    assert next_weekday(date(2024, 5, 6), FRIDAY) == date(2024, 5, 10)


def test_next_weekday_wraps_to_next_week():
    assert next_weekday(date(2024, 5, 10), MONDAY) == date(2024, 5, 13)


def test_next_weekday_same_day_skips_a_week():
    assert next_weekday(date(2024, 5, 6), MONDAY) == date(2024, 5, 13)


def test_next_weekday_same_day_included():
    assert next_weekday(date(2024, 5, 6), MONDAY, include_start=True) == date(2024, 5, 6)


def test_next_weekday_rejects_seven():
    with pytest.raises(ValueError):
        next_weekday(date(2024, 5, 6), 7)


def test_next_weekday_sunday():
    assert next_weekday(date(2024, 5, 6), SUNDAY) == date(2024, 5, 12)


def test_next_weekday_rejects_negative():
    with pytest.raises(ValueError):
        next_weekday(date(2024, 5, 6), -1)


def test_previous_weekday_sunday():
    assert previous_weekday(date(2024, 5, 8), SUNDAY) == date(2024, 5, 5)


def test_previous_weekday_rejects_seven():
    with pytest.raises(ValueError):
        previous_weekday(date(2024, 5, 8), 7)


def test_previous_weekday():
    assert previous_weekday(date(2024, 5, 8), FRIDAY) == date(2024, 5, 3)


def test_previous_weekday_same_day_skips_a_week():
    assert previous_weekday(date(2024, 5, 8), WEDNESDAY) == date(2024, 5, 1)


def test_nth_weekday_first_occurrence_on_the_first():
    assert nth_weekday(2024, 11, FRIDAY, 1) == date(2024, 11, 1)


def test_nth_weekday_fourth_thursday_of_november():
    assert nth_weekday(2024, 11, THURSDAY, 4) == date(2024, 11, 28)


def test_nth_weekday_last_monday_of_may():
    assert nth_weekday(2024, 5, MONDAY, -1) == date(2024, 5, 27)


def test_nth_weekday_second_to_last_sunday():
    assert nth_weekday(2024, 3, SUNDAY, -2) == date(2024, 3, 24)


def test_nth_weekday_missing_fifth_occurrence():
    with pytest.raises(ValueError):
        nth_weekday(2024, 2, MONDAY, 5)


def test_nth_weekday_rejects_zero():
    with pytest.raises(ValueError):
        nth_weekday(2024, 2, MONDAY, 0)


def test_is_business_day_weekday():
    assert is_business_day(date(2024, 5, 10)) is True


def test_is_business_day_saturday():
    assert is_business_day(date(2024, 5, 11)) is False


def test_is_business_day_holiday():
    assert is_business_day(date(2024, 12, 25), {date(2024, 12, 25)}) is False


def test_business_days_full_week():
    assert business_days_between(date(2024, 1, 1), date(2024, 1, 8)) == 5


def test_business_days_end_is_excluded():
    assert business_days_between(date(2024, 1, 1), date(2024, 1, 5)) == 4


def test_business_days_starting_on_saturday():
    assert business_days_between(date(2024, 1, 6), date(2024, 1, 10)) == 2


def test_business_days_partial_span_over_weekend():
    assert business_days_between(date(2024, 1, 4), date(2024, 1, 16)) == 8


def test_business_days_same_date():
    assert business_days_between(date(2024, 1, 3), date(2024, 1, 3)) == 0


def test_business_days_reversed_is_negative():
    assert business_days_between(date(2024, 1, 8), date(2024, 1, 1)) == -5


def test_business_days_skip_weekday_holidays_once():
    holidays = [date(2024, 1, 2), date(2024, 1, 2), date(2024, 1, 6)]
    assert business_days_between(date(2024, 1, 1), date(2024, 1, 8), holidays) == 4


def test_business_days_holiday_on_start_date():
    holidays = [date(2024, 1, 1)]
    assert business_days_between(date(2024, 1, 1), date(2024, 1, 8), holidays) == 4


def test_business_days_ignore_holiday_on_end_date():
    holidays = [date(2024, 1, 8)]
    assert business_days_between(date(2024, 1, 1), date(2024, 1, 8), holidays) == 5


def test_add_business_days_over_weekend():
    assert add_business_days(date(2024, 5, 10), 1) == date(2024, 5, 13)


def test_add_business_days_within_week():
    assert add_business_days(date(2024, 5, 6), 3) == date(2024, 5, 9)


def test_add_business_days_negative():
    assert add_business_days(date(2024, 5, 13), -1) == date(2024, 5, 10)


def test_add_business_days_skips_holiday():
    assert add_business_days(date(2024, 12, 24), 1, [date(2024, 12, 25)]) == date(2024, 12, 26)


def test_add_zero_business_days_keeps_weekend_date():
    assert add_business_days(date(2024, 5, 11), 0) == date(2024, 5, 11)
