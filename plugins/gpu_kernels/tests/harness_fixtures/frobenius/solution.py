import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_squares(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(x * x, axis=0))


@triton.jit
def _scale(x_ptr, acc_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    inv = 1.0 / tl.sqrt(tl.load(acc_ptr))
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        acc = torch.zeros(1, dtype=torch.float32, device=x.device)
        n = x.numel()
        block = 16384
        grid = (triton.cdiv(n, block),)
        _sum_squares[grid](x, acc, n, BLOCK=block)
        _scale[grid](x, acc, y, n, BLOCK=block)
        return y
