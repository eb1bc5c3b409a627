import pytest

from tablefmt import (STYLES, fit_cell, normalize_rows, render_row, render_rule,
                      resolve_alignments, tabulate)

ROWS = [["apple", 3, 1.5], ["banana", 12, None], ["cherry", 7, 10.25]]
HEADERS = ["fruit", "qty", "price"]


def test_normalize_pads_short_rows():
    assert normalize_rows([[1, 2, 3], [4]]) == (None, [[1, 2, 3], [4, None, None]])


def test_normalize_firstrow():
    header, data = normalize_rows([["a", "b"], [1, 2]], "firstrow")
    assert header == ["a", "b"]
    assert data == [[1, 2]]


def test_normalize_firstrow_without_rows():
    assert normalize_rows([], "firstrow") == (None, [])


def test_normalize_firstrow_converts_header_to_text():
    header, _ = normalize_rows([[1, None], [2, 3]], "firstrow")
    assert header == ["1", ""]


def test_normalize_dict_keys_in_order_of_appearance():
    header, data = normalize_rows([{"b": 1, "a": 2}, {"c": 3, "a": 4}], "keys")
    assert header == ["b", "a", "c"]
    assert data == [[1, 2, None], [None, 4, 3]]


def test_normalize_dict_explicit_headers_select_keys():
    header, data = normalize_rows([{"a": 1, "b": 2, "c": 3}], ["c", "a"])
    assert header == ["c", "a"]
    assert data == [[3, 1]]


def test_normalize_dict_without_headers():
    assert normalize_rows([{"x": 1}, {"y": 2}]) == (None, [[1, None], [None, 2]])


def test_normalize_keys_for_sequence_rows():
    header, _ = normalize_rows([[1, 2], [3, 4, 5]], "keys")
    assert header == ["0", "1", "2"]


def test_normalize_keys_without_rows():
    assert normalize_rows([], "keys") == ([], [])


def test_normalize_long_header_pads_rows():
    header, data = normalize_rows([[1]], ["a", "b"])
    assert header == ["a", "b"]
    assert data == [[1, None]]


def test_normalize_short_header_is_padded():
    header, _ = normalize_rows([[1, 2, 3]], ["a"])
    assert header == ["a", "", ""]


def test_normalize_mixed_rows_raise():
    with pytest.raises(TypeError):
        normalize_rows([{"a": 1}, [2]])


def test_normalize_unknown_header_mode():
    with pytest.raises(ValueError):
        normalize_rows([[1]], "first")


def test_resolve_alignments_automatic():
    assert resolve_alignments(None, ["text", "int", "float"]) == ["left", "right", "right"]


def test_resolve_alignments_single_name():
    assert resolve_alignments("center", ["text", "int"]) == ["center", "center"]


def test_resolve_alignments_partial_list():
    assert resolve_alignments([None, "left"], ["int", "int", "text"]) == ["right", "left", "left"]


def test_resolve_alignments_full_list():
    assert resolve_alignments(["center", "left"], ["int", "text"]) == ["center", "left"]


def test_resolve_alignments_custom_defaults():
    result = resolve_alignments(None, ["text", "float"], numalign="decimal", stralign="center")
    assert result == ["center", "decimal"]


def test_resolve_alignments_too_many():
    with pytest.raises(ValueError):
        resolve_alignments(["left", "left"], ["text"])


def test_resolve_alignments_unknown_name():
    with pytest.raises(ValueError):
        resolve_alignments(["middle"], ["text"])


def test_fit_cell_without_limit():
    assert fit_cell("a long text", None) == "a long text"




def test_fit_cell_truncate_each_line():
    assert fit_cell("abcdef\nxy", 4, "truncate") == "abc…\nxy"


def test_fit_cell_unknown_overflow():
    with pytest.raises(ValueError):
        fit_cell("abc", 2, "clip")


def test_render_rule_grid():
    line = STYLES["grid"].top
    assert render_rule(line, [3, 1], ["left", "right"], 1, False) == "+-----+---+"


def test_render_rule_without_padding():
    line = STYLES["simple"].header_sep
    assert render_rule(line, [3, 2], ["left", "left"], 0, False) == "---  --"


def test_render_rule_colons():
    line = STYLES["pipe"].header_sep
    result = render_rule(line, [3, 3, 3, 3], ["left", "right", "center", "decimal"], 1, True)
    assert result == "|:----|----:|:---:|----:|"


def test_render_row_multiline_cell():
    lines = render_row(["a\nbb", "x"], [2, 1], ["left", "left"], STYLES["grid"])
    assert lines == ["| a  | x |", "| bb |   |"]


def test_render_row_decimal_pads_like_right():
    lines = render_row(["1.5"], [5], ["decimal"], STYLES["plain"])
    assert lines == ["  1.5"]


def test_render_row_empty_cell_list():
    assert render_row([], [], [], STYLES["grid"]) == ["||"]


def test_tabulate_simple():
    expected = "\n".join([
        "fruit   qty  price",
        "------  ---  -----",
        "apple     3    1.5",
        "banana   12",
        "cherry    7  10.25",
    ])
    assert tabulate(ROWS, HEADERS) == expected


def test_tabulate_plain():
    expected = "\n".join([
        "fruit   qty  price",
        "apple     3    1.5",
        "banana   12",
        "cherry    7  10.25",
    ])
    assert tabulate(ROWS, HEADERS, style="plain") == expected


def test_tabulate_grid():
    expected = "\n".join([
        "+--------+-----+-------+",
        "| fruit  | qty | price |",
        "+========+=====+=======+",
        "| apple  |   3 |   1.5 |",
        "+--------+-----+-------+",
        "| banana |  12 |       |",
        "+--------+-----+-------+",
        "| cherry |   7 | 10.25 |",
        "+--------+-----+-------+",
    ])
    assert tabulate(ROWS, HEADERS, style="grid") == expected


def test_tabulate_grid_without_header():
    expected = "\n".join(["+---+", "| 1 |", "+---+", "| 2 |", "+---+"])
    assert tabulate([[1], [2]], style="grid") == expected


def test_tabulate_pipe():
    expected = "\n".join([
        "| fruit  | qty | price |",
        "|:-------|----:|------:|",
        "| apple  |   3 |   1.5 |",
        "| banana |  12 |       |",
        "| cherry |   7 | 10.25 |",
    ])
    assert tabulate(ROWS, HEADERS, style="pipe") == expected


def test_tabulate_pipe_without_header_has_no_separator():
    assert tabulate([["a", 1]], style="pipe") == "| a | 1 |"


def test_tabulate_numeric_strings_are_right_aligned():
    assert tabulate([["x", "5"], ["yy", "10"]], style="plain") == "x    5\nyy  10"


def test_tabulate_floatfmt():
    text = tabulate([[1.0], [2.345]], style="plain", floatfmt=".2f")
    assert text == "1.00\n2.35"


def test_tabulate_floatfmt_per_column():
    text = tabulate([[1.5, 2.5]], style="plain", floatfmt=[".3f", None])
    assert text == "1.500  2.5"


def test_tabulate_missing_placeholder():
    text = tabulate([[1, None], [None, "b"]], style="plain", missing="-")
    assert text == "1  -\n-  b"


def test_tabulate_decimal_alignment():
    text = tabulate([[1.5], [10.25], [3]], style="plain", align="decimal")
    assert text == " 1.5\n10.25\n 3"


def test_tabulate_decimal_alignment_with_header():
    text = tabulate([[1.5], [10.25]], ["value"], align="decimal")
    assert text == "value\n-----\n 1.5\n10.25"


def test_tabulate_center_alignment():
    text = tabulate([["a"], ["abcd"]], ["h"], style="grid", align="center")
    assert text.splitlines()[1] == "|  h   |"
    assert text.splitlines()[3] == "|  a   |"


def test_tabulate_stralign_and_numalign():
    text = tabulate([["a", 1], ["bbb", 22]], style="plain", stralign="right", numalign="left")
    assert text == "  a  1\nbbb  22"


def test_tabulate_wide_characters():
    text = tabulate([["日本", 1], ["abc", 2]], ["name", "n"], style="grid")
    assert text.splitlines()[3] == "| 日本 | 1 |"
    assert text.splitlines()[5] == "| abc  | 2 |"


def test_tabulate_multiline_cell():
    text = tabulate([["a\nb", 1]], style="grid")
    assert text == "+---+---+\n| a | 1 |\n| b |   |\n+---+---+"




def test_tabulate_maxwidth_truncate():
    text = tabulate([["abcdefgh", "xy"]], style="plain", maxwidth=4, overflow="truncate")
    assert text == "abc…  xy"


def test_tabulate_maxwidth_applies_to_header():
    text = tabulate([[1]], ["quantity"], maxwidth=4, overflow="truncate")
    assert text.splitlines()[0] == "qua…"


def test_tabulate_empty_without_header():
    assert tabulate([]) == ""


def test_tabulate_header_without_rows():
    assert tabulate([], ["a", "bb"]) == "a  bb\n-  --"


def test_tabulate_unknown_style():
    with pytest.raises(ValueError):
        tabulate([[1]], style="fancy")


def test_tabulate_dict_rows():
    text = tabulate([{"name": "x", "n": 1}, {"name": "yy"}], "keys", style="plain")
    assert text == "name  n\nx     1\nyy"


def test_tabulate_minimum_column_width():
    text = tabulate([[None, "a"]], ["", "h"], style="pipe")
    assert text.splitlines()[1] == "|:--|:--|"


def test_tabulate_firstrow():
    assert tabulate([["h1", "h2"], [1, 2]], "firstrow", style="plain") == "h1  h2\n 1   2"
