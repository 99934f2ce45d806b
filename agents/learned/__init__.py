"""Learned policies: play stable-baselines3 models as agents, and train them.

One concern per module, imported in this order (each imports only modules above it;
``tests/test_learned_layout.py`` checks there is no cycle):

| module | concern | needs |
| --- | --- | --- |
| ``families`` | ``PRESETS``, a family's training kwargs, its evaluation env | - |
| ``metadata`` | what a saved model carries, reading it back | - |
| ``adapter`` | ``PolicyAgent``, ``SampledPolicyAgent``: a policy plays any env | - |
| ``algos`` | ``ALGOS`` (PPO, A2C, DQN) and their defaults | SB3 |
| ``networks`` | ``ArmSetPolicy``, the permutation-equivariant actor-critic | torch, SB3 |
| ``vec_env`` | the vector envs training runs on | SB3 |
| ``saving`` | ``save_policy``, ``load_policy``, ``policy_agent`` | SB3 |
| ``evaluation`` | held-out evaluation, ``Summary``, ``compare`` | - |
| ``callbacks`` | progress, time limits, periodic validation | SB3 |
| ``imitation`` | DAgger: fit a policy to a prior-aware teacher (KG*, the exact DP) | torch, SB3 |
| ``exact`` | a trained policy as a level policy (``agents.bayesian.exact`` evaluates it) | torch |
| ``training`` | ``train``, ``TrainResult`` | torch, SB3 |
| ``fast`` | the fast path: ``fast_train``, ``FastConfig`` (PPO, A2C, native envs) | torch, SB3 |
| ``cli`` | ``add_train_arguments``, ``train_from_args`` | torch, SB3 |

"-": numpy and Gymnasium only. Importing this package (or ``agents``) loads only the
adapter; the other names are imported on first use (``agents.learned.train`` loads
torch and stable-baselines3).
"""

from __future__ import annotations

import importlib
from typing import Any

from agents.learned.adapter import PolicyAgent, SampledPolicyAgent

_LAZY = {
    "PRESETS": "families",
    "evaluation_env": "families",
    "training_kwargs": "families",
    "METADATA_FORMAT": "metadata",
    "policy_metadata": "metadata",
    "saved_agent_kwargs": "metadata",
    "ALGOS": "algos",
    "ArmSetPolicy": "networks",
    "VecFlatObservation": "vec_env",
    "VecScaleReward": "vec_env",
    "VecPosteriorReward": "vec_env",
    "ImitationSettings": "imitation",
    "imitate": "imitation",
    "level_policy": "exact",
    "make_training_env": "vec_env",
    "load_policy": "saving",
    "policy_agent": "saving",
    "save_policy": "saving",
    "Summary": "evaluation",
    "TEST_SEED0": "evaluation",
    "VALIDATION_SEED0": "evaluation",
    "compare": "evaluation",
    "evaluate": "evaluation",
    "summarize": "evaluation",
    "TrainConfig": "training",
    "TrainResult": "training",
    "train": "training",
    "add_train_arguments": "cli",
    "train_from_args": "cli",
}

__all__ = ["PolicyAgent", "SampledPolicyAgent", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"agents.learned.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'agents.learned' has no attribute {name!r}")
