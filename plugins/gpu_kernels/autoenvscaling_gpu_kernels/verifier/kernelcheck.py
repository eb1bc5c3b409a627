"""The kernel task's verifier (entry point, the trusted parent): writes reward.txt and kernel.json.

1. lint the submission's source (kernellint.py); 2. correctness: this process runs the trusted
reference and never imports the submission; a child (kernelrun.py) imports the linted bytes, runs
ModelNew on the same inputs under runtime checks and sends back its outputs, which are compared
here (kcompare.py) round by round; 3. on CUDA only, timing of both with the same function
(ktiming.py) and the runtime-ratio band. Without CUDA the child runs Triton's interpreter and the
timing is reported as unmeasured: no speed is ever invented.

Seeds: per round, weights come from a fresh seed the child also gets (ModelNew must build the same
weights), and the inputs from a second fresh seed drawn after Model is built, which never leaves
this process: a ModelNew that redraws "the next inputs" in its constructor draws the wrong ones.
After the rounds (and the timing, on CUDA) the child makes one more call on fresh values in the
same buffers, compared like a round: a forward that answers from state it kept is caught.

``--weaken`` switches protections off, for the tests and the red-team cheats' positive controls
only (a cheat must be shown to earn reward where the protection it targets is missing).

Exit status 0 whenever a reward was written (0 or 1); non-zero only when the harness itself broke.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import signal
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path[0] != HERE:  # the harness beside this file, first (-I leaves this folder off sys.path)
    sys.path.insert(0, HERE)
import aes_verifier  # noqa: E402  (the verifier library, shipped with the harness)
import kcompare  # noqa: E402
import kernellint  # noqa: E402
import ksizes  # noqa: E402

MIN_ROUNDS = 5
#: protections --weaken can switch off: the whole lint, two of its rules (every __init__ exempt,
#: operators ignored), op recording inside launches (a launch's host work exempt, as once), op
#: recording altogether, plain-tensor outputs (subclasses read, as once), the input seed (inputs
#: drawn from the weights' seed, as once), the call on fresh values (off CUDA, as once), and the
#: values (only shapes and dtypes compared)
WEAKEN = ("lint", "lint-any-init", "lint-operators", "launch-depth", "ops", "output-type", "shared-seed",
          "fresh-call", "values")
UNMEASURED = {"measured": False, "why": "no CUDA: validated for correctness only"}


class Rejected(Exception):
    """The submission failed; the message is the reason."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--spec", default="/tests/spec.json")
    p.add_argument("--reference", default="/tests/reference.py")
    p.add_argument("--solution", default="/app/solution.py")
    p.add_argument("--out", default="/logs/verifier")
    p.add_argument("--weaken", default="", metavar="PROTECTION[,...]",
                   help=f"tests and positive controls only: switch protections off ({', '.join(WEAKEN)})")
    args = p.parse_args(argv)
    args.weaken = frozenset(w for w in args.weaken.split(",") if w)
    if unknown := sorted(args.weaken - set(WEAKEN)):
        p.error(f"unknown protection {unknown[0]!r} (known: {', '.join(WEAKEN)})")
    return args


def load_reference(path: str, shapes: dict | None):  # noqa: ANN202
    """The trusted reference under a private module name, its size constants optionally replaced
    in its source before it runs (ksizes.py: derived constants follow)."""
    import types

    with open(path, encoding="utf-8") as f:
        source = ksizes.with_sizes(f.read(), shapes)
    module = types.ModuleType("_kernelcheck_reference")
    module.__file__ = path
    sys.modules[module.__name__] = module  # dataclasses and pickling look modules up by name
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _fresh_seed() -> int:
    return int.from_bytes(os.urandom(8), "little") & (2**63 - 1)


def _run(model, inputs: list, device: str):  # noqa: ANN001, ANN202
    import torch

    with torch.no_grad():
        return model(*[x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs])


def _shapes_only(out, ref, *, rtol: float) -> str | None:  # noqa: ANN001
    """--weaken values: kinds, shapes and dtypes compared, never the values."""
    import torch

    if isinstance(ref, (tuple, list)) and isinstance(out, (tuple, list)) and len(out) == len(ref):
        return next((r for o, f in zip(out, ref) if (r := _shapes_only(o, f, rtol=rtol)) is not None), None)
    tensors = isinstance(ref, torch.Tensor) and isinstance(out, torch.Tensor)
    if tensors and (out.shape, out.dtype) == (ref.shape, ref.dtype):
        return None
    return kcompare.compare(out, ref, rtol=rtol)  # its message for the mismatch


def _nbytes(value) -> int:  # noqa: ANN001
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 0


def _same(a, b) -> bool:  # noqa: ANN001
    import torch

    if isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    return a == b


class Child:
    """kernelrun.py in a private directory (0700), forked from this process once it has imported
    torch (and before anything here touches CUDA, reads the reference or draws a seed), so torch is
    imported once per verifier run instead of twice; the child imports Triton and then waits for the
    job on its stdin while this process runs the reference. It runs in a session of its own with
    this harness's directory off its path, as a fresh ``python -I kernelrun.py`` would."""

    def __init__(self) -> None:
        import torch  # noqa: F401  (before the fork: the child gets it already imported)

        self.work = tempfile.mkdtemp(prefix="kernelcheck-")
        self.job_path, self.result_path = os.path.join(self.work, "job.pt"), os.path.join(self.work, "result.pt")
        self.out_path, self.err_path = os.path.join(self.work, "stdout"), os.path.join(self.work, "stderr")
        go_read, self.go = os.pipe()
        outputs = [os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) for p in (self.out_path, self.err_path)]
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            _child_main(self, go_read, outputs)
        os.close(go_read)
        for fd in outputs:
            os.close(fd)
        self.status: int | None = None
        self.ended = threading.Event()  # set by the thread that reaps the child
        threading.Thread(target=self._reap, daemon=True).start()

    def _reap(self) -> None:
        self.status = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        self.ended.set()

    def run(self, job: dict, timeout: float, report: dict) -> dict:
        """Hand the child ``job``; its result, or Rejected."""
        import torch

        torch.save(job, self.job_path)
        os.write(self.go, b"go\n")
        os.close(self.go)
        self.go = -1
        if not self.ended.wait(timeout):
            self.kill()
            raise Rejected(f"ModelNew timed out: the run took longer than {timeout:g} s")
        stdout, stderr = _tail(self.out_path, 1000), _tail(self.err_path, 2000)
        report["child"] = {"exit": self.status, "stderr_tail": stderr, "stdout_tail": stdout}
        if not os.path.exists(self.result_path):
            lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
            last = lines[-1] if lines else f"exit status {self.status}"
            raise Rejected(f"ModelNew crashed the worker: {last}")
        # weights_only: the file was written by a process that ran untrusted code
        return torch.load(self.result_path, weights_only=True)

    def kill(self) -> None:
        if not self.ended.is_set():
            try:
                os.killpg(self.pid, signal.SIGKILL)  # its session: whatever the submission started too
            except ProcessLookupError:
                pass
            self.ended.wait()

    def close(self) -> None:
        if self.go >= 0:
            os.close(self.go)  # never told to go: the child reads end of file and exits
            self.go = -1
        self.kill()
        shutil.rmtree(self.work, ignore_errors=True)


def _tail(path: str, chars: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 4 * chars))
            return f.read().decode("utf-8", "replace")[-chars:]
    except OSError:
        return ""


def _child_main(child: Child, go_read: int, outputs: list[int]) -> None:
    """In the forked child: become ``python -I kernelrun.py JOB RESULT`` in the private directory,
    reading "go" on stdin and writing to the two output files."""
    code = 1
    try:
        os.setsid()
        os.close(child.go)
        for fd, target in ((go_read, 0), (outputs[0], 1), (outputs[1], 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(child.work)
        os.environ.pop("TRITON_INTERPRET", None)  # the child decides, from torch
        os.environ["TMPDIR"] = child.work  # its private copy of the submission goes where close() removes it
        tempfile.tempdir = None  # computed again from TMPDIR
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False, buffering=1)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)
        script = os.path.join(HERE, "kernelrun.py")
        sys.argv = [script, child.job_path, child.result_path]
        for name in [n for n in sys.modules if n in _HARNESS_MODULES]:
            del sys.modules[name]  # the harness's own modules: nothing of them is the child's
        runpy.run_path(script, run_name="__main__")  # ends in os._exit
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - report whatever broke, then leave without the parent's cleanup
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


#: this harness's modules, dropped from the child's module table before it runs kernelrun.py
_HARNESS_MODULES = frozenset({"aes_verifier", "kcompare", "kernellint", "ksizes", "ktiming"})


def check(args: argparse.Namespace, report: dict) -> str:
    """The reason the submission passed (one clause), or Rejected."""
    with open(args.spec, encoding="utf-8") as f:
        spec = json.load(f)
    if not os.path.isfile(args.solution):
        raise Rejected(f"no {args.solution}")
    with open(args.solution, "rb") as f:
        raw = f.read()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected("solution.py is not UTF-8") from None
    if "lint" not in args.weaken:
        problems = kernellint.lint(source, spec, args.weaken)
        report["lint"] = problems
        if problems:
            raise Rejected(f"lint: {problems[0]}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))

    child = Child()
    try:
        return _check(args, spec, source, child, report)
    finally:
        child.close()


def _check(args: argparse.Namespace, spec: dict, source: str, child: Child, report: dict) -> str:
    import torch

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    report["mode"] = "cuda" if cuda else "interpreter"
    ref_mod = load_reference(args.reference, None if cuda else spec.get("cpu_shapes"))

    rounds = max(MIN_ROUNDS, int(spec.get("rounds", MIN_ROUNDS)))
    refs: list = []
    job_rounds: list[dict] = []
    for _ in range(rounds):
        seed, input_seed = _fresh_seed(), _fresh_seed()
        init = list(ref_mod.get_init_inputs())
        torch.manual_seed(seed)  # the child seeds identically before building ModelNew
        model = ref_mod.Model(*init).to(device)
        if "shared-seed" not in args.weaken:
            torch.manual_seed(input_seed)  # never sent: ModelNew cannot know the inputs in advance
        inputs = list(ref_mod.get_inputs())
        refs.append(_run(model, inputs, device))
        job_rounds.append({"seed": seed, "init": init, "inputs": inputs})
        report["rounds"].append({"seed": seed, "input_seed": None if "shared-seed" in args.weaken else input_seed})
    fresh_inputs, fresh_ref = None, None
    if cuda or "fresh-call" not in args.weaken:  # one more call of the last round's ModelNew (kernelrun.py)
        torch.manual_seed(_fresh_seed())
        fresh_inputs = list(ref_mod.get_inputs())
        fresh_ref = _run(model, fresh_inputs, device)
    job = {"source": source, "rounds": job_rounds, "device": device, "time": cuda, "fresh": fresh_inputs,
           "require_kernel": bool(spec.get("require_kernel", True)),
           "weaken": sorted(args.weaken & {"launch-depth", "ops", "output-type"}),
           "poison_bytes": max(2 * _nbytes(refs[0]), 1 << 20)}
    result = child.run(job, float(spec.get("child_timeout_sec", 400)), report)
    if result.get("device") != device:
        raise Rejected(f"the worker ran on {result.get('device')}, not {device}")

    rtol = float(spec["rtol"])
    compare = _shapes_only if "values" in args.weaken else kcompare.compare
    for k, (got, ref, sent) in enumerate(zip(result["rounds"], refs, job_rounds), 1):
        reason = compare(got["out"], ref, rtol=rtol)
        if reason is None:
            changed = [i for i, (a, b) in enumerate(zip(got["inputs"], sent["inputs"])) if not _same(a, b)]
            reason = f"ModelNew.forward modified its input {changed[0]}" if changed else None
        report["rounds"][k - 1].update(ok=reason is None, reason=reason)
        if reason is not None:
            raise Rejected(f"round {k}: {reason}")
    if result["error"] is not None:
        raise Rejected(result["error"])
    if len(result["rounds"]) != rounds:
        raise Rejected(f"the worker returned {len(result['rounds'])} of {rounds} rounds")
    if fresh_inputs is not None and (reason := compare(result.get("fresh"), fresh_ref, rtol=rtol)) is not None:
        raise Rejected(f"the call on fresh values after the rounds{' and the timing' if cuda else ''}: {reason}")
    fresh = " and a call on fresh values" if fresh_inputs is not None else ""
    correct = f"correct on {rounds} rounds{fresh} ({report['mode']})"
    if not cuda:
        report["timing"] = UNMEASURED
        return f"{correct}; timing unmeasured (no CUDA): validated for correctness only"
    return f"{correct}; {judge_timing(spec, model, inputs, result['timing'], report)}"


def judge_timing(spec: dict, model, inputs: list, new: dict, report: dict) -> str:  # noqa: ANN001
    """The runtime-ratio band and the bandwidth ceiling, with the reference timed like ModelNew."""
    import torch

    import ktiming

    dev_inputs = [x.to("cuda") if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        ref = ktiming.bench(lambda: model(*dev_inputs))
    copy_gbs = ktiming.copy_bandwidth_gbs()
    moved = _nbytes(inputs) + new["out_bytes"] + new["param_bytes"]
    achieved_gbs = moved / (new["median_ms"] * 1e-3) / 1e9
    ratio = new["median_ms"] / ref["median_ms"]
    low, high = spec.get("band", [0.05, 0.60])
    report["timing"] = {"measured": True, "reference_ms": ref["median_ms"], "reference_spread": ref["spread"],
                        "modelnew_ms": new["median_ms"], "modelnew_spread": new["spread"], "ratio": ratio,
                        "band": [low, high], "achieved_gbs": achieved_gbs, "copy_gbs": copy_gbs}
    if ratio < low:
        raise Rejected(f"implausible speedup: runtime ratio {ratio:.4f} below band[0] {low:g} rejected")
    if achieved_gbs > 1.1 * copy_gbs:
        raise Rejected(f"implausible: {achieved_gbs:.0f} GB/s exceeds the card's measured {copy_gbs:.0f} GB/s")
    if ratio > high:
        raise Rejected(f"too slow: runtime ratio {ratio:.3f} above band[1] {high:g}")
    return f"runtime ratio {ratio:.3f} within [{low:g}, {high:g}] ({new['median_ms']:.4f} ms against {ref['median_ms']:.4f} ms)"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    aes_verifier.clear(args.out, ("reward.txt", "reward.json", "kernel.json"))  # only this run's verdict counts
    report: dict = {"status": None, "reward": 0, "reason": None, "mode": None, "rounds": [],
                    "timing": None, "lint": [], "weakened": sorted(args.weaken)}
    try:
        reason, reward = check(args, report), 1
    except Rejected as r:
        reason, reward = str(r), 0
    report.update(status="pass" if reward else "fail", reward=reward, reason=reason)
    if report["timing"] is None and report["mode"] != "cuda":
        report["timing"] = UNMEASURED
    aes_verifier.write_json("kernel.json", report, args.out, indent=2)
    aes_verifier.write_reward(reward, args.out)
    print(f"kernelcheck: mode {report['mode'] or 'none (not run)'}; lint problems {len(report['lint'])}"
          + (f"; WEAKENED: {', '.join(report['weakened'])}" if report["weakened"] else ""))
    for k, rnd in enumerate(report["rounds"], 1):
        if "ok" in rnd:
            print(f"  round {k} (seed {rnd['seed']}): {'ok' if rnd['ok'] else rnd['reason']}")
    print(f"kernelcheck: reward {reward}: {reason}")
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is written and closed: skip the interpreter's teardown of torch and Triton, which
    # took 0.4-0.7 s of every verifier run (the verifier phase waits for this process to exit).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
