import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_min(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=float("inf"))
    tl.store(y_ptr + row, tl.min(x, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty(x.shape[0], dtype=x.dtype, device=x.device)
        n_cols = x.shape[1]
        _row_min[(x.shape[0],)](x, y, n_cols, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return y
