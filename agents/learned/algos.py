"""The stable-baselines3 algorithms a policy can be trained with, and their defaults."""

from __future__ import annotations

from typing import Any

from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm

__all__ = ["ALGOS", "ALGO_DEFAULTS"]

ALGOS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "a2c": A2C, "dqn": DQN}

#: terminal reward, so the discount is close to 1.
ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "ppo": {
        "n_steps": 256,
        "batch_size": 512,
        "n_epochs": 5,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 3e-4,
        "ent_coef": 0.0,
    },
    "a2c": {
        "n_steps": 16,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 7e-4,
        "ent_coef": 0.0,
    },
    "dqn": {
        "buffer_size": 100_000,
        "learning_starts": 2_000,
        "batch_size": 128,
        "gamma": 0.999,
        "train_freq": 4,
        "target_update_interval": 2_000,
        "exploration_fraction": 0.3,
        "exploration_final_eps": 0.02,
        "learning_rate": 2.5e-4,
    },
}
