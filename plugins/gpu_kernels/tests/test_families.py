"""The procedural families: deterministic, non-degenerate references, and reference solutions that
pass the verifier's comparison in the Triton interpreter."""

import os

# the interpreter must be chosen before triton is imported; one thread keeps the 2-core CI steady
os.environ["TRITON_INTERPRET"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import ast  # noqa: E402

import pytest  # noqa: E402

from autoenvscaling_gpu_kernels.families import CATALOG, generate, load  # noqa: E402
from autoenvscaling_gpu_kernels.families.base import Problem  # noqa: E402
from autoenvscaling_gpu_kernels.families.checks import degenerate_reason, solution_check  # noqa: E402

CASES = [(family, level, seed) for family in CATALOG for level in (1, 2, 3) for seed in (0, 1)]


def _constants(source: str) -> dict[str, int]:
    """Module-level upper-case int constants, as written."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper() and isinstance(node.value, ast.Constant) and type(node.value.value) is int:
                found[name] = node.value.value
    return found


@pytest.mark.parametrize(("family", "level", "seed"), CASES)
def test_family_problem(family, level, seed):
    problem = generate(family, seed, level)
    again = generate(family, seed, level)
    assert (again.reference_source, again.solution_source, again.params) == \
        (problem.reference_source, problem.solution_source, problem.params)
    assert problem.family == family and problem.level == level
    assert problem.operation and "\n" not in problem.operation

    constants = _constants(problem.reference_source)
    assert set(problem.cpu_shapes) <= set(constants)
    assert set(problem.gpu_shapes) <= set(constants)
    assert {k: constants[k] for k in problem.gpu_shapes} == problem.gpu_shapes
    names = {n.name for n in ast.parse(problem.reference_source).body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Model", "get_inputs", "get_init_inputs"} <= names
    assert "ModelNew" in {n.name for n in ast.parse(problem.solution_source).body if isinstance(n, ast.ClassDef)}

    assert degenerate_reason(problem) is None
    assert solution_check(problem) is None


def test_seeds_and_levels_vary_the_problem():
    sources = {generate("elementwise_chain", seed, 2).reference_source for seed in range(4)}
    assert len(sources) == 4
    assert generate("row_norm", 0, 1).cpu_shapes != generate("row_norm", 0, 3).cpu_shapes


def test_catalog_and_load():
    assert set(CATALOG) == {"elementwise_chain", "bias_activation", "row_norm", "reduction", "scan", "matmul_epilogue"}
    for name, family in CATALOG.items():
        assert family.name == name and family.description and family.skills
        assert family.neighbour in CATALOG and family.neighbour != name
        assert load(name).NAME == name
    with pytest.raises(KeyError):
        load("no_such_family")


def _handwritten(forward: str, init: str = "", members: str = "") -> Problem:
    reference = f'''import torch
import torch.nn as nn

ROWS = 64
DIM = 128


class Model(nn.Module):
    def __init__(self{", " + init if init else ""}):
        super().__init__()
{members or "        pass"}

    def forward(self, x):
        return {forward}


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [{"DIM" if init else ""}]
'''
    return Problem(family="test", variant="test", level=1, dtype="float32", reference_source=reference,
                   solution_source="", operation="test", cpu_shapes={"ROWS": 8, "DIM": 32},
                   gpu_shapes={"ROWS": 64, "DIM": 128})


def test_degenerate_reason_accepts_a_real_reference():
    assert degenerate_reason(_handwritten("torch.softmax(x * 0.5, dim=-1)")) is None


def test_degenerate_reason_rejects_zeros_times_x():
    assert degenerate_reason(_handwritten("x * 0.0")) is not None


def test_degenerate_reason_rejects_an_output_ignoring_the_input():
    problem = _handwritten("self.weight + 0.0 * x", "dim", "        self.weight = nn.Parameter(torch.randn(dim))")
    assert degenerate_reason(problem) == "the output does not depend on the inputs"


def test_degenerate_reason_rejects_an_output_ignoring_the_weights():
    problem = _handwritten("x + 0.0 * self.weight", "dim", "        self.weight = nn.Parameter(torch.randn(dim))")
    assert degenerate_reason(problem) == "the output does not depend on the weights"


def test_degenerate_reason_rejects_a_constant():
    assert degenerate_reason(_handwritten("torch.full_like(x, 3.0)")) == "output 0 is nearly constant"


def test_degenerate_reason_rejects_what_a_constant_passes():
    # at bfloat16's 3e-2, a constant 1 matches 1 +- 0.045, though two input draws (0.09 apart) do not
    problem = _handwritten("1.0 + 0.045 * torch.sign(x)")
    loose = Problem(**{**problem.__dict__, "dtype": "bfloat16"})
    assert degenerate_reason(loose) == "a constant (the output's mean) passes the comparison"


def test_degenerate_reason_rejects_non_finite_outputs():
    assert degenerate_reason(_handwritten("torch.log(x)")) == "output 0 has non-finite values"
