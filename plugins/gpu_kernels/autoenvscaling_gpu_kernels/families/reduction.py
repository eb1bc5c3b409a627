"""Reductions over the last dimension (sum, mean, max, min, of squares or abs, L2 norm) and the
whole-tensor Frobenius normalisation, which needs a global reduction before the elementwise scale."""

from __future__ import annotations

import random

from .base import DEFAULT_BAND, Problem, a, module_source, row_sizes
from .elementwise_chain import pick_dtype

NAME = "reduction"
DESCRIPTION = "Reduce each row (sum, mean, max, min, sum of squares, mean of |x|, L2 norm) or normalise by the Frobenius norm."
SKILLS = ["row reductions", "loops over long rows", "float32 accumulation", "grid-wide reduction with atomics",
          "masking with the reduction's identity"]

ROW_VARIANTS = ("sum", "mean", "amax", "amin", "sum_sq", "mean_abs", "l2")
#: one torch kernel already (a plain reduction) or a norm and a divide that need the same two reads
#: and one write a fused answer needs (frobenius): matching torch's time is a fair answer
_FUSED_IN_TORCH = {"sum", "mean", "amax", "amin", "l2", "frobenius"}
_CONCENTRATED = {"sum_sq", "mean_abs", "l2", "frobenius"}

# (torch forward, lane identity for masked loads, per-lane update of acc with x, finish from r = reduced acc)
_ROW = {
    "sum": ("x.sum(dim=-1)", "0.0", "acc += x", "tl.sum(acc, axis=0)", "sum"),
    "mean": ("x.mean(dim=-1)", "0.0", "acc += x", "tl.sum(acc, axis=0) / D", "mean"),
    "amax": ("x.amax(dim=-1)", 'float("-inf")', "acc = tl.maximum(acc, x)", "tl.max(acc, axis=0)", "maximum"),
    "amin": ("x.amin(dim=-1)", 'float("inf")', "acc = tl.minimum(acc, x)", "tl.min(acc, axis=0)", "minimum"),
    "sum_sq": ("x.pow(2).sum(dim=-1)", "0.0", "acc += x * x", "tl.sum(acc, axis=0)", "sum of squares"),
    "mean_abs": ("x.abs().mean(dim=-1)", "0.0", "acc += tl.abs(x)", "tl.sum(acc, axis=0) / D", "mean absolute value"),
    "l2": ("torch.linalg.vector_norm(x, dim=-1)", "0.0", "acc += x * x", "tl.sqrt(tl.sum(acc, axis=0))", "L2 norm"),
}

_ROW_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_reduce_kernel(x_ptr, out_ptr, D: tl.constexpr, BLOCK: tl.constexpr):
    # a row per program; per-lane partials over BLOCK-wide chunks, masked lanes hold the identity.
    # D is a compile-time constant: the loop bound is a plain int (the interpreter needs one) and masks fold
    row = tl.program_id(0)
    acc = tl.full([BLOCK], {identity}, tl.float32)
    for start in range(0, D, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * D + cols, mask=cols < D, other={identity}).to(tl.float32)
        {update}
    tl.store(out_ptr + row, ({finish}).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        D = x.shape[-1]
        out = torch.empty(x.shape[:-1], device=x.device, dtype=x.dtype)
        _row_reduce_kernel[(x.numel() // D,)](x, out, D=D, BLOCK={block})
        return out
'''

_FROBENIUS_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_sq_kernel(x_ptr, acc_ptr, N, BLOCK: tl.constexpr):
    # each program adds its chunk's sum of squares to one float32 accumulator
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0).to(tl.float32)
    tl.atomic_add(acc_ptr, tl.sum(x * x, axis=0))


@triton.jit
def _scale_kernel(x_ptr, acc_ptr, out_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inv = 1.0 / tl.sqrt(tl.load(acc_ptr))
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x * inv).to(out_ptr.dtype.element_ty), mask=offs < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        N = x.numel()
        acc = torch.zeros(1, device=x.device, dtype=torch.float32)
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(N, 1024),)
        _sum_sq_kernel[grid](x, acc, N, BLOCK=1024)
        _scale_kernel[grid](x, acc, out, N, BLOCK=1024)
        return out
'''


def build(rng: random.Random, level: int) -> Problem:
    variant = rng.choice(ROW_VARIANTS + (("frobenius",) if level > 1 else ()))
    # sums of |x| or x^2 concentrate around their mean (relative spread ~ 1/sqrt(DIM)), so at the
    # 1e-2 / 3e-2 tolerances of half types a constant would pass; float32's 1e-4 still tells them apart
    dtype = "float32" if variant in _CONCENTRATED else pick_dtype(rng)
    three_d = level == 3 and variant != "frobenius"
    cpu, gpu = row_sizes(rng, level if three_d else min(level, 2))  # frobenius: a (ROWS, DIM) matrix at hard too
    tdt = f"torch.{dtype}"
    x_shape = "BATCH, SEQ, DIM" if three_d else "ROWS, DIM"
    shape = " x ".join(str(v) for v in gpu.values())
    if variant == "frobenius":
        forward, what = "x / torch.linalg.vector_norm(x)", "x divided by its Frobenius norm"
        operation = f"x divided by its Frobenius norm (the L2 norm of all its elements), for {a(f'{shape} {dtype}')} tensor x"
        solution = _FROBENIUS_SOLUTION
    else:
        forward, identity, update, finish, words = _ROW[variant]
        what = f"the {words} of each row of x over the last dimension"
        operation = f"the {words} over the last dimension of {a(f'{shape} {dtype}')} tensor"
        block = "256" if level == 3 else "triton.next_power_of_2(D)"
        solution = _ROW_SOLUTION.format(identity=identity, update=update, finish=finish, block=block)
    reference = module_source(gpu, f"Computes {what}.", [f"return {forward}"], [f"torch.randn({x_shape}, dtype={tdt})"],
                              functional=False)
    return Problem(
        family=NAME, variant=variant, level=level, dtype=dtype,
        reference_source=reference, solution_source=solution, operation=operation,
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"variant": variant, "three_d": three_d},
        band=(0.05, 1.0) if variant in _FUSED_IN_TORCH else DEFAULT_BAND,
    )
