"""BatchRacing: Racing for top-k arms in the (b, r)-batch model (Jun et al. 2016, Alg. 2)."""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    Batch,
    Request,
    ScriptedAgent,
    check_probability,
)
from agents.confidence import jun_deviation
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = ["BatchRacing"]


class BatchRacing(ScriptedAgent):
    """Racing with batch pulls: sample the survivors evenly, accept/reject by confidence bounds.

    Paper:
        Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu. "Top arm
        identification in multi-armed bandits with batch arm pulls". AISTATS 2016
        (JMLR W&CP 51), Algorithm 2 (BatchRacing), confidence bounds eq. (2), batch
        complexity Theorem 1 / eq. (7). With b = r = 1 it is the Racing algorithm
        (Maron & Moore 1994; Heidrich-Meisner & Igel 2009).

    The algorithm keeps the surviving arms ``S`` (initially all), the accepted ``A`` and
    the rejected ``R``. Every round it makes ONE batch of RoundRobin (Alg. 1) over ``S``
    (``yield Batch(S)``; the base class runs RoundRobin), then with
    ``k_t = k - |A|`` it accepts every ``i in S`` with
    ``L_i > max^(k_t + 1)_{j in S} U_j`` and rejects every ``i in S`` with
    ``U_i < max^(k_t)_{j in S} L_j`` (both from the same round's statistics) and
    removes them from ``S``. ``L_i, U_i = mean_i -/+ D(T_i, omega)`` with
    ``D(t, omega) = sqrt(4 log(log2(2t) / omega) / t)`` and ``omega = sqrt(delta / (6n))``
    (eq. 2, :func:`agents.confidence.jun_deviation`).

    Args:
        delta: target failure probability, in (0, 1). Paper's experiments: 0.1.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (the algorithm's own stopping rule; the episode's
    ``max_batches`` may truncate it) and fixed budget (anytime: when the budget ends
    the answer is :meth:`current_answer`).

    Departures from the paper, and why:

    * Stopping: the paper loops ``while S is not empty`` and outputs ``A``. We stop as
      soon as ``|A| = k``, or when the undecided arms number exactly ``k - |A|`` (they
      are all top-k: accept them); the literal loop would spend one more batch to
      accept them formally (paper-notes, "Ambiguities"). The returned set is the same.
    * Sub-Gaussian rewards: eq. (2) is written for rewards in [0, 1] (sigma = 1/2);
      the width is scaled by ``2 sigma`` with ``sigma = problem.sigma`` (Lemma 1 holds
      for any sigma-sub-Gaussian reward), so Bernoulli rewards use eq. (2) exactly.
    * RoundRobin line 5 reads ``a_l <= r``; the scheduler uses ``a_l < r`` (the
      paper's evident intent: at most r pulls of an arm per batch).
    * Ties in RoundRobin and in :meth:`current_answer` are broken uniformly at random
      (the paper: "arbitrarily").
    * Speed only: the widths ``D(t, omega)`` depend on ``t`` alone, so they are read
      from a table of :func:`~agents.confidence.jun_deviation` values that grows by
      doubling; the numbers are identical to calling the function.
    """

    name = "batch_racing"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    # ------------------------------------------------------------------ state
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode: ``omega = sqrt(delta / (6n))``, all arms surviving."""
        super().reset(problem, seed=seed)
        self.omega = math.sqrt(self.delta / (6.0 * problem.n_arms))
        self.surviving = np.arange(problem.n_arms, dtype=np.int64)
        self.accepted = np.empty(0, dtype=np.int64)
        self.rejected = np.empty(0, dtype=np.int64)
        self._table = np.empty(0)
        self._max_seen = 0  # largest count at the last check
        self._checked_at = 0  # total pulls at the last check

    def _widths(self, counts: np.ndarray) -> np.ndarray:
        """``D(counts, omega)`` scaled by ``2 sigma`` (table lookup, exact values).

        The table covers every count up to ``len(table) - 1``; the largest count is
        checked only when the pulls made since the last check could have reached it.
        """
        if self.total_pulls >= self._checked_at + self._table.shape[0] - self._max_seen:
            top = int(counts.max()) if counts.size else 0
            self._max_seen, self._checked_at = top, self.total_pulls
            if top >= self._table.shape[0]:
                size = max(1024, 2 * top + 2)
                t = np.arange(size, dtype=np.float64)
                self._table = np.asarray(jun_deviation(t, self.omega, self.problem.sigma))
        return self._table[counts]

    def current_answer(self) -> np.ndarray:
        """Accepted arms plus the best empirical means among the surviving arms."""
        need = self.problem.k - self.accepted.size
        if need <= 0:
            return self.accepted[: self.problem.k]
        s = self.surviving
        values = np.where(self.counts[s] > 0, self.means[s], -np.inf)
        return np.concatenate((self.accepted, s[top_k(values, need, self.rng)]))

    # -------------------------------------------------------------- algorithm
    def _run(self) -> Generator[Request, None, np.ndarray]:
        k = self.problem.k
        counts, means = self.counts, self.means
        s = self.surviving
        while True:
            yield Batch(s)
            kt = k - self.accepted.size
            m = s.shape[0]
            width = self._widths(counts[s])
            mu = means[s]
            lo = mu - width
            hi = mu + width
            # (k_t + 1)-th largest UCB and k_t-th largest LCB over S (1 <= k_t < m here).
            u_thr = np.partition(hi, m - kt - 1)[m - kt - 1]
            l_thr = np.partition(lo, m - kt)[m - kt]
            acc = lo > u_thr
            rej = hi < l_thr
            if not (acc.any() or rej.any()):
                continue
            self.accepted = np.concatenate((self.accepted, s[acc]))
            self.rejected = np.concatenate((self.rejected, s[rej]))
            s = s[~(acc | rej)]
            self.surviving = s
            kt = k - self.accepted.size
            if kt == 0:
                return self.accepted
            if s.shape[0] == kt:
                self.accepted = np.concatenate((self.accepted, s))
                self.surviving = s = s[:0]
                return self.accepted
