"""Generation-time checks: is a reference degenerate, and does the reference solution match it?

``degenerate_reason`` runs the reference on CPU with the problem's ``cpu_shapes`` and rejects a
problem that a wrong kernel could pass: non-finite or nearly constant outputs, outputs that ignore
the inputs or the weights' seed, or a reference that zeros or its own mean already match under the
verifier's comparison. ``solution_check`` runs the reference solution's Triton kernels (the caller
sets TRITON_INTERPRET=1 before triton is imported on a machine without CUDA). torch is imported
inside the functions: the families package stays importable without it.
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import types
from pathlib import Path

from ..verifier.kcompare import compare
from ..verifier.ksizes import with_sizes
from .base import Problem

#: seeds for inputs and weights; the two input draws must differ, as must the two weight draws
_INPUT_SEEDS = (11, 12)
_WEIGHT_SEEDS = (1, 2)


def _reference(problem: Problem) -> types.ModuleType:
    module = types.ModuleType(f"reference_{problem.family}")
    source = with_sizes(problem.reference_source, dict(problem.cpu_shapes))
    exec(compile(source, f"<reference {problem.family}>", "exec"), module.__dict__)
    return module


def _inputs(module: types.ModuleType, seed: int) -> list:
    import torch

    torch.manual_seed(seed)
    return module.get_inputs()


def _model(cls, module: types.ModuleType, seed: int):  # noqa: ANN001, ANN202 - an nn.Module class
    import torch

    torch.manual_seed(seed)
    return cls(*module.get_init_inputs())


def _tensors(out) -> list:  # noqa: ANN001
    return list(out) if isinstance(out, (tuple, list)) else [out]


def degenerate_reason(problem: Problem) -> str | None:
    """One line saying why the problem is unfit to verify kernels, or None when it is fine."""
    import torch

    ref = _reference(problem)
    with torch.no_grad():
        model = _model(ref.Model, ref, _WEIGHT_SEEDS[0])
        first = model(*_inputs(ref, _INPUT_SEEDS[0]))
        second = model(*_inputs(ref, _INPUT_SEEDS[1]))
        other_weights = None
        redrawn = _model(ref.Model, ref, _WEIGHT_SEEDS[1])
        # only weights that a seed draws can be ignored (LayerNorm's ones and zeros are not drawn)
        if any(not torch.equal(a, b) for a, b in zip(model.state_dict().values(), redrawn.state_dict().values())):
            other_weights = redrawn(*_inputs(ref, _INPUT_SEEDS[0]))
    for i, out in enumerate(_tensors(first)):
        o = out.detach().to(torch.float64)
        if not bool(torch.isfinite(o).all()):
            return f"output {i} has non-finite values"
        rms = float(o.pow(2).mean().sqrt())
        if o.numel() > 1 and float(o.std()) / (rms + 1e-30) < 1e-3:  # a scalar (a loss) is judged below
            return f"output {i} is nearly constant"
    rtol = problem.rtol
    if compare(second, first, rtol=rtol) is None:
        return "the output does not depend on the inputs"
    if other_weights is not None and compare(other_weights, first, rtol=rtol) is None:
        return "the output does not depend on the weights"
    zeros = [torch.zeros_like(t) for t in _tensors(first)]
    if compare(zeros, _tensors(first), rtol=rtol) is None:
        return "zeros pass the comparison"
    means = [torch.full_like(t, float(t.double().mean())) for t in _tensors(first)]
    if compare(means, _tensors(first), rtol=rtol) is None:
        return "a constant (the output's mean) passes the comparison"
    return None


def _load_file(path: Path, name: str) -> types.ModuleType:
    # triton.jit reads kernel source with inspect, so the solution must live in a real file
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be loaded as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def solution_check(problem: Problem, seeds: tuple[int, ...] = (0, 1)) -> str | None:
    """Run the reference solution against the reference on CPU shapes; None when every seed matches."""
    import torch

    ref = _reference(problem)
    name = f"gk_solution_{problem.family}_{abs(hash(problem.solution_source))}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "solution.py"
        path.write_text(problem.solution_source)
        try:
            solution = _load_file(path, name)
            with torch.no_grad():
                for seed in seeds:
                    inputs = _inputs(ref, 100 + seed)
                    kept = [t.clone() for t in inputs]
                    expected = _model(ref.Model, ref, seed)(*inputs)
                    out = _model(solution.ModelNew, ref, seed)(*inputs)
                    if (reason := compare(out, expected, rtol=problem.rtol)) is not None:
                        return f"seed {seed}: {reason}"
                    if not all(torch.equal(a, b) for a, b in zip(inputs, kept)):
                        return f"seed {seed}: the solution modified its inputs"
        finally:
            sys.modules.pop(name, None)
    return None
