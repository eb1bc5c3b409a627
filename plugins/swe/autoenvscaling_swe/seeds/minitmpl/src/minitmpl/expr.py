"""Expressions used inside tags: tokenizer, recursive-descent parser and evaluator."""

import operator

from .filters import Undefined
from .lexer import TemplateSyntaxError, UndefinedError

_CONSTANTS = {"true": True, "false": False, "none": None, "True": True, "False": False, "None": None}
KEYWORDS = frozenset(["and", "or", "not", "in"]) | frozenset(_CONSTANTS)
_TWO_CHAR_OPS = ("==", "!=", "<=", ">=")
_ONE_CHAR_OPS = "<>|:,.()"
_DIGITS = "0123456789"
_COMPARATORS = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge, "in": lambda left, right: left in right,
    "not in": lambda left, right: left not in right,
}


def _read_string(text, start, line):
    """Return ``(value, end)`` for the quoted string literal starting at ``text[start]``."""
    quote = text[start]
    chars = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            chars.append(text[i + 1])
            i += 2
            continue
        if ch == quote:
            return "".join(chars), i + 1
        chars.append(ch)
        i += 1
    raise TemplateSyntaxError("unterminated string literal", line)


def tokenize_expression(text, line=None):
    """Split an expression into a list of ``(kind, value)`` pairs.

    Kinds are ``"name"`` (identifiers and keywords), ``"num"`` (a
    non-negative int), ``"str"`` (the unquoted value; a backslash makes the
    next character literal) and ``"op"`` (one of ``== != <= >= < > | : , .
    ( )``).  Raises TemplateSyntaxError (reporting ``line``) for any other
    character or for an unterminated string.
    """
    tokens = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch.isalpha() or ch == "_":
            j = i + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(("name", text[i:j]))
            i = j
        elif ch in _DIGITS:
            j = i + 1
            while j < len(text) and text[j] in _DIGITS:
                j += 1
            tokens.append(("num", int(text[i:j])))
            i = j
        elif ch in "\"'":
            value, i = _read_string(text, i, line)
            tokens.append(("str", value))
        elif text[i:i + 2] in _TWO_CHAR_OPS:
            tokens.append(("op", text[i:i + 2]))
            i += 2
        elif ch in _ONE_CHAR_OPS:
            tokens.append(("op", ch))
            i += 1
        else:
            raise TemplateSyntaxError("unexpected character %r in expression" % ch, line)
    return tokens


def get_item(obj, key):
    """Return ``obj[key]`` for dicts and integer keys, else the public attribute ``key``.

    Returns an Undefined placeholder when the key, index or attribute does
    not exist, when ``key`` starts with an underscore, or when ``obj`` is
    itself Undefined.
    """
    if isinstance(obj, Undefined):
        return obj
    if isinstance(obj, dict):
        return obj[key] if key in obj else Undefined(str(key))
    if isinstance(key, int):
        try:
            return obj[key]
        except (IndexError, KeyError, TypeError):
            return Undefined(str(key))
    if key.startswith("_"):
        return Undefined(key)
    return getattr(obj, key, Undefined(key))


def _lookup(path):
    def evaluate(ctx):
        value = ctx.resolve(path[0])
        for depth in range(1, len(path)):
            value = get_item(value, path[depth])
            if isinstance(value, Undefined) and ctx.strict:
                raise UndefinedError("%r is undefined" % ".".join(map(str, path[:depth + 1])))
        return value
    return evaluate


def _compare(op, left, right):
    def evaluate(ctx):
        return _COMPARATORS[op](left(ctx), right(ctx))
    return evaluate


def _filter(name, node, args):
    def evaluate(ctx):
        return ctx.filters[name](node(ctx), *[arg(ctx) for arg in args])
    return evaluate


def _or(left, right):
    return lambda ctx: left(ctx) or right(ctx)


def _and(left, right):
    return lambda ctx: left(ctx) and right(ctx)


def _not(node):
    return lambda ctx: not node(ctx)


def _constant(value):
    return lambda ctx: value


class _ExprParser:
    def __init__(self, tokens, line, filters):
        self.tokens, self.pos, self.line, self.filters = tokens, 0, line, filters

    def error(self, message):
        return TemplateSyntaxError(message, self.line)

    def peek(self, offset=0):
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else (None, None)

    def take(self):
        token = self.peek()
        if token[0] is None:
            raise self.error("unexpected end of expression")
        self.pos += 1
        return token

    def accept(self, kind, value):
        if self.peek() == (kind, value):
            self.pos += 1
            return True
        return False

    def parse_or(self):
        node = self.parse_and()
        while self.accept("name", "or"):
            node = _or(node, self.parse_and())
        return node

    def parse_and(self):
        node = self.parse_not()
        while self.accept("name", "and"):
            node = _and(node, self.parse_not())
        return node

    def parse_not(self):
        if self.accept("name", "not"):
            return _not(self.parse_not())
        return self.parse_compare()

    def parse_compare(self):
        left = self.parse_filtered()
        kind, value = self.peek()
        if kind == "op" and value in _COMPARATORS:
            self.pos += 1
            op = value
        elif (kind, value) == ("name", "in"):
            self.pos += 1
            op = "in"
        elif (kind, value) == ("name", "not") and self.peek(1) == ("name", "in"):
            self.pos += 2
            op = "not in"
        else:
            return left
        return _compare(op, left, self.parse_filtered())

    def parse_filtered(self):
        node = self.parse_primary()
        while self.accept("op", "|"):
            kind, name = self.take()
            if kind != "name":
                raise self.error("expected a filter name after '|'")
            if name not in self.filters:
                raise self.error("unknown filter %r" % name)
            args = []
            if self.accept("op", ":"):
                args.append(self.parse_primary())
                while self.accept("op", ","):
                    args.append(self.parse_primary())
            node = _filter(name, node, args)
        return node

    def parse_primary(self):
        kind, value = self.take()
        if kind in ("num", "str"):
            return _constant(value)
        if (kind, value) == ("op", "("):
            node = self.parse_or()
            if not self.accept("op", ")"):
                raise self.error("expected ')'")
            return node
        if kind == "name" and value in _CONSTANTS:
            return _constant(_CONSTANTS[value])
        if kind == "name" and value not in KEYWORDS:
            path = [value]
            while self.accept("op", "."):
                part_kind, part = self.take()
                if part_kind not in ("name", "num"):
                    raise self.error("expected an attribute name or index after '.'")
                path.append(part)
            return _lookup(path)
        raise self.error("unexpected %r in expression" % (value,))


def parse_expression(text, line=None, filters=None):
    """Parse expression ``text`` and return a function that evaluates it against a context.

    Precedence from lowest to highest: ``or``, ``and``, ``not``, one
    comparison (``== != < <= > >= in``, ``not in``), filters (``x|name`` or
    ``x|name:arg1,arg2``), and primaries (literals, dotted names such as
    ``user.name`` or ``items.0``, parenthesized expressions).
    ``filters`` is the mapping of allowed filter names (default: none).
    Raises TemplateSyntaxError (reporting ``line``) for empty or malformed
    expressions, unknown filters and trailing tokens.
    """
    path = text.strip().split(".")
    if all(part.isidentifier() and part not in KEYWORDS for part in path):
        return _lookup(path)
    tokens = tokenize_expression(text, line)
    if not tokens:
        raise TemplateSyntaxError("empty expression", line)
    parser = _ExprParser(tokens, line, filters or {})
    node = parser.parse_or()
    if parser.pos < len(tokens):
        raise parser.error("unexpected %r after expression" % (tokens[parser.pos][1],))
    return node
