"""The gpu_kernels domain on the host: families, rendering, the lint gate, the verifier runtime,
variations, the proposer kit and the KernelBench importer (its answers checked by the real harness
in the Triton interpreter)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from gk_helpers import FIXTURES, generated

from autoenvscaling.errors import TaskFormatError, UsageError
from autoenvscaling.gates.base import GateContext, GateSettings
from autoenvscaling.runtime.verifier_runtime import RuntimeContext
from autoenvscaling.tasks import read_task, short_name
from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain
from autoenvscaling_gpu_kernels.gate import GpuKernelsLintGate
from autoenvscaling_gpu_kernels.kernelbench import KernelBenchFormat, import_problem, size_constants, small_sizes
from autoenvscaling_gpu_kernels.render import harness_files
from autoenvscaling_gpu_kernels.runtime import KernelHarness
from autoenvscaling_gpu_kernels.verifier.ksizes import with_sizes

FAMILIES = ["elementwise_chain", "bias_activation", "row_norm", "reduction", "scan", "matmul_epilogue"]
KB = FIXTURES / "kernelbench" / "level1"


def gate(task):
    ctx = GateContext(backend=None, runner=None, settings=GateSettings(), backend_name="bwrap")
    return asyncio.run(GpuKernelsLintGate().check(task, ctx))


def test_the_domain_lists_six_families_and_generates_deterministically():
    domain = GpuKernelsDomain()
    assert [f.name for f in domain.families()] == FAMILIES
    a, b = domain.generate("row_norm", seed=3), domain.generate("row_norm", seed=3)
    assert a.digest() == b.digest()
    assert domain.generate("row_norm", seed=4).digest() != a.digest()
    with pytest.raises(UsageError, match="unknown gpu_kernels family"):
        domain.generate("convolution", seed=0)


def test_a_generated_task_is_kernelbench_inside_harbor():
    task = generated("bias_activation")
    env = task.config.environment
    assert env.gpus == 1 and env.gpu_optional and env.workdir == "/app"
    assert task.provenance.domain == "gpu_kernels" and task.provenance.family == "bias_activation"
    reference = task.files["tests/reference.py"].text
    assert reference == task.files["environment/app/reference.py"].text
    assert "class Model" in reference and "def get_inputs" in reference and "def get_init_inputs" in reference
    assert "class ModelNew" in task.files["solution/solution.py"].text
    assert "@triton.jit" in task.files["solution/solution.py"].text
    for name in harness_files():
        assert f"tests/{name}" in task.files
    spec = json.loads(task.files["tests/spec.json"].text)
    assert spec["rounds"] >= 5 and spec["require_kernel"] and spec["band"] == list(task.provenance.parameters["band"])
    assert set(spec["cpu_shapes"]) <= set(size_constants(reference))
    assert "/app/solution.py" in task.instruction and "ModelNew" in task.instruction
    assert not any(p.startswith("environment/") and "spec" in p for p in task.files)


def test_the_lint_gate_passes_generated_tasks_and_says_timing_is_unmeasured_here():
    result = gate(generated("scan"))
    assert result.status == "pass", result.reason
    assert "validated for correctness only" in result.reason and "timing unmeasured" in result.reason
    assert result.evidence[0].values == {"mode": "interpreter", "timing": "unmeasured"}


@pytest.mark.parametrize("change, reason", [
    ({"tests/spec.json": None}, "tests/spec.json is missing"),
    ({"environment/app/reference.py": "import torch\n"}, "environment/app/reference.py differs from tests/reference.py"),
    ({"solution/solution.py": "import os\nclass ModelNew:\n    pass\n"}, "the reference solution breaks the kernel lint"),
])
def test_the_lint_gate_rejects_broken_tasks(change, reason):
    result = gate(generated("reduction").with_files(change))
    assert result.status == "fail" and result.reason.startswith(reason), result.reason


def test_the_lint_gate_wants_only_the_reference_public():
    task = generated("reduction")
    bare = task.with_provenance(public_files=["tests/*"])
    result = gate(bare)
    assert result.status == "fail" and "public_files must be" in result.reason


def test_the_lint_gate_checks_the_spec():
    task = generated("reduction")
    spec = json.loads(task.files["tests/spec.json"].text)
    for key, value, reason in [("rounds", 3, "rounds must be at least 5"), ("band", [0.6, 0.05], "band must be"),
                               ("dtype", "int8", "dtype must be one of"), ("cpu_shapes", {"NOPE": 4}, "cpu_shapes names NOPE")]:
        bad = task.with_files({"tests/spec.json": json.dumps({**spec, key: value})})
        result = gate(bad)
        assert result.status == "fail" and reason in result.reason, result.reason


def test_variations_move_level_or_family():
    domain = GpuKernelsDomain()
    parent = domain.generate("elementwise_chain", seed=5, difficulty="medium")
    harder = domain.vary(parent, direction="harder", seed=6)
    assert harder.provenance.parameters["level"] == 3 and harder.provenance.parent == parent.name
    different = domain.vary(parent, direction="different", seed=6)
    assert different.provenance.family == "bias_activation"
    with pytest.raises(UsageError, match="already the hardest"):
        domain.vary(harder, direction="harder", seed=7)


def test_the_kernel_harness_runtime_serves_the_installed_harness(tmp_path):
    runtime = KernelHarness(cache_dir=tmp_path)
    ctx = RuntimeContext(offline=True, backend="bwrap")
    assert runtime.applies(generated("scan"), ctx)
    other = generated("scan").with_provenance(domain="terminal")
    assert not runtime.applies(other, ctx)
    root = runtime.materialise()
    assert (root / "kernelcheck.py").read_text() == harness_files()["kernelcheck.py"]
    assert runtime.mount == "/opt/autoenvscaling-verifier/kernel-harness"
    assert "/opt/autoenvscaling-verifier/kernel-harness" in harness_files()["test.sh"]


def test_the_proposer_kit_examples_pass_the_lint_gate():
    kit = GpuKernelsDomain().kit()
    assert "degenerate" in kit.guide.lower() and "gpu_optional" in kit.contract
    assert sorted(read_task(p).provenance.family for p in kit.examples) == ["matmul_epilogue", "row_norm"]
    for example in kit.examples:
        assert gate(read_task(example)).status == "pass", example.name


# -- KernelBench ------------------------------------------------------------------------------------

def test_kernelbench_sizes_shrink_to_the_interpreters_budget():
    source = (KB / "40_FrobeniusScale.py").read_text()
    assert size_constants(source) == {"batch_size": 16, "features": 64, "dim1": 256, "dim2": 256}
    small = small_sizes(source, "40_FrobeniusScale.py")
    sizes = {**size_constants(source), **small}
    assert sizes["batch_size"] * sizes["features"] * sizes["dim1"] * sizes["dim2"] <= 8192
    assert all(v >= 8 for v in sizes.values())


def test_kernelbench_import_refuses_a_degenerate_problem_with_its_reason():
    items = list(KernelBenchFormat().scan(KB))
    errors = [i for i in items if isinstance(i, TaskFormatError)]
    tasks = [i for i in items if not isinstance(i, TaskFormatError)]
    assert [t.provenance.parameters["source"] for t in tasks] == ["12_RowSoftmax.py", "33_ChannelNorm.py",
                                                                   "40_FrobeniusScale.py"]
    [error] = errors
    assert error.message.startswith("91_SelfDifference.py: a degenerate problem")
    assert KernelBenchFormat().detect(KB) and KernelBenchFormat().count(KB) == 4


def test_sizes_are_read_from_expressions_and_tuples_and_derived_constants_follow():
    """LayerNorm's weights are not drawn from the seed, so ignoring the seed is not degenerate; the
    derived ``feature_shape`` follows the shrunk ``rows`` and ``cols`` (``cols = 2 ** 9``)."""
    source = (KB / "33_ChannelNorm.py").read_text()
    assert size_constants(source) == {"batch": 64, "rows": 128, "cols": 512}  # feature_shape is derived
    assert size_constants("N = 2048 * 2\nshape = (32768, 3)\nname = 'x'\n") == {"N": 4096, "shape": [32768, 3]}
    assert "shape = (64, 3)" in with_sizes("shape = (32768, 3)\n", {"shape": [64, 3]})
    task = import_problem(KB / "33_ChannelNorm.py")
    small = json.loads(task.files["tests/spec.json"].text)["cpu_shapes"]
    namespace: dict = {}
    exec(with_sizes(source, small), namespace)
    [x] = namespace["get_inputs"]()
    assert x.numel() <= 8192 and tuple(x.shape[1:]) == namespace["feature_shape"] == (small["rows"], small["cols"])


def test_a_kernelbench_problem_with_its_answer_is_an_admissible_task():
    """(The harness scores its answer 1: the command-line test below checks it.)"""
    task = import_problem(KB / "12_RowSoftmax.py")
    assert task.provenance.family == "kernelbench" and task.files["tests/reference.py"].text == (KB / "12_RowSoftmax.py").read_text()
    assert task.files["solution/solution.py"].text == (KB / "answers" / "12_RowSoftmax.py").read_text()
    assert gate(task).status == "pass"


def test_a_kernelbench_problem_without_an_answer_has_no_oracle():
    task = import_problem(KB / "40_FrobeniusScale.py")
    assert "solution/solution.py" not in task.files
    assert "exit 1" in task.files["solution/solve.sh"].text
    assert gate(task).reason == "solution/solution.py is missing"


def test_the_command_line_generates_imports_and_checks(tmp_path):
    from click.testing import CliRunner

    from autoenvscaling.cli.main import cli

    listed = CliRunner().invoke(cli, ["gpu-kernels", "families", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["name"] for r in json.loads(listed.output)] == FAMILIES
    made = CliRunner().invoke(cli, ["gpu-kernels", "generate", "--family", "scan", "--difficulty", "easy",
                                    "--seeds", "0", "--out", str(tmp_path / "gen")])
    assert made.exit_code == 0, made.output
    imported = CliRunner().invoke(cli, ["gpu-kernels", "import", str(KB), "--out", str(tmp_path / "kb"), "--no-check"])
    assert imported.exit_code == 0, imported.output
    assert "rejected" in imported.output and "91_SelfDifference.py: a degenerate problem" in imported.output
    report = json.loads((tmp_path / "kb" / "import-report.json").read_text())
    assert report["format"] == "kernelbench" and not report["checked"]
    assert {r["status"] for r in report["tasks"]} == {"written", "rejected"}
    softmax = next(p for p in (tmp_path / "kb").iterdir() if "rowsoftmax" in p.name)
    checked = CliRunner().invoke(cli, ["gpu-kernels", "check", str(softmax), "--json"])
    assert checked.exit_code == 0, checked.output
    details = json.loads(checked.output)
    assert details["reward"] == 1.0 and details["timing"]["measured"] is False
    # the agent's own check, as it runs in the sandbox (paths pointed at the task here)
    env = {**os.environ, "REFERENCE": str(softmax / "environment" / "app" / "reference.py"),
           "SOLUTION": str(softmax / "solution" / "solution.py")}
    own = subprocess.run([sys.executable, str(softmax / "environment" / "app" / "check.py")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert own.returncode == 0 and own.stdout.startswith("ok: 3 rounds match (Triton interpreter"), own.stdout + own.stderr
    env["SOLUTION"] = str(KB / "40_FrobeniusScale.py")  # no ModelNew there
    assert subprocess.run([sys.executable, str(softmax / "environment" / "app" / "check.py")], env=env,
                          capture_output=True, text=True, timeout=300).returncode != 0
