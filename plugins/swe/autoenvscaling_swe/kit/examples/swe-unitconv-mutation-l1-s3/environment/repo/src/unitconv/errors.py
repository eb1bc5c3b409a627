"""Exception hierarchy used by every unitconv module."""


class UnitError(ValueError):
    """Base class of all errors raised by unitconv (a subclass of ValueError)."""


class UnknownUnit(UnitError):
    """Raised when a unit symbol or name is unknown; the text is kept in ``unit``."""

    def __init__(self, unit):
        super().__init__(f"unknown unit: {unit!r}")
        self.unit = unit


class DimensionMismatch(UnitError):
    """Raised when converting between different dimensions (kept in ``left``/``right``)."""

    def __init__(self, left, right):
        super().__init__(f"cannot convert {left} to {right}")
        self.left = left
        self.right = right


class ParseError(UnitError):
    """Raised when a number, quantity or unit expression cannot be parsed."""
