import pytest

from tablefmt import (block_width, char_width, pad, split_word, take_columns, text_width,
                      truncate, wrap)


def test_char_width_ascii():
    assert char_width("a") == 1
    assert char_width(" ") == 1


def test_char_width_wide_and_fullwidth():
    assert char_width("日") == 2
    assert char_width("Ａ") == 2


def test_char_width_zero_width():
    assert char_width("\u0301") == 0
    assert char_width("\u200d") == 0


def test_char_width_narrow_non_ascii():
    assert char_width("é") == 1
    assert char_width("…") == 1


def test_text_width_mixed():
    assert text_width("ab日本") == 6


def test_text_width_with_combining_mark():
    assert text_width("e\u0301") == 1


def test_text_width_empty():
    assert text_width("") == 0


def test_block_width_uses_widest_line():
    assert block_width("ab\n日本x\nc") == 5


def test_block_width_empty():
    assert block_width("") == 0


def test_pad_left():
    assert pad("ab", 5) == "ab   "


def test_pad_right():
    assert pad("ab", 5, "right") == "   ab"


def test_pad_center_extra_space_on_right():
    assert pad("ab", 5, "center") == " ab  "
    assert pad("ab", 6, "center") == "  ab  "


def test_pad_counts_wide_characters():
    assert pad("日", 4) == "日  "
    assert pad("日本", 5, "right") == " 日本"


def test_pad_does_not_shorten():
    assert pad("abcdef", 3) == "abcdef"
    assert pad("abc", 3, "center") == "abc"


def test_pad_custom_fill():
    assert pad("7", 3, "right", "0") == "007"


def test_pad_unknown_alignment():
    with pytest.raises(ValueError):
        pad("a", 3, "middle")


def test_take_columns():
    assert take_columns("abcdef", 3) == "abc"
    assert take_columns("abc", 10) == "abc"
    assert take_columns("abc", 0) == ""


def test_take_columns_never_splits_wide_char():
    assert take_columns("日本語", 3) == "日"
    assert take_columns("日本語", 4) == "日本"


def test_truncate_fitting_text_unchanged():
    assert truncate("hello", 5) == "hello"
    assert truncate("hello", 9) == "hello"


def test_truncate_adds_ellipsis():
    assert truncate("hello world", 8) == "hello w…"


def test_truncate_wide_characters():
    assert truncate("日本語テキスト", 6) == "日本…"


def test_truncate_custom_ellipsis():
    assert truncate("abcdefgh", 6, "...") == "abc..."


def test_truncate_without_room_for_ellipsis():
    assert truncate("hello", 2, "...") == "he"
    assert truncate("hello", 0) == ""


def test_truncate_exactly_room_for_ellipsis():
    assert truncate("hello", 3, "...") == "..."
    assert truncate("hello", 1) == "…"


def test_truncate_negative_width():
    with pytest.raises(ValueError):
        truncate("abc", -1)


def test_split_word():
    assert split_word("abcdefg", 3) == ["abc", "def", "g"]
    assert split_word("", 3) == []


def test_split_word_wide_char_wider_than_width():
    assert split_word("日本", 1) == ["日", "本"]


def test_wrap_greedy():
    assert wrap("the quick brown fox", 10) == ["the quick", "brown fox"]


def test_wrap_exact_fit():
    assert wrap("ab cd", 5) == ["ab cd"]
    assert wrap("ab cd", 4) == ["ab", "cd"]


def test_wrap_long_word_is_split():
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]


def test_wrap_long_word_after_short_word():
    assert wrap("a bcdefg", 3) == ["a", "bcd", "efg"]


def test_wrap_keeps_line_breaks():
    assert wrap("one\ntwo three", 20) == ["one", "two three"]


def test_wrap_empty_lines():
    assert wrap("", 5) == [""]
    assert wrap("a\n\nb", 5) == ["a", "", "b"]


def test_wrap_collapses_whitespace():
    assert wrap("  a   b  ", 10) == ["a b"]


def test_wrap_wide_characters():
    assert wrap("日本 語", 4) == ["日本", "語"]
    assert wrap("日本 語", 7) == ["日本 語"]


def test_wrap_width_one():
    assert wrap("ab c", 1) == ["a", "b", "c"]


def test_wrap_rejects_zero_width():
    with pytest.raises(ValueError):
        wrap("abc", 0)
