import pytest

from minitmpl import Token, TemplateSyntaxError, tokenize


def test_plain_text_is_one_token():
    assert tokenize("hello world") == [Token("text", "hello world", 1)]


def test_empty_source_has_no_tokens():
    assert tokenize("") == []


def test_variable_token_is_stripped():
    assert tokenize("{{  name  }}") == [Token("var", "name", 1)]


def test_block_token():
    assert tokenize("{% if x %}") == [Token("block", "if x", 1)]


def test_text_around_tags():
    kinds = [t.kind for t in tokenize("a{{ b }}c{% d %}e")]
    assert kinds == ["text", "var", "text", "block", "text"]


def test_comment_produces_no_token():
    assert tokenize("a{# hidden #}b") == [Token("text", "a", 1), Token("text", "b", 1)]


def test_single_brace_is_text():
    assert tokenize("{ a } {b}") == [Token("text", "{ a } {b}", 1)]


def test_lone_brace_before_tag():
    assert tokenize("a { b {{ c }}") == [Token("text", "a { b ", 1), Token("var", "c", 1)]


def test_tags_without_inner_spaces():
    assert tokenize("{{b}}") == [Token("var", "b", 1)]


def test_strip_markers_without_spaces():
    assert tokenize("a {{-b-}} c") == [Token("text", "a", 1), Token("var", "b", 1), Token("text", "c", 1)]


def test_strip_after_marker_directly_after_name():
    assert tokenize("{{a-}} b") == [Token("var", "a", 1), Token("text", "b", 1)]


def test_empty_comment_with_strip_before_only():
    assert tokenize("{#-#} x") == [Token("text", " x", 1)]


def test_trailing_brace_is_text():
    assert tokenize("x {") == [Token("text", "x {", 1)]


def test_line_numbers_count_newlines_before_tag():
    tokens = tokenize("a\nb\n{{ c }}")
    assert tokens[-1] == Token("var", "c", 3)


def test_line_numbers_of_consecutive_tags():
    tokens = tokenize("a\n{{ b }}\n{{ c }}")
    assert tokens[-1] == Token("var", "c", 3)


def test_line_numbers_after_multiline_tag():
    tokens = tokenize("{#\n\n#}x")
    assert tokens == [Token("text", "x", 3)]


def test_strip_before_removes_preceding_whitespace():
    assert tokenize("a  \n {{- b }}")[0] == Token("text", "a", 1)


def test_strip_after_removes_following_whitespace():
    assert tokenize("{{ a -}}\n   b")[1] == Token("text", "b", 1)


def test_strip_marker_is_not_part_of_value():
    assert tokenize("{%- if x -%}") == [Token("block", "if x", 1)]


def test_whitespace_only_text_dropped_when_stripped():
    assert tokenize("{% a -%}  \n  {%- b %}") == [Token("block", "a", 1), Token("block", "b", 2)]


def test_comment_whitespace_control():
    assert tokenize("a \n{#- note -#}\n b") == [Token("text", "a", 1), Token("text", "b", 2)]


def test_unclosed_variable_reports_line():
    with pytest.raises(TemplateSyntaxError) as info:
        tokenize("ok\n\n{{ name")
    assert info.value.line == 3


def test_unclosed_comment():
    with pytest.raises(TemplateSyntaxError):
        tokenize("{# never closed")


def test_syntax_error_message_includes_line():
    error = TemplateSyntaxError("boom", 7)
    assert str(error) == "line 7: boom"


def test_syntax_error_without_line():
    assert str(TemplateSyntaxError("boom")) == "boom"
