import pytest

from tablefmt import convert_value, detect_delimiter, parse_csv, render_text, table_from_text


def test_parse_csv_simple():
    assert parse_csv("a,b\n1,2") == [["a", "b"], ["1", "2"]]


def test_parse_csv_strips_unquoted_fields():
    assert parse_csv(" a , b ") == [["a", "b"]]


def test_parse_csv_without_strip():
    assert parse_csv(" a , b ", strip=False) == [[" a ", " b "]]


def test_parse_csv_quoted_delimiter():
    assert parse_csv('"a,b",c') == [["a,b", "c"]]


def test_parse_csv_doubled_quote():
    assert parse_csv('"say ""hi""",x') == [['say "hi"', "x"]]


def test_parse_csv_doubled_quote_at_end_of_text():
    assert parse_csv('"a"""') == [['a"']]


def test_parse_csv_quoted_newline():
    assert parse_csv('"line1\nline2",z\nq,r') == [["line1\nline2", "z"], ["q", "r"]]


def test_parse_csv_quoted_field_keeps_spaces():
    assert parse_csv('" a ",b') == [[" a ", "b"]]


def test_parse_csv_spaces_around_quoted_field():
    assert parse_csv('  "a"  ,b') == [["a", "b"]]


def test_parse_csv_text_after_closing_quote():
    with pytest.raises(ValueError):
        parse_csv('"a"b,c')


def test_parse_csv_unterminated_quote():
    with pytest.raises(ValueError):
        parse_csv('"abc,d')


def test_parse_csv_quote_inside_unquoted_field_is_literal():
    assert parse_csv('ab"c,d') == [['ab"c', "d"]]


def test_parse_csv_crlf():
    assert parse_csv("a,b\r\nc,d\r\n") == [["a", "b"], ["c", "d"]]


def test_parse_csv_trailing_newline_adds_no_row():
    assert parse_csv("a\nb\n") == [["a"], ["b"]]


def test_parse_csv_skips_blank_lines():
    assert parse_csv("a\n\n  \nb") == [["a"], ["b"]]


def test_parse_csv_keeps_blank_lines_when_asked():
    assert parse_csv("a\n\nb", skip_blank=False) == [["a"], [""], ["b"]]


def test_parse_csv_empty_fields():
    assert parse_csv("a,,b") == [["a", "", "b"]]
    assert parse_csv("a,") == [["a", ""]]


def test_parse_csv_quoted_empty_field_at_end():
    assert parse_csv('a,""') == [["a", ""]]


def test_parse_csv_custom_delimiter_and_quote():
    assert parse_csv("'x;y';z", delimiter=";", quote="'") == [["x;y", "z"]]


def test_parse_csv_invalid_delimiter():
    with pytest.raises(ValueError):
        parse_csv("a", delimiter=";;")
    with pytest.raises(ValueError):
        parse_csv("a", delimiter='"')


def test_parse_csv_empty_text():
    assert parse_csv("") == []


def test_convert_value_numbers():
    assert convert_value("42") == 42
    assert convert_value(" -1.5 ") == -1.5
    assert convert_value("1e3") == 1000.0


def test_convert_value_missing_markers():
    assert convert_value("") is None
    assert convert_value("N/A") is None
    assert convert_value(" null ") is None


def test_convert_value_text_is_unchanged():
    assert convert_value(" hello ") == " hello "


def test_convert_value_custom_missing():
    assert convert_value("?", missing=("?",)) is None
    assert convert_value("", missing=("?",)) == ""


def test_detect_delimiter_common_cases():
    assert detect_delimiter("a,b\nc,d") == ","
    assert detect_delimiter("a\tb\nc\td") == "\t"
    assert detect_delimiter("a;b;c\nd;e;f") == ";"


def test_detect_delimiter_prefers_consistent_candidate():
    assert detect_delimiter("a;b,c,d\ne;f,g") == ";"


def test_detect_delimiter_highest_consistent_count_wins():
    assert detect_delimiter("a|b|c;d\ne|f|g;h") == "|"


def test_detect_delimiter_tie_goes_to_earlier_candidate():
    assert detect_delimiter("a,b;c\nd,e;f") == ","


def test_detect_delimiter_falls_back_to_total_count():
    assert detect_delimiter("a,b,c\nd,e\nf;g") == ","


def test_detect_delimiter_ignores_blank_lines():
    assert detect_delimiter("\na;b\n\nc;d\n") == ";"


def test_detect_delimiter_only_reads_five_lines():
    assert detect_delimiter("a,b;c;d\n" * 5 + "x,y\n") == ";"
    assert detect_delimiter("a,b;c;d\n" * 4 + "x,y\n") == ","


def test_detect_delimiter_errors():
    with pytest.raises(ValueError):
        detect_delimiter("abc\ndef")
    with pytest.raises(ValueError):
        detect_delimiter(" \n ")


def test_table_from_text():
    headers, rows = table_from_text("name,qty\nbolt,3\nnut,\n")
    assert headers == ["name", "qty"]
    assert rows == [["bolt", 3], ["nut", None]]


def test_table_from_text_without_header():
    headers, rows = table_from_text("1;2\n3;4", header=False)
    assert headers is None
    assert rows == [[1, 2], [3, 4]]


def test_table_from_text_without_conversion():
    assert table_from_text("a|b\n1|2", convert=False) == (["a", "b"], [["1", "2"]])


def test_table_from_text_empty_with_delimiter():
    assert table_from_text("", delimiter=",") == ([], [])


def test_render_text():
    expected = "| name  | age |\n|:------|----:|\n| bob   |   3 |\n| alice |  41 |"
    assert render_text("name;age\nbob;3\nalice;41\n", style="pipe") == expected


def test_render_text_passes_options():
    text = render_text("x,y\n1.5,a\n2,b", floatfmt=".1f", style="plain")
    assert text == "  x  y\n1.5  a\n2.0  b"
