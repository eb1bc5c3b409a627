"""A task's requirements against what the chosen sandbox backend honours on this machine.

Refused (a lint problem): what the backend genuinely cannot do here: GPUs on a machine without them
(or too few, or none of the named types), a compose environment on a backend without compose, a
browser where none is provided. Reported (a lint warning, the task still runs): what the sandbox
policy chose to clamp or deny: the internet not granted (offline by default; many real tasks set
allow_internet only to bootstrap tools, which the offline verifier runtime serves), memory or disk
capped below what the task set explicitly. Harbor's implicit ``storage_mb = 10240`` is not a request.

Every refusal is one line that names what would work: another registered backend that honours it
here (``use --backend docker``), else the backends that could on another machine.
"""

from __future__ import annotations

from typing import Callable

from ..sandbox.base import BackendCapabilities
from ..sandbox.gpu import gpu_type_matches
from ..sandbox.select import BackendCatalog
from ..tasks import Task
from ..tasks.requirements import TaskRequirements, requirements_of
from .base import Finding

HonoursFn = Callable[[BackendCapabilities], bool]  # whether one backend's capabilities meet the need


def requirement_findings(task: Task, backend: str, catalog: BackendCatalog) -> list[Finding]:
    """Problems (refusals) and warnings (clamps, denials) for running ``task`` on ``backend``."""
    req = requirements_of(task)
    caps = catalog.capabilities(backend)
    if caps is None:
        return []  # an unknown backend: reported where it is chosen (make_backend), not as lint
    findings = _gpu_findings(req, backend, caps, catalog)
    if req.compose and not caps.compose:
        findings.append(Finding(f"environment/{req.compose}: multi-container (compose) environments run on "
                                f"{_backends_phrase(catalog, 'supports_compose')}"))
    if req.browser and not caps.browser:
        findings.append(Finding(f"the task asks for a browser; backend {backend} provides none here: "
                                + _elsewhere(catalog, backend, "supports_browser", lambda c: c.browser,
                                             "use a backend that can run one (bwrap or docker)")))
    findings += _policy_warnings(task, req, backend, caps, catalog)
    return findings


def _gpu_findings(req: TaskRequirements, backend: str, caps: BackendCapabilities,
                  catalog: BackendCatalog) -> list[Finding]:
    if req.gpus <= 0:
        return []
    types = f" ({' or '.join(req.gpu_types)})" if req.gpu_types else ""
    wanted = f"{req.gpus} GPU{'s' if req.gpus > 1 else ''}{types}"

    def honours(c: BackendCapabilities) -> bool:
        return c.gpus >= req.gpus and _type_ok(req, c) is not False

    if caps.gpus < req.gpus:
        has = "none" if not caps.gpus else f"only {caps.gpus}"
        where = _elsewhere(catalog, backend, "supports_gpus", honours, "no registered backend passes GPUs through",
                           elsewhere="run on a machine with an NVIDIA GPU")
        return [_gpu_shortfall(req, f"{wanted}; backend {backend} on this machine has {has}", where)]
    match = _type_ok(req, caps)
    if match is False:
        where = _elsewhere(catalog, backend, "supports_gpus", honours, "no registered backend passes GPUs through",
                           elsewhere=f"run on a machine with {' or '.join(req.gpu_types)} GPUs")
        return [_gpu_shortfall(req, f"{wanted}; this machine has {', '.join(caps.gpu_types)}", where)]
    if match is None:
        return [Finding(f"needs {wanted}; the GPU models here are unknown (no nvidia-smi), so the type is not "
                        "checked", "warning")]
    return []


def _gpu_shortfall(req: TaskRequirements, what: str, where: str) -> Finding:
    """A refusal, or for a ``gpu_optional`` task a warning: it runs in its reduced mode instead."""
    if req.gpu_optional:
        return Finding(f"asks for {what}: it runs without them (gpu_optional), in the reduced mode its verifier "
                       f"reports; for the full check {where}", "warning")
    return Finding(f"needs {what}: {where}")


def _type_ok(req: TaskRequirements, caps: BackendCapabilities) -> bool | None:
    """Whether the backend's GPUs include one of the requested types (None: models unknown)."""
    if not req.gpu_types:
        return True
    if not caps.gpu_types:
        return None
    return any(gpu_type_matches(w, m) for w in req.gpu_types for m in caps.gpu_types)


def _policy_warnings(task: Task, req: TaskRequirements, backend: str, caps: BackendCapabilities,
                     catalog: BackendCatalog) -> list[Finding]:
    out = []
    if req.internet and not caps.internet:
        cls = catalog.backend_class(backend)
        how = ("the policy keeps it offline; --network task grants it" if cls is not None and cls.supports_internet
               else f"backend {backend} never grants it")
        out.append(Finding(f"allow_internet is not granted ({how}); the offline verifier runtime serves the "
                           "usual bootstrap downloads", "warning"))
    asked = task.config.environment.model_fields_set  # what task.toml set, not Harbor's defaults
    for key, wanted, cap in (("memory_mb", req.memory_mb, caps.max_memory_mb),
                             ("storage_mb", req.storage_mb, caps.max_storage_mb)):
        if key in asked and cap and wanted > cap:
            out.append(Finding(f"{key} = {wanted} is capped at {cap} MB by the sandbox policy", "warning"))
    return out


def _backends_phrase(catalog: BackendCatalog, flag: str) -> str:
    """"the docker backend (use --backend docker)", from the backends that declare ``flag``."""
    names = _declaring(catalog, flag)
    if not names:
        return "no registered backend (none declares support)"
    which = " or ".join(names)
    return f"the {which} backend{'s' if len(names) > 1 else ''} (use --backend {names[0]})"


def _elsewhere(catalog: BackendCatalog, backend: str, flag: str, honours: HonoursFn, nobody: str, *,
               elsewhere: str | None = None) -> str:
    """The hint: another backend that honours it here, else where it would run, else ``nobody``."""
    here = [n for n in _declaring(catalog, flag) if n != backend and catalog.available(n)
            and (c := catalog.capabilities(n)) is not None and honours(c)]
    if here:
        return f"use --backend {here[0]}"
    declaring = _declaring(catalog, flag)
    return f"{elsewhere} ({' or '.join(declaring)})" if declaring and elsewhere else nobody


def _declaring(catalog: BackendCatalog, flag: str) -> list[str]:
    """Registered backends whose class declares ``flag`` (loaded without starting anything)."""
    return [name for name in catalog.names() if getattr(catalog.backend_class(name), flag, False)]


def unmet_requirements(task: Task, backend: str, catalog: BackendCatalog) -> list[str]:
    """The refusals alone: what ``backend`` cannot honour here (``tasks run`` stops at these, as lint)."""
    return [f.text for f in requirement_findings(task, backend, catalog) if f.level == "problem"]
