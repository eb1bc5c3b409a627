from decimal import Decimal
from fractions import Fraction

import pytest

from unitconv import (DimensionMismatch, Quantity, UnitError, coerce_value, conversion_factor,
                      convert, convert_delta)


def test_convert_km_to_m():
    assert convert(3, "km", "m") == 3000


def test_convert_m_to_km():
    assert convert(250, "m", "km") == Fraction(1, 4)


def test_convert_mile_to_km_is_exact():
    assert convert(1, "mi", "km") == Fraction(1609344, 10 ** 6)


def test_convert_inch_to_cm():
    assert convert(1, "in", "cm") == Fraction(254, 100)


def test_convert_foot_to_inch():
    assert convert(2, "ft", "in") == 24


def test_convert_pound_to_kg():
    assert convert(1, "lb", "kg") == Fraction("0.45359237")


def test_convert_stone_and_ounce():
    assert convert(1, "st", "lb") == 14
    assert convert(1, "lb", "oz") == 16


def test_convert_time_units():
    assert convert(2, "h", "s") == 7200
    assert convert(1, "wk", "d") == 7
    assert convert(1500, "ms", "s") == Fraction(3, 2)


def test_convert_celsius_to_kelvin():
    assert convert(0, "degC", "K") == Fraction("273.15")
    assert convert(-273.15, "degC", "K") == pytest.approx(0)


def test_convert_kelvin_to_celsius():
    assert convert(300, "K", "degC") == Fraction("26.85")


def test_convert_fahrenheit_to_celsius():
    assert convert(32, "degF", "degC") == 0
    assert convert(212, "degF", "degC") == 100


def test_convert_minus_forty_is_same_in_both_scales():
    assert convert(-40, "degC", "degF") == -40


def test_convert_fahrenheit_to_kelvin():
    assert convert(32, "degF", "K") == Fraction("273.15")


def test_convert_kelvin_to_fahrenheit():
    assert convert(0, "K", "degF") == Fraction("-459.67")


def test_convert_rankine_to_kelvin():
    assert convert(9, "degR", "K") == 5


def test_convert_temperature_aliases():
    assert convert(100, "celsius", "fahrenheit") == 212


def test_convert_float_input_gives_float():
    result = convert(1.5, "km", "m")
    assert isinstance(result, float)
    assert result == 1500.0


def test_convert_string_input_is_exact():
    assert convert("0.1", "km", "m") == 100


def test_convert_decimal_input():
    assert convert(Decimal("2.5"), "kg", "g") == 2500


def test_convert_bool_raises():
    with pytest.raises(TypeError):
        convert(True, "m", "km")


def test_convert_bad_string_raises():
    with pytest.raises(ValueError):
        convert("ten", "m", "km")


def test_coerce_value_rejects_other_types():
    with pytest.raises(TypeError):
        coerce_value([1])


def test_coerce_value_keeps_float():
    assert coerce_value(0.25) == 0.25
    assert isinstance(coerce_value(0.25), float)


def test_convert_dimension_mismatch():
    with pytest.raises(DimensionMismatch) as info:
        convert(1, "kg", "m")
    assert info.value.left == "mass"
    assert info.value.right == "length"


def test_convert_compound_speed():
    assert convert(36, "km/h", "m/s") == 10


def test_convert_compound_acceleration():
    assert convert(1, "m/s^2", "km/h^2") == Fraction(12960)


def test_convert_compound_mismatch():
    with pytest.raises(DimensionMismatch):
        convert(1, "m/s", "m/s^2")


def test_convert_data_si_and_iec():
    assert convert(1, "GB", "MB") == 1000
    assert convert(1, "GiB", "MiB") == 1024
    assert convert(1, "MiB", "kB") == Fraction(1048576, 1000)


def test_convert_bits():
    assert convert(16, "bit", "B") == 2
    assert convert(1, "Mbit", "kB") == 125


def test_convert_delta_celsius_to_fahrenheit():
    assert convert_delta(10, "degC", "degF") == 18


def test_convert_delta_fahrenheit_to_kelvin():
    assert convert_delta(9, "degF", "K") == 5


def test_convert_delta_mismatch():
    with pytest.raises(DimensionMismatch):
        convert_delta(1, "degC", "m")


def test_conversion_factor():
    assert conversion_factor("ft", "m") == Fraction(381, 1250)
    assert conversion_factor("m", "ft") == Fraction(1250, 381)


def test_conversion_factor_rejects_offset_units():
    with pytest.raises(UnitError):
        conversion_factor("degC", "K")
    with pytest.raises(UnitError):
        conversion_factor("K", "degF")


def test_quantity_to():
    q = Quantity(2, "km").to("m")
    assert q.value == 2000
    assert q.unit == "m"


def test_quantity_requires_unit():
    with pytest.raises(UnitError):
        Quantity(1, "  ")


def test_quantity_add_converts_other():
    total = Quantity(1, "m") + Quantity(50, "cm")
    assert total.value == Fraction(3, 2)
    assert total.unit == "m"


def test_quantity_add_temperature_uses_difference():
    warmer = Quantity(20, "degC") + Quantity(9, "degF")
    assert warmer.value == 25


def test_quantity_add_mismatch():
    with pytest.raises(DimensionMismatch):
        Quantity(1, "m") + Quantity(1, "s")


def test_quantity_add_number_is_type_error():
    with pytest.raises(TypeError):
        Quantity(1, "m") + 1


def test_quantity_mul():
    assert (Quantity(3, "kg") * 2).value == 6
    assert (Fraction(1, 2) * Quantity(3, "kg")).value == Fraction(3, 2)


def test_quantity_mul_by_bool_is_type_error():
    with pytest.raises(TypeError):
        Quantity(3, "kg") * True


def test_quantity_equality_across_units():
    assert Quantity(1, "km") == Quantity(1000, "m")
    assert Quantity(1, "km") != Quantity(999, "m")


def test_quantity_equality_incompatible_is_false():
    assert Quantity(1, "km") != Quantity(1, "kg")
    assert Quantity(1, "km") != 1


def test_quantity_is_unhashable():
    with pytest.raises(TypeError):
        hash(Quantity(1, "m"))


def test_quantity_str_and_repr():
    assert str(Quantity(3, "m")) == "3 m"
    assert str(Quantity("2.5", "kg")) == "2.5 kg"
    assert repr(Quantity(3, "m")) == "Quantity(Fraction(3, 1), 'm')"


def test_conversion_factor_compound():
    assert conversion_factor("km/h", "m/s") == Fraction(5, 18)
