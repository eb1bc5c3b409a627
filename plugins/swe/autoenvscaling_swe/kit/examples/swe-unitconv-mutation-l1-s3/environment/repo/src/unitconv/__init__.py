"""unitconv: exact unit conversion, quantity parsing and human friendly formatting."""

from .convert import (Quantity, best_unit, coerce_value, conversion_factor, convert,
                      convert_delta, format_number, format_quantity, humanize_bytes, round_sig)
from .errors import DimensionMismatch, ParseError, UnitError, UnknownUnit
from .parse import parse_and_convert, parse_number, parse_quantity, scan_number, scan_unit
from .registry import (DEFAULT_REGISTRY, IEC_PREFIXES, SI_PREFIXES, Registry, Unit, UnitSpec,
                       build_default_registry, format_dimension, split_terms)

__version__ = "1.0.0"
