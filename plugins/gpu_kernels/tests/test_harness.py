"""kernelcheck.py end to end on the fixture problems, as Harbor's test.sh runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

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


PROBE = '''import json, os, sys, tempfile
_seen = {"harness": sorted(m for m in ("aes_verifier", "kcompare", "kernellint", "ksizes") if m in sys.modules),
         "main": sys.modules["__main__"].__file__, "own_session": os.getsid(0) == os.getpid(),
         "cwd": os.getcwd(), "tmp": tempfile.gettempdir(), "argv": sys.argv,
         "on_path": [p for p in sys.path if os.path.abspath(p or os.curdir) == os.path.dirname(sys.argv[0])],
         "forked": "kernelcheck.py" in open("/proc/self/cmdline").read()}
print("PROBE " + json.dumps(_seen))
'''


def test_the_worker_is_forked_after_torch_with_nothing_of_the_harness(tmp_path):
    # The worker is forked from the harness once torch is imported (one import per run, not two), so
    # it must look like the fresh `python -I kernelrun.py JOB RESULT` it replaces: none of the
    # harness's modules, the harness's folder off its path, a session of its own, the private folder
    # as its cwd and temporary directory. The probe runs as the submission (the lint is off for it).
    from autoenvscaling_gpu_kernels.harness import harness_path

    solution = tmp_path / "solution.py"
    solution.write_text(PROBE + (FIXTURES / "softmax" / "solution.py").read_text())
    v = kernelcheck("softmax", solution, tmp_path / "out", no_lint=True)
    assert v.reward == 1, v.reason
    line = next(ln for ln in v.report["child"]["stdout_tail"].splitlines() if ln.startswith("PROBE "))
    seen = json.loads(line[len("PROBE "):])
    harness_dir = str(harness_path().parent)
    assert seen["forked"]  # its command line is the harness's: a fork, not a new interpreter
    assert seen["argv"][0] == f"{harness_dir}/kernelrun.py" and seen["main"] == seen["argv"][0]
    assert seen["harness"] == []
    assert seen["on_path"] == []
    assert seen["own_session"]
    assert os.path.basename(seen["cwd"]).startswith("kernelcheck-") and seen["tmp"] == seen["cwd"]
    assert seen["argv"][1:] == [f"{seen['cwd']}/job.pt", f"{seen['cwd']}/result.pt"]


def test_a_worker_that_dies_or_hangs_scores_zero_and_leaves_nothing(tmp_path):
    # The forked worker's end, seen by the harness: an exit without a result is a crash with its
    # status; a worker still running at the spec's deadline is killed with everything in its session
    # (here a grandchild it started), and the run scores 0 for the timeout.
    base = (FIXTURES / "softmax" / "solution.py").read_text()
    dies = tmp_path / "dies.py"
    dies.write_text("import os\nos._exit(7)\n" + base)
    v = kernelcheck("softmax", dies, tmp_path / "out-dies", no_lint=True)
    assert v.reward == 0
    assert v.reason == "ModelNew crashed the worker: exit status 7"
    assert v.report["child"]["exit"] == 7

    spec = json.loads((FIXTURES / "softmax" / "spec.json").read_text())
    # 10 s: the worker starts its grandchild within a few milliseconds of being told to go (the
    # submission's import), so even a loaded machine is far inside the deadline when it does.
    (tmp_path / "spec.json").write_text(json.dumps({**spec, "child_timeout_sec": 10}))
    marker = tmp_path / "grandchild.pid"
    hangs = tmp_path / "hangs.py"
    hangs.write_text(f"import subprocess, time\np = subprocess.Popen(['sleep', '300'])\n"
                     f"open({str(marker)!r}, 'w').write(str(p.pid))\ntime.sleep(300)\n" + base)
    v = kernelcheck("softmax", hangs, tmp_path / "out-hangs", no_lint=True, spec=tmp_path / "spec.json")
    assert v.reward == 0
    assert v.reason == "ModelNew timed out: the run took longer than 10 s"
    assert marker.exists(), "the worker was killed before its submission started the grandchild"
    pid = int(marker.read_text())
    try:
        state = (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split() or ["?"])[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z"), f"the worker's grandchild {pid} is still running ({state})"
