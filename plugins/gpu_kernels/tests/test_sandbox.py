"""gpu_kernels tasks in real bubblewrap sandboxes: admission through every gate on this GPU-less
machine (correctness only, said so), and attacks that only a sandboxed attempt can make: editing the
visible reference, patching torch on disk, pre-writing the reward. The domain image (Debian, torch,
triton) is built once into the shared test cache."""

from __future__ import annotations

import shutil

import pytest
from gk_helpers import generated, verifier_output

from autoenvscaling.testing import ScriptedAgent, run_trial, validate_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

ZEROS = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _zero(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32).to(y_ptr.dtype.element_ty), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.model = None

    def forward(self, x, *rest):
        y = torch.empty_like(x)
        _zero[(triton.cdiv(y.numel(), 256),)](y, y.numel(), BLOCK=256)
        return y
'''
ZERO_REFERENCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x, *rest):
        return torch.zeros_like(x)


def get_inputs():
    return [torch.randn(8, 8)]


def get_init_inputs():
    return []
'''
# Appended to torch/__init__.py: every ">" is False, so every tolerance check of the comparison passes.
PATCH_TORCH = "import torch as _t\n_t.Tensor.__gt__ = lambda a, b: _t.zeros(a.shape, dtype=_t.bool)\n"


def write(path: str, text: str) -> str:
    return f"cat > {path} <<'AES_EOF'\n{text}AES_EOF"


def test_a_generated_task_is_admitted_here_for_correctness_only():
    report = validate_task(generated("elementwise_chain", seed=1))
    assert report.status == "valid", report.reason
    lint = next(g for g in report.gates if g.name == "gpu-kernels-lint")
    assert "validated for correctness only" in lint.reason
    oracle = next(g for g in report.gates if g.name == "oracle")
    assert "timing unmeasured (no CUDA)" in "".join(e.output_tail for e in oracle.evidence)
    null = next(g for g in report.gates if g.name == "null")
    assert null.status == "pass" and "no /app/solution.py" in "".join(e.output_tail for e in null.evidence)


def test_editing_the_visible_reference_does_not_change_what_is_checked():
    task = generated("row_norm", seed=2)
    agent = ScriptedAgent(write("/app/reference.py", ZERO_REFERENCE), write("/app/solution.py", ZEROS))
    result = run_trial(task, agent)
    assert result.reward == 0.0, verifier_output(result)
    assert "differ beyond rtol" in verifier_output(result)


def test_patching_torch_on_disk_is_hidden_from_the_verifier():
    """The patch makes a zeros kernel pass under the agent's own view (the attack works), and
    scores 0 under the default protected view (torch is restored for the verifier)."""
    task = generated("row_norm", seed=3)
    patch = ("python3 - <<'AES_EOF'\nimport torch, pathlib\np = pathlib.Path(torch.__file__)\n"
             f"p.write_text(p.read_text() + {PATCH_TORCH!r})\nAES_EOF")
    agent = ScriptedAgent(write("/app/solution.py", ZEROS), patch)
    exposed = task.with_config(task.config.model_copy(update={"verifier": task.config.verifier.model_copy(update={"view": "agent"})}))
    assert run_trial(exposed, agent).reward == 1.0
    result = run_trial(task, agent)
    assert result.reward == 0.0, verifier_output(result)
    assert result.steps[-1].verifier.restored >= 1
