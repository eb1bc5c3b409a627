"""kernellint: each rule fires with its message on a small source, and the fixture solutions lint clean."""

from __future__ import annotations

import json
import os
import textwrap

os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

from autoenvscaling_gpu_kernels.verifier import kernellint  # noqa: E402
from harness_fixtures.runner import FIXTURES, PROBLEMS  # noqa: E402

FP32 = {"dtype": "float32", "allow_downcast": False, "require_kernel": True}
FP16 = {"dtype": "float16", "allow_downcast": False, "require_kernel": True}

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""


def module(top: str = "", forward: str = "", kernel: str = "") -> str:
    """A clean submission with ``top`` at module level, ``forward`` at the start of forward and
    ``kernel`` as the body of an extra jit function."""
    src = HEADER + textwrap.dedent(top) + "\n"
    if kernel:
        src += "\n@triton.jit\ndef _extra(a_ptr, b_ptr, BLOCK: tl.constexpr):\n" + textwrap.indent(textwrap.dedent(kernel), "    ") + "\n"
    body = textwrap.indent(textwrap.dedent(forward), " " * 8) if forward else ""
    return src + f"""

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
{body}
        y = torch.empty_like(x)
        _copy[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
        return y
"""


def lint(source: str, spec: dict = FP32) -> list[str]:
    return kernellint.lint(source, spec)


def assert_fires(source: str, fragment: str, spec: dict = FP32) -> None:
    problems = lint(source, spec)
    assert any(fragment in p for p in problems), problems


def test_the_template_is_clean():
    assert lint(module()) == []


@pytest.mark.parametrize("problem", PROBLEMS)
def test_fixture_solutions_lint_clean(problem):
    spec = json.loads((FIXTURES / problem / "spec.json").read_text())
    assert lint((FIXTURES / problem / "solution.py").read_text(), spec) == []


@pytest.mark.parametrize(("top", "message"), [
    ("import os", "import of os is not allowed"),
    ("import numpy as np", "import of numpy is not allowed"),
    ("import torch.utils", "import of torch.utils is not allowed"),
    ("from subprocess import run", "import from subprocess is not allowed"),
    ("from reference import Model", "import from reference is not allowed"),
    ("from . import reference", "relative imports are not allowed"),
    ("from torch import *", "from torch import * is not allowed"),
])
def test_imports_outside_the_allowlist(top, message):
    assert_fires(module(top=top), message)


@pytest.mark.parametrize("name", ["__import__", "eval", "exec", "compile", "open", "input", "getattr",
                                  "setattr", "delattr", "vars", "globals", "locals", "dir", "breakpoint"])
def test_reflection_and_code_execution_builtins(name):
    assert_fires(module(forward=f"_f = {name}"), f"{name} is not allowed")


@pytest.mark.parametrize("name", ["gc", "inspect", "sys", "os", "subprocess", "socket", "pathlib", "shutil",
                                  "ctypes", "builtins", "pickle", "io", "threading", "multiprocessing",
                                  "signal", "time", "importlib"])
def test_process_file_and_timer_modules_by_name(name):
    assert_fires(module(forward=f"_m = {name}"), f"the name {name} is not allowed")


@pytest.mark.parametrize(("expr", "attr"), [
    ("().__class__.__base__.__subclasses__()", "attribute __class__"),
    ("self.forward.__globals__", "attribute __globals__"),
    ("x.__dict__", "attribute __dict__"),
])
def test_dunder_attributes(expr, attr):
    assert_fires(module(forward=f"_r = {expr}"), f"{attr} is not allowed")


def test_dunder_names():
    assert_fires(module(forward="_b = __builtins__"), "the name __builtins__ is not allowed")


@pytest.mark.parametrize("attr", ["f_back", "f_globals", "gi_frame", "tb_frame"])
def test_frame_attributes(attr):
    assert_fires(module(forward=f"_f = self.{attr}"), f"frame attribute {attr} is not allowed")


def test_global_and_nonlocal():
    assert_fires(module(top="def _g():\n    global _STATE\n    _STATE = 1\n"), "global statements are not allowed")
    assert_fires(module(top="def _g():\n    n = 0\n    def h():\n        nonlocal n\n    return h\n"),
                 "nonlocal statements are not allowed")


def test_try_statements():
    src = module(forward="try:\n    pass\nexcept Exception:\n    pass")
    assert_fires(src, "try statements are not allowed")


@pytest.mark.parametrize("stmt", [
    "torch.cuda.Event = object",
    "torch.Tensor.add = None",
    "triton.testing.do_bench = None",
    "torch.allclose = lambda *a, **k: True",
    "tl.dot = None",
    "F.softmax = None",
    "torch.cuda.synchronize, _x = None, 1",
    "torch.__dict__['cuda'] = None",
    "del torch.allclose",
    "torch.manual_seed += 1",
])
def test_patching_libraries(stmt):
    assert_fires(module(top=stmt), "patches a library")


@pytest.mark.parametrize(("literal", "fragment"), [
    ("'/tests/reference.py'", "'/tests'"),
    ("'/logs/verifier/reward.txt'", "'/logs'"),
    ("'reward'", "'reward'"),
    ("'/proc/self/mem'", "'/proc'"),
    ("'/app/reference.py'", "'/app/reference'"),
])
def test_strings_naming_the_verdict_or_reference(literal, fragment):
    assert_fires(module(top=f"_P = {literal}"), f"string constant mentioning {fragment} is not allowed")


@pytest.mark.parametrize(("expr", "message"), [
    ("torch.cuda.Stream()", "torch.cuda.Stream is not allowed"),
    ("torch.cuda.stream(None)", "torch.cuda.stream is not allowed"),
    ("torch.cuda.set_stream(None)", "torch.cuda.set_stream is not allowed"),
    ("torch.cuda.CUDAGraph()", "torch.cuda.CUDAGraph is not allowed"),
    ("torch.cuda.graphs", "torch.cuda.graphs is not allowed"),
    ("torch.backends.cuda.matmul.allow_tf32", "torch.backends.cuda.matmul.allow_tf32 is not allowed"),
    ("torch.load('w.pt')", "torch.load is not allowed"),
    ("torch.save(x, 'w.pt')", "torch.save is not allowed"),
    ("torch.compile(self)", "torch.compile is not allowed"),
    ("torch.jit.script(self)", "torch.jit.script is not allowed"),
    ("torch.library", "torch.library is not allowed"),
    ("torch.ops.aten.add", "torch.ops.aten.add is not allowed"),
    ("torch.utils.dlpack", "torch.utils.dlpack is not allowed"),
    ("torch._C._get_tracing_state()", "private torch name torch._C._get_tracing_state"),
])
def test_forbidden_torch_apis(expr, message):
    assert_fires(module(top=f"_r = {expr}"), message)


def test_stream_keyword():
    src = module(forward="_copy[(1,)](x, x, 1, BLOCK=64, stream=0)")
    assert_fires(src, "the stream= keyword is not allowed")


def test_modelnew_must_be_a_class():
    assert_fires(HEADER + "\nModelNew = None\n", "does not define a class ModelNew")


@pytest.mark.parametrize(("line", "op"), [
    ("return torch.softmax(x, dim=-1)", "torch.softmax"),
    ("return F.relu(x)", "torch.nn.functional.relu"),
    ("return x.sum()", "sum"),
    ("return x.exp()", "exp"),
    ("return torch.matmul(x, x)", "torch.matmul"),
    ("return nn.functional.gelu(x)", "torch.nn.functional.gelu"),
])
def test_forward_calling_torch_compute(line, op):
    assert_fires(module(forward=line), f"ModelNew.forward calls torch compute op {op}: the task asks for a Triton kernel")


def test_helper_calling_torch_compute():
    src = module(top="def _helper(x):\n    return torch.exp(x)\n")
    assert_fires(src, "function _helper calls torch compute op torch.exp")


def test_lambda_calling_torch_compute():
    src = module(top="_HOOK = lambda args: args['x'].exp()\n")
    assert_fires(src, "function <lambda> calls torch compute op exp")


def test_compute_allowed_when_the_task_does_not_require_a_kernel():
    assert lint(module(forward="return x.sum()"), {**FP32, "require_kernel": False}) == []


def test_allocation_and_views_are_fine_in_forward():
    src = module(forward="_a = torch.zeros(4, device=x.device)\n_b = x.view(-1).reshape(x.shape).contiguous()\n"
                         "_c = torch.empty_strided((2,), (1,))\n_n = x.numel() + x.stride(0)")
    assert lint(src) == []


def test_kernels_must_not_reference_torch():
    assert_fires(module(kernel="a = torch.float32"), "triton.jit kernel _extra references torch (torch)")


@pytest.mark.parametrize(("snippet", "where"), [
    ("kernel", "tl.store(b_ptr, tl.load(a_ptr).to(tl.float16))"),
    ("forward", "x = x.half()"),
    ("forward", "x = x.to(torch.bfloat16)"),
    ("top", "_D = 'float16'"),
])
def test_downcasts_below_float32(snippet, where):
    src = module(**{snippet: where})
    problems = lint(src)
    assert any("downcast below the task's float32" in p for p in problems), problems


def test_float16_is_fine_for_a_float16_task_but_float8_is_not():
    assert lint(module(forward="x = x.to(torch.float16)"), FP16) == []
    assert_fires(module(forward="x = x.to(torch.float8_e4m3fn)"), "float8_e4m3fn is a float8 downcast", FP16)


def test_docstrings_may_name_dtypes():
    assert lint('"""Accumulates in float32; never in float16."""\n' + module()) == []


@pytest.mark.parametrize(("call", "clean"), [
    ("tl.dot(a, b)", False),
    ("tl.dot(a, b, input_precision='tf32')", False),
    ("tl.dot(a, b, input_precision='ieee')", True),
    ("tl.dot(a, b, allow_tf32=False)", True),
])
def test_tl_dot_must_not_use_tf32(call, clean):
    src = module(kernel=f"a = tl.load(a_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])\nb = a\nc = {call}")
    problems = lint(src)
    tf32 = [p for p in problems if "defaults to TF32" in p]
    assert (tf32 == []) == clean, problems
    assert lint(src, FP16) == []


def test_unparsable_source():
    assert lint("def (:\n")[0].startswith("solution.py does not parse")


# -- host code beyond forward: other classes' constructors, and operators on tensors ------------------
HELPER_INIT = """
class _Answer:
    def __init__(self, x):
        self.value = torch.exp(x)
"""


def test_a_helper_class_constructor_is_host_code():
    assert_fires(module(top=HELPER_INIT), "method _Answer.__init__ calls torch compute op torch.exp")
    # as the lint once was: every __init__ exempt
    assert lint(module(top=HELPER_INIT), FP32) != [] and kernellint.lint(module(top=HELPER_INIT), FP32, {"lint-any-init"}) == []


def test_modelnew_may_prepare_its_weights_with_torch():
    src = module().replace("        super().__init__()\n", "        super().__init__()\n"
                           "        self.w = nn.Parameter(torch.randn(4, 4))\n        self.wt = self.w.t().contiguous() * 2\n", 1)
    assert "self.wt = self.w.t().contiguous() * 2" in src
    assert lint(src) == []


@pytest.mark.parametrize(("line", "op"), [
    ("return x @ x", "@"),
    ("return x * 2", "*"),
    ("y = x.view(-1)\nreturn y + 1", "+"),
    ("x += 1", "+="),
    ("return -x", "-"),
    ("return x > 0", ">"),
    ("a, b = x.chunk(2)\nreturn a / b", "/"),
    ("return x.T ** 2", "**"),
])
def test_operators_on_tensors_in_forward(line, op):
    assert_fires(module(forward=line), f"ModelNew.forward applies the operator {op} to a tensor")
    assert not any("applies the operator" in p for p in kernellint.lint(module(forward=line), FP32, {"lint-operators"}))


def test_operators_on_tensors_in_a_grid_a_helper_and_builtins():
    assert_fires(module(forward="_copy[lambda meta: (x.mul_(2) and 1, )](x, x, 1, BLOCK=64)"), "calls torch compute op mul_")
    assert_fires(module(forward="_copy[lambda meta: (len([x * 2]),)](x, x, 1, BLOCK=64)"), "applies the operator * to a tensor")
    assert_fires(module(top="def _fill(out, x):\n    out.copy_(x.contiguous() * 3)\n"), "function _fill applies the operator *")
    assert_fires(module(forward="return sum(x)"), "ModelNew.forward calls sum() on a tensor")
    weights = module().replace("        super().__init__()\n", "        super().__init__()\n        self.w = nn.Parameter(torch.ones(4))\n", 1)
    assert_fires(weights.replace("        y = torch.empty_like(x)\n", "        y = torch.empty_like(x)\n        z = self.w * 2\n"),
                 "applies the operator * to a tensor")


def test_shape_arithmetic_is_not_compute():
    src = module(forward="""
        R, C = x.shape
        n = x.numel() * 2 + x.stride(0) - len(x)
        mid = x.shape[0] // 2
        grid = lambda meta: (triton.cdiv(R * C, meta["BLOCK"]),)
        scale = 0.5 * 2
        out_shape = x.shape[:-1] + (C,)
        if x is None or x.dim() > 2 or not x.is_contiguous():
            pass
    """, top="def _blocks(n, m):\n    return max(16, n * m // 4)\n")
    assert lint(src) == []


@pytest.mark.parametrize(("expr", "message"), [
    ("torch.from_file('job.pt', size=4)", "attribute from_file is not allowed (no files)"),
    ("torch.UntypedStorage.from_file('job.pt')", "attribute from_file is not allowed (no files)"),
    ("torch.hub.load('x', 'y')", "torch.hub.load is not allowed"),
    ("triton.knobs.runtime", "triton.knobs.runtime is not allowed"),
])
def test_files_and_launch_hooks_through_public_apis(expr, message):
    assert_fires(module(top=f"_r = {expr}"), message)
