"""The trainer seam: a trainer registered in-process runs after each round's review, its solver spec
is what the next round's rollouts use, and its metrics land in run.sqlite and the round summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import pytest

from autoenvscaling.errors import PluginError
from autoenvscaling.executors.jobs import SolverSpec
from autoenvscaling.flywheel.loop import FlywheelConfig
from autoenvscaling.flywheel.rundb import RunDB
from autoenvscaling.gates.base import GateSettings
from autoenvscaling.plugins import hookimpl
from autoenvscaling.trainers.base import Trainer, TrainResult


class RenamingTrainer(Trainer):
    """Points the solver at the next served model name, as a trainer that pushed a new checkpoint
    to the server would; it records what it was given."""

    name = "renaming"
    calls: ClassVar[list[dict[str, Any]]] = []
    requests_before: ClassVar[list[int]] = []
    models: ClassVar[list[str]] = []

    async def train(self, pool, rollouts, solver: SolverSpec) -> TrainResult:  # noqa: ANN001
        RenamingTrainer.calls.append({"pool": [t.name for t in pool], "rollouts": len(rollouts), "model": solver.model})
        RenamingTrainer.requests_before.append(len(RenamingTrainer.models))
        new = solver.model_copy(update={"llm": solver.llm.model_copy(update={"model": f"{solver.model}+1"})})
        return TrainResult(solver=new, metrics={"steps": 1.0, "pool_tasks": float(len(pool))})


class TrainerPlugin:
    @hookimpl
    def autoenvscaling_register_trainers(self, registrar):  # noqa: ANN001
        registrar.add("renaming", RenamingTrainer)


class ModelRecorder:
    """The seeded toy solver, recording the model each request named."""

    def __init__(self, script: Any) -> None:
        self.script = script

    def __call__(self, request: dict[str, Any]) -> Any:
        RenamingTrainer.models.append(request["model"])
        return self.script(request)


def test_the_next_round_uses_the_solver_the_trainer_returned(tmp_path: Path, backend: Any, toy_flywheel: Any,
                                                             seeded_toy_solver: Any) -> None:
    RenamingTrainer.calls.clear(), RenamingTrainer.requests_before.clear(), RenamingTrainer.models.clear()
    config = FlywheelConfig(seed=5, rounds=2, per_round=2, settings=GateSettings(flaky_runs=2), trainer="renaming")
    summaries = toy_flywheel(config, tmp_path / "run", backend, ModelRecorder(seeded_toy_solver), plugins=[TrainerPlugin()])
    assert [c["model"] for c in RenamingTrainer.calls] == ["scripted-solver", "scripted-solver+1"]
    first_round = RenamingTrainer.models[:RenamingTrainer.requests_before[0]]
    second_round = RenamingTrainer.models[RenamingTrainer.requests_before[0]:RenamingTrainer.requests_before[1]]
    assert first_round and set(first_round) == {"scripted-solver"}
    assert second_round and set(second_round) == {"scripted-solver+1"}
    db = RunDB(tmp_path / "run" / "run.sqlite")
    trainings = db.trainings()
    assert [(t.round, t.before.model, t.solver.model) for t in trainings] == \
        [(0, "scripted-solver", "scripted-solver+1"), (1, "scripted-solver+1", "scripted-solver+1+1")]
    assert summaries[1].metrics["training"] == {"trainer": "renaming", "solver_model": "scripted-solver+1+1",
                                                "metrics": {"steps": 1.0, "pool_tasks": trainings[1].metrics["pool_tasks"]}}
    assert RenamingTrainer.calls[0]["rollouts"] == len(db.rollouts(round=0)) > 0
    # A resumed run finds both trainings recorded: it neither trains again nor changes the pool.
    toy_flywheel(config, tmp_path / "run", backend, ModelRecorder(seeded_toy_solver), plugins=[TrainerPlugin()],
                 resume=True)
    assert len(RenamingTrainer.calls) == 2


def test_an_unknown_trainer_is_one_line_naming_the_registered_ones(tmp_path: Path, backend: Any,
                                                                   toy_flywheel: Any, seeded_toy_solver: Any) -> None:
    config = FlywheelConfig(rounds=1, per_round=1, trainer="no-such-trainer")
    with pytest.raises(PluginError, match="unknown trainer .no-such-trainer."):
        toy_flywheel(config, tmp_path / "run", backend, seeded_toy_solver)
