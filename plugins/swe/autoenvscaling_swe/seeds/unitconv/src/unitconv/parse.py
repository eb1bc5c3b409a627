"""Parsing of numbers and quantities such as "3.5 km", "12ft 3in" or "1.5GiB"."""

from fractions import Fraction

from .convert import Quantity, convert
from .errors import DimensionMismatch, ParseError
from .registry import DEFAULT_REGISTRY


def _digits(text, pos):
    """Return the index just past the run of ASCII digits starting at ``pos``."""
    while pos < len(text) and text[pos] in "0123456789":
        pos += 1
    return pos


def scan_number(text, pos=0):
    """Read a number starting at ``text[pos]`` and return ``(Fraction, end_position)``.

    Accepted: optional sign, digits with an optional decimal part ("3", "3.5", ".5",
    "2."), then optionally an exponent ("1e3", "2.5E-2") or, for integers only, a
    rational denominator ("3/4"). An "e" not followed by digits is not consumed.
    Raises ParseError if no digits are found or the denominator is zero.
    """
    start = pos
    sign = 1
    if pos < len(text) and text[pos] in "+-":
        sign = -1 if text[pos] == "-" else 1
        pos += 1
    int_end = _digits(text, pos)
    whole = text[pos:int_end]
    fraction = ""
    pos = int_end
    if pos < len(text) and text[pos] == ".":
        frac_end = _digits(text, pos + 1)
        fraction = text[pos + 1:frac_end]
        pos = frac_end
    if not whole and not fraction:
        raise ParseError(f"expected a number at position {start} of {text!r}")
    value = Fraction(int(whole or "0"))
    if fraction:
        value += Fraction(int(fraction), 10 ** len(fraction))
    if pos < len(text) and text[pos] in "eE":
        exp_start = pos + 1
        if exp_start < len(text) and text[exp_start] in "+-":
            exp_start += 1
        exp_end = _digits(text, exp_start)
        if exp_end > exp_start:
            value *= Fraction(10) ** int(text[pos + 1:exp_end])
            pos = exp_end
    elif pos < len(text) and text[pos] == "/" and not fraction and pos == int_end:
        den_end = _digits(text, pos + 1)
        if den_end > pos + 1:
            denominator = int(text[pos + 1:den_end])
            if denominator == 0:
                raise ParseError(f"zero denominator in {text!r}")
            value /= denominator
            pos = den_end
    return sign * value, pos


def parse_number(text):
    """Return the whole of ``text`` (surrounding whitespace ignored) parsed as a Fraction.

    Raises ParseError if ``text`` is not exactly one number as read by ``scan_number``.
    """
    stripped = text.strip()
    value, end = scan_number(stripped)
    if end != len(stripped):
        raise ParseError(f"unexpected {stripped[end:]!r} after number in {text!r}")
    return value


def scan_unit(text, pos):
    """Read a unit token starting at ``pos``; return ``(token, end_position)``.

    The token stops at whitespace, or at a digit or sign unless it belongs to an
    exponent written after "^" (as in "m/s^2" or "s^-1"). The token may be empty.
    """
    end = pos
    while end < len(text) and not text[end].isspace():
        if text[end] == "^":
            end += 1
            if end < len(text) and text[end] == "-":
                end += 1
            end = _digits(text, end)
            continue
        if text[end] in "0123456789+-":
            break
        end += 1
    return text[pos:end], end


def _skip_spaces(text, pos):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def parse_quantity(text, default_unit=None, registry=None):
    """Parse text such as "3.5 km", "1.5GiB", "-40 degF" or "12ft 3in" into a Quantity.

    Several number/unit parts are summed and expressed in the unit of the first part;
    a leading minus sign negates the whole sum ("-5 ft 3 in" is -5.25 ft). A number
    without a unit uses ``default_unit``. Raises ParseError for empty text, a missing
    unit without default, a sign on a later part, or several parts with offset units;
    UnknownUnit for unknown units and DimensionMismatch for parts of different dimensions.
    """
    reg = DEFAULT_REGISTRY if registry is None else registry
    source = text.strip()
    if not source:
        raise ParseError("empty quantity")
    parts = []
    pos = 0
    while pos < len(source):
        if parts and source[pos] in "+-":
            raise ParseError(f"only the first part of {text!r} may carry a sign")
        value, pos = scan_number(source, pos)
        unit, pos = scan_unit(source, _skip_spaces(source, pos))
        if not unit:
            if default_unit is None:
                raise ParseError(f"missing unit in {text!r}")
            unit = default_unit
        parts.append((value, unit))
        pos = _skip_spaces(source, pos)
    first_value, first_unit = parts[0]
    if len(parts) == 1:
        reg.resolve(first_unit)
        return Quantity(first_value, first_unit)
    first = reg.resolve(first_unit)
    total = abs(first_value) * first.factor
    for value, unit in parts[1:]:
        spec = reg.resolve(unit)
        if spec.offset or first.offset:
            raise ParseError(f"offset units cannot be combined in {text!r}")
        if spec.signature != first.signature:
            raise DimensionMismatch(first.dimension, spec.dimension)
        total += value * spec.factor
    result = total / first.factor
    return Quantity(-result if first_value < 0 else result, first_unit)


def parse_and_convert(text, to_unit, registry=None):
    """Parse ``text`` with ``parse_quantity`` and return its value in ``to_unit`` as a Fraction.

    Raises the errors of ``parse_quantity`` and ``convert``.
    """
    quantity = parse_quantity(text, registry=registry)
    return convert(quantity.value, quantity.unit, to_unit, registry)

