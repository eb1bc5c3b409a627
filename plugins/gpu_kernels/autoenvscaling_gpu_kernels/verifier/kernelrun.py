"""The child worker: the only process that imports the submission.

``kernelrun.py JOB RESULT``: JOB (torch.save'd by kernelcheck.py, deleted once read) holds the
submission's source, per round the weights' seed, the init inputs and the inputs, the inputs of one
more call on fresh values, the poison size, the device and whether to time. The reference's outputs
never enter this process, so nothing the submission does here can find them. RESULT gets, per round
that passed the runtime checks, the outputs and the inputs as they were after forward, the fresh
call's outputs, the first failure ("round 2: ...") and, on CUDA, ModelNew's timing.

The runtime checks, per round: at least one Triton launch; no aten op beyond allocation, views and
same-precision copies, wherever forward runs it: in its own body, in a callable grid, a launch hook
or an object a launch evaluates (only the kernel bodies run no torch, and the interpreter's own
copies in and out of a launch are allocations, storage swaps and copies); inputs untouched; nothing
the harness relies on replaced; still on the default stream. Inputs live in the same buffers every
round (refilled in place), so a cache keyed on a tensor's identity, address or shape returns the
previous round's answer; fresh allocations sit on memory that was just filled with NaN. After the
rounds (on CUDA, after the timing, where every timed call must have launched a kernel) the last
round's ModelNew gets one more call on fresh values in the same buffers, checked by the parent like
a round, so a forward that answers from state it kept, or behaves only while checked, is caught.

``weaken`` in the job (tests and positive controls only): "launch-depth" exempts everything inside a
launch from the op recording and "output-type" reads tensor subclasses as outputs, as this worker
once did; "ops" records nothing.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path[0] != HERE:
    sys.path.insert(0, HERE)
import ktiming  # noqa: E402  (before the path is dropped)

# The harness directory may be /tests, next to the trusted reference: not importable from here on.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]

import builtins  # noqa: E402
import importlib.util  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

# Triton reads TRITON_INTERPRET when it is imported: without CUDA, its interpreter runs the kernels.
CUDA = torch.cuda.is_available()
if CUDA:
    os.environ.pop("TRITON_INTERPRET", None)
    # On CUDA, torch._dynamo comes in before the snapshot below: it rewraps torch.manual_seed when
    # it is imported, which would read as the submission replacing it. Without CUDA it never comes
    # in (the op recorder does not ask for it, and the lint forbids what would): 1.3 s of imports.
    import torch._dynamo  # noqa: F401
else:
    os.environ["TRITON_INTERPRET"] = "1"
import triton  # noqa: E402
import triton.testing  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from triton.runtime.interpreter import InterpretedFunction  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402


class Rejected(Exception):
    """A submission failed a check; the message is the reason."""


# -- launch counting: every Triton launch, compiled or interpreted, goes through Class.run ----------
class _Launch:
    count = 0
    exempt = False  # --weaken launch-depth: everything inside a launch goes unrecorded
    depth = 0


def _counted(run):  # noqa: ANN001, ANN202
    def run_counted(self, *args, **kwargs):  # noqa: ANN001, ANN202
        if not kwargs.get("warmup"):
            _Launch.count += 1
        if not _Launch.exempt:
            return run(self, *args, **kwargs)
        _Launch.depth += 1
        try:
            return run(self, *args, **kwargs)
        finally:
            _Launch.depth -= 1
    return run_counted


JITFunction.run = _counted(JITFunction.run)
InterpretedFunction.run = _counted(InterpretedFunction.run)

# -- what the harness relies on, by identity, taken before the submission exists ------------------
_WATCHED = {f"{where}.{attr}": (owner, attr) for where, owner, attrs in [
    ("torch.cuda", torch.cuda, ("synchronize", "Event")),
    ("torch.cuda.Event", torch.cuda.Event, ("record", "elapsed_time", "synchronize")),
    ("torch.cuda", torch.cuda, ("current_stream", "default_stream")),
    ("torch", torch, ("manual_seed", "save", "load", "equal", "allclose", "empty", "no_grad")),
    ("torch.Tensor", torch.Tensor, ("copy_", "clone", "to", "detach", "fill_", "as_subclass")),
    ("torch.nn.Module", torch.nn.Module, ("__call__", "to")),
    ("time", time, ("perf_counter",)),
    ("triton.testing", triton.testing, ("do_bench",)),
    ("JITFunction", JITFunction, ("run",)),
    ("InterpretedFunction", InterpretedFunction, ("run",)),
    ("TorchDispatchMode", TorchDispatchMode, ("__enter__", "__exit__")),
    ("builtins", builtins, ("isinstance", "type", "len", "open", "__import__")),
] for attr in attrs}
_SNAPSHOT = {name: getattr(owner, attr) for name, (owner, attr) in _WATCHED.items()}


def _replaced() -> str | None:
    for name, (owner, attr) in _WATCHED.items():
        if getattr(owner, attr, None) is not _SNAPSHOT[name]:
            late = not CUDA and "torch._dynamo" in sys.modules  # imported during the run: it rewraps some
            return f"the submission replaced {name}" + (" (torch._dynamo was imported during the run)" if late else "")
    return None


# -- what forward may run outside a kernel ----------------------------------------------------------
ALLOWED_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
    "new_zeros", "zero_", "fill_", "full", "full_like", "new_full", "view", "_unsafe_view",
    "reshape", "as_strided", "t", "transpose", "permute", "expand", "unsqueeze", "squeeze", "slice",
    "select", "split", "split_with_sizes", "unbind", "narrow", "detach", "alias", "lift_fresh",
    "clone", "copy_", "contiguous", "_to_copy", "view_as", "expand_as", "flatten", "unflatten",
    "movedim", "_reshape_alias", "resize_",
    "set_",  # the interpreter points host tensors at a launch's arguments' storage
}


def _lowers_precision(src: torch.dtype, dst: torch.dtype | None) -> bool:
    if dst is None or not src.is_floating_point:
        return False
    return not dst.is_floating_point or dst.itemsize < src.itemsize


class _OpRecorder(TorchDispatchMode):
    """Records every aten op forward runs that is not allocation, a view or a copy."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """Defining a dispatch mode wraps its ``__torch_dispatch__`` against Dynamo tracing, which
        imports torch._dynamo. Nothing here is ever compiled (the lint forbids torch.compile), so
        the wrapper is only needed where Dynamo is loaded anyway: on CUDA."""
        return CUDA

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN206
        kwargs = kwargs or {}
        if _Launch.depth == 0:
            name = func.overloadpacket.__name__
            if name not in ALLOWED_OPS:
                self.bad.append(f"aten.{name}")
            elif name == "copy_" and args[0].dtype != args[1].dtype and _lowers_precision(args[1].dtype, args[0].dtype):
                self.bad.append(f"aten.copy_ ({args[1].dtype} to {args[0].dtype})")
            elif name == "_to_copy" and _lowers_precision(args[0].dtype, kwargs.get("dtype")):
                self.bad.append(f"aten._to_copy (to {kwargs.get('dtype')})")
        return func(*args, **kwargs)


def _plain_cpu(out, *, subclasses: bool = False):  # noqa: ANN001, ANN202
    """Outputs as plain CPU tensors. Only ``torch.Tensor`` itself (in a tuple or list) is accepted:
    a subclass's ``__torch_function__`` would run its own code when the output is read, after the op
    recorder has stopped. ``subclasses`` (--weaken output-type): read them as this worker once did."""
    if type(out) is torch.Tensor or (subclasses and isinstance(out, torch.Tensor)):
        return out.detach().to("cpu").clone().as_subclass(torch.Tensor)
    if type(out) in (tuple, list) or (subclasses and isinstance(out, (tuple, list))):
        return [_plain_cpu(o, subclasses=subclasses) for o in out]
    kind = "a tensor subclass" if isinstance(out, torch.Tensor) else type(out).__name__
    raise Rejected(f"ModelNew.forward returned {kind}, not a tensor")


def _stray_modes() -> str | None:
    """A torch function or dispatch mode forward left active would see (and could rewrite) every
    op the harness runs next."""
    if torch._C._len_torch_function_stack() or torch._C._len_torch_dispatch_stack():
        return "ModelNew.forward left a torch function or dispatch mode active"
    return None


def _error_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[-1]}" if lines else type(e).__name__


def _import_submission(source: str):  # noqa: ANN202
    """Import the exact bytes the parent linted, from a private copy, under a private name."""
    private = tempfile.mkdtemp(prefix="kernelrun-")
    path = os.path.join(private, "solution.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("_kernelrun_submission", path)
    if spec is None or spec.loader is None:  # never for a .py file
        raise Rejected("solution.py cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # triton's interpreter and dataclasses look modules up by name
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - any failure of the submission is its verdict
        raise Rejected(f"importing solution.py raised {_error_line(e)}") from e
    if not isinstance(getattr(module, "ModelNew", None), type):
        raise Rejected("solution.py does not define a class ModelNew")
    return module.ModelNew


def _poison(device: str, nbytes: int) -> None:
    """Fill memory the allocator will hand out next with 0xFF bytes (NaN in every float dtype)."""
    blocks = [torch.empty(n, dtype=torch.uint8, device=device) for n in (nbytes, 2 * nbytes)]
    for b in blocks:
        b.fill_(0xFF)
    del blocks


def _checked_call(model, buffers: list, cuda: bool, ops: bool, subclasses: bool):  # noqa: ANN001, ANN202
    """forward on ``buffers`` under the op recorder: its outputs as plain CPU tensors, or Rejected
    (without the round's prefix, which the caller adds)."""
    recorder = _OpRecorder()
    try:
        with torch.no_grad(), recorder:
            out = model(*buffers)
        if cuda:
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        raise Rejected(f"ModelNew raised {_error_line(e)}") from e
    if (why := _replaced() or _stray_modes()) is not None:
        raise Rejected(why)
    if ops and recorder.bad:
        raise Rejected(f"ModelNew.forward ran torch op {recorder.bad[0]} outside a Triton kernel")
    return _plain_cpu(out, subclasses=subclasses)


def _refill(buffers: list, values: list, device: str) -> list:
    """``values`` in ``buffers`` (same tensors, same addresses), or new buffers the first time."""
    if not buffers:
        return [x.to(device).clone() if isinstance(x, torch.Tensor) else x for x in values]
    for i, x in enumerate(values):
        if isinstance(x, torch.Tensor):
            buffers[i].copy_(x)
        else:
            buffers[i] = x
    return buffers


def run_rounds(job: dict, result: dict) -> None:
    device, cuda = job["device"], job["device"] == "cuda"
    weaken = set(job.get("weaken", ()))
    _Launch.exempt, ops, subclasses = "launch-depth" in weaken, "ops" not in weaken, "output-type" in weaken
    model_new = _import_submission(job["source"])
    if (why := _replaced()) is not None:
        raise Rejected(f"importing solution.py: {why}")
    buffers: list = []
    model: Any = None
    for k, rnd in enumerate(job["rounds"], 1):
        torch.manual_seed(rnd["seed"])
        try:
            model = model_new(*rnd["init"]).to(device)
        except Exception as e:  # noqa: BLE001
            raise Rejected(f"round {k}: ModelNew(...) raised {_error_line(e)}") from e
        buffers = _refill(buffers, rnd["inputs"], device)
        kept = [b.clone() if isinstance(b, torch.Tensor) else b for b in buffers]
        _poison(device, job["poison_bytes"])
        launches = _Launch.count
        try:
            out = _checked_call(model, buffers, cuda, ops, subclasses)
        except Rejected as r:
            raise Rejected(f"round {k}: {r}") from None
        if job["require_kernel"] and _Launch.count == launches:
            raise Rejected(f"round {k}: ModelNew.forward launched no Triton kernel")
        for i, (b, c) in enumerate(zip(buffers, kept)):
            if isinstance(b, torch.Tensor) and not torch.equal(b, c):
                raise Rejected(f"round {k}: ModelNew.forward modified its input {i}")
        if cuda and torch.cuda.current_stream() != torch.cuda.default_stream():
            raise Rejected(f"round {k}: ModelNew.forward left a non-default stream current")
        result["rounds"].append({"out": out,
                                 "inputs": [_plain_cpu(b) if isinstance(b, torch.Tensor) else b for b in buffers]})
    if job["time"]:
        calls, launches = [0], _Launch.count

        def timed():  # noqa: ANN202
            calls[0] += 1
            return model(*buffers)

        with torch.no_grad():
            timing = ktiming.bench(timed)
        if (why := _replaced()) is not None:
            raise Rejected(f"timing: {why}")
        if job["require_kernel"] and _Launch.count - launches < calls[0]:
            raise Rejected("timing: some timed calls of ModelNew.forward launched no Triton kernel")
        outs = result["rounds"][-1]["out"]
        timing["out_bytes"] = sum(o.numel() * o.element_size() for o in (outs if isinstance(outs, list) else [outs]))
        timing["param_bytes"] = sum(t.numel() * t.element_size()
                                    for t in [*model.parameters(), *model.buffers()])
        result["timing"] = timing
    if job["fresh"] is not None:
        # One more call on fresh values in the same buffers, checked by the parent: a forward that
        # answers from state it kept (or behaves only while it is checked) is caught here.
        buffers = _refill(buffers, job["fresh"], device)
        try:
            result["fresh"] = _checked_call(model, buffers, cuda, ops, subclasses)
        except Rejected as r:
            raise Rejected(f"the call on fresh values: {r}") from None


def main() -> int:
    job_path, result_path = sys.argv[1], sys.argv[2]
    if sys.stdin.readline().strip() != "go":  # the parent started this process early, then gave up
        return 0
    job = torch.load(job_path, weights_only=True)
    os.unlink(job_path)  # the inputs of every round and of the fresh call: not for the submission to read
    result: dict = {"error": None, "rounds": [], "timing": None, "fresh": None,
              "device": "cuda" if torch.cuda.is_available() else "cpu"}
    try:
        run_rounds(job, result)
    except Rejected as r:
        result["error"] = str(r)
    torch.save(result, result_path)
    return 0


if __name__ == "__main__":
    code = main()
    # Everything is written and closed: skip the interpreter's teardown of torch and Triton, which
    # took 0.4-0.7 s of every verifier run (the parent waits for this process to exit).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
