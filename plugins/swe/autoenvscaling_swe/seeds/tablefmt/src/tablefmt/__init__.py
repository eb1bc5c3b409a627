"""tablefmt: render rows of data as plain-text, grid, simple or Markdown tables."""

from .cells import column_type, decimal_align, format_cell, number_kind, split_decimal
from .parse import convert_value, detect_delimiter, parse_csv, render_text, table_from_text
from .render import (ALIGN_CHOICES, STYLES, Style, fit_cell, normalize_rows, render_row,
                     render_rule, resolve_alignments, tabulate)
from .width import (ELLIPSIS, block_width, char_width, pad, split_word, take_columns,
                    text_width, truncate, wrap)

__version__ = "1.0.0"
