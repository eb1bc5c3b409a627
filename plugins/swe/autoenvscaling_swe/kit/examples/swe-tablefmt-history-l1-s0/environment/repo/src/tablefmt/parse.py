"""Building tables from delimited (CSV-like) text."""

from .cells import number_kind
from .render import tabulate

MISSING_MARKERS = ("", "na", "n/a", "null", "none", "-")


def _finish_field(field, quoted, strip):
    """Return the final text of a field: quoted fields are kept verbatim, others stripped if ``strip``."""
    if quoted or not strip:
        return field
    return field.strip()


def _append_row(rows, row, skip_blank):
    """Append ``row`` to ``rows`` unless ``skip_blank`` is set and the row is one blank field."""
    if skip_blank and len(row) == 1 and not row[0].strip():
        return
    rows.append(row)


def parse_csv(text, delimiter=",", quote='"', strip=True, skip_blank=True):
    """Parse delimited text into a list of rows, each a list of str.

    Fields are separated by ``delimiter`` and rows by "\\n" ("\\r\\n" is accepted). A
    field whose first non-blank character is ``quote`` is quoted: it runs to the next
    unpaired quote, may contain delimiters and newlines, a doubled quote inside it
    stands for one quote, and only whitespace may follow the closing quote. Quoted
    fields are kept verbatim; unquoted fields are stripped when ``strip`` is true.
    With ``skip_blank`` rows consisting of a single blank field are dropped.
    Raises ValueError if ``delimiter`` or ``quote`` is not one character or they are
    equal, for an unterminated quoted field, or for text after a closing quote.
    """
    if len(delimiter) != 1 or len(quote) != 1 or delimiter == quote:
        raise ValueError("delimiter and quote must be two different single characters")
    text = text.replace("\r\n", "\n")
    rows, row, field = [], [], ""
    quoted = in_quotes = False
    index = 0
    while index < len(text):
        ch = text[index]
        if in_quotes:
            if ch != quote:
                field += ch
            elif index + 1 < len(text) and text[index + 1] == quote:
                field += quote
                index += 1
            else:
                in_quotes = False
        elif ch == delimiter or ch == "\n":
            row.append(_finish_field(field, quoted, strip))
            field, quoted = "", False
            if ch == "\n":
                _append_row(rows, row, skip_blank)
                row = []
        elif quoted:
            if not ch.isspace():
                raise ValueError(f"unexpected {ch!r} after a closing quote")
        elif ch == quote and not field.strip():
            in_quotes = quoted = True
            field = ""
        else:
            field += ch
        index += 1
    if in_quotes:
        raise ValueError("unterminated quoted field")
    if field or quoted or row:
        row.append(_finish_field(field, quoted, strip))
        _append_row(rows, row, skip_blank)
    return rows


def convert_value(text, missing=MISSING_MARKERS):
    """Convert one field to a Python value.

    The stripped text compared case-insensitively with ``missing`` gives None; an
    integer literal gives an int; a float literal (see ``number_kind``) gives a float;
    anything else is returned unchanged.
    """
    stripped = text.strip()
    if stripped.lower() in missing:
        return None
    kind = number_kind(stripped)
    if kind == "int":
        return int(stripped)
    if kind == "float":
        return float(stripped)
    return text


def detect_delimiter(text, candidates=(",", "\t", ";", "|")):
    """Guess the delimiter of ``text`` from its first five non-blank lines.

    A candidate is consistent when it occurs the same, non-zero number of times on
    each of those lines; the consistent candidate with the highest count wins (the
    earlier candidate on ties). Without a consistent candidate the one with the most
    occurrences overall wins. Quotes are not taken into account. Raises ValueError if
    the text has no non-blank line or no candidate occurs in it.
    """
    lines = [line for line in text.splitlines() if line.strip()][:5]
    if not lines:
        raise ValueError("no data to inspect")
    best, best_count = None, 0
    for candidate in candidates:
        counts = {line.count(candidate) for line in lines}
        if len(counts) == 1:
            count = counts.pop()
            if count > best_count:
                best, best_count = candidate, count
    if best is not None:
        return best
    totals = [sum(line.count(candidate) for line in lines) for candidate in candidates]
    if max(totals, default=0) == 0:
        raise ValueError("no delimiter found")
    return candidates[totals.index(max(totals))]


def table_from_text(text, delimiter=None, header=True, convert=True):
    """Parse ``text`` into ``(headers, rows)``.

    ``delimiter`` None means ``detect_delimiter(text)``. With ``header`` the first row
    becomes the list of headers (``[]`` when there are no rows), otherwise headers is
    None. With ``convert`` every data field goes through ``convert_value``.
    Raises the errors of ``detect_delimiter`` and ``parse_csv``.
    """
    if delimiter is None:
        delimiter = detect_delimiter(text)
    rows = parse_csv(text, delimiter)
    headers = None
    if header:
        headers = rows.pop(0) if rows else []
    if convert:
        rows = [[convert_value(field) for field in row] for row in rows]
    return headers, rows


def render_text(text, style="simple", delimiter=None, **options):
    """Return ``tabulate`` applied to ``table_from_text(text, delimiter)``.

    The first row is used as the header; ``options`` are passed on to ``tabulate``.
    Raises the errors of both functions.
    """
    headers, rows = table_from_text(text, delimiter)
    return tabulate(rows, headers or (), style, **options)
