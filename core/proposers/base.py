"""The proposer interface: an assignment in, a proposed task (or the reason there is none) out.

Four kinds share it (procedural, prompt, prompt + feedback, agentic; see docs/architecture.md, Proposers). A
``Proposal`` records what the attempt cost and how it ended, because the metrics need to tell a
model's own failure (scored) from a provider refusal or an infrastructure failure (not scored).
Proposers that revise (feedback, agentic) run the admission gates through a ``Checker`` the caller
supplies; the gates run in our process, outside anything the proposer's model can touch.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..domains.base import Domain
from ..errors import ConfigError
from ..gates.base import ValidationReport
from ..tasks import Task

if TYPE_CHECKING:
    from ..flywheel.assignments import Assignment
    from ..llm.base import LLMBackend
    from ..sandbox.base import SandboxBackend

Checker = Callable[[Task], Awaitable[ValidationReport]]
"""Runs the admission gates (1-8) on a task and returns the report."""


class ProposalCost(BaseModel):
    """What a proposal attempt spent: model tokens in and out, dollars (None: the model has no
    price), model calls (``attempts``), rounds of feedback after the first try (``revisions``), the
    calls' HTTP retries and timed-out attempts, and ``budget_stop``, what ran out when a budget
    ended the proposal. The flywheel's run database records it with each unit."""

    model_config = ConfigDict(frozen=True)

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    attempts: int = 0
    revisions: int = 0
    retries: int = 0
    timeouts: int = 0
    budget_stop: str | None = None


class Proposal(ProposalCost):
    """The outcome of one proposal attempt, and its `ProposalCost`.

    ``task`` is None when nothing usable came out; ``error`` then says why in one line.
    ``refused``/``infrastructure_failure`` mark attempts that are excluded from "scored".
    ``report`` is the last admission report the proposer obtained for this ``task``'s content (the
    provenance stamp added afterwards changes no verdict), or None; ``bench`` reuses it.
    """

    task: Task | None
    kind: str
    model: str | None = None
    refused: bool = False
    infrastructure_failure: bool = False
    error: str | None = None
    seconds: float = 0.0
    report: ValidationReport | None = None
    transcript: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def scored(self) -> bool:
        return not (self.refused or self.infrastructure_failure)


class Proposer(abc.ABC):
    """Builds one new environment per ``propose`` call.

    Constructor arguments are shared by every kind so the flywheel can build any registered
    proposer the same way; each kind says which it needs. ``llm``: an LLMBackend. ``checker``: the
    admission gates, for proposers that revise. ``backend``: a SandboxBackend, for the agentic
    proposer's own sandbox. ``max_revisions``: feedback rounds after the first attempt.
    """

    name: ClassVar[str]
    needs_llm: ClassVar[bool] = True
    needs_checker: ClassVar[bool] = False
    needs_backend: ClassVar[bool] = False

    def __init__(self, *, llm: LLMBackend | None = None, checker: Checker | None = None,
                 backend: SandboxBackend | None = None,
                 max_revisions: int = 2, temperature: float = 0.0, max_tokens: int = 4096) -> None:
        for needed, value, what in ((self.needs_llm, llm, "llm"), (self.needs_checker, checker, "checker"),
                                    (self.needs_backend, backend, "backend")):
            if needed and value is None:
                raise ConfigError(f"the {self.name} proposer needs a {what}",
                                  hint="pass it when building the proposer (the flywheel does)")
        self.llm = llm
        self.checker = checker
        self.backend = backend
        self.max_revisions = max_revisions
        self.temperature = temperature
        self.max_tokens = max_tokens

    @property
    def model(self) -> str | None:
        return getattr(self.llm, "model", None)

    def require_llm(self) -> LLMBackend:
        """The LLM backend (``needs_llm`` kinds are never built without one)."""
        if self.llm is None:
            raise ConfigError(f"the {self.name} proposer needs an LLM")
        return self.llm

    def require_backend(self) -> SandboxBackend:
        """The sandbox backend (``needs_backend`` kinds are never built without one)."""
        if self.backend is None:
            raise ConfigError(f"the {self.name} proposer needs a backend")
        return self.backend

    @abc.abstractmethod
    async def propose(self, assignment: Assignment, *, domain: Domain, seed: int) -> Proposal:
        """Build one task for ``assignment`` (an ``autoenvscaling.flywheel.assignments.Assignment``).
        Never raises for a bad attempt: the failure is data in the returned Proposal."""

    def stamp(self, task: Task, assignment: Assignment, *, seed: int, tokens_in: int = 0, tokens_out: int = 0,
              cost_usd: float | None = 0.0) -> Task:
        """``task`` with our provenance: who proposed it, for which parent and direction, at what cost."""
        return task.with_provenance(
            domain=assignment.domain, proposer=self.name, proposer_model=self.model, seed=seed,
            parent=assignment.parent, direction=None if assignment.direction == "new" else assignment.direction,
            tokens_in=tokens_in or None, tokens_out=tokens_out or None, cost_usd=cost_usd or None,
        )
