"""Top-two Thompson sampling for top-k identification (Beta-Bernoulli prior)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np

from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, Pull, ScriptedAgent, check_probability
from agents.beta_prior import check_bernoulli, check_beta_prior, posterior, posterior_top_k

__all__ = ["TopTwoThompson"]


class TopTwoThompson(ScriptedAgent):
    """Top-two Thompson sampling (TTTS) extended from the best arm to the top-k set.

    Paper:
        Daniel Russo. "Simple Bayesian algorithms for best-arm identification".
        Operations Research 68(6), 2020 (COLT 2016), Sec. 4.2 (TTTS): sample a mean
        vector from the posterior; its best arm is the leader; resample until another
        arm is best (the challenger); pull the leader with probability ``beta``, the
        challenger otherwise. For top-m sets, the leader/challenger pair becomes a pair
        of sets (as in the top-two algorithms for top-m identification, e.g. Jourdan,
        Degenne, Kaufmann, "Top two algorithms revisited", NeurIPS 2022, Sec. 5).

    Here: a posterior sample gives the leader set ``L`` (its top k); samples are drawn
    until one gives another top-k set ``C`` (at most ``max_resamples``; if none does,
    the posterior is all but certain and the least-pulled arm of ``L`` is pulled). With
    probability ``beta`` the agent pulls an arm of ``L \\ C`` (a leader the challenger
    drops), else an arm of ``C \\ L``, each at random. The prior is Beta(a, b) on every
    Bernoulli mean (:func:`agents.beta_prior.prior_of` gives the catalog families'),
    and the answer is the posterior top k. In the batch model a batch holds
    ``min(b, budget left)`` such draws (at most ``r`` per arm), from the posterior at
    the start of the batch.

    Args:
        a, b: the Beta prior of the means (default 1, 1: ``uniform-random``).
        beta: probability of pulling the leader side, in (0, 1). Default 1/2 (Russo).
        max_resamples: posterior samples to find a challenger. Default 100.
        seed: seeds the posterior samples.

    Setting: fixed budget (anytime: the posterior top k when the budget ends); in fixed
    confidence it never stops by itself (``max_batches`` truncates). Bernoulli only.
    """

    name = "bayes_ttts"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(
        self,
        a: float = 1.0,
        b: float = 1.0,
        beta: float = 0.5,
        max_resamples: int = 100,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)
        self.beta = check_probability("beta", beta)
        if (
            isinstance(max_resamples, bool)
            or not isinstance(max_resamples, int)
            or max_resamples < 1
        ):
            raise ValueError(f"max_resamples={max_resamples!r} must be an integer >= 1")
        self.max_resamples = max_resamples

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms only)."""
        check_bernoulli(problem, self.name)
        super().reset(problem, seed=seed)

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def _choose(self, alpha: np.ndarray, beta: np.ndarray) -> int:
        k, rng = self.problem.k, self.rng
        leader = np.argpartition(-rng.beta(alpha, beta), k - 1)[:k]
        lead = set(leader.tolist())
        for _ in range(self.max_resamples):
            other = set(np.argpartition(-rng.beta(alpha, beta), k - 1)[:k].tolist())
            if other != lead:
                side = lead - other if rng.random() < self.beta else other - lead
                return int(rng.choice(sorted(side)))
        return int(leader[np.argmin(self.counts[leader])])

    def _run(self) -> Generator[Pull, None, np.ndarray]:
        p = self.problem
        r = p.repeat_limit if p.repeat_limit is not None else p.budget
        while True:
            left = self.pulls_left()
            batches = self.batches_left()
            if (left is not None and left <= 0) or (batches is not None and batches <= 0):
                break
            size = min(c for c in (p.batch_size, left, p.n_arms * r) if c is not None)
            alpha, beta = posterior(self.a, self.b, self.counts, self.means)
            reps = np.zeros(p.n_arms, dtype=np.int64)
            for _ in range(size):
                arm = self._choose(alpha, beta)
                if reps[arm] >= r:
                    arm = int(np.flatnonzero(reps < r)[0])
                reps[arm] += 1
            arms = np.flatnonzero(reps)
            yield Pull(arms, reps[arms])
        return self.current_answer()
