"""AutoEnvScaling's gpu_kernels domain: Triton kernels for PyTorch references (KernelBench shape).

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path; neither torch nor triton nor any generator is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:  # types only: this module is imported by every command
    from autoenvscaling.domains.base import Domain
    from autoenvscaling.gates.base import Gate
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.redteam.cheat import Cheat
    from autoenvscaling.runtime.verifier_runtime import VerifierRuntime
    from autoenvscaling.suite.formats import TaskFormat

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_domains(registrar: Registrar[Domain]) -> None:
    registrar.add("gpu_kernels", "autoenvscaling_gpu_kernels.domain:GpuKernelsDomain",
                  description="Triton kernels for PyTorch references; correctness in the interpreter, timing on CUDA")


@hookimpl
def autoenvscaling_register_gates(registrar: Registrar[Gate]) -> None:
    registrar.add("gpu-kernels-lint", "autoenvscaling_gpu_kernels.gate:GpuKernelsLintGate",
                  description="gpu_kernels tasks: harness, spec and reference consistent; the reference kernel passes the kernel lint")


@hookimpl
def autoenvscaling_register_verifier_runtimes(registrar: Registrar[VerifierRuntime]) -> None:
    registrar.add("kernel-harness", "autoenvscaling_gpu_kernels.runtime:KernelHarness",
                  description="gpu_kernels tasks: the installed plugin's lint, correctness and timing harness")


@hookimpl
def autoenvscaling_register_formats(registrar: Registrar[TaskFormat]) -> None:
    registrar.add("kernelbench", "autoenvscaling_gpu_kernels.kernelbench:KernelBenchFormat",
                  description="KernelBench problem files (Model, get_inputs, get_init_inputs), optionally with a ModelNew answer")


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


@hookimpl
def autoenvscaling_register_cheats(registrar: Registrar[Cheat]) -> None:
    for name, cls in CHEATS.items():
        registrar.add(name, f"autoenvscaling_gpu_kernels.cheats:{cls}")


@hookimpl
def autoenvscaling_register_commands(cli) -> None:  # noqa: ANN001 - a click.Group
    from .cli import gpu_kernels

    cli.add_command(gpu_kernels)
