"""The verifier's one comparison of a kernel's output with the reference's.

Relative, per element, scaled by the reference: ``|out - ref| <= rtol * |ref| + rtol * rms(ref)``
in float64. An absolute tolerance would let zeros pass wherever the reference's values are small
(softmax rows, L2- and Frobenius-normalised tensors, min-reductions of many values); here zeros miss
by about |ref| everywhere. Non-finite outputs never match, and shapes and dtypes are checked first.
Imported by the harness inside the sandbox (torch only) and by the generators' degeneracy filter.
"""

from __future__ import annotations


def compare(out, ref, *, rtol: float) -> str | None:  # noqa: ANN001 - tensors or sequences of them
    """None when ``out`` matches ``ref``; else one line saying how it does not."""
    import torch

    if isinstance(ref, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(ref):
            return f"expected {len(ref)} outputs, got {_kind(out)}"
        for i, (o, r) in enumerate(zip(out, ref)):
            if (reason := compare(o, r, rtol=rtol)) is not None:
                return f"output {i}: {reason}"
        return None
    if not isinstance(out, torch.Tensor):
        return f"expected a tensor, got {_kind(out)}"
    if tuple(out.shape) != tuple(ref.shape):
        return f"shape {tuple(out.shape)} differs from the reference's {tuple(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"dtype {str(out.dtype).removeprefix('torch.')} differs from the reference's {str(ref.dtype).removeprefix('torch.')}"
    o, r = out.detach().to("cpu", torch.float64), ref.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(r).all()):
        return "the reference produced non-finite values (a defective problem)"
    bad = ~torch.isfinite(o)
    if bool(bad.any()):
        return f"{int(bad.sum())} of {o.numel()} values are NaN or infinite"
    if o.numel() == 0:
        return None
    rms = float(r.pow(2).mean().sqrt())
    err = (o - r).abs()
    allowed = rtol * r.abs() + rtol * rms
    over = err > allowed
    if bool(over.any()):
        worst = int(torch.argmax(err - allowed))
        return (f"{int(over.sum())} of {o.numel()} values differ beyond rtol {rtol:g} "
                f"(worst: {float(o.flatten()[worst]):.6g} against {float(r.flatten()[worst]):.6g})")
    return None


def _kind(value) -> str:  # noqa: ANN001
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__
