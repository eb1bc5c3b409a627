"""Per-column bias (and gain) with an activation and an optional residual, fused into one kernel."""

from __future__ import annotations

import random

from .base import Problem, a, module_source
from .elementwise_chain import ACTIVATIONS, TANH_JIT, activation, decimal, pick_dtype

NAME = "bias_activation"
DESCRIPTION = "Fuse a scale, a per-column bias or gain parameter, an activation and a residual add."
SKILLS = ["elementwise fusion", "parameter broadcasting", "residual add", "masking", "flattening leading dims"]


def build(rng: random.Random, level: int) -> Problem:
    dtype = pick_dtype(rng)
    variant = rng.choice(["scale_bias_act", "bias_act_gamma"])
    act = rng.choice(ACTIVATIONS)
    slope = decimal(rng, 0.01, 0.3, 0.01)
    scale = decimal(rng, 0.25, 2.0)
    residual = level == 3 or (level == 2 and rng.random() < 0.5)
    # hard: x is (BATCH, SEQ, DIM) and the residual (BATCH, 1, DIM) is broadcast over SEQ
    three_d = level == 3
    if level == 1:
        cpu = dict(zip(("ROWS", "DIM"), rng.choice([(16, 64), (8, 128), (32, 32)])))
        gpu = dict(zip(("ROWS", "DIM"), rng.choice([(8192, 4096), (4096, 8192), (16384, 2048)])))
    elif level == 2:
        cpu = {"ROWS": rng.randrange(5, 24, 2), "DIM": rng.randrange(65, 171, 2)}
        gpu = {"ROWS": rng.choice([4000, 6000, 8191]), "DIM": rng.choice([3001, 5003, 4095])}
    else:
        cpu = {"BATCH": rng.randint(2, 3), "SEQ": rng.randrange(3, 8, 2), "DIM": rng.randrange(65, 171, 2)}
        gpu = {"BATCH": rng.choice([8, 16]), "SEQ": rng.choice([512, 1000]), "DIM": rng.choice([3001, 4097])}
    tdt = f"torch.{dtype}"
    t_act, k_act, _ = activation(act, "v", slope)
    _, _, act_words = activation(act, "z", slope)
    scaled = variant == "scale_bias_act"
    init_args, init_vals = ("dim, scale", f"DIM, {scale}") if scaled else ("dim", "DIM")
    params = ("        self.scale = scale\n" if scaled else "") + f"        self.bias = nn.Parameter(torch.randn(dim, dtype={tdt}))\n"
    if variant == "scale_bias_act":
        torch_lines = ["v = x * self.scale + self.bias", f"v = {t_act}"]
        triton_lines = ["v = v * scale + b", f"v = {k_act}"]
        words = f"{act_words.replace('z', 'x * ' + str(scale) + ' + bias')}"
    else:
        params += "        self.gamma = nn.Parameter(torch.randn(dim, dtype={tdt}))\n".format(tdt=tdt)
        torch_lines = ["v = x + self.bias", f"v = {t_act} * self.gamma"]
        triton_lines = ["v = v + b", f"v = ({k_act}) * g"]
        words = f"{act_words.replace('z', 'x + bias')} * gamma"
    if residual:
        torch_lines.append("v = v + r")
        triton_lines.append("v = v + tl.load(r_ptr + (rows // RS) * D + cols, mask=mask, other=0.0).to(tl.float32)")
        words += " + r"
    x_shape = "BATCH, SEQ, DIM" if three_d else "ROWS, DIM"
    r_shape = "BATCH, 1, DIM" if three_d else "ROWS, DIM"
    inputs = [f"torch.randn({x_shape}, dtype={tdt})"] + ([f"torch.randn({r_shape}, dtype={tdt})"] if residual else [])
    args = "x, r" if residual else "x"
    reference = module_source(gpu, f"{words}, with per-column parameters over the last dimension.",
                              [*torch_lines, "return v"], inputs, args=args, init_args=init_args, init_body=params,
                              init_vals=init_vals)
    uses_tanh = act in ("tanh", "gelu")
    gamma_load = "    g = tl.load(g_ptr + cols, mask=cols < D, other=0.0).to(tl.float32)\n" if variant == "bias_act_gamma" else ""
    kernel_body = "\n".join(f"    {line}" for line in triton_lines)
    seq = "x.shape[1]" if three_d else "1"
    solution = f'''import torch
import torch.nn as nn
import triton
import triton.language as tl
{TANH_JIT if uses_tanh else ""}

@triton.jit
def _bias_act_kernel(x_ptr, b_ptr, g_ptr, r_ptr, out_ptr, R, D, RS,{" scale," if scaled else ""}
                     BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # x and out are contiguous (R, D) rows; the residual has one row per RS rows of x
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)[None, :]
    mask = (rows < R) & (cols < D)
    v = tl.load(x_ptr + rows * D + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=cols < D, other=0.0).to(tl.float32)
{gamma_load}{kernel_body}
    tl.store(out_ptr + rows * D + cols, v.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, {init_args}):
        super().__init__()
{params}
    def forward(self, {args}):
        D = x.shape[-1]
        R = x.numel() // D
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(R, 8), triton.cdiv(D, 256))
        _bias_act_kernel[grid](x, self.bias, {"self.gamma" if variant == "bias_act_gamma" else "self.bias"}, {"r" if residual else "x"}, out,
                               R, D, {seq},{" self.scale," if scaled else ""} BLOCK_R=8, BLOCK_D=256)
        return out
'''
    shape = " x ".join(str(v) for v in gpu.values())
    operation = f"{words} on {a(f'{shape} {dtype}')} tensor x, with bias{' and gamma' if variant == 'bias_act_gamma' else ''} " \
                f"learned per column of the last dimension"
    if residual:
        operation += " and a residual r" + (" broadcast over the middle dimension" if three_d else "")
    return Problem(
        family=NAME, variant=f"{variant}_{act}" + ("_residual" if residual else ""), level=level, dtype=dtype,
        reference_source=reference, solution_source=solution, operation=operation,
        cpu_shapes=cpu, gpu_shapes=gpu,
        params={"variant": variant, "activation": act, **({"slope": slope} if act == "leaky_relu" else {}),
                **({"scale": scale} if scaled else {}), "residual": residual, "three_d": three_d},
    )
