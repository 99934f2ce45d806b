"""RoundRobin: the non-adaptive batch baseline of Jun et al. (2016), Sec. 5.2."""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent, check_probability
from agents.elimination.batch_racing import Out, bounds_of, refill_lowest, take_random, width_table
from agents.engine import order_stats as ost

__all__ = ["RoundRobin"]

#: trackers of the fixed-confidence b = 1 path (keys: the bounds): L (order k), U (order k + 1).
_L, _U = 0, 1


@numba.njit(cache=True)
def _top_lcb(lo, k):
    """The ``k`` arms with the largest LCBs (distinct values at the boundary when stopping)."""
    return np.argsort(-lo, kind="mergesort")[:k].copy()


@numba.njit(cache=True)
def _separated(lo, hi, k):
    """The stopping rule ``max^(k) L > max^(k+1) U`` over all arms."""
    n = lo.shape[0]
    return np.partition(lo, n - k)[n - k] > np.partition(hi, n - k - 1)[n - k - 1]


@numba.njit(cache=True)
def _pulled(key, heaps, sizes, a, mean, w):
    """Arm ``a``'s bounds after a pull; whether the stopping rule holds."""
    key[_L, a] = mean - w
    key[_U, a] = mean + w
    ost.update(key, heaps, sizes, _L, a)
    ost.update(key, heaps, sizes, _U, a)
    return ost.kth(key, heaps, _L) > ost.kth(key, heaps, _U)


@numba.njit
def run(ctx, prm):
    """RoundRobin (the compiled algorithm; ``prm = [delta]``)."""
    n = ctx.iv[engine.N]
    k = ctx.iv[engine.K]
    if ctx.iv[engine.SETTING] == engine.FIXED_BUDGET:
        left = engine.pulls_left(ctx)
        if ctx.iv[engine.B] < 0:
            alloc = np.empty(n, dtype=np.int64)
            engine.round_robin(ctx.counts, np.full(n, left, dtype=np.int64), left, ctx.rng, alloc)
            yield engine.request_pull(ctx, np.arange(n), alloc)
        else:
            if left < 0:  # max_batches alone: at most r (else b) pulls of an arm per batch
                per_arm = ctx.iv[engine.R] if ctx.iv[engine.R] >= 0 else ctx.iv[engine.B]
                left = engine.batches_left(ctx) * per_arm
            # One RoundRobin batch over all arms per step until the budget ends.
            yield engine.request_each(ctx, np.arange(n), left)
        engine.finish(ctx, engine.current_answer(ctx))
        return
    sigma = ctx.fv[engine.SIGMA]
    omega = math.sqrt(prm[0] / (6.0 * n))
    table = width_table(np.empty(0), 0, omega, sigma)
    work = np.empty((2, n), dtype=np.int64)  # all arms, the lowest-level bucket
    work[0, :] = np.arange(n)
    key, heaps, sizes = ost.new(2, n)  # key[_L], key[_U]: the bounds
    if ctx.iv[engine.B] != 1:
        while True:
            yield engine.request_batch(ctx, work[0])
            table = bounds_of(
                ctx.counts, ctx.means, work[0], n, table, omega, sigma, key[_L], key[_U]
            )
            if _separated(key[_L].copy(), key[_U].copy(), k):
                engine.finish(ctx, _top_lcb(key[_L], k))
                return
    # b = 1: one pull per batch; the order statistics follow the pulled arm. The loop
    # holds a few of ctx's arrays, not ctx (cheaper resumes).
    counts, means, rng, out = ctx.counts, ctx.means, ctx.rng, Out(ctx.answer, ctx.iv)
    table = bounds_of(counts, means, work[0], n, table, omega, sigma, key[_L], key[_U])
    ost.build(key, heaps, sizes, _L, work[0], n, k)
    ost.build(key, heaps, sizes, _U, work[0], n, k + 1)
    nb = 0
    while True:
        if nb == 0:
            nb = refill_lowest(counts, work[0], n, work[1])
        a = take_random(work[1], nb, rng)
        nb -= 1
        yield a
        c = counts[a]
        if c >= table.shape[0]:
            table = width_table(table, c, omega, sigma)
        if _pulled(key, heaps, sizes, a, means[a], table[c]):
            engine.finish(out, _top_lcb(key[_L], k))
            return


class RoundRobin(ScriptedAgent):
    """Pull all arms by RoundRobin (Alg. 1) every batch, never eliminate; answer the best k.

    Paper:
        Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu. "Top arm
        identification in multi-armed bandits with batch arm pulls". AISTATS 2016
        (JMLR W&CP 51), Sec. 5.2 "Methods": "RoundRobin repeatedly pull[s] arms
        according to RoundRobin (Algorithm 1) with no eliminations until the batch
        budget runs out", the baseline of Figs. 1 and 2.

    Fixed budget: one RoundRobin batch over all arms (``yield Batch(all)``) until the
    budget (pulls or batches) is spent, then the ``k`` highest empirical means (random
    ties). With ``batch_size=None`` the whole pull budget is one RoundRobin allocation
    (:func:`agents.engine.round_robin`), i.e. uniform allocation.

    Fixed confidence (not in the paper; our choice): the paper uses RoundRobin only with
    a budget. Its Table 1 "speedup" baseline is a different thing, BatchRacing run at
    b = r = 1 (Sec. 5.1: average batches at (1, 1) over average batches at (b, r)),
    which is :class:`agents.elimination.batch_racing.BatchRacing` on a b = r = 1 environment. For a
    non-adaptive fixed-confidence baseline, RoundRobin samples all arms as above and
    stops as soon as the confidence bounds of eq. (2) separate a set of ``k`` arms,
    ``max^(k) L_i > max^(k+1) U_j`` (``L, U = mean -/+ D(T_i, omega)``,
    ``omega = sqrt(delta / (6n))``, scaled by ``2 sigma``), and answers that set (the
    ``k`` largest LCBs). Under the event of Lemma 1 (probability >= 1 - delta) every
    bound holds, so the answer is a true top-k set: delta-correct, like BatchRacing,
    but without eliminations (every batch keeps pulling decided arms).

    Args:
        delta: failure probability of the fixed-confidence stopping rule, in (0, 1).
        seed: seed of the tie-breaking generator.

    Departures from the paper: the fixed-confidence stopping rule above; ties are
    broken uniformly at random; RoundRobin's ``a_l <= r`` typo is read ``a_l < r``.

    Speed only: in fixed budget the batches are one open pull request over all arms
    (each arm owed more than the budget can give), which the scheduler serves batch by
    batch with the same RoundRobin law as one ``Batch`` per step. In fixed confidence
    with ``batch_size=1`` a batch is one pull of a least-pulled arm (uniformly at
    random), and the stopping rule's two order statistics are kept in O(log n) per pull
    (:mod:`agents.engine.order_stats`), as in :class:`~agents.elimination.batch_racing.BatchRacing`.
    """

    name = "round_robin"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_EMPIRICAL

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def params(self) -> np.ndarray:
        """``prm = [delta]``."""
        return np.array([self.delta])
