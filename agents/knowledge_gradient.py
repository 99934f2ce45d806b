"""Knowledge gradient for top-k identification with a fixed budget (Beta-Bernoulli prior)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np

from agents.base import FIXED_BUDGET, PullOne, ScriptedAgent
from agents.beta_prior import (
    check_bernoulli,
    check_beta_prior,
    posterior,
    posterior_top_k,
)

__all__ = ["KnowledgeGradient", "kg_values"]


def kg_values(alpha: np.ndarray, beta: np.ndarray, k: int, pulls: int) -> np.ndarray:
    """Each arm's KG* value: ``max over m <= pulls`` of ``KG_m(i) / m``.

    ``KG_m(i)`` is the expected gain in the terminal value ``V = sum of the top-k
    posterior means`` from ``m`` more pulls of arm ``i``: with ``c`` the k-th largest
    posterior mean of the other arms, ``KG_m(i) = E[max(mu_i', c)] - max(mu_i, c)``
    where ``mu_i' = (alpha_i + J) / (alpha_i + beta_i + m)``, ``J ~ BetaBinomial(m,
    alpha_i, beta_i)``. ``m`` runs over 1, 2, 4, ... up to ``pulls``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    mu = alpha / (alpha + beta)
    order = np.argsort(-mu, kind="stable")
    ranked = mu[order]
    rank = np.empty_like(order)
    rank[order] = np.arange(mu.shape[0])
    # the k-th largest mean of the *other* arms
    c = np.where(rank < k, ranked[min(k, mu.shape[0] - 1)], ranked[k - 1])[:, None]
    now = np.maximum(mu[:, None], c)
    a, b = alpha[:, None], beta[:, None]
    best = np.zeros(mu.shape[0])
    for m in sorted({1, *(2**e for e in range(1, 12) if 2**e <= pulls), max(pulls, 1)}):
        t = np.arange(m)
        log_p0 = np.sum(np.log((b + t) / (a + b + t)), axis=1, keepdims=True)
        log_ratio = np.log((m - t) / (t + 1)) + np.log((a + t) / (b + m - t - 1))
        log_p = np.concatenate((log_p0, log_p0 + np.cumsum(log_ratio, axis=1)), axis=1)
        pmf = np.exp(log_p)
        pmf /= pmf.sum(axis=1, keepdims=True)
        after = (a + np.arange(m + 1)) / (a + b + m)
        gain = (pmf * np.maximum(after, c)).sum(axis=1, keepdims=True) - now
        best = np.maximum(best, gain[:, 0] / m)
    return best


class KnowledgeGradient(ScriptedAgent):
    """Knowledge gradient (KG*) with a Beta prior: pull the arm of largest value per pull.

    Paper:
        Peter I. Frazier, Warren B. Powell, Savas Dayanik. "A knowledge-gradient policy
        for sequential information collection". SIAM J. Control Optim. 47(5), 2008
        (the KG policy: the one-step Bayes-optimal measurement). KG* (the best value
        per pull over several pulls of one arm, which avoids KG's zero values when one
        pull cannot change the answer): Frazier & Powell, "Paradoxes in learning and
        the marginal value of information", Decision Analysis 7(4), 2010.

    Here the terminal value is the sum of the top-k posterior means (the Bayes-optimal
    answer for aggregate regret is the posterior top k), the prior is Beta(a, b) on
    every Bernoulli mean (the catalog's ``uniform-random`` is a = b = 1, ``beta-random``
    its ``a``, ``b``: :func:`agents.beta_prior.prior_of`), and each decision is one
    pull (:class:`~agents.base.PullOne`; in the batch model one pull per batch, so
    use it with a pull budget). Ties between arms go at random.

    Args:
        a, b: the Beta prior of the means (default 1, 1: ``uniform-random``).
        seed: seeds tie-breaking.

    Setting: fixed budget only; Bernoulli arms only.
    """

    name = "kg"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET})

    def __init__(self, a: float = 1.0, b: float = 1.0, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms only)."""
        check_bernoulli(problem, self.name)
        super().reset(problem, seed=seed)

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def _run(self) -> Generator[PullOne, None, np.ndarray]:
        k = self.problem.k
        while self.pulls_left() > 0 and (self.batches_left() is None or self.batches_left() > 0):
            alpha, beta = posterior(self.a, self.b, self.counts, self.means)
            values = kg_values(alpha, beta, k, self.pulls_left())
            best = np.flatnonzero(values >= values.max() - 1e-12)
            yield PullOne(int(self.rng.choice(best)))
        return self.current_answer()
