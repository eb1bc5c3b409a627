"""Cell classification and formatting: numbers, missing values and decimal alignment."""

import re
from decimal import Decimal
from fractions import Fraction

from .width import pad, text_width

_INT_RE = re.compile(r"[+-]?\d+")
_FLOAT_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_SPECIAL_FLOATS = ("nan", "inf", "+inf", "-inf")


def number_kind(value):
    """Return "int", "float" or None depending on whether ``value`` is numeric.

    bools are not numbers (None). ints give "int"; floats, Decimals and Fractions give
    "float". A string (surrounding whitespace ignored) that is an integer literal with
    optional sign gives "int"; a decimal or exponent literal, or "nan"/"inf"/"+inf"/
    "-inf" in any case, gives "float". Anything else gives None.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int"
    if isinstance(value, (float, Decimal, Fraction)):
        return "float"
    if isinstance(value, str):
        text = value.strip()
        if _INT_RE.fullmatch(text):
            return "int"
        if _FLOAT_RE.fullmatch(text) or text.lower() in _SPECIAL_FLOATS:
            return "float"
    return None


def column_type(values):
    """Return the type of a column of raw values: "int", "float" or "text".

    None values are ignored. The result is "int" if every other value is int-like,
    "float" if every other value is numeric and at least one is float-like, and
    "text" if any value is not numeric or if there are no non-None values at all.
    """
    seen_number = False
    seen_float = False
    for value in values:
        if value is None:
            continue
        kind = number_kind(value)
        if kind is None:
            return "text"
        seen_number = True
        if kind == "float":
            seen_float = True
    if not seen_number:
        return "text"
    return "float" if seen_float else "int"


def format_cell(value, coltype, floatfmt="g", missing=""):
    """Return the text of one cell.

    None gives ``missing``. In a "float" column a numeric value (see ``number_kind``)
    is rendered with ``format(float(value), floatfmt)``. Every other value gives
    ``str(value)``. Raises ValueError if ``floatfmt`` is not a valid float format spec.
    """
    if value is None:
        return missing
    if coltype == "float" and number_kind(value) is not None:
        return format(float(value), floatfmt)
    return str(value)


def split_decimal(text, point="."):
    """Split a number text into (integer part, rest) at the first ``point``.

    The rest starts with the point; without a point the rest is "". Surrounding
    whitespace is removed first.
    """
    text = text.strip()
    index = text.find(point)
    if index < 0:
        return text, ""
    return text[:index], text[index:]


def decimal_align(texts, point="."):
    """Return ``texts`` padded so that their decimal points line up.

    Each text is split with ``split_decimal``; integer parts are right-aligned to the
    widest integer part and the rests left-aligned to the widest rest, so every
    result has the same display width. Returns a new list; [] for [].
    """
    parts = [split_decimal(text, point) for text in texts]
    left = max((text_width(whole) for whole, _ in parts), default=0)
    right = max((text_width(rest) for _, rest in parts), default=0)
    return [pad(whole, left, "right") + pad(rest, right, "left") for whole, rest in parts]
