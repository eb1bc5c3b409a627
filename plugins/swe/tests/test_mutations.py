"""Tests for the SWE bug injector's mutation operators (autoenvscaling_swe/mutations.py)."""

import ast
import importlib.util
import pathlib
import sys
import textwrap

import pytest

_PATH = pathlib.Path(__file__).resolve().parent.parent / "autoenvscaling_swe" / "mutations.py"
_SPEC = importlib.util.spec_from_file_location("swe_mutations_under_test", _PATH)
M = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = M          # dataclasses look the module up while building Site
_SPEC.loader.exec_module(M)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def find(source: str, op: str) -> list:
    return M.find_sites("pkg/mod.py", source, [op])


def one(source: str, op: str, line: int, replacement: str):
    """The single site of ``op`` starting on ``line`` with ``replacement``."""
    hits = [s for s in find(source, op) if s.line == line and s.replacement == replacement]
    assert len(hits) == 1, find(source, op)
    return hits[0]


def applied(source: str, site) -> str:
    out = M.apply_sites(source, [site])
    ast.parse(out)
    assert out != source
    return out


# ---------------------------------------------------------------------------------- operators

@pytest.mark.parametrize("old,new", [("<", "<="), ("<=", "<"), (">", ">="), (">=", ">"), ("==", "!="),
                                     ("!=", "=="), ("in", "not in"), ("not in", "in"), ("is", "is not"),
                                     ("is not", "is")])
def test_comparison_flip_each_operator(old, new):
    code = src(f"""
        def f(a, b):
            return a {old} b  # keep me
        """)
    (site,) = find(code, "comparison_flip")
    assert (site.line, site.replacement, site.function) == (2, f"a {new} b", "f")
    assert site.start == (2, 11) and site.end == (2, 11 + len(f"a {old} b"))
    assert applied(code, site) == code.replace(f"a {old} b", f"a {new} b")


def test_comparison_flip_keeps_operand_formatting_and_skips_chains():
    code = src("""
        def clamp(x, lo, hi):
            if (x)<lo :   # below
                return lo
            return lo < x < hi
        """)
    (site,) = find(code, "comparison_flip")
    assert site.replacement == "(x)<=lo"        # the span is the whole comparison, parentheses included
    assert applied(code, site) == code.replace("(x)<lo :", "(x)<=lo :")
    assert "`<` -> `<=` in clamp (line 2)" == site.description


def test_off_by_one():
    code = src("""
        def window(items, start):
            end = start + 2
            for i in range(len(items)):
                if i > 0:
                    yield items[i - 1:end]
            flag = start + True + 5000
        """)
    got = {(s.line, s.replacement) for s in find(code, "off_by_one")}
    assert got == {(2, "3"), (2, "1"), (3, "len(items) - 1"), (4, "1"), (5, "2"), (5, "0")}
    assert applied(code, one(code, "off_by_one", 2, "3")) == code.replace("start + 2", "start + 3")
    assert applied(code, one(code, "off_by_one", 3, "len(items) - 1")) == \
        code.replace("range(len(items))", "range(len(items) - 1)")
    assert applied(code, one(code, "off_by_one", 5, "0")) == code.replace("[i - 1:end]", "[i - 0:end]")


def test_off_by_one_subscript_index_and_comparison_len():
    code = src("""
        def last_ok(xs, i):
            return xs[0] if i < len(xs) else None
        """)
    got = {(s.start, s.replacement) for s in find(code, "off_by_one")}
    assert got == {((2, 14), "1"), ((2, 24), "len(xs) - 1")}


def test_swap_arguments():
    code = src("""
        def area(w, h, args):
            value = compute(w, h, scale=2)
            print(w, h)
            ok = isinstance(w, int) and max(w, h) and same(w, w)
            return spread(*args, w) or call(w, h, **args)
        """)
    (site,) = find(code, "swap_arguments")
    assert site.line == 2 and site.replacement == "h, w"
    assert applied(code, site) == code.replace("compute(w, h,", "compute(h, w,")


def test_swap_arguments_multiline_keeps_separator():
    code = src("""
        def f(a, b):
            return g(
                a,  # first
                b.value,
            )
        """)
    (site,) = find(code, "swap_arguments")
    assert applied(code, site) == code.replace("a,  # first\n        b.value", "b.value,  # first\n        a")


SIGN = src("""
    def sign(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1
        else:
            return 0


    def first(items):
        for item in items:
            if item is None:
                continue
            return item
    """)


def test_remove_branch_else_elif_and_guard():
    sites = find(SIGN, "remove_branch")
    assert [(s.line, s.end_line) for s in sites] == [(4, 7), (6, 7), (12, 13)]
    assert applied(SIGN, sites[0]) == SIGN.replace(
        "    elif x < 0:\n        return -1\n    else:\n        return 0\n", "")
    assert applied(SIGN, sites[1]) == SIGN.replace("    else:\n        return 0\n", "")
    assert applied(SIGN, sites[2]) == SIGN.replace("        if item is None:\n            continue\n", "")
    assert sites[0].start == (4, 0) and sites[0].end == (8, 0)
    assert "`elif`" in sites[0].description and "`else`" in sites[1].description


def test_remove_branch_guard_alone_becomes_pass():
    code = src("""
        def check(x):
            if x:
                if x < 0:  # negative
                    x = 0
            return x
        """)
    (site,) = find(code, "remove_branch")
    assert site.replacement == "        pass\n"
    assert applied(code, site) == code.replace("        if x < 0:  # negative\n            x = 0\n",
                                               "        pass\n")


@pytest.mark.parametrize("expr,new", [("True", "False"), ("False", "True"), ("3", "0"), ("0", "1"),
                                      ("2.5", "0"), ("-1", "0"), ("x", "None"), ("x.y(1)", "None"),
                                      ("a < b", "not (a < b)"), ("a and b", "not (a and b)"),
                                      ("'abc'", '""'), ("''", "None"), ("a, b", "None")])
def test_change_return(expr, new):
    code = f"def f(a, b, x):\n    return {expr}\n"
    (site,) = find(code, "change_return")
    assert applied(code, site) == f"def f(a, b, x):\n    return {new}\n"


def test_change_return_skips_none_and_bare_return():
    code = "def f(x):\n    if x:\n        return\n    return None\n"
    assert find(code, "change_return") == []


def test_wrong_operator():
    code = src("""
        def mix(a, b, s, c):
            total = a + b * 2
            total %= 7
            label = "n=" + s + f"{a}"
            pad = [0] * a
            return total // 3 if a and b else (a or b or c)
        """)
    got = [(s.line, s.replacement) for s in find(code, "wrong_operator")]
    assert got == [(2, "-"), (2, "/"), (3, "//="), (6, "/"), (6, "or"), (6, "and b and")]
    assert applied(code, find(code, "wrong_operator")[0]) == code.replace("a + b", "a - b")
    assert applied(code, one(code, "wrong_operator", 3, "//=")) == code.replace("%=", "//=")
    assert applied(code, one(code, "wrong_operator", 6, "and b and")) == code.replace("a or b or c",
                                                                                   "a and b and c")


def test_drop_statement():
    code = src("""
        def build(cfg):
            '''Doc.'''
            out = {}
            out.update(
                cfg,
            )
            log("built")
            for k in cfg:
                out[k] = 1
            x = yield out
            return out
        """)
    sites = find(code, "drop_statement")
    assert [(s.line, s.end_line) for s in sites] == [(3, 3), (4, 6), (7, 7)]
    assert applied(code, sites[1]) == code.replace("    out.update(\n        cfg,\n    )\n", "")
    assert applied(code, sites[0]) == code.replace("    out = {}\n", "")


def test_invert_condition():
    code = src("""
        def pick(a, b, flag):
            while not flag:
                flag = step()
            if a > b:
                return a
            elif not (a or
                      b):
                return 0
            return b if flag else a
        """)
    got = {(s.line, s.replacement) for s in find(code, "invert_condition")}
    assert got == {(2, "flag"), (4, "not (a > b)"), (6, "(a or\n              b)"), (9, "not (flag)")}
    assert applied(code, one(code, "invert_condition", 2, "flag")) == code.replace("while not flag", "while flag")
    assert applied(code, one(code, "invert_condition", 9, "not (flag)")) == \
        code.replace("b if flag else", "b if not (flag) else")
    assert applied(code, one(code, "invert_condition", 6, "(a or\n              b)")) == \
        code.replace("elif not (a or", "elif (a or")


# ---------------------------------------------------------------------------------- exclusions

EXCLUDED = src('''
    """Module docstring: x < 1 and a + b, return 0."""
    import functools

    THRESHOLD = 10 + 1
    if THRESHOLD > 5:
        THRESHOLD -= 1
        print(THRESHOLD, 2)


    class Config:
        size = 3 * 4

        def __init__(self, n=1 + 2, *, flag: "int" = 3 - 1):
            """Return a + b if x < 1 else not y."""
            self.n = n * 2


    @functools.lru_cache(maxsize=2 * 64)
    def cached(x: int = 5 - 1) -> "list[1 + 2]":
        """x < 1 and not y"""
        raise ValueError(f"bad {x + 1}", x < 2)


    def checked(x):
        assert x, "message %d" % (1 + 2)


    def fmt(x):
        print(f"{x + 1} {x < 3}")


    if __name__ == "__main__":
        def main(a, b):
            if a < b:
                return a + 1
            return f(b, a)
        main(1, 2)
    ''')


def test_nothing_outside_function_bodies():
    sites = M.find_sites("pkg/conf.py", EXCLUDED)
    assert {s.line for s in sites} == {15}     # `self.n = n * 2` only
    assert {s.operator for s in sites} == {"wrong_operator", "off_by_one"}
    assert {s.function for s in sites} == {"Config.__init__"}


def test_nested_function_qualname_and_unparsable_source():
    code = "def outer():\n    def inner(x):\n        return x + 1\n    return inner\n"
    assert {s.function for s in M.find_sites("m.py", code)} == {"outer", "outer.inner"}
    assert M.find_sites("m.py", "def broken(:\n    pass\n") == []
    with pytest.raises(ValueError, match="unknown mutation operator"):
        M.find_sites("m.py", code, ["comparison_flip", "nope"])


# ---------------------------------------------------------------------------------- combining

def test_two_sites_apply_together():
    flip = one(SIGN, "comparison_flip", 2, "x >= 0")
    ret = one(SIGN, "change_return", 7, "1")
    assert not M.overlaps(flip, ret)
    out = M.apply_sites(SIGN, [ret, flip])
    assert out == SIGN.replace("if x > 0:", "if x >= 0:").replace("return 0", "return 1")


def test_overlapping_sites_raise():
    flip = one(SIGN, "comparison_flip", 2, "x >= 0")
    const = one(SIGN, "off_by_one", 2, "1")
    assert M.overlaps(flip, const) and M.overlaps(const, flip)
    with pytest.raises(ValueError, match="overlapping") as err:
        M.apply_sites(SIGN, [flip, const])
    assert flip.description in str(err.value) and const.description in str(err.value)
    whole = one(SIGN, "remove_branch", 4, "")
    inner = one(SIGN, "change_return", 5, "0")
    with pytest.raises(ValueError, match="overlapping"):
        M.apply_sites(SIGN, [inner, whole])


def test_apply_rejects_foreign_sites_and_unparsable_results():
    site = one(SIGN, "change_return", 14, "None")
    with pytest.raises(ValueError):
        M.apply_sites("x = 1\n", [site])
    code = "def f(a):\n    a.x = 1\n    a.y = 2\n"
    both = find(code, "drop_statement")
    assert len(both) == 2
    with pytest.raises(ValueError, match="does not parse"):
        M.apply_sites(code, both)
    assert M.apply_sites(code, []) == code


def test_find_sites_is_deterministic_and_ordered():
    first = M.find_sites("pkg/real.py", REALISTIC)
    assert first == M.find_sites("pkg/real.py", REALISTIC)
    assert first == sorted(first, key=lambda s: (s.start, s.end, M.OPERATORS.index(s.operator),
                                                s.replacement))


# ---------------------------------------------------------------------------------- non-ASCII

def test_non_ascii_before_node_on_same_line():
    code = src("""
        def greet(name, n):
            label = "café" if name == "é" else name.upper()  # naïve
            values = ["ü", n + 1]; total = n * 2
            return label, values
        """)
    flip = one(code, "comparison_flip", 2, 'name != "é"')
    node = ast.parse(code).body[0].body[0].value.test
    assert flip.start == (2, node.col_offset) and flip.end == (2, node.end_col_offset)
    assert applied(code, flip) == code.replace('name == "é"', 'name != "é"')
    plus = one(code, "wrong_operator", 3, "-")
    assert applied(code, plus) == code.replace("n + 1", "n - 1")
    times = one(code, "wrong_operator", 3, "/")
    assert applied(code, times) == code.replace("n * 2", "n / 2")
    assert M.apply_sites(code, [plus, times, flip]) == \
        code.replace("n + 1", "n - 1").replace("n * 2", "n / 2").replace('name == "é"', 'name != "é"')
    # `values = ...; total = ...` share a line, so neither is dropped (whole-line removal only).
    assert {s.line for s in find(code, "drop_statement")} == {2}


def test_crlf_source():
    code = "def f(a):\r\n    a.x = 1\r\n    return a.x < 2\r\n"
    drop = one(code, "drop_statement", 2, "")
    assert applied(code, drop) == "def f(a):\r\n    return a.x < 2\r\n"
    flip = one(code, "comparison_flip", 3, "a.x <= 2")
    assert applied(code, flip) == code.replace("a.x < 2", "a.x <= 2")


# ---------------------------------------------------------------------------------- realistic

REALISTIC = src('''
    """A small interval / scheduling library used as a realistic mutation target."""

    import heapq
    from dataclasses import dataclass, field

    DEFAULT_STEP = 5


    @dataclass(order=True)
    class Interval:
        """Half-open interval [start, end)."""

        start: int
        end: int
        tags: list = field(default_factory=list, compare=False)

        def __post_init__(self):
            if self.end < self.start:
                raise ValueError(f"end {self.end} before start {self.start}")

        @property
        def length(self) -> int:
            return self.end - self.start

        def overlaps(self, other: "Interval") -> bool:
            """True when the two intervals share at least one point."""
            return self.start < other.end and other.start < self.end

        def contains(self, point: int) -> bool:
            return self.start <= point < self.end

        def merge(self, other: "Interval") -> "Interval":
            if not self.overlaps(other):
                raise ValueError("disjoint intervals")
            tags = self.tags + [t for t in other.tags if t not in self.tags]
            return Interval(min(self.start, other.start), max(self.end, other.end), tags)

        def split(self, at: int) -> tuple:
            if at <= self.start or at >= self.end:
                return self, None
            left = Interval(self.start, at, list(self.tags))
            right = Interval(at, self.end, list(self.tags))
            return left, right


    class Schedule:
        """A set of non-overlapping intervals kept sorted by start."""

        def __init__(self, intervals=()):
            self._items: list[Interval] = []
            for iv in intervals:
                self.add(iv)

        def __len__(self):
            return len(self._items)

        def __iter__(self):
            return iter(self._items)

        def add(self, iv: Interval) -> None:
            merged = iv
            keep = []
            for other in self._items:
                if merged.overlaps(other) or merged.end == other.start:
                    merged = merged.merge(other) if merged.overlaps(other) else Interval(
                        merged.start, other.end, merged.tags)
                else:
                    keep.append(other)
            keep.append(merged)
            keep.sort()
            self._items = keep

        def find(self, point: int):
            lo, hi = 0, len(self._items) - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                item = self._items[mid]
                if point < item.start:
                    hi = mid - 1
                elif point >= item.end:
                    lo = mid + 1
                else:
                    return item
            return None

        def total(self) -> int:
            return sum(iv.length for iv in self._items)

        def gaps(self, start: int, end: int) -> list:
            result = []
            cursor = start
            for iv in self._items:
                if iv.end <= cursor:
                    continue
                if iv.start > cursor:
                    result.append(Interval(cursor, min(iv.start, end)))
                cursor = max(cursor, iv.end)
                if cursor >= end:
                    break
            if cursor < end:
                result.append(Interval(cursor, end))
            return result

        def busiest(self, k: int = 2) -> list:
            heap = [(-iv.length, iv.start) for iv in self._items]
            heapq.heapify(heap)
            out = []
            while heap and len(out) < k:
                neg, start = heapq.heappop(heap)
                out.append(start)
            return out


    def chunk(values: list, size: int = DEFAULT_STEP) -> list:
        """Split values into lists of at most size items."""
        if size <= 0:
            raise ValueError("size must be positive")
        chunks = []
        for i in range(0, len(values), size):
            chunks.append(values[i:i + size])
        return chunks


    def histogram(values, buckets=4):
        if not values:
            return {}
        lo, hi = min(values), max(values)
        width = (hi - lo) / buckets or 1
        counts = {b: 0 for b in range(buckets)}
        for v in values:
            index = int((v - lo) // width)
            if index == buckets:
                index -= 1
            counts[index] += 1
        return counts


    def percent(part, whole):
        if whole == 0:
            return 0.0
        ratio = part * 100 / whole
        return round(ratio % 101, 1)


    def describe(schedule: Schedule) -> str:
        parts = []
        for iv in schedule:
            label = "{}-{}".format(iv.start, iv.end)
            parts.append(label + " [" + ", ".join(iv.tags) + "]" if iv.tags else label)
        return "; ".join(parts)


    if __name__ == "__main__":
        s = Schedule([Interval(1, 3), Interval(2, 5), Interval(8, 9)])
        print(describe(s), s.total(), percent(s.total(), 10))
    ''')


def test_realistic_module_covers_all_operators_and_every_site_applies():
    assert 140 <= len(REALISTIC.splitlines()) <= 200
    exec(compile(REALISTIC, "realistic", "exec"), {"__name__": "realistic_sample"})   # sample is real code
    sites = M.find_sites("pkg/intervals.py", REALISTIC)
    counts = {op: sum(s.operator == op for s in sites) for op in M.OPERATORS}
    assert all(counts.values()), counts
    main_line = REALISTIC.splitlines().index('if __name__ == "__main__":') + 1
    for site in sites:
        assert site.path == "pkg/intervals.py" and site.line <= site.end_line < main_line
        assert site.function, site
        out = M.apply_sites(REALISTIC, [site])
        assert out != REALISTIC
        ast.parse(out)
    # Every operator restricted to itself finds exactly its share of the full run.
    for op in M.OPERATORS:
        assert len(M.find_sites("pkg/intervals.py", REALISTIC, [op])) == counts[op]
