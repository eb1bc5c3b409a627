from fractions import Fraction

import pytest

from unitconv import (DimensionMismatch, ParseError, UnknownUnit, parse_and_convert,
                      parse_number, parse_quantity, scan_number, scan_unit)


def test_parse_number_integer_and_decimal():
    assert parse_number("42") == 42
    assert parse_number(" 3.25 ") == Fraction(13, 4)


def test_parse_number_leading_and_trailing_dot():
    assert parse_number(".5") == Fraction(1, 2)
    assert parse_number("2.") == 2


def test_parse_number_exponent():
    assert parse_number("1e3") == 1000
    assert parse_number("2.5E-2") == Fraction(1, 40)
    assert parse_number("4e+1") == 40


def test_parse_number_rational():
    assert parse_number("3/4") == Fraction(3, 4)


def test_parse_number_signs():
    assert parse_number("-1.5") == Fraction(-3, 2)
    assert parse_number("+7") == 7
    assert parse_number("-3/4") == Fraction(-3, 4)


def test_parse_number_zero_denominator():
    with pytest.raises(ParseError):
        parse_number("1/0")


@pytest.mark.parametrize("text", ["", "abc", "-", ".", "1.2.3", "3 4"])
def test_parse_number_rejects_garbage(text):
    with pytest.raises(ParseError):
        parse_number(text)


def test_scan_number_stops_before_unit():
    assert scan_number("12.5km", 0) == (Fraction(25, 2), 4)


def test_scan_number_from_offset():
    assert scan_number("ab-3x", 2) == (-3, 4)


def test_scan_number_e_without_digits_is_not_exponent():
    assert scan_number("2em") == (2, 1)


def test_scan_number_no_rational_after_decimal():
    assert scan_number("1.5/2") == (Fraction(3, 2), 3)


def test_scan_number_slash_without_digits():
    assert scan_number("3/s") == (3, 1)


def test_scan_unit_stops_at_digit():
    assert scan_unit("ft3in", 0) == ("ft", 2)


def test_scan_unit_keeps_exponents():
    assert scan_unit("m/s^2 x", 0) == ("m/s^2", 5)
    assert scan_unit("s^-1", 0) == ("s^-1", 4)


def test_scan_unit_stops_at_space_and_sign():
    assert scan_unit(" m", 0) == ("", 0)
    assert scan_unit("m-2", 0) == ("m", 1)


def test_parse_quantity_simple():
    q = parse_quantity("3.5 km")
    assert (q.value, q.unit) == (Fraction(7, 2), "km")


def test_parse_quantity_without_space():
    q = parse_quantity("1.5GiB")
    assert (q.value, q.unit) == (Fraction(3, 2), "GiB")


def test_parse_quantity_long_name():
    assert parse_quantity("3 meters").to("m").value == 3


def test_parse_quantity_compound_unit():
    q = parse_quantity("60 km/h")
    assert q.unit == "km/h"
    assert q.to("m/s").value == Fraction(50, 3)


def test_parse_quantity_two_parts():
    q = parse_quantity("12ft 3in")
    assert (q.value, q.unit) == (Fraction(49, 4), "ft")


def test_parse_quantity_two_parts_without_spaces():
    assert parse_quantity("5ft6in").value == Fraction(11, 2)


def test_parse_quantity_three_parts():
    q = parse_quantity("1 h 30 min 30 s")
    assert q.value == Fraction(181, 120)
    assert q.unit == "h"


def test_parse_quantity_negative_applies_to_all_parts():
    assert parse_quantity("-5 ft 3 in").value == Fraction(-21, 4)


def test_parse_quantity_sign_on_later_part_raises():
    with pytest.raises(ParseError):
        parse_quantity("5 ft -3 in")


def test_parse_quantity_default_unit():
    q = parse_quantity("42", default_unit="s")
    assert (q.value, q.unit) == (42, "s")


def test_parse_quantity_missing_unit_raises():
    with pytest.raises(ParseError):
        parse_quantity("42")


def test_parse_quantity_empty_raises():
    with pytest.raises(ParseError):
        parse_quantity("   ")


def test_parse_quantity_unknown_unit():
    with pytest.raises(UnknownUnit):
        parse_quantity("3 furlongs")


def test_parse_quantity_unknown_unit_in_later_part():
    with pytest.raises(UnknownUnit):
        parse_quantity("3 ft 2 hands")


def test_parse_quantity_mixed_dimensions():
    with pytest.raises(DimensionMismatch):
        parse_quantity("3 m 2 s")


def test_parse_quantity_offset_units_cannot_be_combined():
    with pytest.raises(ParseError):
        parse_quantity("20 degC 5 degC")
    with pytest.raises(ParseError):
        parse_quantity("20 K 5 degC")


def test_parse_quantity_single_temperature():
    q = parse_quantity("-40 degF")
    assert q.value == -40
    assert q.to("degC").value == -40


def test_parse_quantity_number_starting_with_dot():
    assert parse_quantity(".25 kg").value == Fraction(1, 4)


def test_parse_and_convert_compound_length():
    assert parse_and_convert("12ft 3in", "m") == Fraction("3.7338")


def test_parse_and_convert_data():
    assert parse_and_convert("1.5 GiB", "MiB") == 1536


def test_scan_number_incomplete_exponent():
    assert scan_number("1e") == (1, 1)
    assert scan_number("1e+") == (1, 1)


def test_scan_unit_dangling_exponent():
    assert scan_unit("m^", 0) == ("m^", 2)
    assert scan_unit("s^-", 0) == ("s^-", 3)


def test_parse_quantity_fractional_first_part():
    q = parse_quantity("0.5 ft 6 in")
    assert (q.value, q.unit) == (1, "ft")
