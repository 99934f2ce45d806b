"""The tiny learned family the runner's training tests share (a few hundred steps)."""

from __future__ import annotations

#: A 4-arm Beta(5, 5) family, k = 2, 16 pulls.
FAMILY = {
    "instance": "beta-random",
    "instance_params": {"a": 5.0, "b": 5.0},
    "n_arms": 4,
    "k": 2,
    "budget": 16,
}
#: PPO settings for trainings of 64 steps on 2 envs.
TINY = {"n_steps": 16, "batch_size": 32, "n_epochs": 1}
