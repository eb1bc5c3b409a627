import pytest

from minitmpl import BUILTIN_FILTERS, Markup, Template, TemplateSyntaxError, Undefined, escape
from minitmpl import filters


def test_upper():
    assert filters.upper("ada") == "ADA"


def test_lower():
    assert filters.lower("ADA") == "ada"


def test_upper_of_undefined_is_empty():
    assert filters.upper(Undefined("x")) == ""


def test_length_of_list():
    assert filters.length([1, 2, 3]) == 3


def test_length_of_undefined_is_zero():
    assert filters.length(Undefined("x")) == 0


def test_length_of_none_is_zero():
    assert filters.length(None) == 0


def test_default_for_undefined():
    assert filters.default(Undefined("x"), "fb") == "fb"


def test_default_for_none():
    assert filters.default(None, "fb") == "fb"


def test_default_keeps_empty_string():
    assert filters.default("", "fb") == ""


def test_default_boolean_replaces_falsy():
    assert filters.default(0, "fb", True) == "fb"


def test_default_boolean_keeps_truthy():
    assert filters.default(5, "fb", True) == 5


def test_default_keeps_present_value():
    assert filters.default("y", "fb") == "y"


def test_join_with_separator():
    assert filters.join(["a", "b", "c"], ", ") == "a, b, c"


def test_join_converts_items_to_text():
    assert filters.join([1, None, True]) == "1true"


def test_truncate_long_text():
    assert filters.truncate("abcdefghijkl", 10) == "abcdefghij..."


def test_truncate_exact_length_unchanged():
    assert filters.truncate("abcdefghij", 10) == "abcdefghij"


def test_truncate_short_text_unchanged():
    assert filters.truncate("abc", 10) == "abc"


def test_truncate_strips_trailing_space_of_cut():
    assert filters.truncate("hello world", 6) == "hello..."


def test_truncate_default_limit_is_80():
    assert filters.truncate("x" * 81) == "x" * 80 + "..."


def test_truncate_custom_end():
    assert filters.truncate("abcdef", 3, "~") == "abc~"


def test_truncate_zero_limit():
    assert filters.truncate("abc", 0) == "..."


def test_truncate_rejects_negative_limit():
    with pytest.raises(ValueError):
        filters.truncate("abc", -1)


def test_round_half_up():
    assert filters.round_half_up(2.5) == 3


def test_round_negative_half_away_from_zero():
    assert filters.round_half_up(-2.5) == -3


def test_round_below_half():
    assert filters.round_half_up(2.49) == 2


def test_round_returns_int_for_zero_digits():
    assert isinstance(filters.round_half_up(7.2), int)


def test_round_to_two_digits():
    assert filters.round_half_up(3.14159, 2) == 3.14


def test_round_to_one_digit_half_up():
    assert filters.round_half_up(0.25, 1) == 0.3


def test_round_rejects_negative_digits():
    with pytest.raises(ValueError):
        filters.round_half_up(1.5, -1)


def test_escape_all_special_characters():
    assert escape("<a href=\"x\">'&'</a>") == "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;"


def test_escape_ampersand_once():
    assert escape("&lt;") == "&amp;lt;"


def test_escape_returns_markup():
    assert isinstance(escape("x"), Markup)


def test_escape_leaves_markup_alone():
    assert escape(Markup("<b>")) == "<b>"


def test_escape_none_is_empty():
    assert escape(None) == ""


def test_to_text_of_false():
    assert filters.to_text(False) == "false"


def test_to_text_of_true():
    assert filters.to_text(True) == "true"


def test_to_text_of_number():
    assert filters.to_text(0) == "0"


def test_builtin_filter_names():
    assert {"upper", "lower", "length", "default", "join", "truncate", "round", "escape"} == set(BUILTIN_FILTERS)


def test_filters_chain_left_to_right_in_template():
    assert Template("{{ name|lower|truncate:2 }}").render(name="ADA") == "ad..."


def test_filter_arguments_in_template():
    assert Template('{{ v|default:"x",true }}').render(v=0) == "x"


def test_custom_filter():
    t = Template("{{ n|double }}", filters={"double": lambda value: value * 2})
    assert t.render(n=21) == "42"


def test_custom_filter_overrides_builtin():
    t = Template("{{ n|upper }}", filters={"upper": lambda value: "U"})
    assert t.render(n="a") == "U"


def test_unknown_filter_is_syntax_error():
    with pytest.raises(TemplateSyntaxError):
        Template("{{ x|shout }}")


def test_filter_name_required_after_pipe():
    with pytest.raises(TemplateSyntaxError):
        Template("{{ x|'upper' }}")
