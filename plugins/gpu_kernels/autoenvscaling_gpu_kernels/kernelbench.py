"""Import KernelBench-style problem files as gpu_kernels tasks.

A problem file is a module with ``Model``, ``get_inputs()`` and ``get_init_inputs()`` and its sizes
as module-level int constants (KernelBench writes ``batch_size = 16``, ``dim = 16384``). The importer
keeps the file verbatim as the task's reference, finds small sizes for the Triton interpreter by
halving the largest size constants (ints, int expressions and tuples of them; >= 16, never below 8;
smaller ones are axes, kernel sizes, ...) until the inputs
and parameters fit a few thousand elements (measured on torch's meta device, nothing allocated),
runs the reference at those sizes, and refuses degenerate problems (outputs that are constant, that
ignore the inputs, or that zeros would match) with the reason. An answer (``ModelNew``) may sit at
``answers/<stem>.py`` next to the problems; without one the task has no reference solution, so it
can be used for training but not admitted (the oracle gate needs one).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator

from autoenvscaling.api import Task, TaskFormat, TaskFormatError

from .families.base import DEFAULT_BAND, DTYPES, Problem
from .verifier.ksizes import size_constants, with_sizes

FAMILY = "kernelbench"
SIZE_FLOOR = 16  # constants below this are axes, kernel sizes, counts: never shrunk
CPU_BUDGET = 8192  # input plus parameter elements at the interpreter's sizes
NO_ANSWER = ("#!/bin/bash\n# This problem was imported without a reference answer (answers/<stem>.py),\n"
             "# so it has no oracle: the task can be trained on but not admitted.\n"
             "echo 'no reference Triton solution was imported with this problem' >&2\nexit 1\n")


class KernelBenchFormat(TaskFormat):
    name = "kernelbench"
    description = "KernelBench problem files (Model, get_inputs, get_init_inputs); answers/<stem>.py optional"
    can_export = False

    def detect(self, path: Path) -> bool:
        return bool(_problems(Path(path)))

    def scan(self, path: Path) -> Iterator[Task | TaskFormatError]:
        files = _problems(Path(path))
        if not files:
            yield TaskFormatError(f"{path}: no KernelBench problem file (a .py defining Model, get_inputs and get_init_inputs)",
                                  hint="point at a problem file or a folder of them, e.g. KernelBench/level1")
        for file in files:
            try:
                yield import_problem(file)
            except TaskFormatError as exc:
                yield exc

    def count(self, path: Path) -> int | None:
        return len(_problems(Path(path)))


def _problems(path: Path) -> list[Path]:
    """The problem files at ``path``: the file itself, or the .py files of the folder."""
    files = [path] if path.is_file() else sorted(p for p in path.glob("*.py") if p.is_file()) if path.is_dir() else []
    return [p for p in files if _is_problem(p)]


def _is_problem(path: Path) -> bool:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    return {"Model", "get_inputs", "get_init_inputs"} <= names


def _load(source: str, name: str, sizes: dict) -> dict:
    namespace: dict = {"__name__": f"_aes_kernelbench_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"}
    # the problem file is the reference: it is meant to run
    exec(compile(with_sizes(source, sizes), name, "exec"), namespace)
    return namespace


def _elements(namespace: dict) -> int:
    """Input plus parameter elements, measured on the meta device (nothing is allocated)."""
    import torch

    with torch.device("meta"):
        inputs = namespace["get_inputs"]()
        model = namespace["Model"](*namespace["get_init_inputs"]())
    return (sum(x.numel() for x in inputs if isinstance(x, torch.Tensor))
            + sum(p.numel() for p in model.parameters()))


def small_sizes(source: str, name: str) -> dict[str, int | list[int]]:
    """The size constants to override for the interpreter: halve the largest size (>= SIZE_FLOOR; a
    tuple's entries count one by one) until the problem fits CPU_BUDGET elements."""
    sizes = size_constants(source)
    shapes = {k: (list(v) if isinstance(v, list) else v) for k, v in sizes.items()}
    for _ in range(400):
        if _elements(_load(source, name, shapes)) <= CPU_BUDGET:
            break
        slots: list[tuple[int, str, int | None]] = [(v, k, None) for k, v in shapes.items() if isinstance(v, int)]
        slots += [(x, k, i) for k, v in shapes.items() if isinstance(v, list) for i, x in enumerate(v)]
        big = max((s for s in slots if s[0] >= SIZE_FLOOR), key=lambda s: s[0], default=None)
        if big is None:  # every size is already small: the problem stays as large as it is
            break
        _, key, index = big
        value = shapes[key]
        if isinstance(value, int):
            shapes[key] = value // 2
        elif index is not None:  # a tuple's entry
            value[index] //= 2
    return {k: v for k, v in shapes.items() if v != sizes[k]}


def problem_of(source: str, name: str, *, answer: str = "", level: int = 1) -> Problem:
    import torch

    try:
        cpu = small_sizes(source, name)
        namespace = _load(source, name, cpu)
        torch.manual_seed(0)
        inputs = namespace["get_inputs"]()
    except Exception as exc:  # the file is someone else's code: any failure is this problem's defect
        raise TaskFormatError(f"{name}: the reference does not run at small sizes ({type(exc).__name__}: {exc})",
                              hint="KernelBench problems build CPU tensors in get_inputs(); the verifier moves them") from None
    floats = [x for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    dtype = str(floats[0].dtype).removeprefix("torch.") if floats else "float32"
    if dtype not in DTYPES:
        raise TaskFormatError(f"{name}: inputs are {dtype}; supported: {', '.join(DTYPES)}")
    doc = ast.get_docstring(next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "Model")) or ""
    operation = " ".join(doc.split()).rstrip(".") or "the computation in Model.forward"
    variant = re.sub(r"[^a-z0-9]+", "_", Path(name).stem.lower()).strip("_")[:40] or "problem"
    return Problem(family=FAMILY, variant=variant, level=level, dtype=dtype, reference_source=source,
                   solution_source=answer, operation=operation[:200], cpu_shapes=cpu,
                   gpu_shapes=size_constants(source), params={"source": Path(name).name}, band=DEFAULT_BAND)


def import_problem(path: Path) -> Task:
    from .families.checks import degenerate_reason
    from .render import render

    source = path.read_text(encoding="utf-8")
    answer_path = path.parent / "answers" / path.name
    answer = answer_path.read_text(encoding="utf-8") if answer_path.is_file() else ""
    level = int(m.group(1)) if (m := re.search(r"level(\d)", path.parent.name)) else 1
    problem = problem_of(source, path.name, answer=answer, level=min(max(level, 1), 3))
    if reason := degenerate_reason(problem):
        raise TaskFormatError(f"{path.name}: a degenerate problem ({reason})",
                              hint="a kernel task needs outputs that depend on the inputs and that zeros or a constant cannot match")
    task = render(problem, seed=0)
    return task if answer else task.with_files({"solution/solution.py": None, "solution/solve.sh": NO_ANSWER})
