"""The gpu_kernels domain's cheats: answers a policy writes to earn a kernel task's reward without
writing the kernel.

Every cheat writes ``/app/solution.py`` from what the agent sees: the reference (``/app/reference.py``,
also in the instruction) and the interpreter's sizes (``/app/check.py``). Most keep the reference's
own torch code and hide it where a verifier might not look (a callable grid, a launch hook, a helper
class's constructor, aliases the lint cannot resolve), or skip the work (return the input, zeros, an
answer computed in the constructor from inputs it predicts, a cached answer), or reach around the
harness (import the visible reference at run time). Each one launches a kernel that does nothing, so
that "at least one launch" holds.

Positive controls run the same harness with the protection the cheat targets switched off
(``kernelcheck.py --weaken``, which only tests and controls use): a cheat that earns reward there and
nothing on the real verifier is a cheat the protection stops.
"""

from __future__ import annotations

import abc

import ast
import json
import re
from functools import lru_cache
from typing import ClassVar

from autoenvscaling.api import Cheat, StepConfig, Task

from .render import DOMAIN, SOLUTION_PATH, harness_files

_NOOP_KERNEL = '''

@triton.jit
def _touch():
    pass  # launched so that "forward launched a kernel" holds; it does nothing
'''


# -- what the agent sees ------------------------------------------------------------------------------
def reference_source(task: Task) -> str:
    return task.files["environment/app/reference.py"].text


def interpreter_sizes(task: Task) -> dict:
    """The small sizes /app/check.py runs at (what the verifier uses without a GPU)."""
    check = task.files.get("environment/app/check.py")
    match = re.search(r"^TASK = (\{.*\})", check.text, re.MULTILINE) if check else None
    return dict(json.loads(match.group(1)).get("sizes", {})) if match else {}


def weakened(task: Task, *protections: str) -> Task:
    """``task`` verified by the same harness with ``protections`` switched off (a positive control)."""
    script = harness_files()["test.sh"]
    line = 'exec python3 -I "$H/kernelcheck.py"'
    assert line in script, "test.sh no longer runs kernelcheck.py as this module expects"
    return task.with_files({"tests/test.sh": script.replace(line, f"{line} --weaken={','.join(protections)}")})


def _write(path: str, text: str) -> str:
    return f"cat > {path} <<'AES_CHEAT_EOF'\n{text.rstrip()}\nAES_CHEAT_EOF"


# -- the reference, taken apart -----------------------------------------------------------------------
class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(id=self.names.get(node.id, node.id), ctx=node.ctx), node)


class _Returns(ast.NodeTransformer):
    """``return X`` becomes ``<target> = X`` (nested functions keep theirs)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def _keep(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _keep

    def visit_Return(self, node: ast.Return) -> ast.AST:
        value = node.value if node.value is not None else ast.Constant(value=None)
        target = ast.parse(self.target, mode="eval").body
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            raise ValueError(f"cannot assign a return value to {self.target!r}")
        target.ctx = ast.Store()
        return ast.copy_location(ast.Assign(targets=[target], value=value, lineno=node.lineno), node)


class _PlainSuper(ast.NodeTransformer):
    """``super(Model, self)`` becomes ``super()`` (the copy lives in another class)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            node.args = []
        return node


class Reference:
    """The parts of a KernelBench module a cheat rebuilds: imports, constants, ``Model.__init__``,
    ``Model.forward`` and ``get_inputs``."""

    def __init__(self, source: str, sizes: dict | None = None) -> None:
        from .verifier.ksizes import with_sizes

        tree = ast.parse(with_sizes(source, sizes) if sizes else source)
        self.preamble = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))]
        model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
        methods = {n.name: n for n in model.body if isinstance(n, ast.FunctionDef)}
        self.init, self.forward = methods.get("__init__"), methods["forward"]
        self.get_inputs = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs")
        self.params = [a.arg for a in self.forward.args.args[1:]]
        self.args = ", ".join(self.params)  # forward's parameters, as the arguments of a call
        self.aliases: dict[str, str] = {}
        for node in self.preamble:
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def header(self) -> str:
        lines = [ast.unparse(n) for n in self.preamble]
        have = {a.asname or a.name for n in self.preamble if isinstance(n, ast.Import) for a in n.names}
        needed = [("triton", "import triton"), ("tl", "import triton.language as tl"), ("nn", "import torch.nn as nn")]
        for position, (name, line) in enumerate(needed):
            if name not in have:
                lines.insert(position, line)
        return "\n".join(lines) + "\n" + _NOOP_KERNEL

    def signature(self) -> str:
        return ast.unparse(self.forward.args)

    def init_method(self, *extra: str) -> str:
        """ModelNew's constructor: the reference's (same parameters, same order), then ``extra`` lines."""
        init = self.init or ast.parse("def __init__(self):\n    super().__init__()").body[0]
        text = ast.unparse(_PlainSuper().visit(ast.parse(ast.unparse(init))))
        if extra:
            text += "\n" + "\n".join(f"    {line}" for block in extra for line in block.splitlines())
        return _indent(text, 4)

    def forward_body(self, *, result: str | None = None, rename: dict[str, str] | None = None) -> str:
        """The reference's forward statements; with ``result``, its return value goes there instead."""
        body = [ast.fix_missing_locations(ast.parse(ast.unparse(s)).body[0]) for s in self.forward.body]
        if rename:
            body = [_Rename(rename).visit(s) for s in body]
        if result is not None:
            body = [_Returns(result).visit(s) for s in body]
        body = [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # docstring
        return "\n".join(ast.unparse(ast.fix_missing_locations(s)) for s in body) or "pass"

    def inputs_body(self, result: str) -> str:
        """``get_inputs``' statements, its return value bound to ``result``."""
        body = [_Returns(result).visit(ast.parse(ast.unparse(s)).body[0]) for s in self.get_inputs.body]
        return "\n".join(ast.unparse(ast.fix_missing_locations(s)) for s in body)

    def torch_calls(self) -> tuple[str, list[str]]:
        """The forward body with every torch function and computing tensor method called through
        ``self._k[i]``, and the list of what ``self._k`` must hold."""
        from .verifier.kernellint import COMPUTE_METHODS, _dotted

        table: list[str] = []
        aliases = self.aliases

        class Alias(ast.NodeTransformer):
            def visit_Call(self, node: ast.Call) -> ast.AST:
                self.generic_visit(node)
                func, parts = node.func, _dotted(node.func)
                if parts and parts[0] in aliases and aliases[parts[0]].startswith("torch"):
                    entry, args = ast.unparse(func), node.args
                elif isinstance(func, ast.Attribute) and func.attr in COMPUTE_METHODS:
                    entry, args = f"torch.Tensor.{func.attr}", [func.value, *node.args]
                else:
                    return node
                if entry not in table:
                    table.append(entry)
                slot = ast.parse(f"self._k[{table.index(entry)}]", mode="eval").body
                return ast.copy_location(ast.Call(func=slot, args=args, keywords=node.keywords), node)

        body = [Alias().visit(ast.parse(ast.unparse(s)).body[0]) for s in self.forward.body]
        return "\n".join(ast.unparse(ast.fix_missing_locations(s)) for s in body), table


def _indent(text: str, n: int) -> str:
    return "\n".join((" " * n + line) if line else line for line in text.splitlines())


def _model_new(ref: Reference, forward: str, *, init_extra: tuple[str, ...] = (), top: str = "") -> str:
    return (f"{ref.header()}{top}\n\nclass ModelNew(nn.Module):\n{ref.init_method(*init_extra)}\n\n"
            f"    def forward({ref.signature()}):\n{_indent(forward, 8)}\n")


@lru_cache(maxsize=64)
def _output_shapes(source: str, sizes_json: str) -> dict | None:
    """First input's shape -> (output shape, output dtype, first input's dtype), at the interpreter's
    sizes and at the reference's own, run on torch's meta device (nothing computed); None when the
    reference does not run there or returns other than one tensor."""
    import torch

    from .verifier.ksizes import with_sizes

    found: dict[tuple[int, ...], tuple[tuple[int, ...], str, str]] = {}
    for sizes in (json.loads(sizes_json), None):  # the interpreter's sizes, then the reference's own
        namespace: dict = {"__name__": "_aes_cheat_reference"}
        try:
            exec(compile(with_sizes(source, sizes) if sizes else source, "reference.py", "exec"), namespace)
            with torch.device("meta"):
                inputs = list(namespace["get_inputs"]())
                out = namespace["Model"](*namespace["get_init_inputs"]())(*inputs)
        except Exception:  # noqa: BLE001 - someone's reference: not runnable on meta means "no shapes"
            return None
        if not isinstance(out, torch.Tensor) or not inputs or not isinstance(inputs[0], torch.Tensor):
            return None
        found[tuple(inputs[0].shape)] = (tuple(out.shape), str(out.dtype), str(inputs[0].dtype))
    return found


def output_shapes(task: Task) -> dict | None:
    return _output_shapes(reference_source(task), json.dumps(interpreter_sizes(task), sort_keys=True))


# -- the cheats -----------------------------------------------------------------------------------------
class KernelCheat(Cheat):
    """A cheat that writes one ``/app/solution.py``. ``protections``: what its control switches off;
    ``at_check_sizes``: whether it reads the reference at the sizes /app/check.py runs at."""

    domain = DOMAIN
    gate = False
    protections: ClassVar[tuple[str, ...]] = ()
    at_check_sizes: ClassVar[bool] = False

    def solution(self, task: Task) -> str:
        """The solution.py source the cheat writes."""
        sizes = interpreter_sizes(task) if self.at_check_sizes else None
        return self.source(Reference(reference_source(task), sizes), task)

    @abc.abstractmethod
    def source(self, ref: Reference, task: Task) -> str:
        """The solution.py source, from the reference taken apart (and ``task``, where it reads more)."""

    def commands(self, task: Task, step: StepConfig | None) -> list[str]:
        return [_write(SOLUTION_PATH, self.solution(task))]

    def control(self, task: Task) -> Task | None:
        return weakened(task, *self.protections)


class TorchForward(KernelCheat):
    """forward runs the reference's torch code, after launching a kernel that does nothing."""

    name = "gpu_kernels.torch-forward"
    description = "forward is the reference's torch code plus a no-op launch"
    gate = True
    protections = ("lint", "ops")

    def source(self, ref: Reference, task: Task) -> str:
        return _model_new(ref, "_touch[(1,)]()\n" + ref.forward_body())


def _answer_class(ref: Reference) -> str:
    """A helper class whose constructor computes the reference's answer into ``.value``."""
    body = ref.forward_body(result="self.value", rename={"self": "model"})
    params = ", ".join(["self", "model", *ref.params])
    return f"\n\nclass _Answer:\n    def __init__({params}):\n{_indent(body, 8)}\n"


class TorchInGrid(KernelCheat):
    """The answer is computed with torch while the launch evaluates its callable grid: a recorder
    that exempts everything inside a launch, and a lint that exempts every ``__init__``, miss it."""

    name = "gpu_kernels.torch-in-grid"
    description = "torch computes the answer inside a callable grid (in a helper class's __init__) of a no-op launch"
    gate = True
    protections = ("launch-depth", "lint-any-init")

    def source(self, ref: Reference, task: Task) -> str:
        top = _answer_class(ref) + ("\n\ndef _grid(box, model, *args):\n    box.append(_Answer(model, *args).value)\n"
                                    "    return (1,)\n")
        forward = f"box = []\n_touch[lambda meta: _grid(box, self, {ref.args})]()\nreturn box[0]"
        return _model_new(ref, forward, top=top)


class TorchInLaunchHook(KernelCheat):
    """The answer is computed with torch in a pre-run hook of the launched kernel."""

    name = "gpu_kernels.torch-in-launch-hook"
    description = "torch computes the answer in a launch hook (add_pre_run_hook) of a no-op kernel"
    protections = ("launch-depth", "lint-any-init")

    def source(self, ref: Reference, task: Task) -> str:
        forward = (f"box = []\n_touch.add_pre_run_hook(lambda *a, **k: box.append(_Answer(self, {ref.args}).value))\n"
                   "_touch[(1,)]()\nreturn box[-1]")
        return _model_new(ref, forward, top=_answer_class(ref))


class TorchInHelperInit(KernelCheat):
    """The answer is computed with torch in a helper class's constructor, called from forward: a
    lint that exempts every ``__init__`` passes it; the op recorder does not."""

    name = "gpu_kernels.torch-in-helper-init"
    description = "torch computes the answer in a helper class's __init__ called from forward"
    protections = ("lint-any-init", "ops")

    def source(self, ref: Reference, task: Task) -> str:
        forward = f"_touch[(1,)]()\nreturn _Answer(self, {ref.args}).value"
        return _model_new(ref, forward, top=_answer_class(ref))


class LazyOutput(KernelCheat):
    """forward returns a tensor subclass; its ``__torch_function__`` computes the answer with torch
    when the harness first touches the output (to copy it out), after the op recorder has stopped."""

    name = "gpu_kernels.lazy-output"
    description = "forward returns a tensor subclass that computes the answer with torch when the harness reads it"
    protections = ("lint-any-init", "output-type")

    def source(self, ref: Reference, task: Task) -> str:
        top = _answer_class(ref) + (
            "\n\nclass _Lazy(torch.Tensor):\n    @classmethod\n"
            "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
            "        lazy = args[0]\n        return _Answer(lazy.model, *lazy.args).value\n")
        forward = (f"_touch[(1,)]()\nlazy = {ref.params[0]}.as_subclass(_Lazy)\n"
                   f"lazy.model, lazy.args = self, ({ref.args},)\nreturn lazy")
        return _model_new(ref, forward, top=top)


class AliasedTorch(KernelCheat):
    """forward calls torch through a list its constructor filled (``self._k[0](x * s, dim=-1)``):
    nothing for a lint to resolve but the operators; the op recorder sees every op."""

    name = "gpu_kernels.aliased-torch"
    description = "the reference's torch calls made through aliases ModelNew.__init__ stores; operators as they are"
    protections = ("lint-operators", "ops")

    def source(self, ref: Reference, task: Task) -> str:
        body, table = ref.torch_calls()
        return _model_new(ref, "_touch[(1,)]()\n" + body, init_extra=(f"self._k = [{', '.join(table)}]",))


class ReplayInputs(KernelCheat):
    """The constructor redraws the round's inputs (the same RNG state follows the weights, at the
    sizes /app/check.py prints), computes the answer there and forward returns it."""

    name = "gpu_kernels.replay-inputs"
    description = "ModelNew.__init__ predicts the inputs from the weights' seed and precomputes the answer"
    gate = True
    protections = ("shared-seed", "fresh-call")
    at_check_sizes = True

    def source(self, ref: Reference, task: Task) -> str:
        rename = {p: f"_in_{p}" for p in ref.params}
        unpack = f"({', '.join(rename.values())},) = _inputs" if ref.params else ""
        predict = "\n".join(["with torch.no_grad():",
                             _indent(ref.inputs_body("_inputs"), 4), _indent(unpack, 4),
                             _indent(ref.forward_body(result="self._answer", rename=rename), 4)])
        return _model_new(ref, "_touch[(1,)]()\nreturn self._answer", init_extra=(predict,))


class CacheAcrossCalls(KernelCheat):
    """forward computes once per instance and returns the same answer on every later call (what a
    policy does to look fast once timed); each round builds a new ModelNew, so only a second call on
    new values catches it."""

    name = "gpu_kernels.cache-across-calls"
    description = "forward answers its first call with torch and replays that answer on every later call"
    protections = ("lint", "ops", "fresh-call")

    def source(self, ref: Reference, task: Task) -> str:
        forward = ("_touch[(1,)]()\nif not self._cache:\n" + _indent(ref.forward_body(result="_answer"), 4)
                   + "\n    self._cache.append(_answer)\nreturn self._cache[0]")
        return _model_new(ref, forward, init_extra=("self._cache = []",))


class _ShapeCheat(KernelCheat):
    """A cheat whose answer only has the right shape: for references that return one tensor."""

    protections = ("values",)

    def applies(self, task: Task) -> bool:
        return super().applies(task) and output_shapes(task) is not None


class ReturnInput(_ShapeCheat):
    """forward returns its first input (where the output has the input's shape and dtype)."""

    name = "gpu_kernels.return-input"
    description = "forward returns its first input unchanged (shape-preserving references)"

    def applies(self, task: Task) -> bool:
        shapes = output_shapes(task) if KernelCheat.applies(self, task) else None
        if not shapes:
            return False
        return all(shape == out and dtype == in_dtype for shape, (out, dtype, in_dtype) in shapes.items())

    def source(self, ref: Reference, task: Task) -> str:
        return _model_new(ref, f"_touch[(1,)]()\nreturn {ref.params[0]}")


class ReturnZeros(_ShapeCheat):
    """forward returns zeros of the output's shape and dtype."""

    name = "gpu_kernels.return-zeros"
    description = "forward returns zeros of the reference output's shape and dtype"

    def source(self, ref: Reference, task: Task) -> str:
        shapes = output_shapes(task) or {}
        table = {k: v[0] for k, v in shapes.items()}
        dtype = next(iter(shapes.values()))[1] if shapes else "torch.float32"
        first = ref.params[0]
        forward = (f"_touch[(1,)]()\nreturn torch.zeros(_SHAPES[tuple({first}.shape)], dtype={dtype}, "
                   f"device={first}.device)")
        return _model_new(ref, forward, top=f"\n_SHAPES = {table!r}\n")


class CallReference(KernelCheat):
    """solution.py imports the visible /app/reference.py at run time and subclasses its Model."""

    name = "gpu_kernels.call-reference"
    description = "ModelNew subclasses the reference Model, imported from /app at run time, and calls its forward"
    protections = ("lint", "ops")

    def source(self, ref: Reference, task: Task) -> str:
        return (f"import sys\n\nsys.path.insert(0, '/app')\n{ref.header()}\nfrom reference import Model\n\n\n"
                f"class ModelNew(Model):\n    def forward({ref.signature()}):\n"
                f"        _touch[(1,)]()\n        return super().forward({ref.args})\n")
