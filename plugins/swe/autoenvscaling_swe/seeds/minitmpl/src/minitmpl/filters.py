"""Value conversion, HTML escaping and the built-in filters."""

import math


class Undefined:
    """Placeholder for a missing variable: falsy, empty, and rendered as ``""``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class Markup(str):
    """A string that is already safe HTML and is never escaped again."""

    __slots__ = ()


_HTML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"), ("'", "&#39;"))


def to_text(value):
    """Return the text a value renders as.

    Undefined and None render as ``""``, True and False as ``"true"`` and
    ``"false"``, and everything else as ``str(value)``.
    """
    if value is None or isinstance(value, Undefined):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def escape(value):
    """Return ``to_text(value)`` with ``& < > " '`` replaced by HTML entities, as Markup.

    A value that is already Markup is returned unchanged.
    """
    if isinstance(value, Markup):
        return value
    text = to_text(value)
    for char, entity in _HTML_ESCAPES:
        text = text.replace(char, entity)
    return Markup(text)


def upper(value):
    """Return the text of ``value`` in upper case."""
    return to_text(value).upper()


def lower(value):
    """Return the text of ``value`` in lower case."""
    return to_text(value).lower()


def length(value):
    """Return ``len(value)``; Undefined and None have length 0."""
    if value is None or isinstance(value, Undefined):
        return 0
    return len(value)


def default(value, fallback="", boolean=False):
    """Return ``fallback`` if ``value`` is Undefined or None, otherwise ``value``.

    With ``boolean`` true, any falsy value (``""``, ``0``, ``[]`` ...) is
    replaced as well.
    """
    if value is None or isinstance(value, Undefined):
        return fallback
    if boolean and not value:
        return fallback
    return value


def join(value, separator=""):
    """Return the texts of the items of ``value`` joined with ``separator``."""
    return separator.join(to_text(item) for item in value)


def truncate(value, limit=80, end="..."):
    """Shorten the text of ``value`` to at most ``limit`` characters plus ``end``.

    Text of ``limit`` characters or fewer is returned unchanged.  Longer text
    is cut to its first ``limit`` characters, trailing whitespace of the cut
    is removed and ``end`` is appended.  Raises ValueError if ``limit`` is
    negative.
    """
    if limit < 0:
        raise ValueError("truncate limit must not be negative")
    text = to_text(value)
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + end


def round_half_up(value, digits=0):
    """Round ``value`` to ``digits`` decimals, halves away from zero (2.5 -> 3, -2.5 -> -3).

    Returns an int when ``digits`` is 0 and a float otherwise.  Raises
    ValueError if ``digits`` is negative.
    """
    if digits < 0:
        raise ValueError("digits must not be negative")
    factor = 10 ** digits
    magnitude = math.floor(abs(value) * factor + 0.5) / factor
    result = -magnitude if value < 0 else magnitude
    return int(result) if digits == 0 else result


BUILTIN_FILTERS = {
    "upper": upper,
    "lower": lower,
    "length": length,
    "default": default,
    "join": join,
    "truncate": truncate,
    "round": round_half_up,
    "escape": escape,
}
