import pytest

from minitmpl import BUILTIN_FILTERS, TemplateSyntaxError, Undefined, parse_expression, tokenize_expression
from minitmpl.expr import get_item
from minitmpl.template import Context


def ev(source, **variables):
    return parse_expression(source, 1, BUILTIN_FILTERS)(Context(variables, BUILTIN_FILTERS))


def cond(source, **variables):
    return "yes" if ev(source, **variables) else "no"


def test_tokenize_names_numbers_strings():
    assert tokenize_expression('a 12 "x"') == [("name", "a"), ("num", 12), ("str", "x")]


def test_tokenize_two_char_operators():
    assert tokenize_expression("a<=b") == [("name", "a"), ("op", "<="), ("name", "b")]


def test_tokenize_identifier_with_digits_and_underscore():
    assert tokenize_expression("_item2") == [("name", "_item2")]


def test_tokenize_backslash_escape_in_string():
    assert tokenize_expression(r"'it\'s'") == [("str", "it's")]


def test_tokenize_escaped_closing_quote_is_unterminated():
    with pytest.raises(TemplateSyntaxError):
        tokenize_expression(r'"a\"')


def test_tokenize_trailing_backslash_is_unterminated():
    with pytest.raises(TemplateSyntaxError):
        tokenize_expression('"a\\')


def test_tokenize_number_directly_before_operator():
    assert tokenize_expression("10>=n") == [("num", 10), ("op", ">="), ("name", "n")]


def test_tokenize_unterminated_string():
    with pytest.raises(TemplateSyntaxError):
        tokenize_expression('"abc', 4)


def test_tokenize_rejects_unknown_character():
    with pytest.raises(TemplateSyntaxError) as info:
        tokenize_expression("a + b", 2)
    assert info.value.line == 2


def test_string_literal_output():
    assert ev("'hi there'") == "hi there"


def test_number_literal_output():
    assert ev("42") == 42


def test_boolean_constants():
    assert ev("true") is True and ev("False") is False


def test_none_constant():
    assert ev("none") is None


def test_dict_lookup():
    assert ev("user.name", user={"name": "ada"}) == "ada"


def test_attribute_lookup():
    class User:
        name = "grace"

    assert ev("user.name", user=User()) == "grace"


def test_index_lookup():
    assert ev("items.1", items=["a", "b", "c"]) == "b"


def test_index_out_of_range_is_undefined():
    assert isinstance(ev("items.5", items=["a"]), Undefined)


def test_nested_lookup_through_missing_is_undefined():
    assert isinstance(ev("a.b.c", a={}), Undefined)


def test_private_attribute_is_hidden():
    class Box:
        _secret = "x"

    assert isinstance(ev("box._secret", box=Box()), Undefined)


def test_get_item_missing_dict_key():
    assert isinstance(get_item({"a": 1}, "b"), Undefined)


def test_get_item_on_undefined_returns_same():
    missing = Undefined("x")
    assert get_item(missing, "y") is missing


def test_undefined_is_falsy_and_empty():
    missing = Undefined("x")
    assert not missing and len(missing) == 0 and list(missing) == []


def test_equality():
    assert cond("a == 3", a=3) == "yes"


def test_inequality():
    assert cond("a != 3", a=3) == "no"


def test_less_than_boundary():
    assert cond("a < 3", a=3) == "no"


def test_less_equal_boundary():
    assert cond("a <= 3", a=3) == "yes"


def test_greater_than():
    assert cond("a > 2", a=3) == "yes"


def test_greater_equal_boundary():
    assert cond("a >= 4", a=3) == "no"


def test_in_operator():
    assert cond("'b' in letters", letters=["a", "b"]) == "yes"


def test_not_in_operator():
    assert cond("'z' not in letters", letters=["a", "b"]) == "yes"


def test_and_requires_both():
    assert cond("a and b", a=True, b=False) == "no"


def test_or_requires_one():
    assert cond("a or b", a=False, b=True) == "yes"


def test_not_negates():
    assert cond("not a", a=[]) == "yes"


def test_not_binds_looser_than_comparison():
    assert cond("not a == 1", a=2) == "yes"


def test_and_binds_tighter_than_or():
    assert cond("a or b and c", a=True, b=False, c=False) == "yes"


def test_parentheses_override_precedence():
    assert cond("(a or b) and c", a=True, b=False, c=False) == "no"


def test_or_returns_operand_value():
    assert ev("name or 'anon'", name="") == "anon"


def test_and_returns_first_falsy_operand():
    assert ev("a and b", a=0, b=5) == 0


def test_missing_variable_is_false():
    assert cond("ghost") == "no"


def test_filter_applies_before_comparison():
    assert cond("items|length > 2", items=[1, 2, 3]) == "yes"


def test_chained_comparison_is_rejected():
    with pytest.raises(TemplateSyntaxError):
        ev("1 < 2 < 3")


def test_missing_closing_parenthesis():
    with pytest.raises(TemplateSyntaxError):
        ev("(a or b")


def test_dangling_operator():
    with pytest.raises(TemplateSyntaxError):
        ev("a ==")


def test_keyword_cannot_be_a_variable():
    with pytest.raises(TemplateSyntaxError):
        ev("and")


def test_bad_attribute_after_dot():
    with pytest.raises(TemplateSyntaxError):
        ev("a.'b'")


def test_in_after_two_operands_is_rejected():
    with pytest.raises(TemplateSyntaxError):
        ev("a b in c")


def test_unknown_filter():
    with pytest.raises(TemplateSyntaxError):
        ev("a|nope")


def test_filter_with_two_arguments():
    assert ev('v|truncate:3,"!"', v="abcdef") == "abc!"


def test_filter_argument_from_variable():
    assert ev("ghost|default:fb", fb="x") == "x"


def test_parse_error_reports_given_line():
    with pytest.raises(TemplateSyntaxError) as info:
        parse_expression("a b", 9)
    assert info.value.line == 9


def test_simple_path_with_surrounding_spaces():
    assert ev("  user.name ", user={"name": "x"}) == "x"


def test_get_item_attribute_fallback_for_non_dict():
    assert get_item("abc", "upper")() == "ABC"


def test_get_item_index_on_non_sequence():
    assert isinstance(get_item(5, 0), Undefined)


def test_get_item_integer_key_in_dict():
    assert get_item({1: "one"}, 1) == "one"
