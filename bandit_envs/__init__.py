"""Gymnasium environments for top-k arm identification in stochastic bandits.

``import bandit_envs`` registers:

* ``TopK-v0``: one pull per step (:class:`~bandit_envs.top_k.TopKEnv`);
* ``TopK-Batch-v0``: the (b, r)-batch model of Jun et al. 2016
  (:class:`~bandit_envs.top_k_batch.TopKBatchEnv`);
* ``TopK-PullByPull-v0``: the same batch model, each batch composed one pull per step,
  with exact action masks for masked policies
  (:class:`~bandit_envs.pull_by_pull.TopKPullByPullEnv`).

The first two have native vector versions for ``gym.make_vec(...,
vectorization_mode="vector_entry_point")``; every env has ``action_masks()`` in the
form sb3-contrib's ``MaskablePPO`` reads.
"""

from __future__ import annotations

from gymnasium.envs.registration import register, registry

from bandit_envs import instances, kernel_cache, scoring
from bandit_envs.instances import Arms, Instance
from bandit_envs.problem import Problem
from bandit_envs.pull_by_pull import TopKPullByPullEnv
from bandit_envs.spaces import BatchPulls
from bandit_envs.top_k import TopKEnv
from bandit_envs.top_k_batch import TopKBatchEnv

# Before any kernel runs: drop numba caches compiled from other sources.
kernel_cache.refresh_once()

__all__ = [
    "Arms",
    "BatchPulls",
    "Instance",
    "Problem",
    "TopKBatchEnv",
    "TopKEnv",
    "TopKPullByPullEnv",
    "instances",
    "scoring",
]

__version__ = "0.1.0"


def _register_envs() -> None:
    """Register the environment ids (idempotent)."""
    # Standard model
    # --------------
    if "TopK-v0" not in registry:
        register(
            id="TopK-v0",
            entry_point="bandit_envs.top_k:TopKEnv",
            vector_entry_point="bandit_envs.vector:TopKVectorEnv",
        )
    # (b, r)-batch model
    # ------------------
    if "TopK-Batch-v0" not in registry:
        register(
            id="TopK-Batch-v0",
            entry_point="bandit_envs.top_k_batch:TopKBatchEnv",
            vector_entry_point="bandit_envs.vector:TopKBatchVectorEnv",
        )
    if "TopK-PullByPull-v0" not in registry:
        register(
            id="TopK-PullByPull-v0",
            entry_point="bandit_envs.pull_by_pull:TopKPullByPullEnv",
        )


_register_envs()
