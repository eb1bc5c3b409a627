import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_kernel(x_ptr, out_ptr, eps, D: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * D
    o_row = out_ptr + row * D
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, D, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < D, other=0.0).to(tl.float32)
        acc += x * x
    ss = tl.sum(acc, axis=0)
    n = tl.maximum(tl.sqrt(ss), eps)
    for start in range(0, D, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        y = tl.load(x_row + cols, mask=cols < D, other=0.0).to(tl.float32) / n
        tl.store(o_row + cols, y.to(out_ptr.dtype.element_ty), mask=cols < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        D = x.shape[-1]
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        _row_kernel[(x.numel() // D,)](x, out, 1e-12, D=D, BLOCK=triton.next_power_of_2(D))
        return out
