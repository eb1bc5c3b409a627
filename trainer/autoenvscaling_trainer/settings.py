"""What a GRPO training run is configured with. One frozen model, so a run's configuration is data
(saved next to its checkpoints; a resumed run must be given the same values)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from autoenvscaling.api import ROLLOUT_TEMPERATURE, UsageError

Role = Literal["solver", "proposer"]
Roles = Literal["solver", "proposer", "both"]
ScaleRewards = Literal["role", "group", "none"]
Generation = Literal["auto", "transformers", "vllm-colocate", "vllm-server"]
ROLE_REWARDS = {"admitted": 1.0, "failed_calibration": -0.25, "failed_validation": -1.0}
"""The proposer's reward per outcome (docs/architecture.md, Metrics)."""


class GRPOSettings(BaseModel):
    """``steps``: optimizer steps. Each step rolls out ``groups`` groups of ``group_size`` rollouts
    (one group per task or proposer prompt). ``roles``: which role's rollouts a step trains on;
    ``proposer_share``: with both roles, the fraction of a step's groups that are proposer groups.
    ``dynamic_sampling``: a group whose rewards are all equal teaches GRPO nothing, so it is dropped
    and replaced by a group on another task, at most ``max_resamples`` times per slot (DAPO's
    oversampling); a slot that finds none keeps its last group, whose advantages are zero.
    ``scale_rewards``: "role" divides each reward by the spread of its role's rewards in the batch
    (advantages normalised per role, so a role with large rewards cannot drown the other), "group"
    is GRPO's per-group spread, "none" only subtracts the group mean.
    ``generation``: "auto" uses vLLM (colocated) when CUDA and vllm are present, else transformers.
    ``temperature``: what rollouts sample at (and the loss recomputes log-probabilities at); by
    default the flywheel's rollout temperature, the one the pool was calibrated at, so training
    groups spread as calibration measured (at 1.0 a 135M model scored 0 on tasks it solves at 0.7).
    """

    model_config = ConfigDict(frozen=True)

    steps: int = Field(default=10, ge=1)
    group_size: int = Field(default=4, ge=2)
    groups: int = Field(default=2, ge=1)
    learning_rate: float = Field(default=1e-6, gt=0)
    beta: float = Field(default=0.0, ge=0)
    temperature: float = Field(default=ROLLOUT_TEMPERATURE, gt=0)
    max_turns: int = Field(default=2, ge=1)
    tokens_per_turn: int = Field(default=64, ge=1)
    observation_chars: int = Field(default=1200, ge=100)
    command_timeout_sec: float = Field(default=20.0, gt=0)
    rollout_timeout_sec: float = Field(default=300.0, gt=0)
    dynamic_sampling: bool = True
    max_resamples: int = Field(default=2, ge=0)
    scale_rewards: ScaleRewards = "role"
    roles: Roles = "solver"
    proposer_share: float = Field(default=0.5, gt=0, lt=1)
    proposer_tokens: int = Field(default=768, ge=16)
    proposer_calibration_rollouts: int = Field(default=2, ge=2)
    save_every: int = Field(default=1, ge=1)
    eval_rollouts: int = Field(default=2, ge=1)
    eval_every: int = Field(default=0, ge=0)
    generation: Generation = "auto"
    seed: int = 0

    @model_validator(mode="after")
    def _roles_fit(self) -> GRPOSettings:
        if self.roles == "both" and self.groups < 2:
            raise UsageError("training both roles needs at least 2 groups per step (one per role)",
                             hint="pass --groups 2 or more, or --roles solver")
        return self

    def role_groups(self) -> dict[Role, int]:
        """How many of a step's groups each role gets."""
        if self.roles != "both":
            return {self.roles: self.groups}
        proposer = min(self.groups - 1, max(1, round(self.groups * self.proposer_share)))
        return {"solver": self.groups - proposer, "proposer": proposer}
