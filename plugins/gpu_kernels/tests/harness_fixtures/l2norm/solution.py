import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _l2_normalize_rows(x_ptr, y_ptr, stride, eps, n_cols: tl.constexpr, BLOCK: tl.constexpr):
    # n_cols is a constexpr: the interpreter (numpy >= 2.4) cannot take a runtime scalar as a range bound
    row = tl.program_id(0)
    base = row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + base + offs, mask=offs < n_cols, other=0.0)
        acc += x * x
    inv = 1.0 / tl.maximum(tl.sqrt(tl.sum(acc, axis=0)), eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
        tl.store(y_ptr + base + offs, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n_cols = x.shape[1]
        _l2_normalize_rows[(x.shape[0],)](x, y, n_cols, 1e-12, n_cols=n_cols, BLOCK=16384)
        return y
