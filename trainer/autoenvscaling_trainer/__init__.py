"""AutoEnvScaling's trainer: multi-turn GRPO with TRL on admitted environments.

This module is what the ``autoenvscaling`` entry point loads, so it imports nothing heavy: it
registers the ``grpo`` trainer (the flywheel's training phase, ``autoenvscaling run --train``) by
import path, the ``train`` command, and a doctor check for TRL. torch, transformers and trl load
only when training starts.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

declare(
    globals(),
    trainers={"grpo": ("autoenvscaling_trainer.flywheel:GRPOFlywheelTrainer",
                       "multi-turn GRPO with TRL on the pool's tasks (a local transformers solver)")},
    prerequisites={"trl": ("autoenvscaling_trainer.doctor:TRLPrerequisite",
                           "TRL, transformers and torch for `autoenvscaling train` and `run --train`")},
    commands=["autoenvscaling_trainer.cli:train"],
)
