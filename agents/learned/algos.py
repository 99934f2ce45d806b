"""The stable-baselines3 algorithms a policy can be trained with, and their defaults.

PPO, A2C and DQN come from stable-baselines3; RecurrentPPO (an LSTM policy) and
MaskablePPO (action masks) from sb3-contrib, listed only when it is installed
(``pip install 'topk-bandit-envs[rl]'``).
"""

from __future__ import annotations

from typing import Any

from stable_baselines3 import A2C, DQN, PPO
from stable_baselines3.common.base_class import BaseAlgorithm

__all__ = [
    "ALGOS",
    "ALGO_DEFAULTS",
    "ALGO_NAMES",
    "DEFAULT_POLICY",
    "DISCRETE_ONLY",
    "MASKABLE",
    "RECURRENT",
]

ALGOS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "a2c": A2C, "dqn": DQN}
try:
    from sb3_contrib import MaskablePPO, RecurrentPPO
except ImportError:  # pragma: no cover - depends on the install
    pass
else:
    ALGOS.update(recurrent_ppo=RecurrentPPO, maskable_ppo=MaskablePPO)

#: Every algorithm name (those of sb3-contrib too, installed or not).
ALGO_NAMES = ("a2c", "dqn", "maskable_ppo", "ppo", "recurrent_ppo")
#: Algorithms that need a ``Discrete`` action space (``TopK-v0``, ``TopK-PullByPull-v0``).
DISCRETE_ONLY = frozenset({"dqn"})
#: Algorithms that read the env's ``action_masks()`` (and need them to play).
MASKABLE = frozenset({"maskable_ppo"})
#: Algorithms whose policy carries a state across steps (an LSTM).
RECURRENT = frozenset({"recurrent_ppo"})
#: The policy each algorithm trains by default: ``"arm-set"`` (the permutation-equivariant
#: network, :mod:`agents.learned.networks`) for the actor-critics that take it, else
#: ``"mlp"`` (DQN's ``MlpPolicy``; RecurrentPPO's ``MlpLstmPolicy``).
DEFAULT_POLICY = {
    "ppo": "arm-set",
    "a2c": "arm-set",
    "maskable_ppo": "arm-set",
    "dqn": "mlp",
    "recurrent_ppo": "mlp",
}

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
    "recurrent_ppo": {
        "n_steps": 128,
        "batch_size": 256,
        "n_epochs": 5,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 3e-4,
        "ent_coef": 0.0,
        # a small LSTM (SB3-contrib's default is 256 units): one CPU thread per run
        "policy_kwargs": {"lstm_hidden_size": 64, "net_arch": [64]},
    },
    "maskable_ppo": {
        "n_steps": 256,
        "batch_size": 512,
        "n_epochs": 5,
        "gamma": 0.999,
        "gae_lambda": 0.95,
        "learning_rate": 3e-4,
        "ent_coef": 0.0,
    },
}
