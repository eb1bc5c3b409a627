"""Conversion between units, the Quantity type and human friendly formatting."""

import math
from decimal import Decimal
from fractions import Fraction

from .errors import DimensionMismatch, UnitError
from .registry import DEFAULT_REGISTRY


def _registry(registry):
    return DEFAULT_REGISTRY if registry is None else registry


def coerce_value(value):
    """Return ``value`` as an exact Fraction, or unchanged if it is a float.

    ints, Fractions, Decimals and numeric strings ("2.5", "1/3", "1e3") become
    Fractions. Raises TypeError for bools and non-numeric types and ValueError
    for strings that are not numbers.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not numeric values")
    if isinstance(value, float):
        return value
    if isinstance(value, (int, Fraction, Decimal)):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except ValueError:
            raise ValueError(f"not a number: {value!r}") from None
    raise TypeError(f"cannot use {type(value).__name__} as a numeric value")


def _compatible(from_unit, to_unit, registry):
    """Resolve both unit expressions; raise DimensionMismatch if their signatures differ."""
    src = registry.resolve(from_unit)
    dst = registry.resolve(to_unit)
    if src.signature != dst.signature:
        raise DimensionMismatch(src.dimension, dst.dimension)
    return src, dst


def convert(value, from_unit, to_unit, registry=None):
    """Convert ``value`` from ``from_unit`` to ``to_unit`` (symbols, names or compounds).

    Offsets are honoured (``convert(0, "degC", "K") == Fraction(5463, 20)``).
    Returns a Fraction, or a float when ``value`` is a float. Raises UnknownUnit,
    DimensionMismatch, UnitError, and the errors of ``coerce_value``.
    """
    src, dst = _compatible(from_unit, to_unit, _registry(registry))
    number = coerce_value(value)
    base = number * src.factor + src.offset
    return (base - dst.offset) / dst.factor


def convert_delta(value, from_unit, to_unit, registry=None):
    """Convert a difference (interval) between units, ignoring offsets.

    ``convert_delta(10, "degC", "degF") == 18``. Returns a Fraction, or a float for
    float input. Raises the same errors as ``convert``.
    """
    src, dst = _compatible(from_unit, to_unit, _registry(registry))
    return coerce_value(value) * src.factor / dst.factor


def conversion_factor(from_unit, to_unit, registry=None):
    """Return the Fraction ``f`` such that ``x from_unit == x * f to_unit``.

    Raises UnitError if either unit has an offset, plus the errors of ``convert``.
    """
    src, dst = _compatible(from_unit, to_unit, _registry(registry))
    if src.offset or dst.offset:
        raise UnitError("offset units have no single conversion factor")
    return src.factor / dst.factor


def round_sig(x, sig=3):
    """Return float ``x`` rounded to ``sig`` significant figures (``round_sig(1234, 2) == 1200.0``).

    Zero, infinities and NaN are returned unchanged as floats. Raises ValueError if
    ``sig`` is smaller than 1.
    """
    if sig < 1:
        raise ValueError("sig must be at least 1")
    value = float(x)
    if value == 0 or not math.isfinite(value):
        return value
    magnitude = math.floor(math.log10(abs(value)))
    return round(value, sig - 1 - magnitude)


def format_number(x, sig=3):
    """Return ``x`` rounded to ``sig`` significant figures as a string without trailing zeros.

    Examples: 1.5 -> "1.5", 2.0 -> "2", 1536 (sig=3) -> "1540", 0.000123456 -> "0.000123",
    0 -> "0". Raises ValueError if ``sig`` is smaller than 1.
    """
    value = round_sig(x, sig)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    decimals = sig - 1 - math.floor(math.log10(abs(value)))
    if decimals <= 0:
        return str(int(value))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".")


def best_unit(value, unit, family=None, registry=None):
    """Pick the display unit that best fits ``value`` given in ``unit``.

    Candidates are the units of the same dimension belonging to ``family`` (default:
    the first family of ``unit``); the largest candidate whose factor does not exceed
    ``abs(value)`` expressed in the base unit wins, or the smallest candidate if none
    does. Returns ``(converted_value, symbol)``. A zero value, an offset unit or a unit
    without families is returned unchanged as ``(value, unit)``.
    Raises UnknownUnit for an unknown unit and UnitError if the family has no units.
    """
    reg = _registry(registry)
    source = reg.get(unit)
    if source.is_affine or not source.families:
        return value, unit
    family = family or source.families[0]
    candidates = [u for u in reg.units_of(source.dimension) if family in u.families]
    if not candidates:
        raise UnitError(f"no {family!r} units for dimension {source.dimension!r}")
    if value == 0:
        return value, unit
    magnitude = abs(value) * source.factor
    chosen = candidates[0]
    for candidate in candidates[1:]:
        if magnitude >= candidate.factor:
            chosen = candidate
    return value * source.factor / chosen.factor, chosen.symbol


def format_quantity(value, unit, sig=3, best_fit=True, family=None, registry=None):
    """Return "<number> <unit>" with the number formatted by ``format_number(_, sig)``.

    When ``best_fit`` is true the value is first moved to ``best_unit(value, unit,
    family)``, e.g. ``format_quantity(1536, "B") == "1.5 KiB"``.
    Raises the errors of ``best_unit`` and ``format_number``.
    """
    if best_fit:
        value, unit = best_unit(value, unit, family, registry)
    return f"{format_number(value, sig)} {unit}"


def humanize_bytes(count, binary=True, sig=3):
    """Return a byte count as text with IEC (``binary=True``) or SI prefixes.

    ``humanize_bytes(1536) == "1.5 KiB"``, ``humanize_bytes(1500, binary=False) == "1.5 kB"``.
    Raises ValueError if ``count`` is negative.
    """
    if count < 0:
        raise ValueError("byte count must not be negative")
    return format_quantity(count, "B", sig, True, "iec" if binary else "si")


class Quantity:
    """A numeric value together with a unit expression (``Quantity("2.5", "km")``)."""

    __slots__ = ("value", "unit")

    def __init__(self, value, unit):
        """Store ``coerce_value(value)`` and the stripped unit text.

        Raises UnitError if ``unit`` is not a non-empty string, and the errors of
        ``coerce_value``. The unit itself is only resolved when converting.
        """
        if not isinstance(unit, str) or not unit.strip():
            raise UnitError("a quantity needs a non-empty unit")
        self.value = coerce_value(value)
        self.unit = unit.strip()

    def to(self, unit, registry=None):
        """Return a new Quantity converted to ``unit``; raises the errors of ``convert``."""
        return Quantity(convert(self.value, self.unit, unit, registry), unit)

    def __add__(self, other):
        """Return a Quantity in this unit: the other operand is converted as a difference.

        Returns NotImplemented for non-Quantity operands; raises DimensionMismatch.
        """
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(self.value + convert_delta(other.value, other.unit, self.unit), self.unit)

    def __mul__(self, scalar):
        """Return the quantity scaled by an int, float or Fraction (not bool)."""
        if isinstance(scalar, bool) or not isinstance(scalar, (int, float, Fraction)):
            return NotImplemented
        return Quantity(self.value * scalar, self.unit)

    __rmul__ = __mul__

    def __eq__(self, other):
        """Return True if ``other`` converts to exactly this value; False if incompatible."""
        if not isinstance(other, Quantity):
            return NotImplemented
        try:
            return self.value == convert(other.value, other.unit, self.unit)
        except UnitError:
            return False

    __hash__ = None

    def __repr__(self):
        """Return "Quantity(<value repr>, <unit repr>)"."""
        return f"Quantity({self.value!r}, {self.unit!r})"

    def __str__(self):
        """Return "<value> <unit>": integral Fractions as integers, other values via float repr."""
        value = self.value
        if isinstance(value, Fraction) and value.denominator == 1:
            return f"{value.numerator} {self.unit}"
        return f"{float(value)!r} {self.unit}"
