"""Run the verifier harness on the host, outside a sandbox: for task authors (``gpu-kernels check``),
the tests and the benchmarks. The harness is the same file test.sh runs; here it gets explicit paths
and its own output folder. In a sandbox the agent's code runs confined; here it runs as you, so use
this on answers you trust (your own, the generated references)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HarnessResult:
    reward: float
    details: dict
    output: str

    @property
    def reason(self) -> str:
        return str(self.details.get("reason", ""))


def harness_path() -> Path:
    """kernelcheck.py in the harness as tasks get it (verifier/*.py with the verifier library), the
    kernel-harness runtime's read-only copy in the cache."""
    from .runtime import KernelHarness

    return KernelHarness().materialise() / "kernelcheck.py"


def run_harness(task_dir: Path, solution: Path | None, *, timeout: float = 900, extra: tuple[str, ...] = (),
                env: dict[str, str] | None = None) -> HarnessResult:
    """Check ``solution`` (default: the task's reference solution) against ``task_dir``'s tests."""
    task_dir = Path(task_dir)
    solution = Path(solution) if solution else task_dir / "solution" / "solution.py"
    with tempfile.TemporaryDirectory(prefix="aes-kernelcheck-") as out:
        argv = [sys.executable, "-I", str(harness_path()), "--spec", str(task_dir / "tests" / "spec.json"),
                "--reference", str(task_dir / "tests" / "reference.py"), "--solution", str(solution), "--out", out, *extra]
        # -I (isolated: no PYTHON* variables, no user site, no script dir on the path): the harness
        # finds torch in this interpreter's own site-packages
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), **(env or {})})
        output = proc.stdout + proc.stderr
        reward_file, details_file = Path(out) / "reward.txt", Path(out) / "kernel.json"
        if proc.returncode != 0 or not reward_file.is_file():
            raise RuntimeError(f"the harness failed (exit {proc.returncode}): {output.strip().splitlines()[-1:] or ''}")
        details = json.loads(details_file.read_text()) if details_file.is_file() else {}
        return HarnessResult(reward=float(reward_file.read_text().strip()), details=details, output=output)
