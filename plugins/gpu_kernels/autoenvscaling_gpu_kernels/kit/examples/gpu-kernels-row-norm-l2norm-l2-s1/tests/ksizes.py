"""A reference module's sizes: read from its source, and overridden in its source before it runs.

Sizes are top-level assignments whose value is an int, an int expression (``N = 2048 * 2``) or a
tuple of them (``input_shape = (32768,)``). Overrides replace those values in the source, so the
constants computed from them (``input_shape = (num_classes,)``) follow; setting module attributes
after the module ran would leave them stale. Standard library only: the harness imports it.
"""

from __future__ import annotations

import ast
import operator

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Pow: operator.pow}


def _value(node: ast.AST) -> int | tuple | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _value(node.left), _value(node.right)
        if isinstance(left, int) and isinstance(right, int) and (type(node.op) is not ast.Pow or 0 <= right <= 64):
            return _OPS[type(node.op)](left, right)
        return None
    if isinstance(node, ast.Tuple) and node.elts:
        items = [_value(e) for e in node.elts]
        return tuple(items) if all(isinstance(i, int) for i in items) else None
    return None


def size_constants(source: str) -> dict[str, int | list[int]]:
    """``NAME = <int, int expression or tuple of ints>`` at top level, in order (tuples as lists)."""
    out: dict[str, int | list[int]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _value(node.value)
            if value is not None:
                out[node.targets[0].id] = list(value) if isinstance(value, tuple) else value
    return out


def with_sizes(source: str, sizes: dict | None) -> str:
    """``source`` with the top-level assignments of ``sizes``' names set to its values."""
    if not sizes:
        return source
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in sizes:
                value = sizes[name]
                node.value = ast.parse(repr(tuple(value) if isinstance(value, list) else int(value)), mode="eval").body
    return ast.unparse(ast.fix_missing_locations(tree))
