"""A trained one-pull policy as a level policy for exact evaluation (agents.bayesian.exact).

:meth:`agents.bayesian.exact.BetaBernoulliDP.evaluate` takes a Python callable
``policy(alpha, beta, k, pulls_left) -> weights`` over a whole level of posterior states.
:func:`level_policy` builds it from a stable-baselines3 policy and its observation
transform: every state becomes the observation the environment would show after those
pulls (``counts``, empirical ``means``, ``remaining`` = pulls left / budget, ``phase`` 0),
the network is run on a batch of states, and the greedy action (``predict(...,
deterministic=True)``: the most likely arm) gets weight 1. Arms of the same posterior
get equal logits (the arm-set network is permutation-equivariant), so a tie among them
is a tie of equal continuation values; a tie between arms of different posteriors is
averaged (the greedy player takes the first, so exact values then assume random
tie-breaking).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bandit_envs.wrappers import FlatObservation

__all__ = ["level_policy"]


def level_policy(policy: Any, transform: FlatObservation, budget: int, prior: tuple[float, float]):
    """``policy(alpha, beta, k, pulls_left) -> weights`` of a greedy one-pull policy.

    Args:
        policy: an SB3 policy (``model.policy``) of ``TopK-v0``: ``Discrete(n + 1)``, whose
            last action (stop) must never be its greedy choice (a ``ValueError`` says so),
            or ``Discrete(n)``.
        transform: its observation transform.
        budget: the family's pull budget (``remaining`` is ``pulls_left / budget``).
        prior: the Beta prior ``(a, b)`` of the evaluation (successes are ``alpha - a``).
    """
    a, b = float(prior[0]), float(prior[1])

    def weights(alpha: np.ndarray, beta: np.ndarray, k: int, pulls_left: int) -> np.ndarray:
        wins = np.rint(np.asarray(alpha) - a)
        counts = wins + np.rint(np.asarray(beta) - b)
        means = np.divide(wins, counts, out=np.zeros_like(wins), where=counts > 0)
        rows = counts.shape[0]
        obs = {
            "counts": counts.astype(np.int64),
            "means": means,
            "remaining": np.full((rows, 1), pulls_left / budget),
            "phase": np.zeros((rows, 1)),
        }
        x = torch.as_tensor(transform(obs), dtype=torch.float32)
        with torch.no_grad():
            logits = policy.get_distribution(x).distribution.logits.cpu().numpy()
        n = counts.shape[1]
        arms = logits[:, :n]
        if logits.shape[1] > n and np.any(logits[:, n] > arms.max(axis=1)):
            raise ValueError(
                f"the policy's greedy action is the stop action (index {n}) with "
                f"{pulls_left} pulls left; exact evaluation covers policies that spend "
                "the whole budget"
            )
        return (arms >= arms.max(axis=1, keepdims=True)).astype(np.float64)

    return weights
