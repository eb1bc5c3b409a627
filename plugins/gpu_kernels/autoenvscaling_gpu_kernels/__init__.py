"""AutoEnvScaling's gpu_kernels domain: Triton kernels for PyTorch references.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path (``declare``); neither torch nor triton is imported here.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

#: the domain's cheats (cheats.py), by name: what a policy writes instead of a kernel
CHEATS = {
    "gpu_kernels.torch-forward": "TorchForward",
    "gpu_kernels.torch-in-grid": "TorchInGrid",
    "gpu_kernels.torch-in-launch-hook": "TorchInLaunchHook",
    "gpu_kernels.torch-in-helper-init": "TorchInHelperInit",
    "gpu_kernels.lazy-output": "LazyOutput",
    "gpu_kernels.aliased-torch": "AliasedTorch",
    "gpu_kernels.replay-inputs": "ReplayInputs",
    "gpu_kernels.cache-across-calls": "CacheAcrossCalls",
    "gpu_kernels.return-input": "ReturnInput",
    "gpu_kernels.return-zeros": "ReturnZeros",
    "gpu_kernels.call-reference": "CallReference",
}

declare(
    globals(),
    domains={"gpu_kernels": ("autoenvscaling_gpu_kernels.domain:GpuKernelsDomain",
                             "Triton kernels for PyTorch references; correctness in the interpreter, timing on CUDA")},
    gates={"gpu-kernels-lint": ("autoenvscaling_gpu_kernels.gate:GpuKernelsLintGate",
                                "gpu_kernels tasks: harness, spec and reference consistent; the reference kernel passes the kernel lint")},
    verifier_runtimes={"kernel-harness": ("autoenvscaling_gpu_kernels.runtime:KernelHarness",
                                          "gpu_kernels tasks: the installed plugin's lint, correctness and timing harness")},
    formats={"kernelbench": ("autoenvscaling_gpu_kernels.kernelbench:KernelBenchFormat",
                             "KernelBench problem files (Model, get_inputs, get_init_inputs), optionally with a ModelNew answer")},
    cheats={name: f"autoenvscaling_gpu_kernels.cheats:{cls}" for name, cls in CHEATS.items()},
    commands=["autoenvscaling_gpu_kernels.cli:gpu_kernels"],
)
