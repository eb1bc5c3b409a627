"""Gate 1, static lint: what can be checked without building anything.

Cheap checks that reject a task before it costs a build: the config validates, the required files
exist (top-level or per step), the Dockerfile's COPY/ADD sources exist in the build context and its
base image can be had on the chosen backend, the verifier and the reference solution cannot reach the
image (tests/ and solution/ must not be copied in, or the agent could read them), the solution does
not read the tests or write the reward, and test.sh writes a reward file.

Every finding is reported at once, so one round of fixes suffices: all of them in the evidence, and a
one-line reason that lists as many as fit. A finding is a "problem" (the gate fails) or a "warning"
(recorded, the gate passes): an unknown base image is a problem on bwrap, which builds from local
base roots, and only a warning on docker, whose engine may have it (it maps only what it lacks); a
base that is stood in for (Ubuntu by Debian) is a warning that says what was substituted. What the
task asks of the sandbox (GPUs, compose services, a browser, the internet, memory and disk) is matched
against the backend's capabilities on this machine (gates/requirements.py): what it cannot honour is
a problem naming a backend that can, what the policy clamps or denies is a warning. Harbor's fields
that we ignore or narrow (MCP servers, an allowlist network, ...) are warnings (gates/harbor_fields.py).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import re
from functools import lru_cache

from ..agents.tools import task_tool_problems
from ..errors import BuildError
from ..sandbox.compose import compose_file, load_compose
from ..sandbox.dockerfile import Context, Instruction, parse_dockerfile, words
from ..sandbox.rootfs import resolve_base
from ..sandbox.select import BackendCatalog, plugin_host
from ..tasks import PROVENANCE_KEY, StepConfig, Task, is_harbor_name, qualified_name
from .base import DEFAULT_BACKEND, Evidence, Finding, Gate, GateContext, GateResult
from .harbor_fields import harbor_field_findings
from .requirements import requirement_findings

REWARD_MARKERS = ("reward.txt", "reward.json", "/logs/verifier")
# A path the solution must never touch: /tests (the verifier) and /logs/verifier (the reward).
_TESTS_PATH = re.compile(r"(?<![\w./-])/tests(?![\w-])")
_REWARD_PATH = re.compile(r"(?<![\w./-])/logs/verifier(?![\w-])")
_STEP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_VAR_NAME = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
# Files this small (an empty __init__.py, a one-word fixture) match by chance; copies of them are not a leak.
_MIN_LEAK_BYTES = 64
REASON_CHARS = 300  # the one-line reason lists findings up to about this length; the evidence has all
LOCAL_BASES = ("bwrap",)  # backends that build FROM a local base root instead of pulling the image
_SCRIPTS = ("tests/test.sh", "solution/solve.sh")  # what every task (or each step) must have


class LintGate(Gate):
    """Schema, required files, COPY sources, base image, no verifier or solution in the image, no
    cheating solution, a reward file: every finding at once."""

    name = "lint"
    order = 10

    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        findings = lint_findings(task, backend=ctx.backend_name, catalog=ctx.catalog)
        problems = [f.text for f in findings if f.level == "problem"]
        warnings = [f.text for f in findings if f.level == "warning"]
        evidence = [Evidence(command=f"static lint (backend {ctx.backend_name})",
                             output_tail="\n".join(problems + [f"warning: {w}" for w in warnings]),
                             values={"files": len(task.files), "steps": len(task.steps), "problems": len(problems),
                                     "warnings": len(warnings), "findings": [f._asdict() for f in findings]})]
        if problems:
            return self.result("fail", summarise(problems, "problem"), evidence=evidence)
        return self.result("pass", summarise(warnings, "warning") if warnings else "", evidence=evidence)


def summarise(items: list[str], noun: str, limit: int = REASON_CHARS) -> str:
    """One line: a single item as it is; several as "3 problems: a; b; c", cut at a whole item
    ("; and 2 more") once the line would pass ``limit``."""
    if len(items) == 1:
        return items[0]
    line = f"{len(items)} {noun}s: "
    for i, item in enumerate(items):
        rest = f"; and {len(items) - i} more"
        sep = "; " if i else ""
        if i and len(line) + len(sep) + len(item) > limit:
            return line + rest
        line += sep + (item if i or len(item) <= limit else item[: limit - 3] + "...")
    return line


def lint_findings(task: Task, *, backend: str | None = None, catalog: BackendCatalog | None = None) -> list[Finding]:
    """Every static finding for ``task`` built on ``backend`` (default: the default backend), its
    requirements judged against ``catalog`` (default: the installed plugins' backends)."""
    backend = backend or DEFAULT_BACKEND
    catalog = catalog or default_catalog()
    caps = catalog.capabilities(backend)
    findings = [Finding(p) for p in (_schema_problems(task) + _required_files(task))] + _harbor_name(task)
    findings += _dockerfile_findings(task, backend, compose=caps is None or caps.compose)
    findings += requirement_findings(task, backend, catalog)
    findings += [Finding(p) for p in task_tool_problems(task, catalog.host.tools.names())]  # the task's tools
    findings += [Finding(p) for p in (_image_leaks(task) + _solution_problems(task) + _reward_problems(task))]
    findings += harbor_field_findings(task)  # Harbor's fields we ignore or narrow
    return findings


def lint_task(task: Task, *, backend: str | None = None, catalog: BackendCatalog | None = None) -> list[str]:
    """Every static problem of ``task``, one line each (empty when it is clean); warnings left out."""
    return [f.text for f in lint_findings(task, backend=backend, catalog=catalog) if f.level == "problem"]


@lru_cache(maxsize=1)
def default_catalog() -> BackendCatalog:
    """The installed plugins' backends under the default policy, for lint calls that bring none."""
    return BackendCatalog(plugin_host())


def _harbor_name(task: Task) -> list[Finding]:
    """Harbor refuses a ``[task] name`` not in ``org/name`` form (``harbor run`` then finds no task):
    a problem for a generated task (it has provenance), a warning for one imported as it was."""
    name = task.config.task.name
    if name is None or is_harbor_name(name):
        return []
    text = (f"task.name {name!r} is not in Harbor's org/name form: Harbor refuses the task "
            f"(name it with autoenvscaling.tasks.qualified_name, e.g. {qualified_name(name)!r})")
    return [Finding(text, "problem" if task.provenance.domain else "warning")]


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
    has_env = "environment/Dockerfile" in task.files or bool(env.docker_image) or compose_file(task) is not None
    if not has_env:
        out.append("missing environment/Dockerfile (or [environment] docker_image)")
    if not task.steps:
        if not (task.instruction or "").strip():
            out.append("missing or empty instruction.md")
        return out + [f"missing {rel}" for rel in _SCRIPTS if rel not in task.files]
    for step in task.steps:
        base = f"steps/{step.name}"
        if not (task.step_instruction(step) or "").strip():
            out.append(f"step {step.name}: missing {base}/instruction.md (and no top-level instruction.md)")
        out += [f"step {step.name}: missing {base}/{rel}" for rel in _SCRIPTS
                if f"{base}/{rel}" not in task.files and rel not in task.files]
    return out


def _image_leaks(task: Task) -> list[str]:
    """tests/ or solution/ reachable from the image: copied by the Dockerfile, or present in the
    build context (environment/) as copies."""
    out = []
    dockerfile = task.dockerfile
    if dockerfile is not None:
        for source in copy_sources(dockerfile):
            # The build context is environment/, so the task's own tests/ and solution/ are reachable
            # only through "..". (environment/tests/ may be the app's own test suite: that is fine,
            # unless its files are copies of the verifier's, which the content check below finds.)
            if _outside_context(source):
                out.append(f"environment/Dockerfile copies {source!r} from outside the build context "
                           "(tests/ and solution/ must stay out of the image)")
    name = compose_file(task)
    compose = task.files[f"environment/{name}"] if name else None
    if compose is not None and re.search(r"context:\s*['\"]?\.\.", compose.text):
        out.append("environment/docker-compose: the build context is the task directory, which holds tests/ and solution/")
    private = {}
    public = public_files(task)
    for path, f in task.files.items():
        if _is_private_path(path) and len(f.data) >= _MIN_LEAK_BYTES and not any(fnmatch.fnmatchcase(path, p) for p in public):
            private[hashlib.sha256(f.data).hexdigest()] = path
    for path, f in task.environment_files.items():
        origin = private.get(hashlib.sha256(f.data).hexdigest())
        if origin is not None:
            out.append(f"environment/{path} is a copy of {origin}: the image would contain it")
    return out


def public_files(task: Task) -> list[str]:
    """Glob patterns (task-relative) of verifier files the agent is meant to see too, from
    ``[metadata.autoenvscaling] public_files``: a repository's own test suite that the verifier
    restores but the agent also gets (swe tasks). Copies of these in the image are not leaks; the
    domain that declares them checks that nothing private is among them."""
    patterns = task.config.metadata.get(PROVENANCE_KEY, {}).get("public_files", [])
    return [p for p in patterns if isinstance(p, str) and p.startswith("tests/")] if isinstance(patterns, list) else []


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


def _outside_context(source: str) -> bool:
    return ".." in [p for p in source.replace("\\", "/").split("/") if p not in ("", ".")]


def _dockerfile_findings(task: Task, backend: str, *, compose: bool) -> list[Finding]:
    """The Dockerfile's base images and COPY/ADD sources, as the builder will see them; a compose
    file's services when ``backend`` runs compose (whether it does is a requirement, judged apart)."""
    if compose_file(task) is not None:
        return _compose_findings(task) if compose else []
    text = task.dockerfile
    if text is None:
        image = task.config.environment.docker_image
        return _base_findings(image, backend) if image else []
    try:
        instructions = parse_dockerfile(text)
    except BuildError as exc:
        return [Finding(f"environment/Dockerfile: {exc.message}")]
    context = Context(task.environment_files)
    findings: list[Finding] = []
    stages: set[str] = set()
    variables: dict[str, str] = {}
    for inst in instructions:
        try:
            if inst.keyword in ("ARG", "ENV"):
                variables.update(_declared(inst, variables))
            elif inst.keyword == "FROM":
                findings += _from_findings(inst, variables, stages, backend)
            elif inst.keyword in ("COPY", "ADD"):
                findings += _missing_sources(inst, variables, context)
        except BuildError as exc:  # an unterminated quote: the builder would stop here too
            findings.append(Finding(f"environment/Dockerfile line {inst.line}: {exc.message}"))
    return findings


def _declared(inst: Instruction, variables: dict[str, str]) -> dict[str, str]:
    """Values an ARG (defaults only) or ENV sets, so later COPY sources and FROM images expand."""
    tokens = words(inst.args, variables)
    if inst.keyword == "ENV" and tokens and "=" not in tokens[0]:  # the legacy "ENV KEY value" form
        return {tokens[0]: " ".join(tokens[1:])}
    pairs = (t.partition("=") for t in tokens)
    return {key: value for key, eq, value in pairs if eq}


def _unresolved(text: str, variables: dict[str, str]) -> bool:
    """Whether ``text`` uses a variable we cannot know statically (a build arg without a default)."""
    return any(name not in variables for name in _VAR_NAME.findall(text))


def _from_findings(inst: Instruction, variables: dict[str, str], stages: set[str], backend: str) -> list[Finding]:
    tokens = words(inst.args, variables)
    if not tokens:
        return [Finding(f"environment/Dockerfile line {inst.line}: FROM needs an image")]
    earlier_stage = tokens[0].lower() in stages
    if len(tokens) >= 3 and tokens[1].lower() == "as":
        stages.add(tokens[2].lower())
    if earlier_stage or _unresolved(inst.args.split()[0], variables):
        return []  # an earlier stage of this Dockerfile, or an image chosen by a build arg
    return _base_findings(tokens[0], backend)


def _compose_findings(task: Task) -> list[Finding]:
    """What a compose environment asks for must be something we can honour (the same checks the
    backend makes before it builds anything)."""
    try:
        load_compose(task)
    except BuildError as exc:
        return [Finding(f"environment/{compose_file(task)}: {exc.message}")]
    return []


def _base_findings(image: str, backend: str) -> list[Finding]:
    """Whether ``backend`` can have ``image``: bwrap builds FROM a local base root (resolve_base);
    docker uses the engine's image and maps only what it lacks, so there it is a warning at most."""
    local = backend in LOCAL_BASES
    if image.lower() == "scratch":
        return [Finding("FROM scratch has no local base image (use --backend docker)")] if local else []
    mapping = resolve_base(image)
    if mapping is None:
        if local:
            return [Finding(f"FROM {image} has no local base image (use --backend docker, "
                            "or map it with AUTOENVSCALING_BASE_IMAGES)")]
        return [Finding(f"FROM {image} has no local base image: {backend} needs the image itself "
                        "(bwrap would refuse it)", "warning")]
    if local and mapping.note:
        return [Finding(f"FROM {image} is built from {mapping.base}: {mapping.note}", "warning")]
    return []


def _missing_sources(inst: Instruction, variables: dict[str, str], context: Context) -> list[Finding]:
    """COPY/ADD sources that are not in the build context (environment/, after .dockerignore)."""
    if _unresolved(inst.args, variables):
        return []  # a source named by a build arg without a default: left to the build
    out = []
    for source in _sources(inst, variables):
        if _outside_context(source):
            continue  # reported as a leak
        try:
            context.resolve(source, inst)
        except BuildError:
            out.append(Finding(f"{inst.keyword} source {source} is not in environment/ (Dockerfile line {inst.line})"))
    return out


def _sources(inst: Instruction, variables: dict[str, str]) -> list[str]:
    """Build-context sources of one COPY/ADD (not ``--from=`` stage copies, heredocs or URLs)."""
    if "from" in inst.flag:
        return []
    tokens = inst.exec_form() or words(inst.args, variables)
    return [t for t in tokens[:-1] if t and not t.startswith("<<") and not re.match(r"^[a-z][a-z0-9+.-]*://|^git@", t)]


def copy_sources(dockerfile: str) -> list[str]:
    """Build-context sources of every COPY/ADD (not ``--from=`` stage copies, heredocs or URLs), as
    written: variables are expanded only when the Dockerfile defines them. Unparseable text has none
    (the lint reports why)."""
    variables: dict[str, str] = {}
    sources: list[str] = []
    with contextlib.suppress(BuildError):
        for inst in parse_dockerfile(dockerfile):
            if inst.keyword in ("ARG", "ENV"):
                variables.update(_declared(inst, variables))
            elif inst.keyword in ("COPY", "ADD"):
                sources += _sources(inst, variables)
    return sources


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
