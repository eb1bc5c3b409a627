"""Gate 1, static lint: what can be checked without building anything.

Cheap checks that reject a task before it costs a build: the config validates, the required files
exist (top-level or per step), the verifier and the reference solution cannot reach the image (tests/
and solution/ must not be copied in, or the agent could read them), the solution does not read the
tests or write the reward, and test.sh writes a reward file. Every problem found is listed in the
evidence; the first one is the reason.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import time

from ..tasks import StepConfig, Task
from .base import Evidence, Gate, GateContext, GateResult

REWARD_MARKERS = ("reward.txt", "reward.json", "/logs/verifier")
# A path the solution must never touch: /tests (the verifier) and /logs/verifier (the reward).
_TESTS_PATH = re.compile(r"(?<![\w./-])/tests(?![\w-])")
_REWARD_PATH = re.compile(r"(?<![\w./-])/logs/verifier(?![\w-])")
_STEP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# Files this small (an empty __init__.py, a one-word fixture) match by chance; copies of them are not a leak.
_MIN_LEAK_BYTES = 64


class LintGate(Gate):
    """Schema, required files, no verifier or solution in the image, no cheating solution, a reward file."""

    name = "lint"
    order = 10

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        start = time.monotonic()
        problems = lint_task(task)
        evidence = [Evidence(command="static lint", output_tail="\n".join(problems),
                             values={"files": len(task.files), "steps": len(task.steps), "problems": len(problems)})]
        seconds = time.monotonic() - start
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return self.result("fail", problems[0] + more, seconds=seconds, evidence=evidence)
        return self.result("pass", seconds=seconds, evidence=evidence)


def lint_task(task: Task) -> list[str]:
    """Every static problem of ``task``, one line each (empty when it is clean)."""
    problems: list[str] = []
    problems += _schema_problems(task)
    problems += _required_files(task)
    problems += _image_leaks(task)
    problems += _solution_problems(task)
    problems += _reward_problems(task)
    return problems


def _schema_problems(task: Task) -> list[str]:
    cfg = task.config
    out = []
    for label, value in [("verifier.timeout_sec", cfg.verifier.timeout_sec), ("agent.timeout_sec", cfg.agent.timeout_sec),
                         ("environment.build_timeout_sec", cfg.environment.build_timeout_sec),
                         ("environment.memory_mb", cfg.environment.memory_mb), ("environment.cpus", cfg.environment.cpus)]:
        if value <= 0:
            out.append(f"task.toml: {label} must be positive (is {value:g})")
    names = [s.name for s in cfg.steps]
    for name in names:
        if not _STEP_NAME.match(name):
            out.append(f"task.toml: step name {name!r} is not a safe directory name")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        out.append(f"task.toml: duplicate step names: {', '.join(dupes)}")
    return out


def _required_files(task: Task) -> list[str]:
    out = []
    env = task.config.environment
    has_env = ("environment/Dockerfile" in task.files or bool(env.docker_image)
               or "environment/docker-compose.yaml" in task.files or "environment/docker-compose.yml" in task.files)
    if not has_env:
        out.append("missing environment/Dockerfile (or [environment] docker_image)")
    if not task.steps:
        if not (task.instruction or "").strip():
            out.append("missing or empty instruction.md")
        if "tests/test.sh" not in task.files:
            out.append("missing tests/test.sh")
        if "solution/solve.sh" not in task.files:
            out.append("missing solution/solve.sh")
        return out
    for step in task.steps:
        base = f"steps/{step.name}"
        if not (task.step_instruction(step) or "").strip():
            out.append(f"step {step.name}: missing {base}/instruction.md (and no top-level instruction.md)")
        if f"{base}/tests/test.sh" not in task.files and "tests/test.sh" not in task.files:
            out.append(f"step {step.name}: missing {base}/tests/test.sh")
        if f"{base}/solution/solve.sh" not in task.files and "solution/solve.sh" not in task.files:
            out.append(f"step {step.name}: missing {base}/solution/solve.sh")
    return out


def _image_leaks(task: Task) -> list[str]:
    """tests/ or solution/ reachable from the image: copied by the Dockerfile, or present in the
    build context (environment/) as copies."""
    out = []
    dockerfile = task.dockerfile
    if dockerfile is not None:
        for source in copy_sources(dockerfile):
            parts = [p for p in source.replace("\\", "/").split("/") if p not in ("", ".")]
            # The build context is environment/, so the task's own tests/ and solution/ are reachable
            # only through "..". (environment/tests/ may be the app's own test suite: that is fine,
            # unless its files are copies of the verifier's, which the content check below finds.)
            if ".." in parts:
                out.append(f"environment/Dockerfile copies {source!r} from outside the build context "
                           "(tests/ and solution/ must stay out of the image)")
    compose = task.files.get("environment/docker-compose.yaml") or task.files.get("environment/docker-compose.yml")
    if compose is not None and re.search(r"context:\s*['\"]?\.\.", compose.text):
        out.append("environment/docker-compose: the build context is the task directory, which holds tests/ and solution/")
    private = {}
    for path, f in task.files.items():
        if _is_private_path(path) and len(f.data) >= _MIN_LEAK_BYTES:
            private[hashlib.sha256(f.data).hexdigest()] = path
    for path, f in task.environment_files.items():
        origin = private.get(hashlib.sha256(f.data).hexdigest())
        if origin is not None:
            out.append(f"environment/{path} is a copy of {origin}: the image would contain it")
    return out


def _is_private_path(path: str) -> bool:
    """Files whose presence in the image gives the answer away: any solution file, and the verifier's
    scripts and expected outputs (tests/ may also hold input data the agent sees anyway)."""
    parts = path.split("/")
    if len(parts) > 2 and parts[0] == "steps":
        parts = parts[2:]
    if parts[0] == "solution":
        return True
    name = parts[-1].lower()
    return parts[0] == "tests" and (name.endswith((".sh", ".py")) or any(w in name for w in ("test", "expect", "answer")))


def copy_sources(dockerfile: str) -> list[str]:
    """Build-context sources of every COPY/ADD (not ``--from=`` stage copies, not URLs)."""
    sources: list[str] = []
    for instruction, args in dockerfile_instructions(dockerfile):
        if instruction not in ("COPY", "ADD"):
            continue
        if args.startswith("["):
            import json

            try:
                words = [str(w) for w in json.loads(args)]
            except ValueError:
                continue
        else:
            try:
                words = shlex.split(args, comments=False)
            except ValueError:
                words = args.split()
        flags = [w for w in words if w.startswith("--")]
        paths = [w for w in words if not w.startswith("--")]
        if any(f.startswith("--from") for f in flags) or len(paths) < 2:
            continue
        sources += [p for p in paths[:-1] if "://" not in p and not p.startswith("<<")]
    return sources


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        word, _, rest = current.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        current = ""
    if current.strip():
        word, _, rest = current.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _solution_problems(task: Task) -> list[str]:
    out = []
    for path, f in task.files.items():
        parts = path.split("/")
        in_solution = parts[0] == "solution" or (len(parts) > 2 and parts[0] == "steps" and parts[2] == "solution")
        if not in_solution:
            continue
        code = _strip_comments(f.text)
        if _TESTS_PATH.search(code):
            out.append(f"{path} reads /tests (the verifier is not there while the agent works)")
        if _REWARD_PATH.search(code):
            out.append(f"{path} touches /logs/verifier (only the verifier writes the reward)")
    return out


def _strip_comments(text: str) -> str:
    # Shell and Python comments: a solution explaining "the tests in /tests check ..." is harmless.
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _reward_problems(task: Task) -> list[str]:
    out = []
    steps: list[StepConfig | None] = list(task.steps) or [None]
    for step in steps:
        files = dict(task.subtree("tests"))
        if step is not None:
            files.update(task.subtree(f"steps/{step.name}/tests"))
        if "test.sh" not in files:
            continue  # reported as a missing file
        if not any(marker in f.text for f in files.values() for marker in REWARD_MARKERS):
            where = f"step {step.name}: " if step is not None else ""
            out.append(f"{where}tests never mention /logs/verifier/reward.txt or reward.json: no reward would be written")
    return out
