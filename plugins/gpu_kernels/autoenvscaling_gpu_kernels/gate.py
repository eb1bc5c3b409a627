"""``gpu-kernels-lint`` (static, order 16): a gpu_kernels task is complete and consistent before
anything is built.

The harness, the hidden spec and the trusted reference are in tests/; test.sh switches none of the
harness's protections off (``--weaken`` belongs to tests and the cheats' positive controls); the
spec is well formed (a known dtype, a positive tolerance, at least five rounds, a band
0 < low < high, small sizes that name constants of the reference); the agent's reference is the trusted one; the reference module has
``Model``, ``get_inputs`` and ``get_init_inputs``; the reference Triton solution passes the same lint
the agent's answer gets (a reference that breaks the rules would teach the solver to break them);
nothing hidden reached the image. Its reason says how the task will be verified here: correctness
and timing on a GPU, or correctness only in the Triton interpreter.
"""

from __future__ import annotations

import ast
import json

from autoenvscaling.api import DomainLintGate, Evidence, GateResult, Task

from .families.base import DTYPES
from .render import DOMAIN, harness_files
from .verifier.kernellint import lint

REQUIRED = ("tests/test.sh", "tests/spec.json", "tests/reference.py", "environment/app/reference.py",
            "solution/solve.sh", "solution/solution.py")


def verification_mode() -> str:
    """How this machine verifies kernel tasks: "cuda" (correctness and timing) or "interpreter"."""
    from autoenvscaling.api import host_gpus

    return "cuda" if host_gpus().count else "interpreter"


def spec_problem(spec: object, reference: str) -> str:
    if not isinstance(spec, dict):
        return "tests/spec.json must be a JSON object"
    if spec.get("dtype") not in DTYPES:
        return f"tests/spec.json: dtype must be one of {', '.join(DTYPES)}"
    rtol, rounds, band = spec.get("rtol"), spec.get("rounds"), spec.get("band")
    if not isinstance(rtol, (int, float)) or not 0 < rtol < 1:
        return "tests/spec.json: rtol must be a number in (0, 1)"
    if not isinstance(rounds, int) or rounds < 5:
        return "tests/spec.json: rounds must be at least 5 (fresh inputs and weights each)"
    if (not isinstance(band, list) or len(band) != 2 or not all(isinstance(b, (int, float)) for b in band)
            or not 0 < band[0] < band[1]):
        return "tests/spec.json: band must be [low, high] runtime ratios with 0 < low < high"
    try:
        tree = ast.parse(reference)
    except SyntaxError as exc:
        return f"tests/reference.py does not parse: {exc.msg} (line {exc.lineno})"
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if n not in names]
    if missing:
        return f"tests/reference.py lacks {', '.join(missing)} (the KernelBench shape)"
    constants = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    unknown = sorted(set(spec.get("cpu_shapes") or {}) - constants)
    if unknown:
        return f"tests/spec.json: cpu_shapes names {', '.join(unknown)}, which tests/reference.py does not define"
    return ""


class GpuKernelsLintGate(DomainLintGate):
    name = "gpu-kernels-lint"
    order = 16
    domain = DOMAIN
    required = REQUIRED
    hidden = ("tests/spec.json", "solution/solution.py")
    copy_floor = 0

    def passed(self, task: Task, warnings: list[str], *, seconds: float) -> GateResult:
        mode = verification_mode()
        reason = ("verified on a GPU: correctness and timing" if mode == "cuda" else
                  "no GPU here: validated for correctness only (Triton interpreter); timing unmeasured")
        return self.result("pass", "; ".join([reason, *warnings]), seconds=seconds,
                           evidence=[Evidence(values={"mode": mode, "timing": "measured" if mode == "cuda" else "unmeasured"})])

    @classmethod
    def domain_problem(cls, task: Task) -> str:
        text = {p: f.text for p, f in task.files.items() if p in REQUIRED}
        if "--weaken" in text["tests/test.sh"]:
            return "tests/test.sh switches harness protections off (--weaken is for tests and positive controls only)"
        try:
            spec = json.loads(text["tests/spec.json"])
        except ValueError as exc:
            return f"tests/spec.json is not valid JSON ({exc})"
        if problem := spec_problem(spec, text["tests/reference.py"]):
            return problem
        if task.provenance.public_files != ["tests/reference.py"]:
            return "[metadata.autoenvscaling] public_files must be [\"tests/reference.py\"] (the only hidden file the agent sees)"
        if text["environment/app/reference.py"] != text["tests/reference.py"]:
            return "environment/app/reference.py differs from tests/reference.py (the agent must see the reference it is judged against)"
        broken = lint(text["solution/solution.py"], spec)
        return f"the reference solution breaks the kernel lint: {broken[0]}" if broken else ""

    @classmethod
    def warnings(cls, task: Task) -> list[str]:
        ours = harness_files()
        warnings = [f"tests/{name} differs from the installed harness (the kernel-harness runtime's copy is used)"
                    for name, body in ours.items() if name != "test.sh" and f"tests/{name}" in task.files
                    and task.files[f"tests/{name}"].text != body]
        return warnings[:1]
