"""Admission gates: each checks one property of a task and records its evidence.

Gates run cheapest first (``order``); the first gate that fails decides the verdict and the rest are
skipped. A gate never raises for a bad task: it returns a failing ``GateResult`` with a one-line
reason. Exceptions a gate does raise are infrastructure errors and turn the verdict into "error".
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ..tasks import Task

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialRunner
    from ..sandbox.base import SandboxBackend
    from ..sandbox.select import BackendCatalog

GateStatus = Literal["pass", "fail", "error", "timeout", "skip"]
Verdict = Literal["valid", "invalid", "error", "timeout"]


class Finding(NamedTuple):
    """One static finding: a "problem" fails the gate, a "warning" is recorded and the gate passes."""

    text: str
    level: Literal["problem", "warning"] = "problem"


class Evidence(BaseModel):
    """What a gate looked at: a command and its output tail, or numbers."""

    model_config = ConfigDict(frozen=True)

    command: str | None = None
    output_tail: str = ""
    values: dict[str, Any] = Field(default_factory=dict)


class GateResult(BaseModel):
    """``status``: "pass", "fail" (the task is invalid), "error" (infrastructure), "timeout", "skip"."""

    model_config = ConfigDict(frozen=True)

    name: str
    status: GateStatus
    reason: str = ""
    seconds: float = 0.0
    evidence: list[Evidence] = Field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status in ("pass", "skip")


class ValidationReport(BaseModel):
    """The verdict on one task. ``status``: "valid", "invalid", "error" or "timeout"; ``reason`` is
    one line (the failing gate's reason, or "all gates passed")."""

    model_config = ConfigDict(frozen=True)

    task: str  # the path or name given
    name: str
    status: Verdict
    reason: str
    gates: list[GateResult] = Field(default_factory=list)
    seconds: float = 0.0
    digest: str | None = None

    @property
    def valid(self) -> bool:
        return self.status == "valid"

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task, "name": self.name, "status": self.status, "reason": self.reason,
            "seconds": round(self.seconds, 3), "digest": self.digest,
            "gates": [{"name": g.name, "status": g.status, "reason": g.reason, "seconds": round(g.seconds, 3),
                       "evidence": [e.model_dump(mode="json") for e in g.evidence]} for g in self.gates],
        }


DEFAULT_BACKEND = "bwrap"  # the sandbox backend tasks are built on unless one is chosen


class GateContext:
    """What gates share while validating one task: the backend, the trial runner, settings, the
    suite's existing tasks (for near-duplicate checks), the plugin host, and a scratch dict for results that later
    gates reuse (e.g. the build). ``backend_name`` says which backend the task is meant for even when
    no backend was started (a lint-only run): the backend's own name, else the one given, else
    DEFAULT_BACKEND. ``catalog``: the registered backends' capabilities here, against which lint
    matches the task's requirements (None: lint builds one from the installed plugins)."""

    def __init__(self, *, backend: SandboxBackend | None, runner: TrialRunner | None, settings: GateSettings,
                 suite_tasks: list[Task] | None = None, held_out: list[str] | None = None, solver: Agent | None = None,
                 backend_name: str | None = None, catalog: BackendCatalog | None = None,
                 host: PluginHost | None = None) -> None:
        self.backend = backend
        self.backend_name: str = (backend.name if backend is not None else None) or backend_name or DEFAULT_BACKEND
        self.runner = runner
        self.settings = settings
        self.suite_tasks = suite_tasks or []
        self.held_out = held_out or []
        self.solver = solver
        self.catalog = catalog
        self.host = host  # the plugin host the gates came from (the red-team gate takes its cheats there)
        # Free-form per-task results later gates reuse (the prepared environment, oracle runs, ...).
        self.scratch: dict[str, Any] = {}


class GateSettings(BaseModel):
    """Knobs of the standard gates (docs/architecture.md, Admission gates)."""

    model_config = ConfigDict(frozen=True)

    null_max: float = 0.5
    flaky_runs: int = 3
    ngram: int = 13
    near_duplicate_threshold: float = 0.8
    calibration_band: tuple[float, float] = (0.25, 0.75)
    calibration_rollouts: int = 4
    calibration_expand_to: int = 8
    calibration_margin: float = 0.15
    skip: tuple[str, ...] = ()


class Gate(abc.ABC):
    """One admission check. ``order``: lower runs first (lint 10, build 20, oracle 30, null 40,
    red team 45, reset 50, flaky 60, decontamination 70, near-duplicate 80, calibration 90)."""

    name: ClassVar[str]  # the gate's id: reports, --skip and code that singles out a gate use it
    order: ClassVar[int] = 100
    needs_sandbox: ClassVar[bool] = False
    needs_solver: ClassVar[bool] = False  # runs only when a solver is given (calibration)
    #: the domain whose tasks this gate checks ([metadata.autoenvscaling] domain); None: every task.
    #: A domain plugin's own lints declare it, so they never judge another domain's tasks.
    domain: ClassVar[str | None] = None

    def applies_to(self, task: Task) -> bool:
        """Whether this gate judges ``task``: core gates judge all, a domain's gates its own tasks."""
        return self.domain is None or task.provenance.domain == self.domain

    @abc.abstractmethod
    async def check(self, task: Task, ctx: GateContext) -> GateResult:
        """Check ``task``; return pass/fail with evidence."""

    def result(self, status: GateStatus, reason: str = "", *, seconds: float = 0.0,
               evidence: list[Evidence] | None = None) -> GateResult:
        return GateResult(name=self.name, status=status, reason=reason, seconds=seconds, evidence=evidence or [])
