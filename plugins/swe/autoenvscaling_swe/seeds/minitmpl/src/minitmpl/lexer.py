"""Exceptions and the tokenizer that splits template source into tokens."""

from collections import namedtuple

TEXT, VAR, BLOCK = "text", "var", "block"

Token = namedtuple("Token", "kind value line")

_OPENERS = {"{{": ("}}", VAR), "{%": ("%}", BLOCK), "{#": ("#}", None)}


class TemplateError(Exception):
    """Base class of all minitmpl errors."""


class TemplateSyntaxError(TemplateError):
    """Raised for malformed templates; ``line`` is the 1-based source line or None."""

    def __init__(self, message, line=None):
        self.message = message
        self.line = line
        super().__init__(message if line is None else "line %d: %s" % (line, message))


class UndefinedError(TemplateError):
    """Raised in strict mode when a variable or attribute cannot be resolved."""


class TemplateRuntimeError(TemplateError):
    """Raised when a well-formed template fails while rendering."""


def _find_open(source, pos):
    """Return the index of the next ``{{``, ``{%`` or ``{#`` at or after ``pos``, or -1."""
    while True:
        idx = source.find("{", pos)
        if idx == -1:
            return -1
        if source[idx:idx + 2] in _OPENERS:
            return idx
        pos = idx + 1


def tokenize(source):
    """Split ``source`` into a list of ``Token(kind, value, line)`` tuples.

    ``kind`` is ``"text"`` for literal text, ``"var"`` for the inside of
    ``{{ ... }}`` and ``"block"`` for the inside of ``{% ... %}`` (stripped of
    surrounding whitespace); comments ``{# ... #}`` produce no token.
    ``line`` is the 1-based line where the token's source (for text, before
    whitespace stripping) starts.  A tag opened
    with ``{{-``, ``{%-`` or ``{#-`` removes all whitespace at the end of the
    preceding text, and a tag closed with ``-}}``, ``-%}`` or ``-#}`` removes
    all whitespace at the start of the following text; text that becomes
    empty is dropped.  Raises TemplateSyntaxError, with the line of the
    opening delimiter, if a tag is never closed.
    """
    tokens = []
    pos = 0
    line = 1
    strip_next = False
    while pos < len(source):
        start = _find_open(source, pos)
        text = source[pos:] if start == -1 else source[pos:start]
        strip_before = start != -1 and source[start + 2:start + 3] == "-"
        if strip_next:
            text = text.lstrip()
        if strip_before:
            text = text.rstrip()
        if text:
            tokens.append(Token(TEXT, text, line))
        if start == -1:
            break
        line += source.count("\n", pos, start)
        opener = source[start:start + 2]
        closer, kind = _OPENERS[opener]
        inner_start = start + 3 if strip_before else start + 2
        end = source.find(closer, inner_start)
        if end == -1:
            raise TemplateSyntaxError("unclosed %r tag" % opener, line)
        strip_next = end > inner_start and source[end - 1] == "-"
        inner_end = end - 1 if strip_next else end
        if kind is not None:
            tokens.append(Token(kind, source[inner_start:inner_end].strip(), line))
        line += source.count("\n", start, end)
        pos = end + 2
    return tokens
