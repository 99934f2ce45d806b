"""A plain agent: no base class, only the act/observe protocol."""

from __future__ import annotations

import numpy as np

__all__ = ["RoundRobinPlain"]


# --8<-- [start:plain]
class RoundRobinPlain:
    """Pull the arms in turn, one pull per step; answer the empirical top k."""

    settings = frozenset({"fixed_budget"})  # it has no stopping rule

    def __init__(self, *, seed: int | None = None) -> None:
        self.seed = seed

    def reset(self, problem, *, seed=None) -> None:
        self.problem, self.t = problem, 0

    def act(self, observation):
        n, k = self.problem.n_arms, self.problem.k
        if observation.get("phase", 0) == 1:  # TopK-Batch-v0's answer step
            action = np.zeros(n, dtype=np.int64)
            action[np.argsort(-observation["means"], kind="stable")[:k]] = 1
            return action
        arm, self.t = self.t % n, self.t + 1
        if self.problem.action_format == "arm":  # TopK-v0: an arm index
            return arm
        action = np.zeros(n, dtype=np.int64)  # TopK-Batch-v0: pulls per arm
        action[arm] = 1
        return action

    def observe(self, action, observation, reward, terminated, truncated, info):
        pass  # all it needs is in the next observation
        # --8<-- [end:plain]
