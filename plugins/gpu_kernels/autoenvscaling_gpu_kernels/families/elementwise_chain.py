"""Chains of elementwise ops on one or two tensors, fused into one Triton kernel.

Also the elementwise vocabulary the other families reuse: ``pick_dtype``, ``decimal``,
``activation`` (the same op written for torch, for Triton and in words) and ``TANH_JIT``.
"""

from __future__ import annotations

import random
from typing import Any

from .base import Problem, a, module_source

NAME = "elementwise_chain"
DESCRIPTION = "Fuse a chain of elementwise ops (scales, shifts, activations, clamps) into one kernel."
SKILLS = ["elementwise fusion", "masking", "strided loads", "broadcasting", "float32 compute for low precision"]

#: tl has no tanh; 2 * sigmoid(2z) - 1 equals it and saturates without overflow
TANH_JIT = '''

@triton.jit
def _tanh(z):
    return 2.0 * tl.sigmoid(2.0 * z) - 1.0
'''
ACTIVATIONS = ("relu", "leaky_relu", "gelu", "silu", "sigmoid", "tanh")


def pick_dtype(rng: random.Random, allowed: tuple[str, ...] = ("float32", "float16", "bfloat16")) -> str:
    """float32 half the time; the other allowed dtypes share the rest equally."""
    others = [d for d in allowed if d != "float32"]
    if not others or rng.random() < 0.5:
        return "float32"
    return rng.choice(others)


def decimal(rng: random.Random, lo: float, hi: float, step: float = 0.05) -> float:
    """A short decimal in [lo, hi] on a grid of ``step`` (constants people would write)."""
    return round(rng.randint(round(lo / step), round(hi / step)) * step, 2)


def activation(name: str, v: str, slope: float = 0.1) -> tuple[str, str, str]:
    """(torch expression, Triton expression, words) applying activation ``name`` to ``v``."""
    return {
        "relu": (f"torch.relu({v})", f"tl.maximum({v}, 0.0)", f"relu({v})"),
        "leaky_relu": (f"F.leaky_relu({v}, {slope})", f"tl.where({v} >= 0.0, {v}, {v} * {slope})",
                       f"leaky_relu({v}, {slope})"),
        "gelu": (f'F.gelu({v}, approximate="tanh")',
                 f"0.5 * {v} * (1.0 + _tanh(0.7978845608028654 * ({v} + 0.044715 * {v} * {v} * {v})))",
                 f"gelu_tanh({v})"),
        "silu": (f"F.silu({v})", f"{v} * tl.sigmoid({v})", f"silu({v})"),
        "sigmoid": (f"torch.sigmoid({v})", f"tl.sigmoid({v})", f"sigmoid({v})"),
        "tanh": (f"torch.tanh({v})", f"_tanh({v})", f"tanh({v})"),
    }[name]


_BOUNDED = {"tanh", "sigmoid", "clamp"}   # exp only follows these, so it cannot overflow
_UNARY = ["scale", "shift", "tanh", "sigmoid", "relu", "leaky_relu", "gelu", "silu", "clamp", "square", "abs", "exp"]


def _chain(rng: random.Random, length: int) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    while len(ops) < length:
        name = rng.choice(_UNARY)
        prev = ops[-1]["op"] if ops else None
        if name == prev or (name == "exp" and prev not in _BOUNDED):
            continue
        if name == "square" and any(o["op"] == "square" for o in ops):
            continue   # one square at most keeps float16 far from overflow
        op: dict[str, Any] = {"op": name}
        if name == "scale":
            op["c"] = decimal(rng, 0.25, 2.0)
        elif name == "shift":
            op["c"] = rng.choice([-1, 1]) * decimal(rng, 0.1, 1.0)
        elif name == "leaky_relu":
            op["c"] = decimal(rng, 0.01, 0.3, 0.01)
        elif name == "clamp":
            op["lo"], op["hi"] = -decimal(rng, 0.25, 1.5), decimal(rng, 0.25, 1.5)
        ops.append(op)
    return ops


def _code(op: dict, expr: str) -> tuple[str, str, str]:
    """(torch statement rhs, Triton statement rhs, words for ``expr``) for one op on ``v``."""
    name, c = op["op"], op.get("c")
    if name in ACTIVATIONS:
        t, k, _ = activation(name, "v", c if c is not None else 0.1)
        return t, k, activation(name, expr, c if c is not None else 0.1)[2]
    if name == "shift" and c is not None and c < 0:  # a shift always has its constant
        return f"v - {-c}", f"v - {-c}", f"{expr} - {-c}"
    return {
        "scale": (f"v * {c}", f"v * {c}", f"{expr} * {c}"),
        "shift": (f"v + {c}", f"v + {c}", f"{expr} + {c}"),
        "mul_y": ("v * y", "v * y", f"{expr} * y"),
        "add_y": ("v + y", "v + y", f"{expr} + y"),
        "clamp": (f"torch.clamp(v, {op.get('lo')}, {op.get('hi')})",
                  f"tl.minimum(tl.maximum(v, {op.get('lo')}), {op.get('hi')})",
                  f"clamp({expr}, {op.get('lo')}, {op.get('hi')})"),
        "square": ("v * v", "v * v", f"({expr})^2"),
        "abs": ("torch.abs(v)", "tl.abs(v)", f"|{expr}|"),
        "exp": ("torch.exp(v)", "tl.exp(v)", f"exp({expr})"),
    }[name]


def build(rng: random.Random, level: int) -> Problem:
    dtype = pick_dtype(rng)
    # two unary ops at least: torch runs one kernel per op, so a single op leaves nothing to fuse;
    # medium and hard chains also read y, making 3-4 and 5-6 ops in all
    length = {1: 2, 2: rng.randint(2, 3), 3: rng.randint(4, 5)}[level]
    ops = _chain(rng, length)
    two_inputs = level > 1 or rng.random() < 0.5
    layout = "same"   # y's shape: same as x, a (COLS,) row vector, or a (ROWS, 1) column
    x_transposed = False
    if two_inputs:
        ops.insert(rng.randint(0, len(ops)), {"op": rng.choice(["mul_y", "add_y"])})
    if level == 3:
        layout = rng.choice(["row", "column"])
        x_transposed = rng.random() < 0.5
    if level == 1:
        cpu = dict(zip(("ROWS", "COLS"), rng.choice([(16, 64), (8, 128), (32, 32)])))
        gpu = dict(zip(("ROWS", "COLS"), rng.choice([(4096, 8192), (8192, 4096), (2048, 16384)])))
    else:
        cpu = {"ROWS": rng.randrange(5, 24, 2), "COLS": rng.randrange(65, 171, 2)}
        gpu = {"ROWS": rng.choice([3000, 4093, 5000]), "COLS": rng.choice([6007, 7001, 8191])}

    variant = f"chain{len(ops)}" + ("_2in" if two_inputs else "") + (f"_{layout}" if layout != "same" else "") \
        + ("_xT" if x_transposed else "")
    words = "x"
    torch_lines, triton_lines = [], []
    for op in ops:
        t, k, words = _code(op, words)
        torch_lines.append(f"v = {t}")
        triton_lines.append(f"    v = {k}")
    tdt = f"torch.{dtype}"
    x_new = f"torch.randn(COLS, ROWS, dtype={tdt}).t()" if x_transposed else f"torch.randn(ROWS, COLS, dtype={tdt})"
    y_new = {"same": f"torch.randn(ROWS, COLS, dtype={tdt})", "row": f"torch.randn(COLS, dtype={tdt})",
             "column": f"torch.randn(ROWS, 1, dtype={tdt})"}[layout]
    args = "x, y" if two_inputs else "x"
    inputs = [x_new, y_new] if two_inputs else [x_new]
    reference = module_source(gpu, f"Elementwise: {words}.", ["v = x", *torch_lines, "return v"], inputs, args=args)
    y_strides = {"same": "y.stride(0), y.stride(1)", "row": "0, y.stride(0)", "column": "y.stride(0), 0"}[layout]
    y_load = "    y = tl.load(y_ptr + rows * syr + cols * syc, mask=mask, other=0.0).to(tl.float32)\n" if two_inputs else ""
    uses_tanh = any(o["op"] in ("tanh", "gelu") for o in ops)
    solution = f'''import torch
import torch.nn as nn
import triton
import triton.language as tl
{TANH_JIT if uses_tanh else ""}

@triton.jit
def _chain_kernel(x_ptr, y_ptr, out_ptr, R, C, sxr, sxc, syr, syc,
                  BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # one BLOCK_R x BLOCK_C tile per program; strides let x be transposed and y broadcast (stride 0)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (rows < R) & (cols < C)
    v = tl.load(x_ptr + rows * sxr + cols * sxc, mask=mask, other=0.0).to(tl.float32)
{y_load}{chr(10).join(triton_lines)}
    tl.store(out_ptr + rows * C + cols, v.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, {args}):
        R, C = x.shape
        out = torch.empty((R, C), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(R, 8), triton.cdiv(C, 256))
        _chain_kernel[grid](x, {"y" if two_inputs else "x"}, out, R, C, x.stride(0), x.stride(1), {y_strides if two_inputs else "0, 0"},
                            BLOCK_R=8, BLOCK_C=256)
        return out
'''
    shape_words = f"{gpu['ROWS']} x {gpu['COLS']} {dtype} tensor x"
    if x_transposed:
        shape_words += " (a transposed, non-contiguous view)"
    if two_inputs:
        shape_words += {"same": " and a same-shaped tensor y", "row": f" and a length-{gpu['COLS']} vector y broadcast over rows",
                        "column": f" and {a(str(gpu['ROWS']))} x 1 column y broadcast over columns"}[layout]
    return Problem(
        family=NAME, variant=variant, level=level, dtype=dtype,
        reference_source=reference, solution_source=solution,
        operation=f"the elementwise expression {words} on {a(shape_words)}",
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"ops": ops, "two_inputs": two_inputs, "y_layout": layout, "x_transposed": x_transposed},
    )
