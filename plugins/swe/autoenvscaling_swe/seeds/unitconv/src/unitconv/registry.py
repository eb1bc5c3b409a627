"""Unit definitions, the unit registry and resolution of compound unit expressions."""

from collections import namedtuple
from fractions import Fraction

from .errors import UnitError, UnknownUnit

SI_PREFIXES = (("k", "kilo", 10 ** 3), ("M", "mega", 10 ** 6), ("G", "giga", 10 ** 9),
               ("T", "tera", 10 ** 12), ("P", "peta", 10 ** 15))
IEC_PREFIXES = (("Ki", "kibi", 2 ** 10), ("Mi", "mebi", 2 ** 20), ("Gi", "gibi", 2 ** 30),
                ("Ti", "tebi", 2 ** 40), ("Pi", "pebi", 2 ** 50))


class Unit:
    """A named unit of one dimension, related to the base unit by ``base = value * factor + offset``."""

    __slots__ = ("symbol", "dimension", "factor", "offset", "families")

    def __init__(self, symbol, dimension, factor, offset=0, families=()):
        """Create a unit.

        ``factor`` and ``offset`` are converted with ``Fraction`` (so a string such as
        ``"0.3048"`` is exact). ``families`` is a tuple of family names ("metric",
        "iec", ...) used to pick best-fit display units.
        Raises ``UnitError`` if ``symbol`` or ``dimension`` is empty or if ``factor``
        is not strictly positive.
        """
        if not symbol or not dimension:
            raise UnitError("unit symbol and dimension must be non-empty")
        factor = Fraction(factor)
        if factor <= 0:
            raise UnitError(f"factor of {symbol!r} must be positive, got {factor}")
        self.symbol = symbol
        self.dimension = dimension
        self.factor = factor
        self.offset = Fraction(offset)
        self.families = tuple(families)

    @property
    def is_affine(self):
        """Return True when the unit has a non-zero offset (e.g. degrees Celsius), else False."""
        return self.offset != 0


class UnitSpec(namedtuple("UnitSpec", "expr factor offset signature")):
    """A resolved unit expression: overall factor, offset and dimension signature.

    ``signature`` is a sorted tuple of ``(dimension, exponent)`` pairs with no zero
    exponents; ``()`` means dimensionless.
    """

    __slots__ = ()

    @property
    def dimension(self):
        """Return the signature rendered by ``format_dimension`` (e.g. "length/time")."""
        return format_dimension(self.signature)


def format_dimension(signature):
    """Return a readable description of a dimension signature.

    Dimensions with positive exponents are joined by "*" before a "/", negative ones
    after it; an exponent whose absolute value is above 1 is written as "^n".
    Examples: ``(("length", 1), ("time", -2))`` -> "length/time^2",
    ``(("time", -1),)`` -> "1/time", ``()`` -> "dimensionless".
    """
    if not signature:
        return "dimensionless"
    top = []
    bottom = []
    for name, exponent in signature:
        power = abs(exponent)
        text = name if power == 1 else f"{name}^{power}"
        if exponent > 0:
            top.append(text)
        else:
            bottom.append(text)
    result = "*".join(top) if top else "1"
    if bottom:
        result += "/" + "*".join(bottom)
    return result


def _signature(exponents):
    """Return the sorted (dimension, exponent) tuple of a dict, dropping zero exponents."""
    return tuple(sorted((dim, exp) for dim, exp in exponents.items() if exp != 0))


def _split_power(term, expr):
    """Split "name^n" into (name, n) (power 1 without "^"); UnitError for a bad exponent."""
    name, caret, exponent = term.partition("^")
    if not caret:
        return name.strip(), 1
    try:
        power = int(exponent)
    except ValueError:
        raise UnitError(f"bad exponent in unit expression {expr!r}") from None
    if power == 0:
        raise UnitError(f"zero exponent in unit expression {expr!r}")
    return name.strip(), power


def split_terms(expr):
    """Split a compound unit expression into ``(sign, name, power)`` triples.

    Terms are separated by "*" (or "·") and "/"; a "/" applies only to the term that
    directly follows it, so "kg*m/s^2" gives ``[(1, "kg", 1), (1, "m", 1), (-1, "s", 2)]``.
    Raises UnitError for an empty term (e.g. "m//s") or a malformed exponent.
    """
    terms = []
    sign = 1
    current = ""
    for ch in expr.replace("·", "*") + "*":
        if ch in "*/":
            if not current.strip():
                raise UnitError(f"malformed unit expression {expr!r}")
            name, power = _split_power(current, expr)
            terms.append((sign, name, power))
            sign = -1 if ch == "/" else 1
            current = ""
        else:
            current += ch
    return terms


class Registry:
    """A collection of units addressable by symbol or by case-insensitive long name."""

    def __init__(self):
        """Create an empty registry."""
        self._units = {}
        self._aliases = {}

    def __contains__(self, name):
        """Return True if ``get(name)`` would succeed, else False."""
        try:
            self.get(name)
        except (UnknownUnit, TypeError):
            return False
        return True

    def register(self, symbol, dimension, factor, offset=0, families=(), aliases=()):
        """Create a ``Unit`` with the given attributes, add it and return it.

        ``aliases`` are long names matched case-insensitively by ``get``.
        Raises UnitError if the symbol is already registered or an alias is already
        taken, and whatever ``Unit`` raises for invalid attributes.
        """
        if symbol in self._units:
            raise UnitError(f"unit {symbol!r} is already registered")
        keys = [alias.lower() for alias in aliases]
        for key in keys:
            if key in self._aliases:
                raise UnitError(f"alias {key!r} is already registered")
        unit = Unit(symbol, dimension, factor, offset, families)
        self._units[symbol] = unit
        for key in keys:
            self._aliases[key] = symbol
        return unit

    def register_prefixed(self, base_symbol, prefixes, long_name=None, families=()):
        """Register one unit per ``(prefix, long_prefix, multiplier)`` entry of ``prefixes``.

        Each new unit has symbol ``prefix + base_symbol``, the base unit's dimension and
        the factor ``base.factor * multiplier``; if ``long_name`` is given it also gets
        the alias ``long_prefix + long_name``. Returns the list of new units in order.
        Raises UnknownUnit if ``base_symbol`` is not registered.
        """
        base = self.get(base_symbol)
        created = []
        for prefix, long_prefix, multiplier in prefixes:
            aliases = (long_prefix + long_name,) if long_name else ()
            unit = self.register(prefix + base_symbol, base.dimension,
                                 base.factor * multiplier, 0, families, aliases)
            created.append(unit)
        return created

    def get(self, name):
        """Return the ``Unit`` named by ``name``.

        Lookup order: exact (case-sensitive) symbol after stripping whitespace, then a
        case-insensitive alias, then the alias with one trailing "s" removed (plurals
        such as "meters"). Raises TypeError if ``name`` is not a str and UnknownUnit if
        nothing matches.
        """
        if not isinstance(name, str):
            raise TypeError(f"unit name must be a str, not {type(name).__name__}")
        key = name.strip()
        if key in self._units:
            return self._units[key]
        lowered = key.lower()
        if lowered in self._aliases:
            return self._units[self._aliases[lowered]]
        if len(lowered) > 1 and lowered.endswith("s") and lowered[:-1] in self._aliases:
            return self._units[self._aliases[lowered[:-1]]]
        raise UnknownUnit(name)

    def units_of(self, dimension):
        """Return the units of ``dimension`` sorted by ascending factor, then symbol.

        Raises UnitError if no unit has that dimension.
        """
        units = [unit for unit in self._units.values() if unit.dimension == dimension]
        if not units:
            raise UnitError(f"unknown dimension {dimension!r}")
        return sorted(units, key=lambda unit: (unit.factor, unit.symbol))

    def resolve(self, expr):
        """Return a ``UnitSpec`` for a unit symbol/name or a compound expression.

        A registered name resolves to its own factor and offset with signature
        ``((dimension, 1),)``. Otherwise, if ``expr`` contains "*", "/", "^" or "·",
        it is split with ``split_terms``: the factor is the product of
        ``factor ** (sign * power)`` and the exponents are summed per dimension.
        Raises TypeError for non-str input, UnitError for an empty expression or for
        an offset unit used inside a compound, and UnknownUnit for unknown names.
        """
        if not isinstance(expr, str):
            raise TypeError(f"unit expression must be a str, not {type(expr).__name__}")
        text = expr.strip()
        if not text:
            raise UnitError("empty unit expression")
        try:
            unit = self.get(text)
        except UnknownUnit:
            if not any(op in text for op in "*/^·"):
                raise
        else:
            return UnitSpec(unit.symbol, unit.factor, unit.offset, ((unit.dimension, 1),))
        factor = Fraction(1)
        exponents = {}
        for sign, name, power in split_terms(text):
            unit = self.get(name)
            if unit.is_affine:
                raise UnitError(f"offset unit {name!r} cannot be part of a compound unit")
            exponent = sign * power
            factor *= unit.factor ** exponent
            exponents[unit.dimension] = exponents.get(unit.dimension, 0) + exponent
        return UnitSpec(text, factor, Fraction(0), _signature(exponents))


def build_default_registry():
    """Return a new Registry holding the built-in length, mass, time, temperature and data units."""
    reg = Registry()
    metric = ("metric",)
    imperial = ("imperial",)
    reg.register("nm", "length", Fraction(1, 10 ** 9), families=metric, aliases=("nanometer",))
    reg.register("um", "length", Fraction(1, 10 ** 6), families=metric, aliases=("micrometer", "µm"))
    reg.register("mm", "length", Fraction(1, 1000), families=metric, aliases=("millimeter",))
    reg.register("cm", "length", Fraction(1, 100), families=metric, aliases=("centimeter",))
    reg.register("m", "length", 1, families=metric, aliases=("meter", "metre"))
    reg.register("km", "length", 1000, families=metric, aliases=("kilometer", "kilometre"))
    reg.register("in", "length", "0.0254", families=imperial, aliases=("inch", "inches"))
    reg.register("ft", "length", "0.3048", families=imperial, aliases=("foot", "feet"))
    reg.register("yd", "length", "0.9144", families=imperial, aliases=("yard",))
    reg.register("mi", "length", "1609.344", families=imperial, aliases=("mile",))
    reg.register("nmi", "length", 1852, aliases=("nautical_mile",))

    reg.register("mg", "mass", Fraction(1, 10 ** 6), families=metric, aliases=("milligram",))
    reg.register("g", "mass", Fraction(1, 1000), families=metric, aliases=("gram", "gramme"))
    reg.register("kg", "mass", 1, families=metric, aliases=("kilogram",))
    reg.register("t", "mass", 1000, families=metric, aliases=("tonne",))
    pound = Fraction("0.45359237")
    reg.register("oz", "mass", pound / 16, families=imperial, aliases=("ounce",))
    reg.register("lb", "mass", pound, families=imperial, aliases=("pound", "lbs"))
    reg.register("st", "mass", pound * 14, families=imperial, aliases=("stone",))

    clock = ("clock",)
    reg.register("us", "time", Fraction(1, 10 ** 6), families=clock, aliases=("microsecond", "µs"))
    reg.register("ms", "time", Fraction(1, 1000), families=clock, aliases=("millisecond",))
    reg.register("s", "time", 1, families=clock, aliases=("second", "sec"))
    reg.register("min", "time", 60, families=clock, aliases=("minute",))
    reg.register("h", "time", 3600, families=clock, aliases=("hour", "hr"))
    reg.register("d", "time", 86400, families=clock, aliases=("day",))
    reg.register("wk", "time", 604800, aliases=("week",))

    reg.register("K", "temperature", 1, aliases=("kelvin",))
    reg.register("degC", "temperature", 1, Fraction("273.15"), aliases=("°C", "C", "celsius"))
    reg.register("degF", "temperature", Fraction(5, 9), Fraction("459.67") * Fraction(5, 9),
                 aliases=("°F", "F", "fahrenheit"))
    reg.register("degR", "temperature", Fraction(5, 9), aliases=("°R", "rankine"))

    reg.register("B", "data", 1, families=("iec", "si"), aliases=("byte",))
    reg.register_prefixed("B", SI_PREFIXES, "byte", families=("si",))
    reg.register_prefixed("B", IEC_PREFIXES, "byte", families=("iec",))
    reg.register("bit", "data", Fraction(1, 8), aliases=("bits",))
    reg.register_prefixed("bit", SI_PREFIXES[:3], "bit")
    return reg


DEFAULT_REGISTRY = build_default_registry()
