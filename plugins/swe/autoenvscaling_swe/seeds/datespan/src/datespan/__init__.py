"""datespan: calendar arithmetic, ISO 8601 dates and half-open date intervals."""

from .arith import (
    add_business_days, add_months, add_years, business_days_between,
    is_business_day, months_between, next_weekday, nth_weekday, previous_weekday,
)
from .dates import (
    DateParseError, day_of_year, days_in_month, format_date, from_iso_week,
    is_leap_year, iso_calendar, iso_week_start, iso_weeks_in_year, parse_date,
)
from .duration import DurationParseError, format_duration, format_iso_duration, parse_duration
from .interval import Interval, gaps, merge, total_days

__version__ = "1.0.0"
