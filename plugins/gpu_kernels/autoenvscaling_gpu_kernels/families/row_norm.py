"""Row-wise normalisations over the last dimension: softmax, log-softmax, layernorm, rmsnorm, L2."""

from __future__ import annotations

import random

from .base import DEFAULT_BAND, Problem, a, module_source, row_model_new, row_sizes
from .elementwise_chain import decimal, pick_dtype

NAME = "row_norm"
DESCRIPTION = "Normalise each row: scaled softmax or log-softmax, layernorm, rmsnorm or L2 normalisation."
SKILLS = ["row reductions", "numerically stable softmax", "multi-pass loops over long rows", "masking",
          "float32 accumulation"]

VARIANTS = ("softmax", "log_softmax", "layernorm", "rmsnorm", "l2norm")
#: torch runs these as one fused kernel (softmax and layernorm) or a norm and a divide that a kernel
#: only beats by one pass (F.normalize), so a kernel matching torch's time is a fair answer
_FUSED_IN_TORCH = {"softmax", "log_softmax", "layernorm", "l2norm"}

_FORWARD = {
    "softmax": "torch.softmax(x * self.scale, dim=-1)",
    "log_softmax": "torch.log_softmax(x * self.scale, dim=-1)",
    "layernorm": "F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, self.eps)",
    "rmsnorm": "x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight",
    "l2norm": "F.normalize(x, p=2.0, dim=-1)",
}

# Kernel bodies: a row per program; passes over the row in BLOCK-wide chunks (one chunk when BLOCK
# covers the row) accumulate float32 per-lane partials, reduced once after the loop. D is a
# compile-time constant: loop bounds are plain ints (the Triton interpreter with numpy >= 2.4 cannot
# turn a runtime scalar into a range bound) and the masks fold away when BLOCK divides D.
_LOAD = "tl.load(x_row + cols, mask=cols < D, other={other}).to(tl.float32)"
_LOOP = "    for start in range(0, D, BLOCK):\n        cols = start + tl.arange(0, BLOCK)\n"
_STORE = "        tl.store(o_row + cols, y.to(out_ptr.dtype.element_ty), mask=cols < D)\n"
_SOFTMAX_STATS = (
    "    mx = tl.full([BLOCK], float(\"-inf\"), tl.float32)\n" + _LOOP
    + "        mx = tl.maximum(mx, " + _LOAD.format(other='float("-inf")') + " * scale)\n"
    + "    m = tl.max(mx, axis=0)\n    acc = tl.zeros([BLOCK], dtype=tl.float32)\n" + _LOOP
    + "        acc += tl.exp(" + _LOAD.format(other='float("-inf")') + " * scale - m)\n"
    + "    s = tl.sum(acc, axis=0)\n" + _LOOP
    + "        z = " + _LOAD.format(other="0.0") + " * scale\n")
_SUMSQ = ("    acc = tl.zeros([BLOCK], dtype=tl.float32)\n" + _LOOP
          + "        x = " + _LOAD.format(other="0.0") + "\n        acc += x * x\n"
          + "    ss = tl.sum(acc, axis=0)\n")
_WEIGHT = "        w = tl.load(w_ptr + cols, mask=cols < D, other=0.0).to(tl.float32)\n"
_KERNEL = {
    "softmax": ("scale", _SOFTMAX_STATS + "        y = tl.exp(z - m) / s\n"),
    "log_softmax": ("scale", _SOFTMAX_STATS + "        y = z - m - tl.log(s)\n"),
    "layernorm": ("w_ptr, b_ptr, eps",
                  "    acc = tl.zeros([BLOCK], dtype=tl.float32)\n" + _LOOP
                  + "        acc += " + _LOAD.format(other="0.0") + "\n"
                  + "    mean = tl.sum(acc, axis=0) / D\n    acc = tl.zeros([BLOCK], dtype=tl.float32)\n" + _LOOP
                  + "        d = tl.where(cols < D, " + _LOAD.format(other="0.0") + " - mean, 0.0)\n"
                  + "        acc += d * d\n"
                  + "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / D + eps)\n" + _LOOP
                  + "        x = " + _LOAD.format(other="0.0") + "\n" + _WEIGHT
                  + "        b = tl.load(b_ptr + cols, mask=cols < D, other=0.0).to(tl.float32)\n"
                  + "        y = (x - mean) * rstd * w + b\n"),
    "rmsnorm": ("w_ptr, eps", _SUMSQ + "    r = tl.rsqrt(ss / D + eps)\n" + _LOOP
                + "        x = " + _LOAD.format(other="0.0") + "\n" + _WEIGHT + "        y = x * r * w\n"),
    "l2norm": ("eps", _SUMSQ + "    n = tl.maximum(tl.sqrt(ss), eps)\n" + _LOOP
               + "        y = " + _LOAD.format(other="0.0") + " / n\n"),
}


def build(rng: random.Random, level: int) -> Problem:
    dtype = pick_dtype(rng)
    variant = rng.choice(VARIANTS)
    scale = decimal(rng, 0.25, 2.0)
    eps = rng.choice([1e-5, 1e-6])
    cpu, gpu = row_sizes(rng, level)  # hard: rows longer than the kernel's block, walked in chunks
    tdt = f"torch.{dtype}"
    init = {"softmax": ("scale", str(scale)), "log_softmax": ("scale", str(scale)), "layernorm": ("dim, eps", f"DIM, {eps}"),
            "rmsnorm": ("dim, eps", f"DIM, {eps}"), "l2norm": ("", "")}[variant]
    members = {
        "softmax": ["self.scale = scale"], "log_softmax": ["self.scale = scale"],
        "layernorm": ["self.eps = eps", f"self.weight = nn.Parameter(torch.randn(dim, dtype={tdt}))",
                      f"self.bias = nn.Parameter(torch.randn(dim, dtype={tdt}))"],
        "rmsnorm": ["self.eps = eps", f"self.weight = nn.Parameter(torch.randn(dim, dtype={tdt}))"],
        "l2norm": [],
    }[variant]
    init_body = "".join(f"        {m}\n" for m in members)
    x_shape = "BATCH, SEQ, DIM" if level == 3 else "ROWS, DIM"
    what = {"softmax": f"softmax of x * {scale}", "log_softmax": f"log-softmax of x * {scale}",
            "layernorm": f"layernorm (eps {eps}, learned weight and bias)",
            "rmsnorm": f"RMS normalisation (eps {eps}, learned weight)", "l2norm": "L2 normalisation"}[variant]
    reference = module_source(gpu, f"Row-wise {what} over the last dimension.", [f"return {_FORWARD[variant]}"],
                              [f"torch.randn({x_shape}, dtype={tdt})"], init_args=init[0], init_body=init_body,
                              init_vals=init[1])
    extra, body = _KERNEL[variant]
    launch_extra = {"softmax": "self.scale", "log_softmax": "self.scale", "layernorm": "self.weight, self.bias, self.eps",
                    "rmsnorm": "self.weight, self.eps", "l2norm": "1e-12"}[variant]
    solution = f'''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_kernel(x_ptr, out_ptr, {extra}, D: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * D
    o_row = out_ptr + row * D
{body}{_STORE}
''' + row_model_new("_row_kernel", level, init_args=", " + init[0] if init[0] else "", init_body=init_body,
                    launch_args=launch_extra)
    shape = " x ".join(str(v) for v in gpu.values())
    return Problem(
        family=NAME, variant=variant, level=level, dtype=dtype,
        reference_source=reference, solution_source=solution,
        operation=f"row-wise {what}, over the last dimension of {a(f'{shape} {dtype}')} tensor",
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"variant": variant, **({"scale": scale} if "softmax" in variant else {}),
                **({"eps": eps} if variant in ("layernorm", "rmsnorm") else {})},
        band=(0.05, 1.0) if variant in _FUSED_IN_TORCH else DEFAULT_BAND,
    )
