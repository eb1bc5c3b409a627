"""Static checks of a kernel submission, before any of it runs.

``lint(source, spec) -> list[str]``: one line per problem, empty when clean. The lint is the first
of two layers: it refuses what a sandboxed submission has no business doing (imports beyond torch
and triton, reflection, file and process access, patching torch or the timers, side streams, torch
compute in ``forward``, downcasts). The runtime layer (kernelrun.py) re-checks what matters for the
reward, so a rule missing here is a weaker verifier, not a hole.

Host code is every function that is not a ``@triton.jit`` kernel, lambdas included (grids, hooks,
helper classes' methods); only ``ModelNew.__init__`` may compute with torch (preparing weights).
Operators count as compute when an operand is a tensor: names bound to ``forward``'s arguments, to
tensors a host function was handed (it reads their ``.shape``, ``.stride()``, ...), to torch's
results and to views of them; ``@`` always does.

``weaken`` (tests and positive controls only) switches rules off: "lint-any-init" exempts every
method named ``__init__`` (in any class) and "lint-operators" ignores operators, as this lint once did.

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
                   "torch.hub", "torch.serialization", "torch.package", "torch.onnx", "torch.export",
                   "torch.distributed", "torch.profiler", "torch.autograd.profiler", "triton.knobs",
                   "numpy.load")
#: attribute names that mean a side stream or graph capture, however the object was reached
STREAM_ATTRS = {"Stream", "stream", "set_stream", "CUDAGraph", "graphs", "make_graphed_callables",
                "backends"}
#: attribute names that read or map files, however the object was reached (torch.from_file,
#: UntypedStorage.from_file: the worker's own files hold the round's inputs)
FILE_ATTRS = {"from_file", "load_library"}
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
#: attributes and methods of a tensor that are not tensors (so arithmetic on them is host arithmetic)
META_ATTRS = {"shape", "dtype", "device", "ndim", "is_cuda", "layout", "itemsize", "nbytes", "requires_grad",
              "is_leaf", "names"}
META_METHODS = {"size", "numel", "nelement", "dim", "ndimension", "stride", "element_size", "data_ptr",
                "is_contiguous", "storage_offset", "get_device", "is_floating_point", "is_complex", "item", "tolist"}
#: torch functions whose results are not tensors (devices, sizes, dtypes, predicates)
TORCH_NON_TENSORS = {"device", "Size", "finfo", "iinfo", "is_tensor", "numel", "get_default_dtype", "dtype",
                     "is_floating_point", "result_type", "promote_types", "can_cast", "is_grad_enabled"}
#: attributes that show a host function's argument is a tensor
TENSOR_EVIDENCE = META_ATTRS | META_METHODS | {
    "contiguous", "view", "reshape", "to", "clone", "copy_", "fill_", "zero_", "expand", "permute",
    "transpose", "unsqueeze", "squeeze", "flatten", "T", "mT", "view_as", "expand_as", "new_empty",
    "new_zeros", "narrow", "select", "unbind", "split", "chunk", "as_strided", "detach"}
#: builtins that compute on a tensor argument
COMPUTE_BUILTINS = {"sum", "abs", "max", "min", "pow", "round", "divmod", "any", "all", "sorted"}
SCALAR_ANNOTATIONS = {"int", "float", "bool", "str", "complex"}
IDENTITY_OPS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)

DOWNCAST_NAMES = {"float16", "half", "bfloat16"}
DOWNCAST_STRINGS = ("float16", "half", "bfloat16", "fp16", "bf16", "float8", "fp8")
TRITON_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics"}


def lint(source: str, spec: dict, weaken: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """Every rule the submission breaks, one line each (deduplicated, in source order)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [f"solution.py does not parse: {e.msg} (line {e.lineno})"]
    return list(dict.fromkeys(_Linter(spec, weaken).run(tree)))


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
    def __init__(self, spec: dict, weaken: frozenset[str] | set[str] = frozenset()) -> None:
        self.any_init = "lint-any-init" in weaken
        self.operators = "lint-operators" not in weaken
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
                setattr(node.value, "_outer", node)
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
            if a in FILE_ATTRS:
                self.say(node, f"attribute {a} is not allowed (no files)")
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
        if parts and (root in self.aliases or root in ("torch", "triton", "tl")):
            self.say(stmt, f"assignment to {'.'.join(parts)} patches a library (not allowed)")

    def check_dot(self, call: ast.Call) -> None:
        if not self.strict_fp32 or self.resolve(call.func) != "triton.language.dot":
            return
        kw = {k.arg: k.value for k in call.keywords}
        precision, tf32 = kw.get("input_precision"), kw.get("allow_tf32")
        ieee = isinstance(precision, ast.Constant) and precision.value == "ieee"
        no_tf32 = isinstance(tf32, ast.Constant) and tf32.value is False
        if not (ieee or no_tf32):
            self.say(call, 'tl.dot without input_precision="ieee": tl.dot defaults to TF32 on NVIDIA GPUs, a silent downcast')

    # -- module structure ------------------------------------------------------------------
    def check_structure(self, tree: ast.Module) -> None:
        model_new = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"]
        if not model_new:
            self.problems.append("solution.py does not define a class ModelNew")
        self.tensor_attrs = {a for c in model_new for a in self.tensor_attributes(c)}
        # ModelNew.__init__ may prepare weights with torch; every other __init__ is host code
        exempt = {id(f) for c in model_new for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"}
        owner = {id(f): c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body
                 if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for fn in ast.walk(tree):
            if isinstance(fn, ast.Lambda):  # a grid, a hook, a key: host code like forward
                if self.require_kernel:
                    self.check_host_function(fn, "function <lambda>")
                continue
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if self.is_kernel(fn):
                self.check_kernel(fn)
                continue
            if not self.require_kernel or id(fn) in exempt or (self.any_init and fn.name == "__init__"):
                continue
            cls = owner.get(id(fn))
            forward = (cls, fn.name) == ("ModelNew", "forward")
            where = "ModelNew.forward" if forward else f"method {cls}.{fn.name}" if cls else f"function {fn.name}"
            self.check_host_function(fn, where, forward=forward)

    def tensor_attributes(self, cls: ast.ClassDef) -> set[str]:
        """``self.<name>`` attributes ModelNew binds to torch's results (parameters, buffers, layers),
        and buffers or parameters registered by name."""
        names: set[str] = set()
        for node in ast.walk(cls):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and _makes_tensors(self.resolve(node.value.func) or "")):
                names.update(t.attr for t in node.targets if isinstance(t, ast.Attribute)
                             and isinstance(t.value, ast.Name) and t.value.id == "self")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("register_buffer", "register_parameter") and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                names.add(node.args[0].value)
        return names

    def is_kernel(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for d in fn.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            if self.resolve(target) in TRITON_DECORATORS:
                return True
        return False

    def check_host_function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, where: str, *, forward: bool = False) -> None:
        """Host code (forward and its helpers) may allocate, take views and launch; never compute."""
        tensors = _Tensors(fn, self, forward=forward) if self.operators else None
        for node in ast.walk(fn):
            if isinstance(node, ast.Call):
                path = self.resolve(node.func)
                if path is not None:
                    if path.startswith("torch.") and path.split(".")[-1] not in TORCH_ALLOCATORS:
                        self.say(node, f"{where} calls torch compute op {path}: the task asks for a Triton kernel")
                elif isinstance(node.func, ast.Attribute) and node.func.attr in COMPUTE_METHODS:
                    self.say(node, f"{where} calls torch compute op {node.func.attr}: the task asks for a Triton kernel")
                elif (tensors is not None and isinstance(node.func, ast.Name) and node.func.id in COMPUTE_BUILTINS
                      and any(tensors.holds(a) for a in node.args)):
                    self.say(node, f"{where} calls {node.func.id}() on a tensor: the task asks for a Triton kernel")
            elif tensors is not None and (op := tensors.compute_operator(node)) is not None:
                self.say(node, f"{where} applies the operator {op} to a tensor: the task asks for a Triton kernel")

    def check_kernel(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A @triton.jit body that names torch would run torch under the interpreter only."""
        for node in ast.walk(fn):
            if node in fn.decorator_list:
                continue
            if isinstance(node, ast.Name) and self.aliases.get(node.id, "").startswith("torch"):
                self.say(node, f"triton.jit kernel {fn.name} references torch ({node.id})")


_OPERATOR = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.FloorDiv: "//",
             ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
             ast.BitAnd: "&", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not", ast.Eq: "==",
             ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class _Tensors:
    """Which expressions of one host function are tensors, as far as the source shows: ``forward``'s
    arguments (unless annotated as scalars), arguments the function treats as tensors, ModelNew's tensor
    attributes, torch's results, and what is derived from them by views, indexing and arithmetic."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, linter: _Linter, *, forward: bool) -> None:
        self.linter = linter
        self.names: set[str] = set()
        args = fn.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *([args.vararg] if args.vararg else [])]
        used = {n.value.id for n in ast.walk(fn) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.attr in TENSOR_EVIDENCE}
        for p in params:
            if p.arg == "self":
                continue
            annotation = ast.unparse(p.annotation) if p.annotation is not None else ""
            tensor = annotation.split(".")[-1] == "Tensor" or (forward and annotation not in SCALAR_ANNOTATIONS)
            if tensor or p.arg in used:
                self.names.add(p.arg)
        changed = True
        while changed:  # bindings in any order, until nothing new is a tensor
            changed = False
            for node in ast.walk(fn):
                for target, value in _bindings(node):
                    for name in self.bound(target, value):
                        if name not in self.names:
                            self.names.add(name)
                            changed = True

    def bound(self, target: ast.AST, value: ast.AST | None) -> list[str]:
        """Names in ``target`` that ``value`` makes tensors."""
        if isinstance(target, ast.Name):
            return [target.id] if value is not None and self.holds(value) else []
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                return [n for t, v in zip(target.elts, value.elts) for n in self.bound(t, v)]
            if value is not None and self.holds(value):  # q, k = x.chunk(2)
                return [t.id for t in target.elts if isinstance(t, ast.Name)]
        return []

    def holds(self, node: ast.AST) -> bool:
        """Whether ``node`` evaluates to a tensor, as far as the source shows."""
        if isinstance(node, ast.Name):
            return node.id in self.names
        if isinstance(node, ast.Starred):
            return self.holds(node.value)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return node.attr in self.linter.tensor_attrs
            return node.attr not in META_ATTRS and self.holds(node.value)
        if isinstance(node, ast.Subscript):
            return self.holds(node.value)
        if isinstance(node, ast.Call):
            path = self.linter.resolve(node.func)
            if path is not None:
                return _makes_tensors(path)
            if isinstance(node.func, ast.Attribute):
                return node.func.attr not in META_METHODS and self.holds(node.func.value)
            return False
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, ast.MatMult) or self.holds(node.left) or self.holds(node.right)
        if isinstance(node, ast.UnaryOp):
            return not isinstance(node.op, ast.Not) and self.holds(node.operand)
        if isinstance(node, ast.IfExp):
            return self.holds(node.body) or self.holds(node.orelse)
        if isinstance(node, ast.NamedExpr):
            return self.holds(node.value)
        return False

    def compute_operator(self, node: ast.AST) -> str | None:
        """The operator ``node`` applies to a tensor, or None."""
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.MatMult) or self.holds(node.left) or self.holds(node.right):
                return _OPERATOR.get(type(node.op), type(node.op).__name__)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.op, ast.MatMult) or self.holds(node.target) or self.holds(node.value):
                return _OPERATOR.get(type(node.op), type(node.op).__name__) + "="
        elif isinstance(node, ast.UnaryOp):
            if self.holds(node.operand):
                return _OPERATOR.get(type(node.op), type(node.op).__name__)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for op, (a, b) in zip(node.ops, zip(operands, operands[1:])):
                if not isinstance(op, IDENTITY_OPS) and (self.holds(a) or self.holds(b)):
                    return _OPERATOR.get(type(op), type(op).__name__)
        return None


def _makes_tensors(path: str) -> bool:
    """Whether calling the torch function ``path`` gives a tensor (or a module holding them):
    ``torch.<fn>`` (not sizes, devices, dtypes), ``torch.nn.*``, ``torch.Tensor.*``, ``torch.linalg.*``;
    not ``torch.cuda.*`` and the like (device queries)."""
    parts = path.split(".")
    if parts[0] != "torch" or len(parts) < 2:
        return False
    if len(parts) == 2:
        return parts[1] not in TORCH_NON_TENSORS
    return parts[1] in ("nn", "Tensor", "linalg", "fft", "special")


def _bindings(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) pairs a statement binds; value None where no single expression is bound."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
        return [(node.target, node.value)]
    if isinstance(node, ast.For):  # iterating a tensor yields tensors
        return [(node.target, node.iter)]
    if isinstance(node, ast.comprehension):
        return [(node.target, node.iter)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars is not None]
    return []
