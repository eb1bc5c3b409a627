"""The flywheel's training phase with GRPO (``autoenvscaling run --train``).

After each round's pool review the solver's model is trained on the pool for a few GRPO steps; the
round's training folder (``<run>/training/round-<r>/``) holds its checkpoints, metrics and the
trained model, which the next round's solver loads. An interrupted training resumes from its last
checkpoint when the run is resumed. Held-out tasks (fresh tasks of the pool's families, generated
with seeds the flywheel never uses) measure the solver before and after.

Options (``run --train-steps N --train-held-out K --train-roles both``, or
``FlywheelConfig.trainer_options``): any ``GRPOSettings`` field by name, plus ``held_out`` (how many
held-out tasks). With ``roles`` both (or proposer) the solver's model is also trained as the
proposer (rewards from the admission gates), and the next round's LLM proposers use it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from autoenvscaling.api import ConfigError, Trainer, TrainerContext, TrainResult, UsageError

from .settings import GRPOSettings

if TYPE_CHECKING:
    from autoenvscaling.api import PluginHost, RolloutRow, SolverSpec, Task

FLYWHEEL_DEFAULTS: dict[str, Any] = {"steps": 4, "held_out": 4}
HELD_OUT_SEED = 900_000_000
"""Held-out tasks are generated from seeds at and above this; the flywheel's own seeds stay far below."""


def held_out_tasks(pool: list[Task], host: PluginHost, count: int) -> list[Task]:
    """``count`` fresh easy tasks of the families in ``pool`` (round robin), from their domains'
    generators. Tasks without a procedural family are skipped."""
    families = sorted({(t.provenance.domain, t.provenance.family) for t in pool
                       if t.provenance.domain and t.provenance.family})
    out: list[Task] = []
    names = {t.name for t in pool}
    for i in range(count * 3):
        if len(out) >= count or not families:
            break
        domain_name, family = families[i % len(families)]
        assert domain_name is not None and family is not None
        if domain_name not in host.domains.names():
            continue
        task = host.domains.get(domain_name)().generate(family, seed=HELD_OUT_SEED + i, difficulty="easy")
        if task.name not in names:
            out.append(task)
            names.add(task.name)
    return out


class GRPOFlywheelTrainer(Trainer):
    name: ClassVar[str] = "grpo"

    def __init__(self) -> None:
        self.context: TrainerContext | None = None
        self.host: PluginHost | None = None

    def configure(self, context: TrainerContext, host: PluginHost) -> None:
        self.context, self.host = context, host

    def settings(self, solver: SolverSpec | None = None) -> tuple[GRPOSettings, int]:
        """The run's options over the defaults; turns and tokens per turn follow the solver's own
        (``run --solver-turns/--solver-tokens``), so it is trained as it is run."""
        assert self.context is not None
        own: dict[str, Any] = {}
        if solver is not None and solver.limits is not None:
            own["max_turns"] = solver.limits.max_turns
        if solver is not None and solver.max_tokens_per_turn is not None:
            own["tokens_per_turn"] = solver.max_tokens_per_turn
        options = {**FLYWHEEL_DEFAULTS, **own, **self.context.options}
        held_out = int(options.pop("held_out"))
        unknown = sorted(set(options) - set(GRPOSettings.model_fields))
        if unknown:
            raise UsageError(f"unknown trainer option(s): {', '.join(unknown)}",
                             hint=f"GRPOSettings fields: {', '.join(sorted(GRPOSettings.model_fields))}")
        options.setdefault("seed", self.context.seed * 1000 + self.context.round)
        return GRPOSettings(**options), held_out

    async def train(self, pool: list[Task], rollouts: list[RolloutRow], solver: SolverSpec) -> TrainResult:
        if self.context is None or self.host is None:
            raise ConfigError("the grpo trainer was not configured", hint="the flywheel calls configure() first")
        if solver.llm.backend_name() != "transformers":
            raise ConfigError(f"--train trains the solver's weights here, but the solver is served ({solver.llm.base_url})",
                              hint="use a local solver (--solver-model embedded or a checkpoint path), "
                                   "or train the served model with its own trainer")
        if not pool:
            return TrainResult(solver=solver, metrics={"steps": 0.0, "skipped_empty_pool": 1.0})
        settings, held_out = self.settings(solver)
        return await asyncio.to_thread(self._train, pool, solver, settings, held_out)

    def _train(self, pool: list[Task], solver: SolverSpec, settings: GRPOSettings, held_out: int) -> TrainResult:
        from autoenvscaling.api import make_backend

        from .training import GRPORun

        context, host = self.context, self.host
        assert context is not None and host is not None
        run = GRPORun(pool, model=solver.llm.model, out=context.workdir, settings=settings, host=host,
                      backend_factory=lambda: make_backend(context.backend, host, context.policy),
                      held_out=held_out_tasks(pool, host, held_out))
        outcome = run.run(resume=(context.workdir / "settings.json").is_file())
        trained = solver.model_copy(update={"llm": solver.llm.model_copy(update={"model": str(outcome.model)})})
        history = [*outcome.history, *(e.row() for e in outcome.evaluations)]
        # One model in both roles: the LLM proposers of the next round propose with the trained weights too.
        proposer = trained.llm if settings.roles != "solver" else None
        return TrainResult(solver=trained, metrics=outcome.summary(), history=sorted(history, key=lambda r: r["step"]),
                           proposer=proposer)
