"""Scans along the last dimension: cumulative sums (scaled, reversed, exclusive) and cumulative max."""

from __future__ import annotations

import random

from .base import DEFAULT_BAND, Problem, a, module_source, row_model_new, row_sizes
from .elementwise_chain import decimal, pick_dtype

NAME = "scan"
DESCRIPTION = "Compute a prefix scan along each row: cumsum (scaled, reverse or exclusive) or cummax."
SKILLS = ["prefix scans", "carrying a running total across blocks", "reverse iteration", "associative_scan",
          "masking"]

VARIANTS = {1: ("cumsum", "scaled_cumsum"),
            2: ("cumsum", "scaled_cumsum", "reverse_cumsum", "exclusive_cumsum", "cummax"),
            3: ("scaled_cumsum", "reverse_cumsum", "exclusive_cumsum", "cummax")}
#: torch.cumsum is one kernel already; a scan kernel matching its time is a fair answer
_FUSED_IN_TORCH = {"cumsum", "cummax"}

_FORWARD = {
    "cumsum": "torch.cumsum(x, dim=-1)",
    "scaled_cumsum": "torch.cumsum(x * self.scale, dim=-1)",
    "reverse_cumsum": "torch.flip(torch.cumsum(torch.flip(x, dims=[-1]), dim=-1), dims=[-1])",
    "exclusive_cumsum": "torch.cumsum(x, dim=-1) - x",
    "cummax": "torch.cummax(x, dim=-1).values",
}
_WORDS = {
    "cumsum": "cumulative sum", "scaled_cumsum": "cumulative sum of x * {scale}",
    "reverse_cumsum": "reverse cumulative sum (each element plus all after it)",
    "exclusive_cumsum": "exclusive cumulative sum (the sum of the elements before each one)",
    "cummax": "cumulative maximum",
}

_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl
{combine}

@triton.jit
def _scan_kernel(x_ptr, out_ptr, scale, D: tl.constexpr, BLOCK: tl.constexpr):
    # a row per program, chunk by chunk{direction}; carry holds the scan of the chunks already done
    # (D is a compile-time constant so the loop bound is a plain int, which the interpreter needs)
    row = tl.program_id(0)
    carry = tl.full([1], {identity}, tl.float32)
    for i in range(0, (D + BLOCK - 1) // BLOCK):
        cols = {start} + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + cols, mask=cols < D, other={identity}).to(tl.float32) * scale
        {scan}
        tl.store(out_ptr + row * D + cols, y.to(out_ptr.dtype.element_ty), mask=cols < D)

'''

_MAX_COMBINE = '''
@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)
'''

_SCAN = {
    "cumsum": "y = tl.cumsum(x, axis=0) + carry\n        carry += tl.sum(x, axis=0)",
    "reverse_cumsum": "y = tl.cumsum(x, axis=0, reverse=True) + carry\n        carry += tl.sum(x, axis=0)",
    "exclusive_cumsum": "y = tl.cumsum(x, axis=0) - x + carry\n        carry += tl.sum(x, axis=0)",
    "cummax": "y = tl.maximum(tl.associative_scan(x, 0, _max_combine), carry)\n"
              "        carry = tl.maximum(carry, tl.max(x, axis=0))",
}


def build(rng: random.Random, level: int) -> Problem:
    variant = rng.choice(VARIANTS[level])
    # sums are kept in float32: the reference's low-precision running total drifts with the row
    # length differently on each device, while a max is exact in any dtype
    dtype = pick_dtype(rng) if variant == "cummax" else "float32"
    scale = decimal(rng, 0.25, 2.0)
    if level < 3:
        cpu, gpu = row_sizes(rng, level)
    else:   # rows longer than the kernel's fixed block
        cpu = {"ROWS": rng.randrange(5, 9, 2), "DIM": rng.randrange(301, 601, 2)}
        gpu = {"ROWS": rng.choice([2048, 4096]), "DIM": rng.choice([12289, 16383])}
    scaled = variant == "scaled_cumsum"
    tdt = f"torch.{dtype}"
    words = _WORDS[variant].format(scale=scale)
    reference = module_source(gpu, f"Row-wise {words} along the last dimension.", [f"return {_FORWARD[variant]}"],
                              [f"torch.randn(ROWS, DIM, dtype={tdt})"], init_args="scale" if scaled else "",
                              init_body="        self.scale = scale\n" if scaled else "",
                              init_vals=str(scale) if scaled else "", functional=False)
    reverse = variant == "reverse_cumsum"
    solution = _SOLUTION.format(
        combine=_MAX_COMBINE if variant == "cummax" else "",
        direction=", last chunk first" if reverse else "",
        identity='float("-inf")' if variant == "cummax" else "0.0",
        start="((D + BLOCK - 1) // BLOCK - 1 - i) * BLOCK" if reverse else "i * BLOCK",
        scan=_SCAN["cumsum" if scaled else variant],
    ) + row_model_new("_scan_kernel", level, init_args=", scale" if scaled else "",
                      init_body="        self.scale = scale\n" if scaled else "", launch_args="self.scale" if scaled else "1.0")
    return Problem(
        family=NAME, variant=variant, level=level, dtype=dtype,
        reference_source=reference, solution_source=solution,
        operation=f"the row-wise {words}, along the last dimension of {a(str(gpu['ROWS']))} x {gpu['DIM']} {dtype} tensor",
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"variant": variant, **({"scale": scale} if scaled else {})},
        band=(0.05, 1.0) if variant in _FUSED_IN_TORCH else DEFAULT_BAND,
    )
