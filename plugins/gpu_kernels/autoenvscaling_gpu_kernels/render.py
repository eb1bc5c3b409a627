"""Turn a ``Problem`` into a Harbor task (a core ``Task``): KernelBench inside Harbor.

    task.toml                    [environment] gpus = 1, gpu_optional = true (without a GPU the task
                                 is checked for correctness only, in the Triton interpreter);
                                 verifier outputs = ["/app/solution.py"] (the answer is one file)
    instruction.md               what to write, the rules, how it is scored
    environment/Dockerfile       the domain-wide image: Python, torch, triton, gcc (Triton compiles
                                 its launcher on a GPU); identical in every task, so it is built once
    environment/app/reference.py the KernelBench module (Model, get_inputs, get_init_inputs)
    environment/app/check.py     the agent's own quick check on small sizes
    tests/test.sh                runs the harness (the installed plugin's copy when the kernel-harness
                                 verifier runtime provides it, else the one in tests/)
    tests/kernelcheck.py ...     the harness (verifier/*.py, verbatim, and the verifier library
                                 aes_verifier.py): lint, correctness, timing
    tests/reference.py           the trusted copy of the reference (the agent can edit /app's)
    tests/spec.json              dtype, tolerance, rounds, small sizes, the speed band
    solution/solve.sh            installs solution/solution.py as /app/solution.py
    solution/solution.py         the reference Triton kernel
"""

from __future__ import annotations

import json
from importlib import resources

from autoenvscaling.api import Task, label_of, package_reader, qualified_name, render_task, verifier_library

from .families.base import Problem

DOMAIN = "gpu_kernels"
TORCH_VERSION = "2.13.0"
NUMPY_VERSION = "2.3.5"  # pinned (Harbor's lint asks for exact pins); before 2.4, see the Dockerfile
TRITON_VERSION = "3.6.0"  # installed only where torch did not bring its own (a CPU build of torch)
DOCKERFILE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    python3 python3-pip python3-dev gcc libc6-dev ca-certificates \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
    "# torch (PyPI's build brings CUDA and its matching triton; a CPU build needs triton for the interpreter);\n"
    "# numpy 2.3.5 (before 2.4): Triton's interpreter converts 1-element arrays with int(), which numpy 2.4 refuses\n"
    f"RUN python3 -m pip install --break-system-packages torch=={TORCH_VERSION} numpy=={NUMPY_VERSION} \\\n"
    f"    && (python3 -c 'import triton' 2>/dev/null || python3 -m pip install --break-system-packages triton=={TRITON_VERSION})\n"
    "WORKDIR /app\n"
    "COPY app/ /app/\n"
)
ROUNDS = 5
CHILD_TIMEOUT_SEC = 420
SOLUTION_PATH = "/app/solution.py"


package_text = package_reader(__package__)


def harness_files() -> dict[str, str]:
    """The verifier harness, file name -> text: every verifier/*.py plus test.sh, and the verifier
    library kernelcheck.py imports (aes_verifier.py)."""
    root = resources.files(__package__).joinpath("verifier")
    names = sorted(p.name for p in root.iterdir() if p.name.endswith(".py") or p.name == "test.sh")
    return {**{name: package_text("verifier", name) for name in names}, **verifier_library()}


def spec_of(problem: Problem) -> dict:
    return {"format": 1, "family": problem.family, "variant": problem.variant, "dtype": problem.dtype,
            "rtol": problem.rtol, "rounds": ROUNDS, "cpu_shapes": dict(problem.cpu_shapes),
            "gpu_shapes": dict(problem.gpu_shapes), "band": list(problem.band), "allow_downcast": False,
            "require_kernel": True, "child_timeout_sec": CHILD_TIMEOUT_SEC}


def check_script(problem: Problem) -> str:
    task = {"sizes": dict(problem.cpu_shapes), "rtol": problem.rtol}
    return package_text("image", "check.py").replace("TASK: dict = {}", f"TASK = {json.dumps(task, sort_keys=True)}", 1)


def instruction(problem: Problem, name: str) -> str:
    lo, hi = problem.band
    sizes = ", ".join(f"{k} = {v}" for k, v in problem.gpu_shapes.items())
    return f"""# Write a faster Triton kernel

`/app/reference.py` defines a PyTorch module `Model`: {problem.operation}. Its sizes are module
constants ({sizes}); `get_inputs()` and `get_init_inputs()` build its inputs and constructor arguments.

Write `/app/solution.py` defining `ModelNew`, a drop-in replacement for `Model` whose `forward`
computes the same result with your own Triton kernels (`@triton.jit`, launched as `kernel[grid](...)`).

Rules (a linter and the verifier enforce them; breaking one scores 0):
- `ModelNew(*get_init_inputs())` takes the same arguments as `Model` and creates its parameters exactly
  as `Model` does, in the same order, so that the same seed gives the same weights.
- `forward` only allocates outputs (`torch.empty`, `torch.empty_like`, `torch.zeros`), takes views and
  launches Triton kernels: no PyTorch compute (`+`, `*`, `.sum()`, `torch.exp`, `F.*`, ...) outside them,
  wherever it would run (forward, a helper, a callable grid, a launch hook; only `ModelNew.__init__`
  may prepare weights).
- Import only `torch`, `triton`, `triton.language`, `math`, `typing` and `functools`. No files, no
  network, no subprocesses, no `try`, no `global`, no introspection, no patching of torch or triton,
  no side streams, and never compute in a lower precision than {problem.dtype} (for float32 `tl.dot`,
  pass `input_precision="ieee"`).
- Work for any sizes, not only these (use masks); do not modify the inputs; keep no state between calls.

Scoring: on at least {ROUNDS} fresh random inputs and weights, every output element must be within
a relative tolerance of {problem.rtol:g} ({problem.dtype}) of the reference's (NaN never matches). On a GPU
the runtime of `ModelNew` must also be between {lo:g} and {hi:g} times that of `Model` (faster, but not
implausibly so). Without a GPU the kernels run in Triton's interpreter on small sizes and only
correctness is checked.

The reference, as `/app/reference.py` holds it:

```python
{problem.reference_source.rstrip()}
```

Check your work with `python3 /app/check.py` (small sizes; it sets `TRITON_INTERPRET=1` when there is
no GPU, and so should you to run Triton yourself on a CPU).
"""


def task_name(problem: Problem, *, seed: int) -> str:
    return f"{DOMAIN}-{problem.family}-{problem.variant}-l{problem.level}-s{seed}".replace("_", "-")


def render(problem: Problem, *, seed: int) -> Task:
    name = qualified_name(task_name(problem, seed=seed))
    files: dict[str, str] = {
        "environment/Dockerfile": DOCKERFILE,
        "environment/app/reference.py": problem.reference_source,
        "environment/app/check.py": check_script(problem),
        "tests/reference.py": problem.reference_source,
        "tests/spec.json": json.dumps(spec_of(problem), indent=1, sort_keys=True) + "\n",
        "solution/solve.sh": "#!/bin/bash\n# Reference solution: a working Triton kernel, generated with the task.\n"
                             "set -eu\ncp /solution/solution.py /app/solution.py\n",
        "solution/solution.py": problem.solution_source,
    }
    files.update({f"tests/{n}": text for n, text in harness_files().items()})
    tags = sorted({"triton", "kernel", problem.family.replace("_", "-"), problem.variant.replace("_", "-"), problem.dtype})
    return render_task(
        domain=DOMAIN, family=problem.family, seed=seed, difficulty=label_of(problem.level), name=name,
        instruction=instruction(problem, name), description=f"Triton kernel: {problem.operation}", files=files, tags=tags,
        # the answer is one file: the verifier sees the pristine image plus /app/solution.py
        verifier={"timeout_sec": 900.0, "outputs": [SOLUTION_PATH]}, agent={"timeout_sec": 1800.0},
        environment={"build_timeout_sec": 1800.0, "cpus": 2, "memory_mb": 4096, "storage_mb": 2048,
                     "gpus": 1, "gpu_optional": True, "workdir": "/app"},
        parameters={"variant": problem.variant, "level": problem.level, "dtype": problem.dtype,
                    "cpu_shapes": dict(problem.cpu_shapes), "gpu_shapes": dict(problem.gpu_shapes),
                    "band": list(problem.band), **problem.params},
        public_files=["tests/reference.py"])  # the trusted reference is meant to be seen: not a leak
