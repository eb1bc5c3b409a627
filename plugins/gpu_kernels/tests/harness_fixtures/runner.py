"""Runs the real verifier entry point (kernelcheck.py) on a fixture problem, as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autoenvscaling_gpu_kernels.harness import harness_path

FIXTURES = Path(__file__).parent
HACKS = FIXTURES / "hacks"
VERIFIER = FIXTURES.parents[1] / "autoenvscaling_gpu_kernels" / "verifier"
PROBLEMS = ("softmax", "l2norm", "frobenius", "rowmin", "linear_relu")


@dataclass
class Verdict:
    reward: int
    report: dict
    stdout: str

    @property
    def reason(self) -> str:
        return self.report["reason"]


def kernelcheck(problem: str, solution: Path, out: Path, *, no_lint: bool = False, weaken: tuple[str, ...] = (),
                spec: Path | None = None) -> Verdict:
    """The verdict of kernelcheck.py; ``weaken`` switches protections off (``no_lint``: the lint);
    ``spec`` replaces the problem's spec.json."""
    d = FIXTURES / problem
    cmd = [sys.executable, "-I", str(harness_path()), "--spec", str(spec or d / "spec.json"),
           "--reference", str(d / "reference.py"), "--solution", str(solution), "--out", str(out)]
    weaken = (*weaken, "lint") if no_lint else weaken
    if weaken:
        cmd.append(f"--weaken={','.join(weaken)}")
    scratch = Path(tempfile.mkdtemp(prefix="kernelcheck-tmp-"))  # the harness's TMPDIR: empty again after it
    env = {**os.environ, "TRITON_INTERPRET": "1", "OMP_NUM_THREADS": "1", "TMPDIR": str(scratch)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    left = sorted(p.name for p in scratch.iterdir())
    assert not left, f"kernelcheck.py left {left} in its TMPDIR"
    scratch.rmdir()
    reward = int((out / "reward.txt").read_text().strip())
    report = json.loads((out / "kernel.json").read_text())
    assert report["reward"] == reward
    return Verdict(reward, report, proc.stdout)
