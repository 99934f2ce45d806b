"""NSAR: Nonlinear Sequential Accepts and Rejects (Shahrampour & Tarokh, Fig. 1).

The budget schedule is a pure function, :func:`nsar_schedule`, so that tests and the
benchmark can check ``C_p`` and ``n_r`` against hand-computed values.
"""

from __future__ import annotations

import math
import numbers

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent
from bandit_envs.problem import Problem

__all__ = ["NSAR", "SAR", "SuccessiveRejects", "c_p", "nsar_schedule"]

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


@numba.njit(cache=True)
def order_by_mean(order, lo, hi, means, rng):
    """Sort ``order[lo:hi]`` (arms) by decreasing ``means``, equal means in random order.

    A uniform shuffle then a sort: a comparison sort cannot tell equal keys apart, so
    arms with equal means end in uniformly random order (the ordering ``sigma_r`` with
    ties broken at random). Taking the first or the last arm, or dropping any one arm,
    leaves the others in uniformly random order within their ties, so the order can be
    kept until the means change (elimination agents re-sort only after pulls).
    """
    m = hi - lo
    arms = order[lo:hi]
    engine.choose_distinct(arms, m, m, rng)
    keys = np.empty(m)
    for j in range(m):
        keys[j] = -means[arms[j]]
    idx = np.argsort(keys)
    tmp = arms.copy()
    for j in range(m):
        arms[j] = tmp[idx[j]]


@numba.njit(cache=True)
def _drop(order, lo, hi, pos):
    """Remove ``order[pos]`` from ``order[lo:hi]`` keeping the order; the new ``(lo, hi)``.

    The arms on the shorter side of ``pos`` move by one: O(distance to the nearer end).
    """
    if pos - lo <= hi - 1 - pos:
        for i in range(pos, lo, -1):
            order[i] = order[i - 1]
        return lo + 1, hi
    for i in range(pos, hi - 1):
        order[i] = order[i + 1]
    return lo, hi - 1


@numba.njit(cache=True)
def _decide(means, order, lo, hi, m, rng):
    """Steps (2)-(4) of Fig. 1 on the active arms ``order[lo:hi]``, ``1 <= m < hi - lo``.

    ``order`` is sorted by decreasing mean with random ties (:func:`order_by_mean`), so
    ``sigma_r(1..m)`` is ``order[lo:lo + m]``. The largest gap is that of the first arm
    (``mean - mean_sigma(m + 1)``) or of the last (``mean_sigma(m) - mean``); the arms
    with a gap equal to it (the argmax, uniform among them) are a prefix and a suffix of
    the order, or every arm when all means are equal (every gap is 0). Returns
    ``(position, accept)``: accept iff its mean exceeds ``mean_sigma(m + 1)``.
    """
    above = means[order[lo + m]]  # mean_sigma(m + 1)
    below = means[order[lo + m - 1]]  # mean_sigma(m)
    g_top = means[order[lo]] - above
    g_bottom = below - means[order[hi - 1]]
    best = g_top if g_top > g_bottom else g_bottom
    if best == 0.0:  # all means equal: every gap is 0, the arm is rejected
        return lo + rng.integers(0, hi - lo), False
    p = 0
    if g_top == best:
        while lo + p < hi and means[order[lo + p]] - above == best:
            p += 1
    q = 0
    if g_bottom == best:
        while hi - 1 - q >= lo and below - means[order[hi - 1 - q]] == best:
            q += 1
    u = rng.integers(0, p + q) if p + q > 1 else 0
    pos = lo + u if u < p else hi - 1 - (u - p)
    return pos, means[order[pos]] > above


@numba.njit
def run(ctx, prm):
    """NSAR, Fig. 1 (the compiled algorithm; ``prm = [n_0, n_1, ..., n_{K-1}]``)."""
    iv = ctx.iv
    n, k = iv[engine.N], iv[engine.K]
    order = np.arange(n)  # the active arms order[lo:hi], by decreasing mean once sorted
    lo, hi = 0, n
    accepted = 0
    sorted_at = -1  # pulls made when order was last sorted
    for r in range(1, n):
        m = k - accepted
        if m == 0 or m == hi - lo:
            break  # every remaining arm is rejected / accepted
        times = int(prm[r]) - int(prm[r - 1])
        if times > 0:
            yield engine.request_each(ctx, order[lo:hi], times)
        if iv[engine.PULLS] != sorted_at:
            order_by_mean(order, lo, hi, ctx.means, ctx.rng)
            sorted_at = iv[engine.PULLS]
        pos, accept = _decide(ctx.means, order, lo, hi, m, ctx.rng)
        if accept:
            ctx.status[order[pos]] = engine.ACCEPTED
            accepted += 1
        else:
            ctx.status[order[pos]] = engine.REJECTED
        lo, hi = _drop(order, lo, hi, pos)
    if k - accepted > 0:
        # Only reachable with m == hi - lo (the loop ends with one active arm at the latest).
        for i in range(lo, hi):
            ctx.status[order[i]] = engine.ACCEPTED
    engine.finish(ctx, np.flatnonzero(ctx.status == engine.ACCEPTED))


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
    ``n_r - n_{r-1}`` more times (one non-adaptive pull request,
    :func:`agents.engine.request_each`: with ``batch_size=None`` one env step), orders
    the active arms by empirical mean, forms the empirical gaps with ``m_r`` = top arms
    still to find,
    ``gap = mean - mean_sigma(m_r + 1)`` for the first ``m_r`` and
    ``gap = mean_sigma(m_r) - mean`` for the rest, deactivates the arm with the
    largest gap and accepts it iff ``mean > mean_sigma(m_r + 1)`` (else rejects it).
    This is Bubeck et al.'s SAR rule exactly; only the budget split differs
    (``p = 1`` is SAR, see :class:`agents.elimination.nsar.SAR`).

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

    * Early stop: once ``m_r = 0`` (M arms accepted) the rest are
      rejected, and once the active arms number exactly ``m_r`` they are all accepted,
      without the remaining rounds. The answer is the one the full run would give (no
      later round can change it); the unspent pulls are left over (pulls <= T).
    * Ties between equal empirical means (the ordering ``sigma_r``) and between equal
      gaps (the argmax) are broken uniformly at random with ``self.rng``
      (:func:`order_by_mean`, :func:`_decide`); the paper leaves them open.
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
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, p: float = 1.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        _check_p(p)
        self.p = float(p)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p}, seed={self.seed})"

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode: the schedule ``n_0..n_{K-1}`` of the problem's budget."""
        super().reset(problem, seed=seed)
        self.schedule = nsar_schedule(problem.budget, problem.n_arms, self.p)

    def params(self) -> np.ndarray:
        """``prm = [n_0, n_1, ..., n_{K-1}]`` (:func:`nsar_schedule`, as float64)."""
        return self.schedule.astype(np.float64)

    # Decisions so far, read from the kernel's per-arm status (arm order).
    @property
    def accepted(self) -> list[int]:
        """The accepted arms (ascending)."""
        return np.flatnonzero(self.ctx.status == engine.ACCEPTED).tolist()

    @property
    def rejected(self) -> list[int]:
        """The arms rejected by a round's decision (ascending)."""
        return np.flatnonzero(self.ctx.status == engine.REJECTED).tolist()

    @property
    def active(self) -> np.ndarray:
        """The arms not yet accepted or rejected (ascending)."""
        return np.flatnonzero(self.ctx.status == engine.UNDECIDED)


class SAR(NSAR):
    """Successive Accepts and Rejects for top-k identification with a fixed budget.

    Paper:
        Sébastien Bubeck, Tengyao Wang, Nitin Viswanathan. "Multiple identifications
        in multi-armed bandits". ICML 2013 (PMLR 28(1):258-265), Sec. 3, algorithm
        "SAR" (Successive Accepts and Rejects), with the budget split of Audibert &
        Bubeck's Successive Rejects (COLT 2010). Used as the baseline of Shahrampour &
        Tarokh (2017), who write it as their Fig. 1 with ``p = 1``.

    Published definition used: ``log-bar(K) = 1/2 + sum_{i=2..K} 1/i``, ``n_0 = 0``,
    ``n_k = ceil((1 / log-bar(K)) (T - K) / (K + 1 - k))`` for phases ``k = 1..K-1``;
    in phase ``k`` every active arm is pulled ``n_k - n_{k-1}`` more times, the active
    arms are ordered by empirical mean, the empirical gaps are
    ``mean - mean_sigma(m(k) + 1)`` for the first ``m(k)`` (``m(k)`` = top arms still to
    find) and ``mean_sigma(m(k)) - mean`` for the others, the arm with the largest gap
    is deactivated, and it is accepted iff its mean exceeds ``mean_sigma(m(k) + 1)``.

    Why this class is exactly :class:`agents.elimination.nsar.NSAR` with ``p = 1``: NSAR's
    ``C_1 = 2^-1 + sum_{r=2..K} r^-1`` is ``log-bar(K)`` term for term, so
    ``n_r = ceil((T - K) / (C_1 (K - r + 1)))`` is SAR's ``n_k`` with ``k = r``; the
    sampling step and the accept/reject rule of Fig. 1 are SAR's, symbol for symbol.
    ``tests/test_agents_shahrampour.py`` checks the schedule against exact rational
    arithmetic and that ``NSAR(p=1)`` makes the same pulls and answer as ``SAR`` for
    the same seed.

    Args:
        seed: seed of the tie-breaking generator. There is no ``p``: it is 1.

    Settings: fixed budget only.

    Departures from the paper: the same as :class:`~agents.elimination.nsar.NSAR` (stop once the
    answer is determined, random tie-breaking, ``current_answer`` on truncation).
    """

    name = "sar"

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(p=1.0, seed=seed)

    def __repr__(self) -> str:
        return f"SAR(seed={self.seed})"


class SuccessiveRejects(SAR):
    """Successive Rejects: fixed-budget best-arm identification.

    Paper:
        Jean-Yves Audibert, Sebastien Bubeck, Remi Munos. "Best arm identification in
        multi-armed bandits". COLT 2010, Sec. 3 (SR): ``log-bar(K) = 1/2 + sum_{i=2..K}
        1/i``, ``n_k = ceil((T - K) / (log-bar(K) (K + 1 - k)))``; in phase ``k`` every
        surviving arm gets ``n_k - n_{k-1}`` more pulls, then the arm of lowest empirical
        mean is rejected; the last arm is the answer.

    Why it is :class:`~agents.elimination.nsar.SAR` with ``k = 1``: SAR (Bubeck, Wang, Viswanathan
    2013) is built on SR's phases (the same ``n_k``); with one arm to find, the arm of largest
    empirical gap is the one of lowest mean (its gap ``mean_1 - mean_i`` is the largest), so SAR
    rejects exactly SR's arm. They differ only when every surviving arm but the leader ties with it
    in gap (all of them at the same mean): SAR may then accept the leader and stop before the last
    phase, with the same answer and fewer pulls. ``tests/test_classic_agents.py`` checks the phases
    and the rejections against an independent implementation of SR on tie-free instances.

    Settings: fixed budget, k = 1.
    """

    name = "successive_rejects"
    k_values = frozenset({1})

    def __repr__(self) -> str:
        return f"SuccessiveRejects(seed={self.seed})"
