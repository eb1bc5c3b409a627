"""The reward function GRPOTrainer calls: the environment's reward of each rollout, which the rollout
function passes along as the ``env_reward`` column (the verifier's score for a solver rollout, the
admission outcome for a proposal), scaled per role when the run asks for it."""

from __future__ import annotations

import statistics
from typing import Any


def role_scaled(rewards: list[float | None], roles: list[str]) -> list[float | None]:
    """Each reward divided by the spread (population standard deviation) of its role's rewards in
    the batch. GRPO then subtracts each group's mean, so a rollout's advantage is its distance from
    its group's mean in units of its own role's spread: proposer rewards (-1 .. +1) and solver
    rewards (0 .. 1) weigh the same. A role whose rewards do not vary is left as it is (its groups'
    advantages are zero anyway). None (an unscored rollout) stays None."""
    spread: dict[str, float] = {}
    for role in set(roles):
        mine = [r for r, o in zip(rewards, roles) if o == role and r is not None]
        sd = statistics.pstdev(mine) if len(mine) > 1 else 0.0
        spread[role] = sd if sd > 1e-6 else 1.0
    return [None if r is None else r / spread[o] for r, o in zip(rewards, roles)]


def make_reward_function(scale: str) -> Any:
    """The reward function for GRPOTrainer (its name is the metric's name in TRL's logs)."""

    def env_reward(prompts: list[Any], completions: list[Any], env_reward: list[float | None],
                   role: list[str], **_: Any) -> list[float | None]:
        if scale == "role":
            return role_scaled(list(env_reward), list(role))
        return list(env_reward)

    return env_reward
