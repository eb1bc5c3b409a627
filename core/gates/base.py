"""Admission gates: each checks one property of a task and records its evidence.

Gates run cheapest first (``order``); the first gate that fails decides the verdict and the rest are
skipped. A gate never raises for a bad task: it returns a failing ``GateResult`` with a one-line
reason. Exceptions a gate does raise are infrastructure errors and turn the verdict into "error".
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ..errors import UsageError
from ..runtime.phases import timed
from ..tasks import Task

if TYPE_CHECKING:
    from ..agents.base import Agent
    from ..flywheel.calibration import Calibration
    from ..plugins.host import PluginHost
    from ..runtime.trial import TrialResult, TrialRunner
    from ..sandbox.base import PreparedEnvironment, SandboxBackend
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
    phases: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase of the attempts and builds this gate made, summed (runtime/phases.py)."""

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
    suite's existing tasks (for near-duplicate checks), the plugin host, and the results that later
    gates reuse: ``prepared`` (the environment the build gate built; ``prepared_environment`` builds
    it once when that gate was skipped), ``oracle_runs`` (every completed oracle attempt, in order:
    the flakiness gate counts them), ``null_runs`` (every completed null attempt, the null gate's: a
    domain's gate that needs one more takes it from there) and ``calibration`` (gate 9's rollouts).
    ``scratch`` is a free-form dict for a plugin's own gates to share results; the core keeps nothing
    there. ``backend_name``
    says which backend the task is meant for even when no backend was started (a lint-only run): the
    backend's own name, else the one given, else DEFAULT_BACKEND. ``catalog``: the registered
    backends' capabilities here, against which lint matches the task's requirements (None: lint
    builds one from the installed plugins)."""

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
        self.prepared: PreparedEnvironment | None = None
        self.oracle_runs: list[TrialResult] = []
        self.null_runs: list[TrialResult] = []
        self.calibration: Calibration | None = None
        self.scratch: dict[str, Any] = {}  # plugin-private, keyed by the plugin's own names

    def require_backend(self) -> SandboxBackend:
        """The sandbox backend; UsageError when none is attached (a gate that needs one ran without)."""
        if self.backend is None:
            raise UsageError("this gate needs a sandbox backend, and none is attached")
        return self.backend

    def require_runner(self) -> TrialRunner:
        """The trial runner; UsageError when none is attached."""
        if self.runner is None:
            raise UsageError("this gate runs attempts, and no trial runner is attached")
        return self.runner

    async def prepared_environment(self, task: Task) -> PreparedEnvironment:
        """``task``'s environment: the build gate's, else built now, once, and kept for later gates."""
        if self.prepared is None:
            with timed("prepare"):
                self.prepared = await self.require_backend().prepare(task)
        return self.prepared


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
    #: leave alone the tasks a domain vouches for (``Domain.redteam_tested``); False: the red-team
    #: gate, and a domain's own gates that honour it (professional's controls, computer_use's state
    #: probe), judge every task (the domains' own tests, to prove what the vouching rests on)
    redteam_vouched: bool = True


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
        """This gate's result. Leave ``seconds`` at 0 to have the pipeline (``run_gate``) record how
        long ``check`` took."""
        return GateResult(name=self.name, status=status, reason=reason, seconds=seconds, evidence=evidence or [])
