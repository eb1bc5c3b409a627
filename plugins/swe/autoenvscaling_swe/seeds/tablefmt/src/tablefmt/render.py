"""Rendering rows of values as text tables in several styles."""

from collections import namedtuple

from .cells import column_type, decimal_align, format_cell
from .width import block_width, pad, truncate, wrap


class Style(namedtuple("Style", "top header_sep row_sep bottom row padding colons")):
    """Templates of a table style.

    ``top``, ``header_sep``, ``row_sep`` and ``bottom`` are ``(begin, fill, sep, end)``
    tuples or None when the style has no such rule; ``row`` is ``(begin, sep, end)``;
    ``padding`` is the number of spaces on each side of a cell; ``colons`` marks the
    Markdown-style alignment colons in the header separator.
    """

    __slots__ = ()


STYLES = {
    "plain": Style(None, None, None, None, ("", "  ", ""), 0, False),
    "simple": Style(None, ("", "-", "  ", ""), None, None, ("", "  ", ""), 0, False),
    "grid": Style(("+", "-", "+", "+"), ("+", "=", "+", "+"), ("+", "-", "+", "+"),
                  ("+", "-", "+", "+"), ("|", "|", "|"), 1, False),
    "pipe": Style(None, ("|", "-", "|", "|"), None, None, ("|", "|", "|"), 1, True),
}
ALIGN_CHOICES = ("left", "right", "center", "decimal")


def normalize_rows(rows, headers=()):
    """Return ``(header_list_or_None, data_rows)`` with every row a list of equal length.

    ``rows`` is an iterable of sequences or of dicts (not mixed). ``headers`` may be:
    a sequence of header texts (for dict rows: the keys to show, in order);
    "firstrow" (the first row becomes the header); "keys" (dict keys in order of first
    appearance, or "0", "1", ... for sequence rows); or empty for no header. Short rows
    and the header are padded with None / "" to the widest row or header.
    Raises TypeError when dict and sequence rows are mixed and ValueError for an
    unknown headers string.
    """
    data = list(rows)
    if isinstance(headers, str) and headers not in ("firstrow", "keys"):
        raise ValueError(f"unknown headers mode {headers!r}")
    header = None
    if headers == "firstrow":
        if data:
            first = data.pop(0)
            header = list(first.values()) if isinstance(first, dict) else list(first)
        headers = ()
    dict_rows = [isinstance(row, dict) for row in data]
    if any(dict_rows) and not all(dict_rows):
        raise TypeError("cannot mix dict rows and sequence rows")
    if data and dict_rows[0]:
        keys = []
        for row in data:
            keys.extend(key for key in row if key not in keys)
        if headers == "keys":
            header = list(keys)
        elif headers:
            header = list(headers)
            keys = header
        data = [[row.get(key) for key in keys] for row in data]
    else:
        data = [list(row) for row in data]
        if headers == "keys":
            header = [str(index) for index in range(max(map(len, data), default=0))]
        elif headers:
            header = list(headers)
    ncols = max([len(row) for row in data] + [len(header or ())])
    data = [row + [None] * (ncols - len(row)) for row in data]
    if header is not None:
        header = ["" if h is None else str(h) for h in header]
        header += [""] * (ncols - len(header))
    return header, data


def resolve_alignments(align, types, numalign="right", stralign="left"):
    """Return one alignment per column.

    ``align`` is None (automatic for every column), one alignment name for all
    columns, or a list whose None entries (and missing trailing entries) are
    automatic. Automatic means ``numalign`` for "int"/"float" columns and
    ``stralign`` for "text" columns. Raises ValueError for a name outside
    ALIGN_CHOICES or for a list longer than ``types``.
    """
    if align is None or isinstance(align, str):
        wanted = [align] * len(types)
    else:
        wanted = list(align)
        if len(wanted) > len(types):
            raise ValueError("more alignments than columns")
        wanted += [None] * (len(types) - len(wanted))
    result = []
    for choice, kind in zip(wanted, types):
        if choice is None:
            choice = stralign if kind == "text" else numalign
        if choice not in ALIGN_CHOICES:
            raise ValueError(f"unknown alignment {choice!r}")
        result.append(choice)
    return result


def fit_cell(text, limit, overflow="wrap"):
    """Return ``text`` limited to ``limit`` display columns per line.

    ``limit`` None returns the text unchanged. With ``overflow="wrap"`` the text is
    word-wrapped (lines joined by "\\n"); with "truncate" each line is cut with an
    ellipsis. Raises ValueError for any other ``overflow`` and the errors of
    ``wrap``/``truncate`` for an invalid limit.
    """
    if overflow not in ("wrap", "truncate"):
        raise ValueError(f"unknown overflow mode {overflow!r}")
    if limit is None:
        return text
    if overflow == "wrap":
        return "\n".join(wrap(text, limit))
    return "\n".join(truncate(line, limit) for line in text.split("\n"))


def _per_column(value, ncols):
    """Return ``value`` repeated ``ncols`` times unless it is already a list/tuple (then padded with None)."""
    if isinstance(value, (list, tuple)):
        return list(value) + [None] * (ncols - len(value))
    return [value] * ncols


def render_rule(line, widths, aligns, padding, colons):
    """Return one horizontal rule built from ``line = (begin, fill, sep, end)``.

    Each column segment is ``width + 2 * padding`` fill characters; with ``colons``
    a left column starts with ":", a right or decimal column ends with ":" and a
    center column has both.
    """
    begin, fill, sep, end = line
    segments = []
    for width, align in zip(widths, aligns):
        size = width + 2 * padding
        segment = fill * size
        if colons and align == "center":
            segment = ":" + fill * (size - 2) + ":"
        elif colons and align == "left":
            segment = ":" + fill * (size - 1)
        elif colons:
            segment = fill * (size - 1) + ":"
        segments.append(segment)
    return begin + sep.join(segments) + end


def render_row(cells, widths, aligns, style):
    """Return the physical lines of one table row.

    ``cells`` holds one text per column; multi-line texts make the row taller and
    shorter cells are filled with blank lines at the bottom. Every line is padded to
    its column width ("decimal" is padded like "right") and framed by ``style.row``.
    """
    begin, sep, end = style.row
    space = " " * style.padding
    split = [cell.split("\n") for cell in cells]
    height = max([len(lines) for lines in split] + [1])
    result = []
    for index in range(height):
        parts = []
        for lines, width, align in zip(split, widths, aligns):
            text = lines[index] if index < len(lines) else ""
            how = "right" if align == "decimal" else align
            parts.append(space + pad(text, width, how) + space)
        result.append(begin + sep.join(parts) + end)
    return result


def tabulate(rows, headers=(), style="simple", align=None, numalign="right",
             stralign="left", floatfmt="g", missing="", maxwidth=None, overflow="wrap"):
    """Return the table as a string (lines joined by "\\n", trailing spaces removed).

    Rows and headers are normalised with ``normalize_rows``. Each column gets a type
    from ``column_type`` and its cells are formatted with ``format_cell`` using
    ``floatfmt`` (one spec or a list per column) and ``missing``. Alignments come from
    ``resolve_alignments``; "decimal" columns are lined up with ``decimal_align``.
    ``maxwidth`` (an int, or a list with None for unlimited) limits cells and headers
    through ``fit_cell``. Column widths are the widest line of header and cells, at
    least 1. An empty table without header gives "".
    Raises ValueError for an unknown style and the errors of the helpers above.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}")
    fmt = STYLES[style]
    header, data = normalize_rows(rows, headers)
    ncols = len(header) if header is not None else len(data[0]) if data else 0
    if ncols == 0:
        return ""
    columns = [[row[col] for row in data] for col in range(ncols)]
    types = [column_type(values) for values in columns]
    aligns = resolve_alignments(align, types, numalign, stralign)
    floatfmts = _per_column(floatfmt, ncols)
    limits = _per_column(maxwidth, ncols)
    texts = []
    for col, values in enumerate(columns):
        cells = [format_cell(v, types[col], floatfmts[col] or "g", missing) for v in values]
        if aligns[col] == "decimal":
            cells = decimal_align(cells)
        texts.append([fit_cell(cell, limits[col], overflow) for cell in cells])
    if header is not None:
        header = [fit_cell(h, limits[col], overflow) for col, h in enumerate(header)]
    widths = []
    for col in range(ncols):
        candidates = [block_width(cell) for cell in texts[col]]
        if header is not None:
            candidates.append(block_width(header[col]))
        widths.append(max(candidates + [1]))
    lines = []
    if fmt.top:
        lines.append(render_rule(fmt.top, widths, aligns, fmt.padding, False))
    if header is not None:
        lines.extend(render_row(header, widths, aligns, fmt))
        if fmt.header_sep:
            lines.append(render_rule(fmt.header_sep, widths, aligns, fmt.padding, fmt.colons))
    for index in range(len(data)):
        if index > 0 and fmt.row_sep:
            lines.append(render_rule(fmt.row_sep, widths, aligns, fmt.padding, False))
        lines.extend(render_row([texts[col][index] for col in range(ncols)], widths, aligns, fmt))
    if fmt.bottom:
        lines.append(render_rule(fmt.bottom, widths, aligns, fmt.padding, False))
    return "\n".join(line.rstrip() for line in lines)
