"""Hack: a kernel that writes one value everywhere (zeros, a plausible constant, NaN).
The test substitutes VALUE and REDUCE_LAST_DIM."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

VALUE = 0.0
REDUCE_LAST_DIM = False


@triton.jit
def _fill(y_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        y = torch.empty(x.shape[:-1] if REDUCE_LAST_DIM else x.shape, dtype=x.dtype, device=x.device)
        n = y.numel()
        _fill[(triton.cdiv(n, 16384),)](y, n, VALUE, BLOCK=16384)
        return y
