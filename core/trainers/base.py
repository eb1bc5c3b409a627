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
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..executors.jobs import SolverSpec

if TYPE_CHECKING:
    from ..flywheel.rundb import RolloutRow
    from ..tasks import Task


class TrainResult(BaseModel):
    """What one training returns: the solver the next round uses, and figures for the report."""

    model_config = ConfigDict(frozen=True)

    solver: SolverSpec
    metrics: dict[str, float] = Field(default_factory=dict)


class Trainer(abc.ABC):
    """Trains the solver on the admitted pool. Built with no arguments (``host.trainers.get(name)()``);
    configuration comes from the environment or the trainer's own files."""

    name: ClassVar[str]

    @abc.abstractmethod
    async def train(self, pool: list[Task], rollouts: list[RolloutRow], solver: SolverSpec) -> TrainResult:
        """Train ``solver`` on ``pool`` (the tasks in the pool after this round's review) with
        ``rollouts`` (this round's calibration and review rollouts: rewards, statuses, failures)."""
