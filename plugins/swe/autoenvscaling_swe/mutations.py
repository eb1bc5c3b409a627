"""Syntactic bug injection for SWE-style tasks.

``find_sites`` lists every place in one module where one of eight small, realistic mutation operators
applies; ``apply_sites`` splices chosen sites into the source.  A site is a span of the *original* text
plus its replacement text, so everything outside the span (comments, blank lines, formatting) survives
byte for byte and the resulting diff stays minimal, like a human's buggy commit.

Only code inside function and method bodies is mutated: module and class level code usually runs at
import time (a mutation there breaks everything at once, which makes a poor task), and decorators,
default values, annotations, docstrings, string constants, ``raise``/``assert`` messages and
``if __name__ == "__main__":`` blocks are skipped because mutating them is either invisible to tests
or trivially detectable.
"""

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Iterator, NamedTuple, Sequence, TypeGuard

OPERATORS: tuple[str, ...] = ("comparison_flip", "off_by_one", "swap_arguments", "remove_branch",
                              "change_return", "wrong_operator", "drop_statement", "invert_condition")


@dataclass(frozen=True)
class Site:
    """One mutation: replace the text between ``start`` and ``end`` of the file at ``path``.

    ``start``/``end`` use ast's conventions: 1-based line, 0-based UTF-8 *byte* column; ``end`` is
    exclusive (a removed whole line ends at column 0 of the following line)."""
    operator: str
    path: str
    line: int
    end_line: int
    function: str
    description: str
    start: tuple[int, int]
    end: tuple[int, int]
    replacement: str


def overlaps(a: Site, b: Site) -> bool:
    """True when both sites are in the same file and their spans share text (or start together)."""
    if a.path != b.path:
        return False
    return a.start == b.start or (a.start < b.end and b.start < a.end)


# ---- source text bookkeeping

_Node = ast.expr | ast.stmt  # a node with a position in the source
_Func = ast.FunctionDef | ast.AsyncFunctionDef

_NEWLINE = re.compile(r"\r\n|\r|\n")  # the newlines Python's tokenizer counts (not \f, \v, U+2028...)
_PIECE = re.compile(r"#[^\r\n]*|[^\s\\()#]+")   # a comment, or a run of significant characters


class _Text:
    """A source string with conversions between ast positions (line, byte col) and str offsets."""

    def __init__(self, text: str):
        self.text = text
        starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        if starts[-1] != len(text):
            starts.append(len(text))
        self.starts = starts          # starts[k - 1] = offset of line k; starts[-1] == len(text)
        self.nlines = len(starts) - 1

    def line(self, k: int) -> str:
        """Line ``k`` without its newline."""
        return self.text[self.starts[k - 1]:self.starts[k]].rstrip("\r\n")

    def offset(self, line: int, col: int) -> int:
        if not 1 <= line <= self.nlines + 1 or col < 0:
            raise ValueError(f"line {line} is outside the source")
        base = self.starts[line - 1]
        content = self.line(line) if line <= self.nlines else ""
        raw = content.encode("utf-8", "surrogatepass")
        if col > len(raw):
            raise ValueError(f"column {col} is past the end of line {line}")
        # ast columns count UTF-8 bytes; a column inside a multi-byte character raises
        # UnicodeDecodeError, which is a ValueError too.
        return base + (col if len(raw) == len(content) else len(raw[:col].decode("utf-8")))

    def position(self, off: int) -> tuple[int, int]:
        idx = min(bisect.bisect_right(self.starts, off) - 1, self.nlines)
        return idx + 1, len(self.text[self.starts[idx]:off].encode("utf-8", "surrogatepass"))

    def span(self, node: _Node) -> tuple[int, int]:
        assert node.end_lineno is not None and node.end_col_offset is not None  # ast.parse sets them
        return (self.offset(node.lineno, node.col_offset),
                self.offset(node.end_lineno, node.end_col_offset))

    def seg(self, node: _Node) -> str:
        return self.text[slice(*self.span(node))]

    def token(self, lo: int, hi: int, word: str) -> tuple[int, int] | None:
        """Span of the operator ``word`` written between two operands (offsets ``lo``..``hi``).

        Between two operands there can only be the operator, whitespace, parentheses, comments and
        backslash continuations; anything else means we misread the layout, and we give up."""
        pieces = [m.span() for m in _PIECE.finditer(self.text, lo, hi) if m.group()[0] != "#"]
        if [self.text[a:b] for a, b in pieces] != word.split():
            return None
        return pieces[0][0], pieces[-1][1]

    def whole_lines(self, first: int, last: int, head: int, tail: int) -> tuple[int, int] | None:
        """Span of lines ``first``..``last`` (newline included) if nothing but whitespace precedes
        offset ``head`` on the first line and only whitespace or a comment follows ``tail`` on the
        last one, i.e. the lines hold nothing besides what we mean to remove."""
        a, b = self.starts[first - 1], self.starts[last]
        rest = self.text[tail:b].strip()
        if self.text[a:head].strip() or (rest and not rest.startswith("#")):
            return None
        return a, b

    def is_elif(self, node: ast.If) -> bool:
        # For ``elif`` the nested If node starts at the ``elif`` keyword itself.
        return self.text.startswith("elif", self.span(node)[0])


def _last_line(node: _Node) -> int:
    """The line ``node`` ends on (ast.parse sets it; the type allows None)."""
    assert node.end_lineno is not None
    return node.end_lineno


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- which nodes may be mutated

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _is_main_guard(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = {ast.dump(test.left), ast.dump(test.comparators[0])}
    return sides == {ast.dump(ast.Name("__name__", ast.Load())), ast.dump(ast.Constant("__main__"))}


def _own_blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        value = getattr(node, field, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value


class _Scan:
    """One walk over a module recording every mutable node and statement block, each with its
    enclosing function's qualified name and node (the node bounds the text to re-parse when
    validating a candidate, much cheaper than re-parsing the whole module)."""

    def __init__(self) -> None:
        self.nodes: list[tuple[ast.AST, str, _Func]] = []
        self.blocks: list[tuple[list[ast.stmt], str, _Func]] = []

    def defs(self, stmts: list[ast.stmt], prefix: str) -> None:
        """Code outside functions: only look for the functions defined in it."""
        for st in stmts:
            if isinstance(st, _FUNCS):
                self.function(st, prefix + st.name)
            elif isinstance(st, ast.ClassDef):
                self.defs(st.body, f"{prefix}{st.name}.")
            elif not _is_main_guard(st):
                suites = list(_own_blocks(st)) + [h.body for h in getattr(st, "handlers", ())]
                for block in suites + [c.body for c in getattr(st, "cases", ())]:
                    self.defs(block, prefix)

    def function(self, fn: _Func, qual: str) -> None:
        # Decorators, arguments (defaults, annotations) and the return annotation are not visited.
        self.blocks.append((fn.body, qual, fn))
        for st in fn.body:
            self.visit(st, qual, fn)

    def visit(self, node: ast.AST, func: str, fn: _Func) -> None:
        if isinstance(node, _FUNCS):
            return self.function(node, f"{func}.{node.name}")
        if isinstance(node, ast.ClassDef):
            return self.defs(node.body, f"{func}.{node.name}.")
        if isinstance(node, (ast.Raise, ast.JoinedStr)) or _is_main_guard(node):
            return None
        self.nodes.append((node, func, fn))
        for block in _own_blocks(node):
            self.blocks.append((block, func, fn))
        children: list = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Assert):
            children = [node.test]                         # not the message
        elif isinstance(node, ast.AnnAssign):
            children = [node.target, node.value]           # not the annotation
        elif isinstance(node, ast.Lambda):
            children = [node.body]                         # not the defaults
        for child in filter(None, children):
            self.visit(child, func, fn)
        return None


# ---- operators: each yields candidates (offset span, replacement); find_sites validates them

class _Cand(NamedTuple):
    """A site before validation, its span as offsets into the str source (not ast positions)."""
    op: str
    a: int
    b: int
    repl: str
    what: str
    func: str
    fn: _Func        # innermost enclosing function node


_CMP_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_CMP_WORD = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
             ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_BIN_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
             ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv}
_BIN_WORD = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%"}
# Swapping the arguments of these is a no-op, a guaranteed TypeError, or not a plausible bug.
_NO_SWAP = frozenset({"print", "isinstance", "issubclass", "max", "min", "getattr", "setattr", "hasattr",
                      "delattr", "super", "zip", "sum", "map", "filter", "sorted", "enumerate", "any",
                      "all", "str", "int", "float", "bool", "round", "next", "iter", "open", "dict",
                      "set", "list", "tuple", "type", "format", "vars", "frozenset"})
_NO_SWAP_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_GUARD_BODY = (ast.Return, ast.Raise, ast.Continue, ast.Break, ast.Assign, ast.AugAssign, ast.AnnAssign)


def _is_call(node: ast.AST, name: str) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args))


def _not_numeric(node: ast.AST) -> bool:
    """Operands for which ``+``/``*``... are concatenation/repetition or formatting, not arithmetic."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    if isinstance(node, ast.BinOp):      # ``a + "x" + b`` is ``(a + "x") + b``
        return _not_numeric(node.left) or _not_numeric(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):   # ", ".join(...)
        return _not_numeric(node.func.value)
    return isinstance(node, (ast.JoinedStr, ast.List, ast.Tuple, ast.ListComp, ast.Dict, ast.Set))


def _comparison_flip(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMP_FLIP):
            continue
        old = type(node.ops[0])
        new = _CMP_FLIP[old]
        a, b = t.span(node)
        tok = t.token(t.span(node.left)[1], t.span(node.comparators[0])[0], _CMP_WORD[old])
        if tok:   # the whole comparison is the span, but only its operator changes
            yield _Cand("comparison_flip", a, b, t.text[a:tok[0]] + _CMP_WORD[new] + t.text[tok[1]:b],
                        f"`{_CMP_WORD[old]}` -> `{_CMP_WORD[new]}`", func, fn)


def _off_by_one(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        operands: tuple = ()
        lens: tuple = ()    # the operands where ``len(x)`` becomes ``len(x) - 1``
        if isinstance(node, ast.BinOp):
            operands = (node.left, node.right)
        elif isinstance(node, ast.Subscript):
            s = node.slice
            operands = (s.lower, s.upper, s.step) if isinstance(s, ast.Slice) else (s,)
        elif isinstance(node, ast.Compare):
            operands = lens = (node.left, *node.comparators)
        elif _is_call(node, "range"):
            operands = lens = tuple(node.args)
        for sub in operands:
            if isinstance(sub, ast.Constant) and type(sub.value) is int and 0 <= sub.value <= 1000:
                a, b = t.span(sub)
                n = sub.value
                for m in ((n + 1, n - 1) if n > 0 else (n + 1,)):
                    yield _Cand("off_by_one", a, b, str(m), f"`{t.text[a:b]}` -> `{m}`", func, fn)
        for sub in lens:
            if _is_call(sub, "len") and len(sub.args) == 1:
                a, b = t.span(sub)
                text = t.text[a:b]
                yield _Cand("off_by_one", a, b, text + " - 1", f"`{_short(text)}` -> `{_short(text)} - 1`",
                            func, fn)


def _swap_arguments(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        if not isinstance(node, ast.Call) or len(node.args) < 2 or any(k.arg is None for k in node.keywords) \
                or any(isinstance(x, ast.Starred) for x in node.args):
            continue
        f = node.func
        if f.id in _NO_SWAP if isinstance(f, ast.Name) else getattr(f, "attr", "") in _NO_SWAP_METHODS:
            continue
        (a0, b0), (a1, b1) = t.span(node.args[0]), t.span(node.args[1])
        first, second = t.text[a0:b0], t.text[a1:b1]
        if first != second:
            # Keep whatever separates the two (comma, comments, parentheses) in place.
            yield _Cand("swap_arguments", a0, b1, second + t.text[b0:a1] + first,
                        f"swap `{_short(first, 25)}` and `{_short(second, 25)}` in call to "
                        f"`{_short(t.seg(f), 30)}`", func, fn)


def _remove_branch(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for block, func, fn in scan.blocks:
        for st in block:
            if not isinstance(st, ast.If):
                continue
            if st.orelse:
                yield from _remove_else(t, st, func, fn)
            elif len(st.body) == 1 and isinstance(st.body[0], _GUARD_BODY) and not t.is_elif(st):
                a, b = t.span(st)
                last = _last_line(st)
                lines = t.whole_lines(st.lineno, last, a, b)
                if lines is None:
                    continue
                repl = ""
                if len(block) == 1:   # the block would become empty
                    eol = t.text[t.starts[last - 1] + len(t.line(last)):lines[1]]
                    repl = t.text[lines[0]:a] + "pass" + eol
                yield _Cand("remove_branch", *lines, repl, f"remove guard `if {_short(t.seg(st.test))}:`",
                            func, fn)


def _remove_else(t: _Text, st: ast.If, func: str, fn: _Func) -> Iterator[_Cand]:
    first = st.orelse[0]
    line: int | None
    if len(st.orelse) == 1 and isinstance(first, ast.If) and t.is_elif(first):
        keyword, line = "elif", first.lineno
    else:
        keyword = "else"
        line = next((k for k in range(_last_line(st.body[-1]) + 1, first.lineno + 1)
                     if re.match(r"[ \t\f]*else[ \t\f]*:", t.line(k))), None)
        if line is None:
            return
    text = t.line(line)
    head = t.starts[line - 1] + len(text) - len(text.lstrip())
    lines = t.whole_lines(line, _last_line(st.orelse[-1]), head, t.span(st.orelse[-1])[1])
    if lines:
        yield _Cand("remove_branch", *lines, "", f"remove `{keyword}` branch of `if {_short(t.seg(st.test))}:`",
                    func, fn)


def _change_return(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        v = node.value
        if isinstance(v, ast.UnaryOp) and isinstance(v.op, (ast.USub, ast.UAdd)):
            v = v.operand if isinstance(v.operand, ast.Constant) else v     # ``-1`` is a number too
        value = v.value if isinstance(v, ast.Constant) else None
        if isinstance(v, ast.Constant) and value is None:
            continue
        if isinstance(value, bool):
            new = str(not value)
        elif isinstance(value, (int, float, complex)):
            new = "1" if value == 0 else "0"
        elif isinstance(value, (str, bytes)) and value:
            new = '""' if isinstance(value, str) else 'b""'
        elif isinstance(v, (ast.Compare, ast.BoolOp)):
            new = f"not ({t.seg(v)})"
        else:
            new = "None"
        a, b = t.span(node.value)
        yield _Cand("change_return", a, b, new, f"`return {_short(t.text[a:b])}` -> `return {_short(new)}`",
                    func, fn)


def _wrong_operator(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BIN_SWAP:
            # ``a + b`` needs both operands numeric, ``a += b`` the value (the target may be anything)
            left, right, eq = ((node.left, node.right, "") if isinstance(node, ast.BinOp)
                               else (node.target, node.value, "="))
            if _not_numeric(right) or (not eq and _not_numeric(left)):
                continue
            old, new = _BIN_WORD[type(node.op)] + eq, _BIN_WORD[_BIN_SWAP[type(node.op)]] + eq
            tok = t.token(t.span(left)[1], t.span(right)[0], old)
            if tok:
                yield _Cand("wrong_operator", *tok, new, f"`{old}` -> `{new}`", func, fn)
        elif isinstance(node, ast.BoolOp):
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            found = [t.token(t.span(x)[1], t.span(y)[0], old) for x, y in zip(node.values, node.values[1:])]
            toks = [tok for tok in found if tok is not None]
            if len(toks) == len(found):   # one span from the first to the last operator, every operator replaced
                a, b = toks[0][0], toks[-1][1]
                parts, pos = [], a
                for ta, tb in toks:
                    parts += [t.text[pos:ta], new]
                    pos = tb
                yield _Cand("wrong_operator", a, b, "".join(parts), f"`{old}` -> `{new}`", func, fn)


def _droppable(st: ast.stmt) -> bool:
    if isinstance(st, ast.Expr):
        value = st.value.value if isinstance(st.value, ast.Await) else st.value
        ok = isinstance(value, ast.Call)
    elif isinstance(st, ast.AnnAssign):
        ok = st.value is not None
    else:
        ok = isinstance(st, (ast.Assign, ast.AugAssign))
    # Dropping a ``yield`` could turn a generator into a plain function.
    return ok and not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(st))


def _drop_statement(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for block, func, fn in scan.blocks:
        docstrings = [s for s in block if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)]
        if len(block) - len(docstrings) < 2:   # dropping would leave the block (nearly) empty
            continue
        for st in block:
            if _droppable(st):
                a, b = t.span(st)
                lines = t.whole_lines(st.lineno, _last_line(st), a, b)
                if lines:
                    yield _Cand("drop_statement", *lines, "", f"drop `{_short(t.text[a:b])}`", func, fn)


def _invert_condition(t: _Text, scan: _Scan) -> Iterator[_Cand]:
    for node, func, fn in scan.nodes:
        if not isinstance(node, (ast.If, ast.While, ast.IfExp)):
            continue
        kind = "ternary" if isinstance(node, ast.IfExp) else "while" if isinstance(node, ast.While) else \
            "elif" if t.is_elif(node) else "if"
        a, b = t.span(node.test)
        text = t.text[a:b]
        if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
            # Keep the operand exactly as written after ``not``, parentheses included: they are what
            # makes a multi-line or low-precedence operand valid on its own.
            repl = text[3:].lstrip(" \t\f\\\r\n")
        else:
            repl = f"not ({text})"
        yield _Cand("invert_condition", a, b, repl, f"invert `{kind}` condition `{_short(text)}`", func, fn)


_GENERATORS = {"comparison_flip": _comparison_flip, "off_by_one": _off_by_one,
               "swap_arguments": _swap_arguments, "remove_branch": _remove_branch,
               "change_return": _change_return, "wrong_operator": _wrong_operator,
               "drop_statement": _drop_statement, "invert_condition": _invert_condition}


# ---- public API

def _applies(t: _Text, c: _Cand) -> bool:
    """Does the candidate alone give a different source that parses?

    Only the enclosing function (decorators included) is re-parsed, under an ``if 1:`` header when
    it is indented: it is a compound statement that starts and ends on line boundaries, so the
    mutated module parses exactly when the mutated function does, at a fraction of the cost."""
    fn = c.fn
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    lo, hi = t.starts[first - 1], t.starts[_last_line(fn)]
    head = "if 1:\n" if fn.col_offset else ""
    if not lo <= c.a <= c.b <= hi:
        lo, hi, head = 0, len(t.text), ""
    new = t.text[lo:c.a] + c.repl + t.text[c.b:hi]
    if new == t.text[lo:hi]:
        return False
    try:
        ast.parse(head + new)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def find_sites(path: str, source: str, operators: Sequence[str] = OPERATORS) -> list[Site]:
    """Every mutation site of the given operators in one module's source, in a deterministic order
    (by position, then operator). Raises ValueError for an unknown operator name; a source that does
    not parse gives []."""
    wanted = {operators} if isinstance(operators, str) else set(operators)
    if wanted - set(OPERATORS):
        raise ValueError(f"unknown mutation operator(s) {sorted(wanted - set(OPERATORS))}; "
                         f"expected some of: {', '.join(OPERATORS)}")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    t = _Text(source)
    scan = _Scan()
    scan.defs(tree.body, "")
    found: dict[tuple, Site] = {}
    for op in (op for op in OPERATORS if op in wanted):
        for c in _GENERATORS[op](t, scan):
            key = (c.a, c.b, c.op, c.repl)
            if key in found or not _applies(t, c):
                continue
            start, end = t.position(c.a), t.position(c.b)
            last_line = t.position(max(c.a, c.b - 1))[0]
            found[key] = Site(c.op, path, start[0], last_line, c.func,
                              f"{c.what} in {c.func or '<module>'} (line {start[0]})", start, end, c.repl)
    return sorted(found.values(),
                  key=lambda s: (s.start, s.end, OPERATORS.index(s.operator), s.replacement))


def apply_sites(source: str, sites: Sequence[Site]) -> str:
    """``source`` with every site's span replaced by its replacement. Sites must belong to this source and
    must not overlap (ValueError naming both sites otherwise). The result always parses (ValueError otherwise)."""
    t = _Text(source)
    if len({s.path for s in sites}) > 1:
        raise ValueError(f"sites from several files: {sorted({s.path for s in sites})}")
    spans = []
    for s in sites:
        try:
            a, b = t.offset(*s.start), t.offset(*s.end)
        except ValueError as exc:
            raise ValueError(f"site {s.description!r} does not fit this source: {exc}") from None
        if a > b:
            raise ValueError(f"site {s.description!r} ends before it starts")
        spans.append((a, b, s))
    spans.sort(key=lambda x: (x[0], x[1]))
    prev = None   # the span reaching furthest so far; with spans sorted by start, it is the one to check
    for a, b, s in spans:
        if prev is not None and (a < prev[1] or a == prev[0]):
            raise ValueError(f"overlapping sites: {prev[2].description!r} and {s.description!r}")
        if prev is None or b > prev[1]:
            prev = (a, b, s)
    parts, pos = [], 0
    for a, b, s in spans:
        parts += [source[pos:a], s.replacement]
        pos = b
    parts.append(source[pos:])
    result = "".join(parts)
    try:
        ast.parse(result)
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"mutated source does not parse: {exc}") from None
    return result
