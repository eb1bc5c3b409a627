"""kernelcheck.py end to end on the fixture problems, as Harbor's test.sh runs it (a subprocess)."""

from __future__ import annotations

import os
import subprocess

os.environ["TRITON_INTERPRET"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

from harness_fixtures.runner import FIXTURES, PROBLEMS, VERIFIER, kernelcheck  # noqa: E402


@pytest.mark.parametrize("problem", PROBLEMS)
def test_reference_solutions_score_one(problem, tmp_path):
    v = kernelcheck(problem, FIXTURES / problem / "solution.py", tmp_path)
    assert v.reward == 1, v.reason
    assert v.report["status"] == "pass"
    assert v.report["mode"] == "interpreter"
    assert v.report["timing"] == {"measured": False, "why": "no CUDA: validated for correctness only"}
    assert v.report["lint"] == []
    seeds = [r["seed"] for r in v.report["rounds"]]
    assert len(seeds) >= 5 and len(set(seeds)) == len(seeds)
    assert all(r["ok"] for r in v.report["rounds"])
    assert v.stdout.strip().splitlines()[-1] == (
        "kernelcheck: reward 1: correct on 5 rounds and a call on fresh values (interpreter); "
        "timing unmeasured (no CUDA): validated for correctness only")


def test_missing_solution_scores_zero(tmp_path):
    missing = tmp_path / "app" / "solution.py"
    v = kernelcheck("softmax", missing, tmp_path / "out")
    assert v.reward == 0
    assert v.reason == f"no {missing}"
    assert v.report["status"] == "fail"
    assert v.stdout.strip().splitlines()[-1] == f"kernelcheck: reward 0: no {missing}"


def test_test_sh_runs_the_trusted_harness_from_tests():
    text = (VERIFIER / "test.sh").read_text()
    assert 'exec python3 -I "$H/kernelcheck.py"' in text
    assert "/opt/autoenvscaling-verifier/kernel-harness" in text
    assert subprocess.run(["bash", "-n", str(VERIFIER / "test.sh")]).returncode == 0


def test_a_submission_that_fails_to_import_scores_zero(tmp_path):
    solution = tmp_path / "solution.py"
    solution.write_text((FIXTURES / "softmax" / "solution.py").read_text() + "\nraise ValueError('boom')\n")
    v = kernelcheck("softmax", solution, tmp_path / "out")
    assert v.reward == 0
    assert v.reason == "importing solution.py raised ValueError: boom"
