"""A tiled matmul with its elementwise epilogue (bias, activation, scale, residual) in the same kernel."""

from __future__ import annotations

import random

from .base import Problem, a, module_source
from .elementwise_chain import ACTIVATIONS, TANH_JIT, activation, decimal, pick_dtype

NAME = "matmul_epilogue"
DESCRIPTION = "Write a tiled tl.dot matmul whose epilogue applies a bias, an activation, a scale or a residual add."
SKILLS = ["tiled matmul with tl.dot", "K-loop accumulation in float32", "fused epilogue", "masking ragged tiles",
          "strided operands"]

#: the GEMM dominates and cuBLAS sets its pace; fusing the epilogue only saves a few elementwise
#: passes over the output, so matching torch's time is a fair answer
BAND = (0.05, 1.0)

_SOLUTION = '''import torch
import torch.nn as nn
import triton
import triton.language as tl
{tanh}

@triton.jit
def _matmul_kernel(a_ptr, b_ptr, out_ptr, {extra_params}M, N, sam, sak, sbk, sbn,
                   K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # one BLOCK_M x BLOCK_N output tile per program; B is read through its strides (W^T for a Linear)
    # (K is a compile-time constant so the K loop's bound is a plain int, which the interpreter needs)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * sam + ks[None, :] * sak, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * sbk + rn[None, :] * sbn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b{precision})
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = acc
{epilogue}
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], v.to(out_ptr.dtype.element_ty), mask=mask)


def _blocks(M, N):
    # large tiles for GPU-sized problems, small ones where the interpreter runs tiny CPU shapes
    return (64, 64, 32) if M * N >= 1 << 20 else (32, 32, 16)


class ModelNew(nn.Module):
    def __init__(self{init_args}):
        super().__init__()
{init_body}
    def forward(self, {args}):
{operands}
        out = torch.empty((M, N), device=a.device, dtype=a.dtype)
        BM, BN, BK = _blocks(M, N)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        _matmul_kernel[grid](a, b, out, {extra_args}M, N, a.stride(0), a.stride(1), {b_strides},
                             K=K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        return out
'''

_RESIDUAL = "    v = v + tl.load(r_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0).to(tl.float32)"


def build(rng: random.Random, level: int) -> Problem:
    # no bfloat16: the Triton interpreter's bfloat16 tl.dot is wrong, so the answer could not be checked on CPU
    dtype = pick_dtype(rng, ("float32", "float16"))
    variant = rng.choice(["linear_act", "matmul_scale_residual"])
    act = "relu" if level == 1 else rng.choice(ACTIVATIONS)
    slope = decimal(rng, 0.01, 0.3, 0.01)
    scale = decimal(rng, 0.25, 2.0)
    # linear_act gains a residual at level 3; matmul_scale_residual has one from level 2 and reads
    # B transposed (a non-contiguous view) at level 3
    residual = (variant == "linear_act" and level == 3) or (variant == "matmul_scale_residual" and level > 1)
    b_transposed = variant == "matmul_scale_residual" and level == 3
    if level == 1:
        cpu = dict(zip("MNK", rng.choice([(32, 32, 32), (64, 32, 32), (32, 64, 16)])))
        gpu = dict(zip("MNK", rng.choice([(4096, 4096, 4096), (4096, 2048, 4096), (2048, 4096, 2048)])))
    else:
        cpu = {"M": rng.randrange(33, 64, 2), "N": rng.randrange(17, 64, 2), "K": rng.randrange(17, 64, 2)}
        gpu = {"M": rng.choice([3001, 4095]), "N": rng.choice([2047, 3001]), "K": rng.choice([2049, 4095])}
    tdt = f"torch.{dtype}"
    t_act, k_act, _ = activation(act, "v", slope)
    _, _, act_words = activation(act, "z", slope)
    if variant == "linear_act":
        init_args, init_vals = "in_features, out_features", "K, N"
        init_body = f"        self.linear = nn.Linear(in_features, out_features, dtype={tdt})\n"
        torch_lines = ["v = self.linear(x)", f"v = {t_act}"] + (["v = v + r"] if residual else [])
        args = "x, r" if residual else "x"
        inputs = [f"torch.randn(M, K, dtype={tdt})"] + ([f"torch.randn(M, N, dtype={tdt})"] if residual else [])
        words = act_words.replace("z", "x @ W^T + b") + (" + r" if residual else "")
        epilogue = ["    v = v + tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]",
                    f"    v = {k_act}"] + ([_RESIDUAL] if residual else [])
        extra_params = "bias_ptr, " + ("r_ptr, " if residual else "")
        extra_args = "self.linear.bias, " + ("r, " if residual else "")
        operands = "        a, b = x, self.linear.weight\n        M, K = a.shape\n        N = b.shape[0]"
        b_strides = "b.stride(1), b.stride(0)"
        what = f"a Linear layer ({gpu['K']} -> {gpu['N']} features) on x of {gpu['M']} rows, then {act}" \
            + (", then a residual add of r" if residual else "")
    else:
        init_args, init_vals = "scale", str(scale)
        init_body = "        self.scale = scale\n"
        torch_lines = ["v = torch.matmul(a, b) * self.scale"] + (["v = v + r"] if residual else [])
        args = "a, b, r" if residual else "a, b"
        b_new = f"torch.randn(N, K, dtype={tdt}).t()" if b_transposed else f"torch.randn(K, N, dtype={tdt})"
        inputs = [f"torch.randn(M, K, dtype={tdt})", b_new] + ([f"torch.randn(M, N, dtype={tdt})"] if residual else [])
        words = f"(a @ b) * {scale}" + (" + r" if residual else "")
        epilogue = ["    v = v * scale"] + ([_RESIDUAL] if residual else [])
        extra_params = "r_ptr, scale, " if residual else "scale, "
        extra_args = "r, self.scale, " if residual else "self.scale, "
        operands = "        M, K = a.shape\n        N = b.shape[1]"
        b_strides = "b.stride(0), b.stride(1)"
        what = f"{a(str(gpu['M']))} x {gpu['K']} matrix a times {a(str(gpu['K']))} x {gpu['N']} matrix b, scaled by {scale}" \
            + (", plus a residual r" if residual else "")
    reference = module_source(gpu, f"Computes {words}.", [*torch_lines, "return v"], inputs, args=args,
                              init_args=init_args, init_body=init_body, init_vals=init_vals)
    solution = _SOLUTION.format(
        tanh=TANH_JIT if act in ("tanh", "gelu") and variant == "linear_act" else "",
        extra_params=extra_params, precision=', input_precision="ieee"' if dtype == "float32" else "",
        epilogue="\n".join(epilogue), init_args=", " + init_args, init_body=init_body, args=args,
        operands=operands, extra_args=extra_args, b_strides=b_strides,
    )
    operation = f"{words}: {what}, in {dtype}" + (" (b is a transposed, non-contiguous view)" if b_transposed else "")
    return Problem(
        family=NAME, variant=variant + (f"_{act}" if variant == "linear_act" else "") + ("_residual" if residual and variant == "linear_act" else ""),
        level=level, dtype=dtype, reference_source=reference, solution_source=solution, operation=operation,
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"variant": variant, **({"activation": act} if variant == "linear_act" else {"scale": scale}),
                **({"slope": slope} if act == "leaky_relu" and variant == "linear_act" else {}),
                "residual": residual, "b_transposed": b_transposed},
        band=BAND,
    )
