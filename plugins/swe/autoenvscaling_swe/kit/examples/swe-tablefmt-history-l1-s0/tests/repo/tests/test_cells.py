from decimal import Decimal
from fractions import Fraction

import pytest

from tablefmt import column_type, decimal_align, format_cell, number_kind, split_decimal


def test_number_kind_python_numbers():
    assert number_kind(3) == "int"
    assert number_kind(3.0) == "float"


def test_number_kind_decimal_and_fraction():
    assert number_kind(Decimal("1.5")) == "float"
    assert number_kind(Fraction(1, 3)) == "float"


def test_number_kind_bool_is_not_a_number():
    assert number_kind(True) is None


def test_number_kind_integer_strings():
    assert number_kind("42") == "int"
    assert number_kind("-7") == "int"
    assert number_kind(" +3 ") == "int"


@pytest.mark.parametrize("text", ["3.5", ".5", "2.", "1e5", "-1.5E-3"])
def test_number_kind_float_strings(text):
    assert number_kind(text) == "float"


def test_number_kind_special_floats():
    assert number_kind("nan") == "float"
    assert number_kind("-Inf") == "float"


@pytest.mark.parametrize("value", ["abc", "1.2.3", "", "1e", "12px", "-", None, [1]])
def test_number_kind_non_numbers(value):
    assert number_kind(value) is None


def test_column_type_int():
    assert column_type([1, "2", -3]) == "int"


def test_column_type_float_when_any_float():
    assert column_type([1, 2.5, 3]) == "float"
    assert column_type(["1", "2.5"]) == "float"


def test_column_type_text_when_any_text():
    assert column_type([1, "x", 2.5]) == "text"


def test_column_type_ignores_none():
    assert column_type([None, 1, None]) == "int"


def test_column_type_without_values_is_text():
    assert column_type([None, None]) == "text"
    assert column_type([]) == "text"


def test_column_type_bool_is_text():
    assert column_type([1, True]) == "text"


def test_format_cell_missing():
    assert format_cell(None, "int") == ""
    assert format_cell(None, "text", missing="n/a") == "n/a"


def test_format_cell_float_column_uses_floatfmt():
    assert format_cell(3.14159, "float", ".2f") == "3.14"


def test_format_cell_int_in_float_column():
    assert format_cell(3, "float", ".1f") == "3.0"


def test_format_cell_numeric_string_in_float_column():
    assert format_cell("2.5", "float", ".2f") == "2.50"


def test_format_cell_text_column_ignores_floatfmt():
    assert format_cell(0.12345, "text", ".2f") == "0.12345"


def test_format_cell_int_column():
    assert format_cell(12, "int", ".2f") == "12"


def test_format_cell_default_floatfmt():
    assert format_cell(2.50, "float") == "2.5"


def test_format_cell_bad_floatfmt():
    with pytest.raises(ValueError):
        format_cell(1.5, "float", "q")


def test_split_decimal():
    assert split_decimal("12.5") == ("12", ".5")
    assert split_decimal("7") == ("7", "")


def test_split_decimal_strips_and_uses_first_point():
    assert split_decimal(" 3.25 ") == ("3", ".25")
    assert split_decimal("1.2.3") == ("1", ".2.3")


def test_split_decimal_leading_point():
    assert split_decimal(".5") == ("", ".5")


def test_split_decimal_custom_point():
    assert split_decimal("3,5", ",") == ("3", ",5")


def test_decimal_align():
    assert decimal_align(["1.5", "10.25", "3"]) == [" 1.5 ", "10.25", " 3   "]


def test_decimal_align_negative_numbers():
    assert decimal_align(["-1.5", "2.25"]) == ["-1.5 ", " 2.25"]


def test_decimal_align_blank_entry():
    assert decimal_align(["", "1.5"]) == ["   ", "1.5"]


def test_decimal_align_empty_list():
    assert decimal_align([]) == []
