"""Template parsing into a node tree, and rendering."""

from .expr import KEYWORDS, parse_expression
from .filters import BUILTIN_FILTERS, Markup, Undefined, escape, to_text
from .lexer import TEXT, VAR, TemplateRuntimeError, TemplateSyntaxError, UndefinedError, tokenize

_TAGS = ("if", "for")
_END_TAGS = ("elif", "else", "endif", "endfor")


class Context:
    """Variable scopes, filters and settings used while rendering one template."""

    def __init__(self, data, filters, autoescape=False, strict=False):
        self.scopes, self.filters = [dict(data)], filters
        self.autoescape, self.strict = autoescape, strict

    def resolve(self, name):
        """Return the value of ``name`` from the innermost scope defining it, else
        ``Undefined(name)``; raises UndefinedError instead when the context is strict."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if self.strict:
            raise UndefinedError("%r is undefined" % name)
        return Undefined(name)


class Loop:
    """The ``loop`` variable of a for block (``index`` is 1-based, ``index0`` 0-based)."""

    def __init__(self, index0, length):
        self.index0 = index0
        self.index = index0 + 1
        self.revindex = length - index0
        self.length = length
        self.first = index0 == 0
        self.last = index0 == length - 1


def _render_all(nodes, ctx, out):
    for node in nodes:
        node.render(ctx, out)


class _Text:
    def __init__(self, text):
        self.text = text

    def render(self, ctx, out):
        out.append(self.text)


class _Output:
    def __init__(self, expr):
        self.expr = expr

    def render(self, ctx, out):
        value = self.expr(ctx)
        out.append(escape(value) if ctx.autoescape else to_text(value))


class _If:
    def __init__(self, branches, else_body):
        self.branches, self.else_body = branches, else_body

    def render(self, ctx, out):
        for condition, body in self.branches:
            if condition(ctx):
                _render_all(body, ctx, out)
                return
        _render_all(self.else_body, ctx, out)


class _For:
    def __init__(self, targets, iterable, body, else_body):
        self.targets, self.iterable = targets, iterable
        self.body, self.else_body = body, else_body

    def render(self, ctx, out):
        value = self.iterable(ctx)
        if value is None:
            value = ()
        if isinstance(value, dict) and len(self.targets) == 2:
            value = value.items()
        items = list(value)
        if not items:
            _render_all(self.else_body, ctx, out)
            return
        scope = {}
        ctx.scopes.append(scope)
        try:
            for index0, item in enumerate(items):
                if len(self.targets) == 1:
                    scope[self.targets[0]] = item
                else:
                    values = tuple(item)
                    if len(values) != len(self.targets):
                        raise TemplateRuntimeError("cannot unpack %r into %d names" % (item, len(self.targets)))
                    scope.update(zip(self.targets, values))
                scope["loop"] = Loop(index0, len(items))
                _render_all(self.body, ctx, out)
        finally:
            ctx.scopes.pop()


def _check_name(name, line):
    if not name.isidentifier() or name in KEYWORDS or name == "loop":
        raise TemplateSyntaxError("invalid variable name %r" % name, line)
    return name


class _Parser:
    def __init__(self, tokens, filters):
        self.tokens, self.pos, self.filters = tokens, 0, filters

    def expr(self, text, line):
        return parse_expression(text, line, self.filters)

    def parse_body(self, end_tags, opener=None):
        """Parse nodes up to a block tag named in ``end_tags``; return (nodes, tag, rest, token)."""
        nodes = []
        while self.pos < len(self.tokens):
            token = self.tokens[self.pos]
            self.pos += 1
            if token.kind == TEXT:
                nodes.append(_Text(token.value))
                continue
            if token.kind == VAR:
                nodes.append(_Output(self.expr(token.value, token.line)))
                continue
            parts = token.value.split(None, 1)
            tag = parts[0] if parts else ""
            rest = parts[1] if len(parts) > 1 else ""
            if tag in end_tags:
                return nodes, tag, rest, token
            if tag not in _TAGS:
                if tag in _END_TAGS:
                    raise TemplateSyntaxError("unexpected '%s'" % tag, token.line)
                raise TemplateSyntaxError("unknown tag %r" % tag, token.line)
            nodes.append(getattr(self, "parse_" + tag)(rest, token))
        if opener is not None:
            raise TemplateSyntaxError(
                "'%s' block never closed, expected '%s'" % (opener.value.split()[0], end_tags[-1]), opener.line
            )
        return nodes, None, "", None

    def parse_if(self, rest, token):
        branches = []
        else_body = []
        condition = self.expr(rest, token.line)
        while True:
            body, tag, tag_rest, tag_token = self.parse_body(("elif", "else", "endif"), token)
            branches.append((condition, body))
            if tag == "elif":
                condition = self.expr(tag_rest, tag_token.line)
                continue
            if tag == "else":
                else_body = self.parse_body(("endif",), token)[0]
            return _If(branches, else_body)

    def parse_for(self, rest, token):
        head, sep, source = rest.partition(" in ")
        if not sep or not head.strip():
            raise TemplateSyntaxError("expected 'for <name> in <expression>'", token.line)
        targets = [_check_name(name.strip(), token.line) for name in head.split(",")]
        if len(targets) > 2:
            raise TemplateSyntaxError("for loops take one or two loop variables", token.line)
        iterable = self.expr(source, token.line)
        body, tag, _, _ = self.parse_body(("else", "endfor"), token)
        else_body = self.parse_body(("endfor",), token)[0] if tag == "else" else []
        return _For(targets, iterable, body, else_body)


class Template:
    """A compiled template.

    ``Template(source, autoescape=False, strict=False, filters=None)`` parses
    ``source`` immediately and raises TemplateSyntaxError if it is malformed.
    With ``autoescape`` every ``{{ }}`` output that is not Markup is HTML
    escaped; with ``strict`` unresolved variables raise UndefinedError
    instead of rendering as empty text.  ``filters`` adds or overrides
    filters by name.
    """

    def __init__(self, source, autoescape=False, strict=False, filters=None):
        self.filters = dict(BUILTIN_FILTERS)
        self.filters.update(filters or {})
        self.autoescape = autoescape
        self.strict = strict
        self.nodes = _Parser(tokenize(source), self.filters).parse_body(())[0]

    def render(self, context=None, **variables):
        """Render the template and return the output string.

        Variables come from the ``context`` mapping, updated with keyword
        ``variables``.  Raises UndefinedError (strict mode only) and
        TemplateRuntimeError (bad loop unpacking); errors raised by filters
        or by invalid comparisons (TypeError) propagate unchanged.
        """
        data = dict(context or {})
        data.update(variables)
        ctx = Context(data, self.filters, self.autoescape, self.strict)
        out = []
        _render_all(self.nodes, ctx, out)
        return Markup("".join(out)) if self.autoescape else "".join(out)


def render(source, context=None, **variables):
    """Compile ``source`` with default settings and render it; return the output string.

    Raises the same errors as ``Template`` and ``Template.render``.
    """
    return Template(source).render(context, **variables)
