"""Knowledge gradient that fills each (b, r)-batch by fantasised pulls (Beta-Bernoulli prior).

The ``kg`` agent (:mod:`agents.bayesian.knowledge_gradient`) makes one pull per batch.
Here a batch of the (b, r)-batch model (Jun et al. 2016) is filled one pull at a time,
each pull chosen by KG* on a *fantasy* posterior that already holds the batch's earlier
pulls, with the outcome each of them is believed to have:

1. the batch's size: ``min(b, pulls left, n r)`` (the limits the problem sets);
2. its ``j``-th pull goes to the arm of largest KG* value (:func:`agents.bayesian.
   knowledge_gradient.choose_among`) among the arms with fewer than ``r`` pulls in the
   batch so far, on the fantasy posterior;
3. the fantasy: that pull is believed to return its posterior mean ``mu_i = alpha_i /
   (alpha_i + beta_i)``, so ``Beta(alpha_i, beta_i)`` becomes ``Beta(alpha_i + mu_i,
   beta_i + 1 - mu_i)`` (the "kriging believer" of Ginsbourger, Le Riche & Carraro 2010,
   Sec. 3.2, in conjugate form: a fractional success count). It is also the expected
   posterior parameters after one pull: the mean stays, the variance shrinks, so the
   arm's KG* falls and the next pulls spread over the arms whose information the batch
   does not yet buy;
4. the batch is played, and the real posterior replaces the fantasy.

KG*'s look-ahead ``m`` (one arm pulled ``m`` more times) runs up to the most pulls one
arm can still get: ``min(pulls left after the batch's earlier pulls, r x batches left
(this one included))`` (the second only with ``max_batches``), at least 1.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent
from agents.bayesian.beta_prior import (
    check_bernoulli,
    check_beta_prior,
    posterior_into,
    posterior_top_k,
)
from agents.bayesian.knowledge_gradient import choose_among

__all__ = ["BatchKnowledgeGradient", "as_request"]


@numba.njit(cache=True)
def fill(alpha, beta, k, size, horizon, r, rng, reps, arms, times, scratch):
    """Fill one batch of ``size`` pulls (module docstring): returns ``m``, the batch being
    ``times[:m]`` pulls of ``arms[:m]`` (increasing arms), and ``arms[size - 1]`` the last
    pull's arm.

    ``alpha``, ``beta`` (float64[n]): the posterior, overwritten with the fantasy;
    ``horizon``: the look-ahead before the batch, ``r``: the repeat limit (-1: none);
    ``reps`` (int64[n], zeros): left zeros; ``scratch``: ``(mu, c, val, table, room)``.
    """
    mu, c, val, table, room = scratch
    room[:] = 1
    last = -1
    for j in range(size):
        arm = choose_among(alpha, beta, k, max(horizon - j, 1), room, rng, mu, c, val, table)
        reps[arm] += 1
        if r >= 0 and reps[arm] >= r:
            room[arm] = 0
        mean = alpha[arm] / (alpha[arm] + beta[arm])
        alpha[arm] += mean
        beta[arm] += 1.0 - mean
        last = arm
    return as_request(reps, arms, times), last


@numba.njit(cache=True, _nrt=False)
def as_request(reps, arms, times):
    """A batch's pulls per arm (``reps``, int64[n]) as a request: ``times[:m]`` pulls of
    ``arms[:m]`` (increasing arms); returns ``m`` and leaves ``reps`` zeros."""
    m = 0
    for i in range(reps.shape[0]):
        if reps[i] > 0:
            arms[m] = i
            times[m] = reps[i]
            reps[i] = 0
            m += 1
    return m


@numba.njit
def run(ctx, prm):
    """KG* with batch fill (``prm = [a, b]``, the Beta prior), until the budget ends."""
    a, b = prm[0], prm[1]
    iv = ctx.iv
    n, k, r = iv[engine.N], iv[engine.K], iv[engine.R]
    alpha, beta = np.empty(n), np.empty(n)
    size = 1
    while size < 2 * n:
        size *= 2
    scratch = (
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(size, dtype=np.int64),
        np.ones(n, dtype=np.int64),
    )
    reps = np.zeros(n, dtype=np.int64)
    arms = np.empty(n, dtype=np.int64)
    times = np.empty(n, dtype=np.int64)
    while True:
        left = engine.pulls_left(ctx)
        batch = left
        for cap in (iv[engine.B], n * r if r >= 0 else -1):
            if cap >= 0 and cap < batch:
                batch = cap
        horizon = left
        batches = engine.batches_left(ctx)
        if batches >= 0:
            per_arm = r if r >= 0 else left
            horizon = min(horizon, per_arm * batches)
        posterior_into(a, b, ctx.counts, ctx.means, alpha, beta)
        m, last = fill(alpha, beta, k, batch, horizon, r, ctx.rng, reps, arms, times, scratch)
        if batch == 1:
            yield last
        else:
            yield engine.request_pull(ctx, arms[:m], times[:m])


class BatchKnowledgeGradient(ScriptedAgent):
    """Knowledge gradient (KG*) with a Beta prior, each batch filled by fantasised pulls.

    Paper:
        KG* for top-k with the terminal value "sum of the top-k posterior means": Frazier,
        Powell & Dayanik, SIAM J. Control Optim. 47(5), 2008, and Frazier & Powell,
        Decision Analysis 7(4), 2010 (as in :class:`~agents.bayesian.knowledge_gradient.
        KnowledgeGradient`). The batch is filled by the "kriging believer" heuristic of
        David Ginsbourger, Rodolphe Le Riche, Laurent Carraro, "Kriging is well-suited to
        parallelize optimization", in Computational Intelligence in Expensive
        Optimization Problems, Springer 2010, Sec. 3.2 (choose the next point as if the
        earlier points of the batch had returned their posterior means). The batch
        model: Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu, "Top arm
        identification in multi-armed bandits with batch arm pulls", AISTATS 2016. A
        batch KG proper (q-KG, the value of the whole batch at once: Jian Wu, Peter I.
        Frazier, "The parallel knowledge gradient method for batch Bayesian
        optimization", NeurIPS 2016) is not what is computed here: the batch is built
        greedily, one KG* choice per pull.

    Each batch: ``min(b, pulls left, n r)`` pulls, the ``j``-th to the arm of largest
    KG* among the arms with fewer than ``r`` pulls in the batch, on the posterior in
    which each earlier pull of the batch returned its posterior mean (``Beta(alpha +
    mu, beta + 1 - mu)``: the mean stays, the variance shrinks); KG*'s look-ahead runs
    up to ``min(pulls left after those pulls, r x batches left)`` (module docstring).
    With one pull per batch it is the ``kg`` agent. The prior is Beta(a, b) on every
    Bernoulli mean (:func:`agents.bayesian.beta_prior.prior_of`); the answer is the
    posterior top k. Values within ``1e-12`` are tied, ties go at random. Compiled
    (:func:`run`); a batch of ``b`` pulls costs ``b`` KG* decisions.

    Args:
        a: the Beta prior's first parameter (default 1: with ``b = 1``, ``uniform-random``).
        b: the Beta prior's second parameter (default 1).
        seed: seeds tie-breaking.

    Setting: fixed budget (a pull budget, and ``max_batches`` if set); Bernoulli arms only.
    """

    name = "kg_batch"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET})
    kernel = staticmethod(run)

    def __init__(self, a: float = 1.0, b: float = 1.0, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)

    def params(self) -> np.ndarray:
        return np.array([self.a, self.b])

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms, fixed budget)."""
        check_bernoulli(problem, self.name)
        super().reset(problem, seed=seed)  # (refuses fixed confidence first)

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def __repr__(self) -> str:
        return f"BatchKnowledgeGradient(a={self.a}, b={self.b}, seed={self.seed})"
