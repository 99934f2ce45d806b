"""NSAR: Nonlinear Sequential Accepts and Rejects (Shahrampour & Tarokh, Fig. 1).

The budget schedule is a pure function, :func:`nsar_schedule`, so that tests and the
benchmark can check ``C_p`` and ``n_r`` against hand-computed values.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Generator

import numpy as np

from agents.base import FIXED_BUDGET, Pull, Request, ScriptedAgent
from bandit_envs.scoring import top_k

__all__ = ["NSAR", "c_p", "nsar_schedule"]

# Ratios this close to an integer are that integer (float rounding in (T - K) / (C_p j^p)).
_INT_TOL = 1e-9


def c_p(n_arms: int, p: float) -> float:
    """``C_p = 2^-p + sum_{r=2..K} r^-p`` (Shahrampour & Tarokh eq. (3) and Fig. 1).

    With ``p = 1`` it is Bubeck et al.'s ``log-bar(K) = 1/2 + sum_{i=2..K} 1/i``.
    """
    _check_p(p)
    if n_arms < 2:
        raise ValueError(f"n_arms={n_arms} must be >= 2")
    r = np.arange(2, n_arms + 1, dtype=np.float64)
    return math.fsum([2.0**-p, *(r**-p).tolist()])


def nsar_schedule(budget: int, n_arms: int, p: float) -> np.ndarray:
    """``[n_0, n_1, ..., n_{K-1}]`` with ``n_0 = 0`` and (Fig. 1)

    ``n_r = ceil((T - K) / (C_p (K - r + 1)^p))`` for ``r = 1..K-1``,

    the number of pulls every arm still active in round ``r`` has after that round.
    The whole run pulls ``sum_{r=1}^{K-1} n_r + n_{K-1} < T`` times (the ``K`` terms
    sum to ``T - K`` before rounding up, each ceiling adds less than 1).
    """
    if isinstance(budget, bool) or not isinstance(budget, numbers.Integral):
        raise ValueError(f"budget={budget!r} must be an integer")
    if budget < n_arms:
        raise ValueError(f"budget={budget} must be >= n_arms={n_arms} (T >= K)")
    cp = c_p(n_arms, p)
    k = n_arms
    out = np.zeros(k, dtype=np.int64)
    for r in range(1, k):
        x = (budget - k) / (cp * float(k - r + 1) ** p)
        nearest = round(x)
        if abs(x - nearest) <= _INT_TOL * max(1.0, x):
            out[r] = nearest
        else:
            out[r] = math.ceil(x)
    return out


def _check_p(p: float) -> None:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p) or p <= 0:
        raise ValueError(f"p={p!r} must be a finite number > 0 (Fig. 1: 'parameter p > 0')")


class NSAR(ScriptedAgent):
    """Nonlinear Sequential Accepts and Rejects: SAR with a budget split by ``(K - r + 1)^p``.

    Paper:
        Shahin Shahrampour, Vahid Tarokh. "Nonlinear sequential accepts and rejects
        for identification of top arms in stochastic bandits". Harvard University,
        2017. Algorithm: Fig. 1; constants eq. (3); Proposition 2
        (``P(error) <= 2 K^2 exp(-(T - K) / (8 C_p H^(M)(p)))`` for ``p in (0, 2]``);
        experiments Sec. IV.

    With ``K = n_arms`` arms, ``M = k`` and budget ``T`` (``problem.budget``):
    ``C_p = 2^-p + sum_{r=2..K} r^-p`` and ``n_r = ceil((T - K) / (C_p (K - r + 1)^p))``
    (:func:`nsar_schedule`). Round ``r = 1..K-1`` pulls every active arm
    ``n_r - n_{r-1}`` more times (one non-adaptive :class:`~agents.base.Pull`: with
    ``batch_size=None`` one env step), orders the active arms by empirical mean, forms
    the empirical gaps with ``m_r`` = top arms still to find,
    ``gap = mean - mean_sigma(m_r + 1)`` for the first ``m_r`` and
    ``gap = mean_sigma(m_r) - mean`` for the rest, deactivates the arm with the
    largest gap and accepts it iff ``mean > mean_sigma(m_r + 1)`` (else rejects it).
    This is Bubeck et al.'s SAR rule exactly; only the budget split differs
    (``p = 1`` is SAR, see :class:`agents.sar.SAR`).

    Args:
        p: the nonlinearity, ``p > 0`` (Fig. 1). The guarantee (Prop. 2) covers
            ``p in (0, 2]``. The paper recommends no single value: ``0 < p < 1`` when
            many sub-optimal arms are about equally competitive (Regime 1, setup 1;
            ``p = 0.85`` wins on the caption data, Sec. IV.B), ``1 < p <= 2`` when few
            arms compete with the top M (Regime 2; setups 2-6 of Sec. IV.A, where
            ``p in {1.1, 1.2, 1.3}`` do well). The default 1.1 is the smallest of the
            values the paper finds good in 5 of its 6 academic setups.
        seed: seed of the tie-breaking generator.

    Settings: fixed budget only (a fixed-confidence problem raises at reset).

    Departures from the paper, and why:

    * Early stop (paper-notes): once ``m_r = 0`` (M arms accepted) the rest are
      rejected, and once the active arms number exactly ``m_r`` they are all accepted,
      without the remaining rounds. The answer is the one the full run would give (no
      later round can change it); the unspent pulls are left over (pulls <= T).
    * Ties between equal empirical means (the ordering ``sigma_r``) and between equal
      gaps (the argmax) are broken uniformly at random with ``self.rng``
      (:func:`bandit_envs.scoring.top_k`); the paper leaves them open.
    * ``n_r``: a ratio within ``1e-9`` (relative) of an integer is taken as that
      integer, so float rounding never adds a pull the exact formula would not.
    * Truncation: if ``max_batches`` (or a batch/repeat limit that makes the last batch
      of a round land past it) ends the episode before the rounds do,
      :meth:`current_answer` is the accepted arms plus the best empirical means among
      the active arms (Fig. 1 has no such case).
    * Rewards: Prop. 2 assumes rewards in [0, 1]; the algorithm itself uses only
      empirical means and runs unchanged on Gaussian or categorical arms.
    """

    name = "nsar"
    settings = frozenset({FIXED_BUDGET})

    def __init__(self, p: float = 1.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        _check_p(p)
        self.p = float(p)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p}, seed={self.seed})"

    # ------------------------------------------------------------------ state
    def reset(self, problem, *, seed=None) -> None:  # noqa: D102 (documented in the base)
        super().reset(problem, seed=seed)
        self.schedule = nsar_schedule(problem.budget, problem.n_arms, self.p)
        self.active = np.arange(problem.n_arms, dtype=np.int64)
        self.accepted: list[int] = []
        self.rejected: list[int] = []

    def current_answer(self) -> np.ndarray:
        """Accepted arms, then the best empirical means among the active arms."""
        acc = np.asarray(self.accepted, dtype=np.int64)
        need = self.problem.k - acc.size
        if need <= 0:
            return acc[: self.problem.k]
        values = np.where(self.counts[self.active] > 0, self.means[self.active], -np.inf)
        rest = self.active[top_k(values, need, self.rng)]
        return np.concatenate((acc, rest))

    # -------------------------------------------------------------- algorithm
    def _run(self) -> Generator[Request, None, np.ndarray]:
        k = self.problem.k
        n = self.problem.n_arms
        sched = self.schedule
        for r in range(1, n):
            m = k - len(self.accepted)
            if m == 0:
                break  # every remaining arm is rejected
            if m == self.active.size:
                break  # every remaining arm is accepted
            yield Pull.each(self.active, int(sched[r] - sched[r - 1]))
            self._decide(m)
        m = k - len(self.accepted)
        if m > 0:
            # Only reachable with m == |active| (the loop ends with one active arm).
            self.accepted.extend(self.active.tolist())
            self.active = self.active[:0]
        return np.asarray(self.accepted, dtype=np.int64)

    def _decide(self, m: int) -> None:
        """Steps (2)-(4) of Fig. 1 on the active arms, ``1 <= m < |active|``."""
        act = self.active
        mu = self.means[act]
        top = np.zeros(act.size, dtype=bool)
        top[top_k(mu, m, self.rng)] = True  # sigma_r(1..m), ties at random
        above = float(mu[~top].max())  # mean of sigma_r(m + 1)
        below = float(mu[top].min())  # mean of sigma_r(m)
        gap = np.where(top, mu - above, below - mu)
        j = int(top_k(gap, 1, self.rng)[0])
        if mu[j] > above:
            self.accepted.append(int(act[j]))
        else:
            self.rejected.append(int(act[j]))
        self.active = np.delete(act, j)
