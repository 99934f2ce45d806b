"""Exponential-Gap Elimination (Karnin, Koren, Somekh 2013, Algorithm 1): delta-PAC best arm."""

from __future__ import annotations

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_CONFIDENCE, ScriptedAgent, check_probability
from agents.pac.median_elimination import eliminate, round_pulls

__all__ = ["ExpGap", "run"]


@numba.njit
def run(ctx, prm):
    """Exponential-Gap Elimination (``prm = [delta]``); see :class:`ExpGap`."""
    n = ctx.iv[engine.N]
    delta = prm[0]
    sigma = ctx.fv[engine.SIGMA]
    scale = 4.0 * sigma * sigma
    surv = np.arange(n)
    m = n
    sums0 = np.zeros(n)
    counts0 = np.zeros(n, dtype=np.int64)
    values = np.empty(n)
    best = np.zeros(1, dtype=np.int64)
    r = 0
    while m > 1:
        r += 1
        eps_r = 0.25 * 0.5**r
        delta_r = delta / (50.0 * r * r * r)
        t = round_pulls(2.0, eps_r, 2.0 / delta_r, scale)
        engine.snapshot(ctx, surv[:m], counts0, sums0)
        yield engine.request_each(ctx, surv[:m], t)
        engine.round_means(ctx, surv[:m], counts0, sums0, values)
        # i_r: Median Elimination on S_r with (eps_r / 2, delta_r), on its own samples
        inner = eliminate(ctx, surv[:m].copy(), eps_r / 2.0, delta_r, scale, False, best)
        for req in inner:  # noqa: UP028 (numba generators have no ``yield from``)
            yield req
        cut = values[best[0]] - eps_r
        size = 0
        for j in range(m):
            a = surv[j]
            if values[a] < cut:
                ctx.status[a] = engine.REJECTED
            else:
                surv[size] = a
                size += 1
        m = size
    engine.finish(ctx, surv[:1])


class ExpGap(ScriptedAgent):
    """Exponential-Gap Elimination: the best arm with probability ``1 - delta``.

    Paper:
        Zohar Karnin, Tomer Koren, Oren Somekh. "Almost optimal exploration in
        multi-armed bandits". ICML 2013 (PMLR 28(3):1238-1246), Sec. 3, Algorithm 1
        (Exponential-Gap Elimination, p. 1241), Theorem 3.1; its subroutine
        MedianElimination is Even-Dar, Mannor, Mansour (2006) as stated in their Lemma
        2.1 (Sec. 2.1, p. 1240): :func:`agents.pac.median_elimination.eliminate`, shared with
        :class:`~agents.pac.median_elimination.MedianElimination`.

    Algorithm: ``S_1`` = all arms, ``r = 1``; while ``|S_r| > 1``: ``eps_r = 2^-r / 4``,
    ``delta_r = delta / (50 r^3)``; sample every arm of ``S_r``
    ``t_r = ceil((2 / eps_r^2) log(2 / delta_r))`` more times, ``p_a`` the mean of these
    samples; ``i_r = MedianElimination(S_r, eps_r / 2, delta_r)`` (a fresh run on samples
    of its own); ``S_{r+1} = S_r \\ {a : p_a < p_{i_r} - eps_r}``; ``r = r + 1``. Answer
    the arm left. Guarantee (Theorem 3.1): the best arm with probability at least
    ``1 - delta`` after ``O(sum_i Delta_i^-2 log(log(1/Delta_i) / delta))`` pulls, with
    ``Delta_i = mu_1 - mu_i`` (the best arm unique). Ties in Median Elimination as in
    :class:`~agents.pac.median_elimination.MedianElimination` (keep exactly half, at random).

    Checked against the paper's text (PMLR v28 PDF, p. 1241), Algorithm 1 lines 3-6:
    "let eps_r = 2^-r/4 and delta_r = delta/(50 r^3)"; "sample each arm i in S_r for
    t_r = (2/eps_r^2) ln(2/delta_r) times, and let p^r_i be the average reward";
    "invoke i_r <- MedianElimination(S_r, eps_r/2, delta_r) and let p^r_* = p^r_{i_r}";
    "set S_{r+1} <- S_r \\ {i in S_r : p^r_i < p^r_* - eps_r}". The logarithm of
    ``t_r`` is ``ln(2 / delta_r)`` (the ``3 / delta`` is Median Elimination's own
    sample size, not this one); ``p^r_*`` is ``i_r``'s mean over line 4's samples.
    Footnote 4 (p. 1242) allows Median Elimination to reuse line 4's pulls ("without
    any major changes in the analysis"); this implementation does not (fresh samples,
    the algorithm as written). The PMLR version numbers Exponential-Gap Elimination
    Algorithm 1 (Algorithm 2 is Sequential Halving) and does not print Median
    Elimination as an algorithm of its own.

    The constants are large: the first round alone pulls every arm
    ``ceil(128 log(100 / delta))`` times (884 at ``delta = 0.1``) and its Median
    Elimination ``ceil(16384 log(300 / delta))`` times (about 1.3e5); the algorithm is
    a theoretical baseline (near-optimal rate, impractical constants).

    Args:
        delta: the error probability, in (0, 1). Default 0.1.
        seed: seed of the tie-breaking generator (Median Elimination's halving).

    Settings: fixed confidence, k = 1; no fixed budget. Any ``batch_size``/``repeat_limit``
    (every round is one request). If ``max_batches`` ends the episode first, the answer is
    the highest empirical mean (all samples) among the arms of ``S_r``.

    Rewards: the sample sizes are the paper's, for rewards in [0, 1] (sub-Gaussian
    variance proxy 1/4, ``sigma <= 1/2``); for a sub-Gaussian scale ``sigma`` (Gaussian
    arms' standard deviation) they are multiplied by ``(2 sigma)^2``, which keeps the
    guarantee, as in :class:`~agents.pac.median_elimination.MedianElimination`.
    """

    name = "exp_gap"
    settings = frozenset({FIXED_CONFIDENCE})
    k_values = frozenset({1})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def params(self) -> np.ndarray:
        return np.array([self.delta])

    def __repr__(self) -> str:
        return f"ExpGap(delta={self.delta}, seed={self.seed})"
