from fractions import Fraction

import pytest

from unitconv import (DEFAULT_REGISTRY, Registry, Unit, UnitError, UnknownUnit,
                      format_dimension, split_terms)


def make_registry():
    reg = Registry()
    reg.register("m", "length", 1, aliases=("meter",))
    reg.register("s", "time", 1, aliases=("second",))
    return reg


def test_unit_rejects_zero_factor():
    with pytest.raises(UnitError):
        Unit("x", "length", 0)


def test_unit_rejects_negative_factor():
    with pytest.raises(UnitError):
        Unit("x", "length", -2)


def test_unit_rejects_empty_symbol():
    with pytest.raises(UnitError):
        Unit("", "length", 1)


def test_unit_factor_from_string_is_exact():
    assert Unit("ft", "length", "0.3048").factor == Fraction(381, 1250)


def test_unit_is_affine():
    assert DEFAULT_REGISTRY.get("degC").is_affine
    assert not DEFAULT_REGISTRY.get("K").is_affine


def test_get_by_symbol():
    assert DEFAULT_REGISTRY.get("km").factor == 1000


def test_get_strips_whitespace():
    assert DEFAULT_REGISTRY.get("  kg ").symbol == "kg"


def test_get_symbol_is_case_sensitive():
    with pytest.raises(UnknownUnit):
        DEFAULT_REGISTRY.get("KM")


def test_get_alias_is_case_insensitive():
    assert DEFAULT_REGISTRY.get("Kilometer").symbol == "km"


def test_get_plural_alias():
    assert DEFAULT_REGISTRY.get("meters").symbol == "m"
    assert DEFAULT_REGISTRY.get("Hours").symbol == "h"


def test_get_plural_only_strips_one_s():
    with pytest.raises(UnknownUnit):
        DEFAULT_REGISTRY.get("meterss")


def test_get_non_string_raises_type_error():
    with pytest.raises(TypeError):
        DEFAULT_REGISTRY.get(3)


def test_unknown_unit_carries_name():
    with pytest.raises(UnknownUnit) as info:
        DEFAULT_REGISTRY.get("furlong")
    assert info.value.unit == "furlong"


def test_contains():
    assert "feet" in DEFAULT_REGISTRY
    assert "furlong" not in DEFAULT_REGISTRY
    assert 5 not in DEFAULT_REGISTRY


def test_register_returns_unit():
    reg = make_registry()
    unit = reg.register("km", "length", 1000)
    assert reg.get("km") is unit


def test_register_duplicate_symbol_raises():
    reg = make_registry()
    with pytest.raises(UnitError):
        reg.register("m", "length", 2)


def test_register_duplicate_alias_is_case_insensitive():
    reg = make_registry()
    with pytest.raises(UnitError):
        reg.register("mtr", "length", 1, aliases=("METER",))


def test_register_failed_alias_leaves_registry_unchanged():
    reg = make_registry()
    with pytest.raises(UnitError):
        reg.register("sec", "time", 1, aliases=("secs", "second"))
    assert "sec" not in reg
    assert "secs" not in reg


def test_register_prefixed_creates_units_in_order():
    reg = make_registry()
    created = reg.register_prefixed("m", (("k", "kilo", 1000), ("M", "mega", 10 ** 6)), "meter")
    assert [u.symbol for u in created] == ["km", "Mm"]
    assert reg.get("Mm").factor == 10 ** 6
    assert reg.get("kilometer").symbol == "km"


def test_register_prefixed_scales_base_factor():
    reg = Registry()
    reg.register("bit", "data", Fraction(1, 8))
    (kbit,) = reg.register_prefixed("bit", (("k", "kilo", 1000),))
    assert kbit.factor == 125
    assert kbit.dimension == "data"


def test_register_prefixed_unknown_base():
    with pytest.raises(UnknownUnit):
        make_registry().register_prefixed("g", (("k", "kilo", 1000),))


def test_units_of_sorted_by_factor():
    symbols = [u.symbol for u in DEFAULT_REGISTRY.units_of("mass")]
    assert symbols == ["mg", "g", "oz", "lb", "kg", "st", "t"]


def test_units_of_ties_broken_by_symbol():
    reg = Registry()
    reg.register("b", "x", 2)
    reg.register("c", "x", 1)
    reg.register("a", "x", 2)
    assert [u.symbol for u in reg.units_of("x")] == ["c", "a", "b"]


def test_units_of_unknown_dimension_raises():
    with pytest.raises(UnitError):
        DEFAULT_REGISTRY.units_of("luminosity")


def test_format_dimension_quotient_with_power():
    assert format_dimension((("length", 1), ("time", -2))) == "length/time^2"


def test_format_dimension_only_denominator():
    assert format_dimension((("time", -1),)) == "1/time"


def test_format_dimension_empty():
    assert format_dimension(()) == "dimensionless"


def test_format_dimension_product():
    assert format_dimension((("length", 2), ("mass", 1))) == "length^2*mass"


def test_split_terms_basic():
    assert split_terms("kg*m/s^2") == [(1, "kg", 1), (1, "m", 1), (-1, "s", 2)]


def test_split_terms_division_applies_to_next_term_only():
    assert split_terms("m/s*kg") == [(1, "m", 1), (-1, "s", 1), (1, "kg", 1)]


def test_split_terms_middle_dot():
    assert split_terms("N·m") == [(1, "N", 1), (1, "m", 1)]


def test_split_terms_negative_exponent():
    assert split_terms("s^-1") == [(1, "s", -1)]


@pytest.mark.parametrize("expr", ["m//s", "/s", "m/", "m* *s"])
def test_split_terms_empty_term_raises(expr):
    with pytest.raises(UnitError):
        split_terms(expr)


def test_split_terms_bad_exponent_raises():
    with pytest.raises(UnitError):
        split_terms("m^x")
    with pytest.raises(UnitError):
        split_terms("m^0")


def test_resolve_simple_unit():
    spec = DEFAULT_REGISTRY.resolve("ft")
    assert spec.factor == Fraction(381, 1250)
    assert spec.signature == (("length", 1),)


def test_resolve_keeps_offset():
    assert DEFAULT_REGISTRY.resolve("degC").offset == Fraction(5463, 20)


def test_resolve_compound_factor():
    spec = DEFAULT_REGISTRY.resolve("km/h")
    assert spec.factor == Fraction(5, 18)
    assert spec.signature == (("length", 1), ("time", -1))


def test_resolve_compound_power_factor():
    assert DEFAULT_REGISTRY.resolve("cm^2").factor == Fraction(1, 10000)
    assert DEFAULT_REGISTRY.resolve("km^-1").factor == Fraction(1, 1000)


def test_resolve_compound_cancels_dimensions():
    spec = DEFAULT_REGISTRY.resolve("km/m")
    assert spec.signature == ()
    assert spec.factor == 1000


def test_resolve_rejects_offset_unit_in_compound():
    with pytest.raises(UnitError):
        DEFAULT_REGISTRY.resolve("degC/s")


def test_resolve_unknown_simple_unit():
    with pytest.raises(UnknownUnit):
        DEFAULT_REGISTRY.resolve("parsec")


def test_resolve_unknown_unit_in_compound():
    with pytest.raises(UnknownUnit):
        DEFAULT_REGISTRY.resolve("m/fortnight")


def test_resolve_empty_expression():
    with pytest.raises(UnitError):
        DEFAULT_REGISTRY.resolve("   ")


def test_resolve_non_string():
    with pytest.raises(TypeError):
        DEFAULT_REGISTRY.resolve(None)


def test_unitspec_dimension():
    assert DEFAULT_REGISTRY.resolve("m/s^2").dimension == "length/time^2"


def test_default_iec_units():
    assert DEFAULT_REGISTRY.get("KiB").factor == 1024
    assert DEFAULT_REGISTRY.get("GiB").factor == 2 ** 30
    assert DEFAULT_REGISTRY.get("mebibyte").symbol == "MiB"


def test_default_si_data_units():
    assert DEFAULT_REGISTRY.get("TB").factor == 10 ** 12
    assert DEFAULT_REGISTRY.get("kB").families == ("si",)


def test_default_bit_units():
    assert DEFAULT_REGISTRY.get("kbit").factor == 125
    assert DEFAULT_REGISTRY.get("Mbit").factor == 125000


def test_unit_default_offset_is_zero():
    unit = Unit("x", "length", 2)
    assert unit.offset == 0
    assert not unit.is_affine
    assert unit.families == ()


@pytest.mark.parametrize("symbol, factor", [
    ("nm", Fraction(1, 10 ** 9)), ("um", Fraction(1, 10 ** 6)), ("mm", Fraction(1, 1000)),
    ("nmi", 1852), ("mg", Fraction(1, 10 ** 6)), ("t", 1000), ("us", Fraction(1, 10 ** 6)),
    ("min", 60), ("d", 86400), ("TiB", 2 ** 40), ("PiB", 2 ** 50), ("PB", 10 ** 15),
    ("Gbit", 125 * 10 ** 6),
])
def test_default_unit_factors(symbol, factor):
    assert DEFAULT_REGISTRY.get(symbol).factor == factor


def test_resolve_compound_has_no_offset():
    assert DEFAULT_REGISTRY.resolve("km/h").offset == 0
