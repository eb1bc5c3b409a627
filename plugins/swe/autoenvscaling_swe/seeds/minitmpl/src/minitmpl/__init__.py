"""minitmpl: a tiny template engine with expressions, filters, conditionals and loops."""

from .expr import parse_expression, tokenize_expression
from .filters import BUILTIN_FILTERS, Markup, Undefined, escape
from .lexer import Token, TemplateError, TemplateRuntimeError, TemplateSyntaxError, UndefinedError, tokenize
from .template import Template, render

__version__ = "1.0.0"
