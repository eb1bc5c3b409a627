import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, out_ptr, scale, M, N, sam, sak, sbk, sbn,
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
        acc += tl.dot(a, b)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    v = acc
    v = v * scale
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], v.to(out_ptr.dtype.element_ty), mask=mask)


def _blocks(M, N):
    # large tiles for GPU-sized problems, small ones where the interpreter runs tiny CPU shapes
    return (64, 64, 32) if M * N >= 1 << 20 else (32, 32, 16)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        M, K = a.shape
        N = b.shape[1]
        out = torch.empty((M, N), device=a.device, dtype=a.dtype)
        BM, BN, BK = _blocks(M, N)
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        _matmul_kernel[grid](a, b, out, self.scale, M, N, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                             K=K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        return out
