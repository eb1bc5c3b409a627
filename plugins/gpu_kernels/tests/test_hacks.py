"""Each known way of faking a kernel scores 0 through the real kernelcheck.py, for the stated reason.

Lint-caught hacks are also run with ``--weaken=lint`` where the runtime layer has something to catch,
to show the two layers are independent (those runs are marked slow: ``-m slow``). Hack submissions
live in harness_fixtures/hacks/.
"""

from __future__ import annotations

import importlib.util
import json
import os

os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from harness_fixtures.runner import FIXTURES, HACKS, kernelcheck  # noqa: E402


def fill_hack(tmp_path, value: str, reduce_last_dim: bool):
    src = (HACKS / "fill.py").read_text()
    src = src.replace("VALUE = 0.0", f"VALUE = {value}").replace(
        "REDUCE_LAST_DIM = False", f"REDUCE_LAST_DIM = {reduce_last_dim}")
    path = tmp_path / "solution.py"
    path.write_text(src)
    return path


def reference_output(problem: str, seed: int = 0) -> torch.Tensor:
    """The fixture reference's output at its CPU shapes, computed here (no Triton involved)."""
    d = FIXTURES / problem
    spec = importlib.util.spec_from_file_location(f"_ref_{problem}", d / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, value in json.loads((d / "spec.json").read_text())["cpu_shapes"].items():
        setattr(mod, name, value)
    torch.manual_seed(seed)
    with torch.no_grad():
        return mod.Model(*mod.get_init_inputs())(*mod.get_inputs())


# A plausible constant per problem: the mean of the output (1/DIM for softmax, the RMS value for the
# normalisations, the expected minimum of 1000 normal draws).
CONSTANTS = {"softmax": ("1.0 / 2000", False), "l2norm": ("1.0 / 300000 ** 0.5", False),
             "frobenius": ("1.0 / 500000 ** 0.5", False), "rowmin": ("-3.24", True)}


@pytest.mark.parametrize("problem", ["softmax", "l2norm", "frobenius"])
def test_an_absolute_tolerance_would_pass_zeros(problem):
    """Positive control: these outputs are small enough that allclose(zeros, ref, atol=1e-2) holds."""
    ref = reference_output(problem)
    assert torch.allclose(torch.zeros_like(ref), ref, atol=1e-2)


@pytest.mark.parametrize("problem", list(CONSTANTS))
@pytest.mark.parametrize("kind", ["zeros", "constant"])
def test_returning_zeros_or_a_constant(problem, kind, tmp_path):
    value, reduce_last_dim = ("0.0", CONSTANTS[problem][1]) if kind == "zeros" else CONSTANTS[problem]
    v = kernelcheck(problem, fill_hack(tmp_path, value, reduce_last_dim), tmp_path / "out")
    assert v.reward == 0
    assert v.reason.startswith("round 1: ") and "values differ beyond rtol 0.0001" in v.reason, v.reason


def test_returning_nan(tmp_path):
    v = kernelcheck("softmax", fill_hack(tmp_path, 'float("nan")', False), tmp_path / "out")
    assert v.reward == 0
    assert v.reason == "round 1: 8000 of 8000 values are NaN or infinite"


def test_torch_ops_instead_of_a_kernel(tmp_path):
    v = kernelcheck("softmax", HACKS / "torch_ops.py", tmp_path / "lint")
    assert v.reward == 0
    assert "ModelNew.forward calls torch compute op torch.softmax: the task asks for a Triton kernel" in v.reason


@pytest.mark.slow
def test_torch_ops_instead_of_a_kernel_without_the_lint(tmp_path):
    v = kernelcheck("softmax", HACKS / "torch_ops.py", tmp_path / "runtime", no_lint=True)
    assert v.reward == 0
    assert v.reason == "round 1: ModelNew.forward ran torch op aten.mul outside a Triton kernel"


@pytest.mark.parametrize(("hack", "reason"), [
    ("import_reference", "lint: line 7: import from reference is not allowed"),
    ("exec_reference", "lint: line 8: exec is not allowed"),
])
def test_wrapping_the_reference(hack, reason, tmp_path):
    v = kernelcheck("softmax", HACKS / f"{hack}.py", tmp_path)
    assert v.reward == 0
    assert v.reason.startswith(reason), v.reason
    if hack == "exec_reference":
        assert any("open is not allowed" in p for p in v.report["lint"])
        assert any("'/app/reference'" in p for p in v.report["lint"])


def test_try_except_fallback_to_the_reference(tmp_path):
    v = kernelcheck("softmax", HACKS / "try_fallback.py", tmp_path / "lint")
    assert v.reward == 0
    assert "try statements are not allowed" in v.reason


@pytest.mark.slow
def test_try_except_fallback_without_the_lint(tmp_path):
    v = kernelcheck("softmax", HACKS / "try_fallback.py", tmp_path / "runtime", no_lint=True)
    assert v.reward == 0
    assert v.reason == "round 1: ModelNew.forward ran torch op aten.mul outside a Triton kernel"


@pytest.mark.parametrize("no_lint", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_caching_outputs_between_calls(no_lint, tmp_path):
    v = kernelcheck("softmax", HACKS / "cache.py", tmp_path, no_lint=no_lint)
    assert v.reward == 0
    # round 1 is honest; the inputs are refilled in place, so round 2 replays a stale answer
    assert v.report["rounds"][0]["ok"]
    assert v.reason.startswith("round 2: ") and "values differ" in v.reason, v.reason


def test_mutating_inputs(tmp_path):
    v = kernelcheck("softmax", HACKS / "mutate_input.py", tmp_path)
    assert v.reward == 0
    assert v.reason == "round 1: ModelNew.forward modified its input 0"


def test_finding_reference_outputs_through_gc_or_inspect(tmp_path):
    v = kernelcheck("softmax", HACKS / "gc_scan.py", tmp_path / "gc")
    assert v.reward == 0
    assert v.reason.startswith("lint: line 2: import of gc is not allowed")
    v = kernelcheck("softmax", HACKS / "inspect_frames.py", tmp_path / "inspect")
    assert v.reward == 0
    assert v.reason.startswith("lint: line 2: import of inspect is not allowed")
    assert any("frame attribute f_back" in p for p in v.report["lint"])


@pytest.mark.slow
def test_a_gc_scan_without_the_lint_finds_nothing(tmp_path):
    # without the lint, the scan runs, but the reference never ran in the worker: nothing to find
    v = kernelcheck("softmax", HACKS / "gc_scan.py", tmp_path / "runtime", no_lint=True)
    assert v.reward == 0
    assert v.reason.startswith("round 1: 8000 of 8000 values differ"), v.reason


def test_reusing_freed_memory_through_torch_empty(tmp_path):
    # lint-clean (torch.empty_like is an allocation): the runtime layer alone rejects it
    v = kernelcheck("softmax", HACKS / "stale_memory.py", tmp_path)
    assert v.reward == 0
    assert v.report["lint"] == []
    assert v.reason == "round 1: ModelNew.forward launched no Triton kernel"


def test_monkeypatching_torch_or_the_timer(tmp_path):
    v = kernelcheck("softmax", HACKS / "patch_timer.py", tmp_path / "lint")
    assert v.reward == 0
    lint = v.report["lint"]
    for target in ("torch.cuda.Event", "torch.allclose", "time.perf_counter"):
        assert f"assignment to {target} patches a library (not allowed)" in " ".join(lint), lint


@pytest.mark.slow
def test_monkeypatching_without_the_lint(tmp_path):
    v = kernelcheck("softmax", HACKS / "patch_timer.py", tmp_path / "runtime", no_lint=True)
    assert v.reward == 0
    assert v.reason == "importing solution.py: the submission replaced torch.cuda.Event"


def test_launching_on_a_side_stream(tmp_path):
    v = kernelcheck("softmax", HACKS / "side_stream.py", tmp_path)
    assert v.reward == 0
    assert "attribute Stream is not allowed" in v.reason
    assert any("torch.cuda.stream is not allowed" in p for p in v.report["lint"])


def test_silent_fp16_downcast_in_a_float32_task(tmp_path):
    v = kernelcheck("softmax", HACKS / "fp16_downcast.py", tmp_path / "lint")
    assert v.reward == 0
    assert v.reason.startswith("lint: line 13: float16 is a downcast below the task's float32"), v.reason


@pytest.mark.slow
def test_silent_fp16_downcast_without_the_lint(tmp_path):
    v = kernelcheck("softmax", HACKS / "fp16_downcast.py", tmp_path / "runtime", no_lint=True)
    assert v.reward == 0
    assert v.reason.startswith("round 1: ") and "values differ beyond rtol 0.0001" in v.reason, v.reason


@pytest.mark.slow
def test_leaving_a_torch_function_mode_active(tmp_path):
    v = kernelcheck("softmax", HACKS / "stray_mode.py", tmp_path, no_lint=True)
    assert v.reward == 0
    assert v.reason == "round 1: ModelNew.forward left a torch function or dispatch mode active"
