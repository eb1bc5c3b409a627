"""AutoEnvScaling's trainer: multi-turn GRPO with TRL on admitted environments.

This module is what the ``autoenvscaling`` entry point loads, so it imports nothing heavy: it
registers the ``grpo`` trainer (the flywheel's training phase, ``autoenvscaling run --train``) by
import path, the ``train`` command, and a doctor check for TRL. torch, transformers and trl load
only when training starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autoenvscaling.plugins import hookimpl

if TYPE_CHECKING:
    import click

    from autoenvscaling.plugins.prerequisites import Prerequisite
    from autoenvscaling.plugins.registry import Registrar
    from autoenvscaling.trainers.base import Trainer

__version__ = "0.1.0"


@hookimpl
def autoenvscaling_register_trainers(registrar: Registrar[Trainer]) -> None:
    registrar.add("grpo", "autoenvscaling_trainer.flywheel:GRPOFlywheelTrainer",
                  description="multi-turn GRPO with TRL on the pool's tasks (a local transformers solver)")


@hookimpl
def autoenvscaling_register_commands(cli: click.Group) -> None:
    from .cli import train

    cli.add_command(train)


@hookimpl
def autoenvscaling_register_prerequisites(registrar: Registrar[Prerequisite]) -> None:
    registrar.add("trl", "autoenvscaling_trainer.doctor:TRLPrerequisite",
                  description="TRL, transformers and torch for `autoenvscaling train` and `run --train`")
