"""What a family generates: one KernelBench-shaped problem and its reference Triton solution.

A family module (``families/<name>.py``) defines ``NAME``, ``DESCRIPTION``, ``SKILLS`` and
``build(rng, level) -> Problem``. Everything here is plain Python (no torch at import): the bench
script for a lent GPU machine imports the families without the platform's other dependencies.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

MIN_LEVEL, MAX_LEVEL = 1, 3
DTYPES = ("float32", "float16", "bfloat16")
#: relative tolerance per dtype (the comparison is verifier/kcompare.py's)
RTOL = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 3e-2}
#: runtime ratio ModelNew / Model accepted on CUDA (the paper's kernel task used [0.05, 0.60])
DEFAULT_BAND = (0.05, 0.60)


def a(words: str) -> str:
    """``words`` with its indefinite article: "an 8192 x 4096 tensor", "a 4096 x 8192 tensor"."""
    digits = re.match(r"\d+", words)
    vowel = words[:1].lower() in "aeiou" if not digits else (
        digits.group().startswith("8") or (digits.group()[:2] in ("11", "18") and len(digits.group()) % 3 == 2))
    return f"{'an' if vowel else 'a'} {words}"


def module_source(gpu: Mapping[str, Any], doc: str, torch_lines: list[str], inputs: list[str], *, args: str = "x",
                  init_args: str = "", init_body: str = "", init_vals: str = "", functional: bool = True) -> str:
    """A KernelBench-shaped reference module: the sizes ``gpu`` as constants, ``Model`` (``doc``;
    ``__init__(init_args)`` running ``init_body``; ``forward(args)`` running ``torch_lines``),
    ``get_inputs`` (the tensors ``inputs``) and ``get_init_inputs`` (``init_vals``). ``functional``:
    whether it imports ``torch.nn.functional as F``."""
    consts = "\n".join(f"{k} = {v}" for k, v in gpu.items())
    body = "\n".join(f"        {line}" for line in torch_lines)
    imports = "import torch\nimport torch.nn as nn\n" + ("import torch.nn.functional as F\n" if functional else "")
    return f'''{imports}
{consts}


class Model(nn.Module):
    """{doc}"""

    def __init__(self{", " + init_args if init_args else ""}):
        super().__init__()
{init_body}
    def forward(self, {args}):
{body}


def get_inputs():
    return [{", ".join(inputs)}]


def get_init_inputs():
    return [{init_vals}]
'''


def row_sizes(rng: random.Random, level: int) -> tuple[dict[str, int], dict[str, int]]:
    """The interpreter's and the GPU's sizes of a row-wise problem (reduction, row_norm, scan): easy
    one of three (ROWS, DIM) pairs, medium odd sizes, hard a (BATCH, SEQ, DIM) tensor whose rows are
    longer than a kernel's fixed block."""
    if level == 1:
        cpu = dict(zip(("ROWS", "DIM"), rng.choice([(16, 128), (8, 256), (32, 64)])))
        gpu = dict(zip(("ROWS", "DIM"), rng.choice([(8192, 4096), (4096, 8192), (16384, 2048)])))
    elif level == 2:
        cpu = {"ROWS": rng.randrange(5, 16, 2), "DIM": rng.randrange(101, 301, 2)}
        gpu = {"ROWS": rng.choice([4000, 8000, 8191]), "DIM": rng.choice([3001, 5003, 6007])}
    else:
        cpu = {"BATCH": 2, "SEQ": rng.randint(3, 4), "DIM": rng.randrange(301, 601, 2)}
        gpu = {"BATCH": rng.choice([4, 8]), "SEQ": rng.choice([512, 1024]), "DIM": rng.choice([12289, 16383])}
    return cpu, gpu


def row_model_new(kernel: str, level: int, *, init_args: str, init_body: str, launch_args: str) -> str:
    """The reference solution's ``ModelNew`` for a row-wise ``kernel`` (row_norm, scan): one program
    per row of the last dimension, launched with ``x``, ``out``, ``launch_args``, ``D`` and a block
    that holds the whole row, except at hard (level 3), whose rows are walked in blocks of 256."""
    block = "256" if level == 3 else "triton.next_power_of_2(D)"
    return f'''
class ModelNew(nn.Module):
    def __init__(self{init_args}):
        super().__init__()
{init_body}
    def forward(self, x):
        D = x.shape[-1]
        out = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        {kernel}[(x.numel() // D,)](x, out, {launch_args}, D=D, BLOCK={block})
        return out
'''


@dataclass(frozen=True)
class Problem:
    """One generated kernel problem.

    ``reference_source``: the KernelBench module (``Model``, ``get_inputs()``, ``get_init_inputs()``),
    with upper-case module-level int constants for every size (``gpu_shapes`` are their values as
    written). ``cpu_shapes`` overrides some of them for the Triton interpreter. ``solution_source``:
    the reference answer, a module defining ``ModelNew`` whose forward launches Triton kernels.
    ``operation``: one sentence a person would use for what Model computes. ``band``: the accepted
    runtime ratio on CUDA.
    """

    family: str
    variant: str
    level: int
    dtype: str
    reference_source: str
    solution_source: str
    operation: str
    cpu_shapes: Mapping[str, int | list[int]]   # a tuple size (KernelBench's ``input_shape``) as a list
    gpu_shapes: Mapping[str, int | list[int]]
    params: dict[str, Any] = field(default_factory=dict)
    band: tuple[float, float] = DEFAULT_BAND

    @property
    def rtol(self) -> float:
        return RTOL[self.dtype]
