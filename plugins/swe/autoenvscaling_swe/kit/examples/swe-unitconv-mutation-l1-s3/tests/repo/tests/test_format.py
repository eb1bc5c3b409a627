import math
from fractions import Fraction

import pytest

from unitconv import UnitError, best_unit, format_number, format_quantity, humanize_bytes, round_sig


def test_round_sig_large_number():
    assert round_sig(1234, 2) == 1200.0


def test_round_sig_small_number():
    assert round_sig(0.0012345, 3) == pytest.approx(0.00123)


def test_round_sig_negative_number():
    assert round_sig(-987.6, 2) == -990.0


def test_round_sig_power_of_ten():
    assert round_sig(1000, 1) == 1000.0
    assert round_sig(0.01, 2) == 0.01


def test_round_sig_zero():
    assert round_sig(0, 3) == 0.0


def test_round_sig_infinity_unchanged():
    assert round_sig(math.inf, 2) == math.inf


def test_round_sig_rejects_zero_digits():
    with pytest.raises(ValueError):
        round_sig(5, 0)


def test_round_sig_one_digit():
    assert round_sig(1.5, 1) == 2.0
    assert round_sig(14, 1) == 10.0


def test_round_sig_accepts_fraction():
    assert round_sig(Fraction(1, 3), 2) == 0.33


def test_format_number_strips_trailing_zeros():
    assert format_number(1.5) == "1.5"
    assert format_number(2.0) == "2"


def test_format_number_rounds_integer_part():
    assert format_number(1536) == "1540"


def test_format_number_small_value():
    assert format_number(0.000123456) == "0.000123"


def test_format_number_carry_into_next_digit():
    assert format_number(9.999) == "10"
    assert format_number(0.09999) == "0.1"


def test_format_number_negative():
    assert format_number(-0.5) == "-0.5"


def test_format_number_zero():
    assert format_number(0) == "0"


def test_format_number_more_digits():
    assert format_number(3.14159, 5) == "3.1416"


def test_format_number_keeps_needed_zero():
    assert format_number(1.05, 3) == "1.05"
    assert format_number(100.4, 4) == "100.4"


def test_best_unit_iec():
    assert best_unit(1536, "B") == (Fraction(3, 2), "KiB")


def test_best_unit_exact_boundary():
    assert best_unit(1024, "B") == (1, "KiB")
    assert best_unit(1023, "B") == (1023, "B")


def test_best_unit_si_family():
    assert best_unit(1500, "B", family="si") == (Fraction(3, 2), "kB")


def test_best_unit_from_larger_unit():
    assert best_unit(Fraction(1, 2), "GiB") == (512, "MiB")


def test_best_unit_below_smallest_candidate():
    assert best_unit(Fraction(1, 10 ** 12), "m") == (Fraction(1, 1000), "nm")


def test_best_unit_zero_is_unchanged():
    assert best_unit(0, "KiB") == (0, "KiB")


def test_best_unit_negative_value():
    assert best_unit(-1500, "m") == (Fraction(-3, 2), "km")


def test_best_unit_offset_unit_unchanged():
    assert best_unit(5000, "degC") == (5000, "degC")


def test_best_unit_unit_without_family_unchanged():
    assert best_unit(5000, "nmi") == (5000, "nmi")


def test_best_unit_unknown_family():
    with pytest.raises(UnitError):
        best_unit(5, "m", family="iec")


def test_best_unit_clock():
    assert best_unit(90, "s") == (Fraction(3, 2), "min")
    assert best_unit(7200, "s") == (2, "h")
    assert best_unit(3, "d") == (3, "d")


def test_best_unit_imperial():
    assert best_unit(36, "in") == (1, "yd")
    assert best_unit(Fraction(1, 2), "ft") == (6, "in")


def test_format_quantity_best_fit():
    assert format_quantity(1500, "m") == "1.5 km"


def test_format_quantity_without_best_fit():
    assert format_quantity(1500, "m", best_fit=False) == "1500 m"


def test_format_quantity_sig():
    assert format_quantity(Fraction(2, 3), "km", sig=2) == "670 m"


def test_humanize_bytes_binary():
    assert humanize_bytes(1536) == "1.5 KiB"
    assert humanize_bytes(3 * 2 ** 30) == "3 GiB"


def test_humanize_bytes_si():
    assert humanize_bytes(1500, binary=False) == "1.5 kB"
    assert humanize_bytes(2500000, binary=False) == "2.5 MB"


def test_humanize_bytes_small_and_zero():
    assert humanize_bytes(500) == "500 B"
    assert humanize_bytes(0) == "0 B"


def test_humanize_bytes_negative_raises():
    with pytest.raises(ValueError):
        humanize_bytes(-1)


def test_round_sig_default_three_digits():
    assert round_sig(123456) == 123000.0


def test_format_quantity_default_sig():
    assert format_quantity(Fraction(2, 3), "km") == "667 m"


def test_humanize_bytes_default_sig():
    assert humanize_bytes(1234567) == "1.18 MiB"
    assert humanize_bytes(1234567, sig=2) == "1.2 MiB"
