"""Display-width helpers: East-Asian wide characters, padding, truncation and wrapping."""

import unicodedata

ELLIPSIS = "…"
ALIGNMENTS = ("left", "right", "center")


def char_width(ch):
    """Return the number of terminal columns used by the single character ``ch``.

    Combining marks and format characters (categories Mn, Me, Cf) use 0 columns,
    East-Asian wide or fullwidth characters (``east_asian_width`` "W" or "F") use 2,
    every other character uses 1.
    """
    if unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


def text_width(text):
    """Return the display width of one line: the sum of ``char_width`` over its characters."""
    return sum(char_width(ch) for ch in text)


def block_width(text):
    """Return the display width of the widest line of ``text`` split on "\\n" (0 for "")."""
    return max(text_width(line) for line in text.split("\n"))


def pad(text, width, align="left", fill=" "):
    """Return ``text`` padded with ``fill`` characters to the display width ``width``.

    ``align`` is "left" (fill on the right), "right" (fill on the left) or "center"
    (the odd extra column goes to the right). Text that is already ``width`` columns
    or wider is returned unchanged. Raises ValueError for any other ``align``.
    """
    if align not in ALIGNMENTS:
        raise ValueError(f"unknown alignment {align!r}")
    gap = width - text_width(text)
    if gap <= 0:
        return text
    if align == "left":
        return text + fill * gap
    if align == "right":
        return fill * gap + text
    left = gap // 2
    return fill * left + text + fill * (gap - left)


def take_columns(text, width):
    """Return the longest prefix of ``text`` whose display width is at most ``width``."""
    used = 0
    for index, ch in enumerate(text):
        used += char_width(ch)
        if used > width:
            return text[:index]
    return text


def truncate(text, width, ellipsis=ELLIPSIS):
    """Shorten the single line ``text`` to at most ``width`` display columns.

    Text that fits is returned unchanged. Otherwise the longest prefix that leaves
    room for ``ellipsis`` is kept and the ellipsis appended; when not even the
    ellipsis fits, the text is cut to ``width`` columns without one. Wide characters
    are never split, so the result can be one column narrower than ``width``.
    Raises ValueError if ``width`` is negative.
    """
    if width < 0:
        raise ValueError("width must not be negative")
    if text_width(text) <= width:
        return text
    room = width - text_width(ellipsis)
    if room < 0:
        return take_columns(text, width)
    return take_columns(text, room) + ellipsis


def split_word(word, width):
    """Split ``word`` into consecutive pieces of at most ``width`` columns.

    Every piece holds at least one character, so a character wider than ``width``
    becomes a piece of its own. Returns the list of pieces ("" gives []).
    """
    pieces = []
    while word:
        piece = take_columns(word, width) or word[0]
        pieces.append(piece)
        word = word[len(piece):]
    return pieces


def wrap(text, width):
    """Word-wrap ``text`` into lines of at most ``width`` display columns.

    Existing "\\n" breaks are kept. Each line is split into words on whitespace and
    the words are placed greedily, separated by single spaces; words wider than
    ``width`` are cut with ``split_word``. A line without words gives "".
    Returns the list of lines. Raises ValueError if ``width`` is smaller than 1.
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split():
            for piece in split_word(word, width):
                if not current:
                    current = piece
                elif text_width(current) + 1 + text_width(piece) < width:
                    current += " " + piece
                else:
                    lines.append(current)
                    current = piece
        lines.append(current)
    return lines
