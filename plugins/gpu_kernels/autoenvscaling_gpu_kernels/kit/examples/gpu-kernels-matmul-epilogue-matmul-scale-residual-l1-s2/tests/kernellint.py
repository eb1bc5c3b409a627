"""Static checks of a kernel submission, before any of it runs.

``lint(source, spec) -> list[str]``: one line per problem, empty when clean. The lint is the first
of two layers: it refuses what a sandboxed submission has no business doing (imports beyond torch
and triton, reflection, file and process access, patching torch or the timers, side streams, torch
compute in ``forward``, downcasts). The runtime layer (kernelrun.py) re-checks what matters for the
reward, so a rule missing here is a weaker verifier, not a hole.

Standalone: runs inside the task sandbox with only the standard library.
"""

from __future__ import annotations

import ast

ALLOWED_IMPORTS = {"torch", "torch.nn", "torch.nn.functional", "triton", "triton.language",
                   "math", "typing", "functools"}
#: builtins that reach around the module's own namespace (reflection, code execution, files)
FORBIDDEN_BUILTINS = {"__import__", "importlib", "eval", "exec", "compile", "open", "input",
                      "getattr", "setattr", "delattr", "vars", "globals", "locals", "dir",
                      "breakpoint"}
#: modules (or names shadowing them) that give access to the process, files, frames or timers
FORBIDDEN_MODULE_NAMES = {"gc", "inspect", "sys", "os", "subprocess", "socket", "pathlib",
                          "shutil", "ctypes", "builtins", "pickle", "io", "threading",
                          "multiprocessing", "signal", "time", "importlib"}
FRAME_ATTRS = {"f_back", "f_globals", "f_locals", "f_code", "f_builtins", "gi_frame", "gi_code",
               "cr_frame", "cr_code", "ag_frame", "tb_frame", "tb_next", "co_code"}
#: the reference and the verdict live at these paths; a solution has no reason to name them
FORBIDDEN_STRINGS = ("/tests", "/logs", "reward", "/proc", "/app/reference")
#: dotted prefixes under torch that switch precision, load data, compile, or leave the stream
FORBIDDEN_TORCH = ("torch.backends", "torch.load", "torch.save", "torch.compile", "torch.jit",
                   "torch.library", "torch.ops", "torch.utils", "torch.cuda.Stream",
                   "torch.cuda.stream", "torch.cuda.set_stream", "torch.cuda.graphs",
                   "torch.cuda.graph", "torch.cuda.CUDAGraph", "torch.cuda.make_graphed_callables",
                   "numpy.load")
#: attribute names that mean a side stream or graph capture, however the object was reached
STREAM_ATTRS = {"Stream", "stream", "set_stream", "CUDAGraph", "graphs", "make_graphed_callables",
                "backends"}
#: torch functions forward may call: allocation only
TORCH_ALLOCATORS = {"empty", "empty_like", "empty_strided", "zeros", "zeros_like", "device"}
#: tensor methods that compute (views, shape queries, allocation and copies are not here)
COMPUTE_METHODS = {
    "sum", "mean", "exp", "exp2", "log", "log2", "log1p", "expm1", "softmax", "log_softmax",
    "matmul", "mm", "bmm", "addmm", "mv", "relu", "gelu", "silu", "sigmoid", "tanh", "max", "min",
    "amax", "amin", "argmax", "argmin", "cumsum", "cumprod", "norm", "add", "sub", "mul", "div",
    "pow", "sqrt", "rsqrt", "abs", "clamp", "clip", "where", "layer_norm", "rms_norm", "linear",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "sort", "topk", "std",
    "var", "prod", "einsum", "dot", "baddbmm", "half", "bfloat16", "neg", "reciprocal", "erf",
    "logsumexp", "square", "maximum", "minimum", "add_", "sub_", "mul_", "div_", "clamp_",
    "relu_", "exp_", "masked_fill", "masked_fill_", "gather", "scatter", "scatter_add",
    "index_select", "outer", "softplus", "normalize", "dropout", "lerp", "addcmul", "addcdiv",
    "floor", "ceil", "round", "sign", "any", "all", "cos", "sin", "triu", "tril", "flip",
    "fmod", "remainder", "mse_loss", "cross_entropy", "nll_loss", "embedding",
}
DOWNCAST_NAMES = {"float16", "half", "bfloat16"}
DOWNCAST_STRINGS = ("float16", "half", "bfloat16", "fp16", "bf16", "float8", "fp8")
TRITON_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics"}


def lint(source: str, spec: dict) -> list[str]:
    """Every rule the submission breaks, one line each (deduplicated, in source order)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [f"solution.py does not parse: {e.msg} (line {e.lineno})"]
    return list(dict.fromkeys(_Linter(spec).run(tree)))


def _dotted(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None when rooted in something other than a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


class _Linter:
    def __init__(self, spec: dict) -> None:
        self.require_kernel = bool(spec.get("require_kernel", True))
        dtype = spec.get("dtype", "float32")
        self.strict_fp32 = dtype == "float32" and not spec.get("allow_downcast", False)
        self.check_fp8 = not spec.get("allow_downcast", False)
        self.aliases: dict[str, str] = {}  # local name -> the module path it stands for
        self.problems: list[str] = []

    def say(self, node: ast.AST, text: str) -> None:
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {text}")

    def resolve(self, node: ast.AST) -> str | None:
        """The full dotted path of an expression rooted at an imported name, else None."""
        parts = _dotted(node)
        if parts is None or parts[0] not in self.aliases:
            return None
        return ".".join([self.aliases[parts[0]], *parts[1:]])

    def run(self, tree: ast.Module) -> list[str]:
        self.collect_imports(tree)
        self.docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                           if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                           and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):  # mark inner links of a.b.c so only the full path is judged
            if isinstance(node, ast.Attribute):
                node.value._outer = node
        for node in ast.walk(tree):
            self.check_node(node)
        self.check_structure(tree)
        return self.problems

    # -- imports ---------------------------------------------------------------------------
    def collect_imports(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name not in ALLOWED_IMPORTS:
                        self.say(node, f"import of {a.name} is not allowed (allowed: {', '.join(sorted(ALLOWED_IMPORTS))})")
                    # "import torch.nn" binds "torch"; "import torch.nn as nn" binds the full path
                    if a.asname:
                        self.aliases[a.asname] = a.name
                    else:
                        root = a.name.split(".")[0]
                        self.aliases[root] = root
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    self.say(node, "relative imports are not allowed")
                    continue
                if node.module not in ALLOWED_IMPORTS:
                    self.say(node, f"import from {node.module} is not allowed")
                    continue
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    if a.name == "*":
                        self.say(node, f"from {node.module} import * is not allowed")
                        continue
                    self.aliases[a.asname or a.name] = full
                    self.check_path(node, full)
                    self.check_downcast_name(node, a.name)

    # -- per node rules --------------------------------------------------------------------
    def check_path(self, node: ast.AST, path: str) -> None:
        if any(path == p or path.startswith(p + ".") for p in FORBIDDEN_TORCH):
            self.say(node, f"{path} is not allowed (precision switches, files, compilers and side streams are off limits)")
        elif path.startswith("torch") and any(p.startswith("_") for p in path.split(".")[1:]):
            self.say(node, f"private torch name {path} is not allowed")

    def check_node(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            if node.id in FORBIDDEN_BUILTINS:
                self.say(node, f"{node.id} is not allowed")
            if node.id in FORBIDDEN_MODULE_NAMES:
                self.say(node, f"the name {node.id} is not allowed (no process, file, frame or timer access)")
            if node.id.startswith("__") and node.id not in ("__name__", "__init__"):
                self.say(node, f"the name {node.id} is not allowed")
            self.check_downcast_name(node, node.id)
        elif isinstance(node, ast.Attribute):
            a = node.attr
            if a.startswith("__") and a != "__init__":
                self.say(node, f"attribute {a} is not allowed (no reflection)")
            if a in FRAME_ATTRS:
                self.say(node, f"frame attribute {a} is not allowed")
            if a in FORBIDDEN_MODULE_NAMES or a in FORBIDDEN_BUILTINS:
                self.say(node, f"attribute {a} is not allowed")
            if a in STREAM_ATTRS:
                self.say(node, f"attribute {a} is not allowed (side streams, graphs and backend switches are off limits)")
            path = self.resolve(node)
            if path is not None and not hasattr(node, "_outer"):
                self.check_path(node, path)
            self.check_downcast_name(node, a)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.say(node, f"{type(node).__name__.lower()} statements are not allowed")
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.say(node, "try statements are not allowed (no fallback around the kernel)")
        elif isinstance(node, ast.keyword) and node.arg == "stream":
            self.say(node, "the stream= keyword is not allowed (launch on the current stream)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for s in FORBIDDEN_STRINGS:
                if s in node.value:
                    self.say(node, f"string constant mentioning {s!r} is not allowed")
            low = "" if id(node) in self.docstrings else node.value.lower()  # prose may name dtypes
            if self.strict_fp32 and any(s in low for s in DOWNCAST_STRINGS):
                self.say(node, f"string {node.value!r} names a downcast below the task's float32")
            elif self.check_fp8 and ("float8" in low or "fp8" in low):
                self.say(node, f"string {node.value!r} names a float8 downcast")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                for sub in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    self.check_patch(node, sub)
        elif isinstance(node, ast.Call):
            self.check_dot(node)

    def check_downcast_name(self, node: ast.AST, name: str) -> None:
        if self.strict_fp32 and name in DOWNCAST_NAMES:
            self.say(node, f"{name} is a downcast below the task's float32")
        elif self.check_fp8 and name.startswith("float8"):
            self.say(node, f"{name} is a float8 downcast")

    def check_patch(self, stmt: ast.AST, target: ast.AST) -> None:
        """Assigning into an imported module (or anything under torch/triton) patches the harness."""
        if not isinstance(target, (ast.Attribute, ast.Subscript)):
            return
        parts = _dotted(target.value if isinstance(target, ast.Subscript) else target)
        if parts is None and isinstance(target, ast.Subscript):
            return
        root = parts[0] if parts else None
        if root in self.aliases or root in ("torch", "triton", "tl"):
            self.say(stmt, f"assignment to {'.'.join(parts)} patches a library (not allowed)")

    def check_dot(self, call: ast.Call) -> None:
        if not self.strict_fp32 or self.resolve(call.func) != "triton.language.dot":
            return
        kw = {k.arg: k.value for k in call.keywords}
        ieee = isinstance(kw.get("input_precision"), ast.Constant) and kw["input_precision"].value == "ieee"
        no_tf32 = isinstance(kw.get("allow_tf32"), ast.Constant) and kw["allow_tf32"].value is False
        if not (ieee or no_tf32):
            self.say(call, 'tl.dot without input_precision="ieee": tl.dot defaults to TF32 on NVIDIA GPUs, a silent downcast')

    # -- module structure ------------------------------------------------------------------
    def check_structure(self, tree: ast.Module) -> None:
        if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
            self.problems.append("solution.py does not define a class ModelNew")
        for fn in ast.walk(tree):
            if isinstance(fn, ast.Lambda):  # e.g. an autotune pre_hook: host code like forward
                if self.require_kernel:
                    self.check_host_function(fn)
                continue
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not self.is_kernel(fn):
                if self.require_kernel and fn.name != "__init__":
                    self.check_host_function(fn)
            else:
                self.check_kernel(fn)

    def is_kernel(self, fn: ast.FunctionDef) -> bool:
        for d in fn.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if self.resolve(target) in TRITON_DECORATORS:
                return True
        return False

    def check_host_function(self, fn: ast.FunctionDef | ast.Lambda) -> None:
        """Host code (forward and its helpers) may allocate, take views and launch; never compute."""
        name = getattr(fn, "name", "<lambda>")
        where = "ModelNew.forward" if name == "forward" else f"function {name}"
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            path = self.resolve(node.func)
            if path is not None:
                if path.startswith("torch.") and path.split(".")[-1] not in TORCH_ALLOCATORS:
                    self.say(node, f"{where} calls torch compute op {path}: the task asks for a Triton kernel")
            elif isinstance(node.func, ast.Attribute) and node.func.attr in COMPUTE_METHODS:
                self.say(node, f"{where} calls torch compute op {node.func.attr}: the task asks for a Triton kernel")

    def check_kernel(self, fn: ast.FunctionDef) -> None:
        """A @triton.jit body that names torch would run torch under the interpreter only."""
        for node in ast.walk(fn):
            if node in fn.decorator_list:
                continue
            if isinstance(node, ast.Name) and self.aliases.get(node.id, "").startswith("torch"):
                self.say(node, f"triton.jit kernel {fn.name} references torch ({node.id})")
