import pytest

from minitmpl import Template, TemplateError, TemplateSyntaxError


def error_for(source):
    with pytest.raises(TemplateSyntaxError) as info:
        Template(source)
    return info.value


def test_syntax_error_is_template_error():
    assert issubclass(TemplateSyntaxError, TemplateError)


def test_unknown_tag():
    assert "unknown tag" in error_for("{% frobnicate %}").message


def test_empty_block_tag():
    assert "unknown tag" in error_for("{% %}").message


def test_unexpected_endif_reports_line():
    error = error_for("a\nb\n{% endif %}")
    assert error.line == 3 and "endif" in error.message


def test_unexpected_else_at_top_level():
    assert "unexpected 'else'" in error_for("{% else %}").message


def test_unclosed_if_reports_opening_line():
    error = error_for("x\n{% if a %}\nbody\n")
    assert error.line == 2 and "endif" in error.message


def test_unclosed_for():
    assert "endfor" in error_for("{% for x in y %}").message


def test_unclosed_for_else():
    assert error_for("\n{% for x in y %}{% else %}").line == 2


def test_endfor_closing_if():
    assert "endfor" in error_for("{% if a %}{% endfor %}").message


def test_elif_after_else():
    assert "elif" in error_for("{% if a %}{% else %}{% elif b %}{% endif %}").message


def test_empty_expression():
    assert "empty expression" in error_for("{{ }}").message


def test_empty_if_condition():
    assert error_for("\n{% if %}{% endif %}").line == 2


def test_expression_error_line_in_elif():
    assert error_for("{% if a %}\n{% elif == %}{% endif %}").line == 2


def test_for_without_in():
    assert "for <name> in" in error_for("{% for x %}{% endfor %}").message


def test_for_without_target():
    assert "for <name> in" in error_for("{% for  in items %}{% endfor %}").message


def test_for_invalid_target_name():
    assert "invalid variable name" in error_for("{% for 1x in items %}{% endfor %}").message


def test_for_cannot_assign_loop():
    assert "invalid variable name" in error_for("{% for loop in items %}{% endfor %}").message


def test_for_too_many_targets():
    assert "one or two" in error_for("{% for a, b, c in items %}{% endfor %}").message


def test_expression_error_reports_line():
    assert error_for("line1\nline2 {{ a b }}").line == 2
