"""The gpu_kernels GPU check, for a lent GPU machine (torch and triton installed; install nothing).

Two phases, so the GPU machine needs nothing of the platform but the task folders:

    # here (any machine with the platform): write the tasks to check, with their harness
    .venv/bin/python bench/gpu_kernels_gpu.py --prepare bench/gpu-tasks [--per-family 2]
    # on the GPU machine (bench/gpu-tasks is carried along): the check itself, inside --budget seconds
    python3 bench/gpu_kernels_gpu.py --run bench/gpu-tasks [--budget 270]

--run measures the card's copy bandwidth, then for each task runs the task's own harness
(tests/kernelcheck.py, exactly what test.sh runs) on its reference kernel twice, and prints one
row per task: the reference kernel's speedup over PyTorch (reference ms / ModelNew ms), the spread
between the two harness runs' ModelNew medians, the harness's own spread (two series in one run),
achieved bandwidth against the measured copy bandwidth, and the verdict. Then two attacks on the
timing, with the lint switched off so the runtime defences answer: a submission that patches
torch.cuda.Event.elapsed_time (must score 0), and the reference kernel launched on a side stream
(its measured time must match the default-stream launch: device-wide synchronisation sees it).
Ends with one JSON line. Tasks are taken in order until --budget would be exceeded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PATCH_TIMER = '''
import torch
import torch.nn as nn
torch.cuda.Event.elapsed_time = lambda self, other: 1e-4  # the timer says everything is instant
'''
SIDE_STREAM = '''

class ModelNew(_AesHonest):
    """The reference kernel, its whole forward on a side stream: returns before the work is done."""

    def forward(self, *args):
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            return super().forward(*args)
'''


def prepare(out: Path, per_family: int) -> None:
    from autoenvscaling.tasks import short_name, write_task
    from autoenvscaling_gpu_kernels.domain import GpuKernelsDomain
    from autoenvscaling_gpu_kernels.families import CATALOG

    domain = GpuKernelsDomain()
    out.mkdir(parents=True, exist_ok=True)
    for i in range(per_family):
        for family in CATALOG:
            task = domain.generate(family, seed=100 + i, difficulty=("medium", "hard")[i % 2])
            print(write_task(task, out / short_name(task.name)))


def harness(task: Path, solution: Path, *extra: str, timeout: float = 240) -> dict:
    with tempfile.TemporaryDirectory() as out:
        argv = [sys.executable, "-I", str(task / "tests" / "kernelcheck.py"), "--spec", str(task / "tests" / "spec.json"),
                "--reference", str(task / "tests" / "reference.py"), "--solution", str(solution), "--out", out, *extra]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        try:
            details = json.loads((Path(out) / "kernel.json").read_text())
            details["reward"] = float((Path(out) / "reward.txt").read_text())
        except (OSError, ValueError):
            details = {"reward": None, "reason": f"harness failed (exit {proc.returncode}): {(proc.stdout + proc.stderr)[-300:]}"}
        return details


def side_stream_variant(solution: str) -> str:
    """The reference answer with its forward moved onto a side stream (lint off: it forbids streams)."""
    return solution.replace("class ModelNew(", "class _AesHonest(", 1) + SIDE_STREAM


def run(folder: Path, budget: float, allow_cpu: bool) -> None:
    import torch

    if not torch.cuda.is_available() and not allow_cpu:
        sys.exit("no CUDA device here: --run is the GPU machine's half (use --prepare on this machine)")
    started = time.perf_counter()
    tasks = sorted(p for p in folder.iterdir() if (p / "tests" / "spec.json").is_file())
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (interpreter: no timing)"
    print(f"device: {device}; torch {torch.__version__}; {len(tasks)} tasks in {folder}")
    if torch.cuda.is_available():
        sys.path.insert(0, str(tasks[0] / "tests"))
        import ktiming

        print(f"copy bandwidth: {ktiming.copy_bandwidth_gbs():.0f} GB/s (device-to-device, read + write)")
    header = f"{'task':<52} {'dtype':<8} {'ref ms':>8} {'new ms':>8} {'speedup':>7} {'2-run':>6} {'in-run':>6} {'GB/s':>7} {'% copy':>6}  verdict"
    print(header)
    rows, per_task = [], None
    for task in tasks:
        elapsed = time.perf_counter() - started
        if per_task is not None and elapsed + 2 * per_task > budget:
            print(f"(stopping: {elapsed:.0f} s of the {budget:.0f} s budget used)")
            break
        t0 = time.perf_counter()
        first, second = (harness(task, task / "solution" / "solution.py") for _ in range(2))
        per_task = (time.perf_counter() - t0) if per_task is None else max(per_task, time.perf_counter() - t0)
        spec = json.loads((task / "tests" / "spec.json").read_text())
        t1, t2 = first.get("timing") or {}, second.get("timing") or {}
        row = {"task": task.name, "dtype": spec["dtype"], "reward": [first["reward"], second["reward"]],
               "reason": first.get("reason", "")}
        if t1.get("measured") and t2.get("measured"):
            new = statistics.mean([t1["modelnew_ms"], t2["modelnew_ms"]])
            row.update(reference_ms=t1["reference_ms"], modelnew_ms=new, speedup=t1["reference_ms"] / t1["modelnew_ms"],
                       two_run_spread=abs(t1["modelnew_ms"] - t2["modelnew_ms"]) / new, in_run_spread=t1["modelnew_spread"],
                       achieved_gbs=t1["achieved_gbs"], copy_gbs=t1["copy_gbs"])
            print(f"{task.name[:52]:<52} {spec['dtype']:<8} {row['reference_ms']:>8.4f} {new:>8.4f} {row['speedup']:>7.2f} "
                  f"{row['two_run_spread']:>6.1%} {row['in_run_spread']:>6.1%} {row['achieved_gbs']:>7.0f} "
                  f"{row['achieved_gbs'] / row['copy_gbs']:>6.0%}  {first['reward']:g}/{second['reward']:g} {row['reason'][:60]}")
        else:
            print(f"{task.name[:52]:<52} {spec['dtype']:<8} {'-':>8} {'-':>8} {'-':>7} {'-':>6} {'-':>6} {'-':>7} {'-':>6}  "
                  f"{first['reward']}/{second['reward']} {row['reason'][:80]}")
        rows.append(row)
    attacks = {}
    if tasks and time.perf_counter() - started + (per_task or 0) < budget:
        task = tasks[0]
        solution = (task / "solution" / "solution.py").read_text()
        with tempfile.TemporaryDirectory() as tmp:
            patched, side = Path(tmp) / "patched.py", Path(tmp) / "side.py"
            patched.write_text(PATCH_TIMER + solution)
            side.write_text(side_stream_variant(solution))
            timer = harness(task, patched, "--weaken=lint")
            stream = harness(task, side, "--weaken=lint")
        attacks = {"patched_timer": {"reward": timer["reward"], "reason": timer.get("reason", "")},
                   "side_stream": {"reward": stream["reward"], "reason": stream.get("reason", ""),
                                   "modelnew_ms": (stream.get("timing") or {}).get("modelnew_ms")}}
        print(f"attack, patched torch.cuda.Event.elapsed_time (lint off): reward {timer['reward']} ({timer.get('reason', '')[:100]})")
        honest = next((r.get("modelnew_ms") for r in rows if r["task"] == task.name), None)
        print(f"attack, launches on a side stream (lint off): reward {stream['reward']}, measured "
              f"{attacks['side_stream']['modelnew_ms']} ms against {honest} ms on the default stream ({stream.get('reason', '')[:80]})")
    measured = [r for r in rows if "speedup" in r]
    summary = {"device": device, "tasks": len(rows), "seconds": round(time.perf_counter() - started, 1),
               "max_two_run_spread": max((r["two_run_spread"] for r in measured), default=None),
               "median_speedup": statistics.median([r["speedup"] for r in measured]) if measured else None,
               "rows": rows, "attacks": attacks}
    print(json.dumps(summary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    phase = parser.add_mutually_exclusive_group(required=True)
    phase.add_argument("--prepare", type=Path, metavar="DIR", help="write the tasks to check (needs the platform)")
    phase.add_argument("--run", type=Path, metavar="DIR", help="check the tasks in DIR (needs torch, triton, CUDA)")
    parser.add_argument("--per-family", type=int, default=2, help="tasks per family for --prepare")
    parser.add_argument("--budget", type=float, default=270, help="seconds --run may take")
    parser.add_argument("--allow-cpu", action="store_true", help="run without CUDA (interpreter, no timing): a dry run")
    args = parser.parse_args()
    if args.prepare:
        prepare(args.prepare, args.per_family)
    else:
        run(args.run, args.budget, args.allow_cpu)


if __name__ == "__main__":
    main()
