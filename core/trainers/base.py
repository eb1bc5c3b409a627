"""The trainer seam: after a round's pool review, a trainer turns the pool and the round's rollouts
into a new solver.

A trainer returns a ``SolverSpec`` (data: a new checkpoint path, or the name a server now serves the
updated model under) rather than a live model, because the solver is rebuilt from its spec in every
worker that runs a rollout. The flywheel records the spec and the metrics in run.sqlite, so a
resumed run continues with the trained solver without training again. Trainers register by import
path (``registrar.add("grpo", "pkg.mod:GRPOTrainer", extra=...)``) and keep heavy libraries (torch,
trl) inside ``train``.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..executors.jobs import LLMSpec, SolverSpec
from ..sandbox.base import SandboxPolicy

if TYPE_CHECKING:
    from ..flywheel.rundb import RolloutRow
    from ..plugins.host import PluginHost
    from ..tasks import Task


class TrainerContext(BaseModel):
    """Where and with what a flywheel round's training runs. ``workdir``: a folder of the run that
    belongs to this round's training (checkpoints go there; a resumed run finds them again).
    ``backend``/``policy``: the run's sandbox backend by name (``sandbox.select.make_backend``).
    ``options``: the run's trainer options (``autoenvscaling run --train-steps``, ...), as given."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    workdir: Path
    round: int
    seed: int
    backend: str
    policy: SandboxPolicy = Field(default_factory=SandboxPolicy)
    options: dict[str, Any] = Field(default_factory=dict)


class TrainResult(BaseModel):
    """What one training returns: the solver the next round uses, and figures for the report."""

    model_config = ConfigDict(frozen=True)

    solver: SolverSpec
    metrics: dict[str, float] = Field(default_factory=dict)
    proposer: LLMSpec | None = None
    """The model the next round's LLM proposers use, when the training changed it (one model trained
    in both roles); None: they keep theirs."""
    history: list[dict[str, float]] = Field(default_factory=list)
    """Per-step figures for the report's training curves: rows with ``step`` and any of
    ``reward_mean``, ``useful_group_rate``, ``held_out_pass_rate`` (and more)."""


class Trainer(abc.ABC):
    """Trains the solver on the admitted pool. Built with no arguments (``host.trainers.get(name)()``);
    configuration comes from the environment or the trainer's own files."""

    name: ClassVar[str]

    def configure(self, context: TrainerContext, host: PluginHost) -> None:  # noqa: B027 - optional
        """Called by the flywheel before each ``train``: where this round's training lives and what
        it may use. Trainers that need neither ignore it."""

    @abc.abstractmethod
    async def train(self, pool: list[Task], rollouts: list[RolloutRow], solver: SolverSpec) -> TrainResult:
        """Train ``solver`` on ``pool`` (the tasks in the pool after this round's review) with
        ``rollouts`` (this round's calibration and review rollouts: rewards, statuses, failures)."""
