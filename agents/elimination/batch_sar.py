"""BatchSAR: Successive Accepts and Rejects with batch pulls (Jun et al. 2016, Alg. 3)."""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent
from agents.elimination.nsar import order_by_mean
from agents.engine import lowest_level as LL
from bandit_envs.problem import Problem

__all__ = ["BatchSAR", "eq10_target", "stage_sums"]

# prm layout: inputs [capacity bB, b, r, n~, r~], then the record run writes for the
# Python side: the pulls made when the last stage began (-1: not reached), early exit
# (0/1), sum of T_{j_s'} of the removed arms, the number of stages run, their m'_s.
_CAPACITY, _B, _R, _NT, _RT = 0, 1, 2, 3, 4
_LAST, _EARLY, _REMOVED, _NSTAGES, _TARGETS = 5, 6, 7, 8, 9


@numba.njit(cache=True)
def stage_sums(n, b, nt):
    """The sums of eq. (10) for every ``a = n - s + 1`` (arrays indexed by ``a``, 0..n).

    ``extra[a] = sum_{i = n~+1}^{a} ceil(b/i)`` and ``harm[a] = sum_{i = n~+1}^{a} 1/i``
    (added left to right).
    """
    extra = np.zeros(n + 1, dtype=np.int64)
    harm = np.zeros(n + 1)
    e = 0
    h = 0.0
    for a in range(nt + 1, n + 1):
        e += -(-b // a)
        h += 1.0 / a
        extra[a] = e
        harm[a] = h
    return extra, harm


@numba.njit(cache=True)
def eq10_target(capacity, removed, b, nt, rt, alive, extra, harm):
    """``m'_s`` of eq. (10) with ``alive = n - s + 1`` arms and ``removed`` pulls of removed arms.

    ``extra``/``harm`` are :func:`stage_sums` at ``alive``; floored at 1.
    """
    c1 = b + nt * rt + alive
    num = capacity - removed - extra - c1
    return max(1, math.ceil(num / ((nt / 2.0 + harm) * alive)))


@numba.njit(cache=True)
def _min_count(counts, order, lo, hi, nx, xbits):
    """The fewest pulls of a survivor ``order[lo:hi]``: an arm of the lowest level when
    :func:`agents.engine.lowest_level.two_levels` knows it (``nx > 0``, its bitmap ``xbits`` of
    places), else a scan."""
    if nx > 0:
        for w in range(xbits.shape[0]):
            if xbits[w] != 0:
                j = (w << 6) + np.int64(trailing_zeros(xbits[w]))
                return counts[order[lo + j]]
    low = counts[order[lo]]
    for j in range(lo + 1, hi):
        if counts[order[j]] < low:
            low = counts[order[j]]
    return low


@numba.njit
def run(ctx, prm):
    """BatchSAR, Alg. 3 with eq. (10) (the compiled algorithm; ``prm``: see ``_CAPACITY``)."""
    iv = ctx.iv
    n, k = iv[engine.N], iv[engine.K]
    capacity, b, nt, rt = int(prm[_CAPACITY]), int(prm[_B]), int(prm[_NT]), int(prm[_RT])
    one_pull = iv[engine.B] == 1
    as_pulls = one_pull or iv[engine.B] < 0  # stages as pull requests (b = 1 or None)
    extra, harm = stage_sums(n, b, nt)
    order = np.arange(n)  # the survivors order[lo:hi], by decreasing mean once sorted
    lo, hi = 0, n
    arms = np.empty(n, dtype=np.int64)
    reps = np.empty(n, dtype=np.int64)
    removed = 0
    accepted = 0
    sorted_at = -1  # pulls made when order was last sorted
    reached = 0  # every survivor has at least this many pulls
    nw = (n + 63) >> 6
    work = LL.plan_work(1 if as_pulls else n)
    for s in range(1, n - nt + 1):
        alive = n - s + 1
        target = eq10_target(capacity, removed, b, nt, rt, alive, extra[alive], harm[alive])
        prm[_TARGETS + s - 1] = target
        prm[_NSTAGES] = s
        if target > reached:
            if as_pulls:
                m = 0
                for j in range(lo, hi):
                    d = target - ctx.counts[order[j]]
                    if d > 0:
                        arms[m] = order[j]
                        reps[m] = d
                        m += 1
                if m > 0:
                    yield engine.request_pull(ctx, arms[:m], reps[:m])
            else:
                # RoundRobin batches over S = order[lo:hi] until every survivor has
                # `target` pulls; S sits at two pull levels, so a batch that takes arms of
                # the lowest level only (or ends a sweep of it) is drawn with the engine's
                # draws by agents.engine.lowest_level in O(b + n/64); other batches are the
                # engine's BATCH over S.
                m = hi - lo
                surv = order[lo:hi]
                nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
                while _min_count(ctx.counts, order, lo, hi, nx, work[LL.P_X, :nw]) < target:
                    verdict, length, nx = LL.plan_batch(ctx, surv, m, work, nw, nx)
                    if verdict == LL.PLAN_PULL:
                        yield engine.request_pull(
                            ctx, work[LL.P_RA, :length], work[LL.P_RR, :length]
                        )
                    elif verdict == LL.PLAN_EACH:
                        yield engine.request_each(ctx, work[LL.P_PICK, :length], 1)
                    else:
                        yield engine.request_batch(ctx, surv)
                        nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
            reached = target
        if engine.pulls_left(ctx) == 0 or engine.batches_left(ctx) == 0:
            engine.finish(ctx, engine.current_answer(ctx))
            return
        # Remove rho(1) (accept) or rho(|S|) (reject), whichever has the larger gap.
        if iv[engine.PULLS] != sorted_at:
            order_by_mean(order, lo, hi, ctx.means, ctx.rng)
            sorted_at = iv[engine.PULLS]
        mu = ctx.means
        kp = k - accepted
        gap_top = mu[order[lo]] - mu[order[lo + kp]]
        gap_bottom = mu[order[lo + kp - 1]] - mu[order[hi - 1]]
        if gap_top > gap_bottom or (gap_top == gap_bottom and ctx.rng.random() < 0.5):
            arm = order[lo]
            lo += 1
            ctx.status[arm] = engine.ACCEPTED
            accepted += 1
        else:
            hi -= 1
            arm = order[hi]
            ctx.status[arm] = engine.REJECTED
        removed += ctx.counts[arm]
        prm[_REMOVED] = removed
        kp = k - accepted
        if kp == 0 or hi - lo == kp:  # early exits 2 (|A| = k) and 1 (|S| = k - |A|)
            if kp > 0:
                for j in range(lo, hi):
                    ctx.status[order[j]] = engine.ACCEPTED
            prm[_EARLY] = 1
            engine.finish(ctx, np.flatnonzero(ctx.status == engine.ACCEPTED))
            return
    # Last stage: sample the survivors until the budget is spent.
    prm[_LAST] = iv[engine.PULLS]
    if as_pulls:
        left = engine.pulls_left(ctx)
        if one_pull:
            bl = engine.batches_left(ctx)
            if bl >= 0 and (left < 0 or bl < left):
                left = bl
        if left > 0:
            m = hi - lo
            counts = np.empty(m, dtype=np.int64)
            for j in range(m):
                counts[j] = ctx.counts[order[lo + j]]
            alloc = np.empty(m, dtype=np.int64)
            engine.round_robin(counts, np.full(m, left, dtype=np.int64), left, ctx.rng, alloc)
            got = 0
            for j in range(m):
                if alloc[j] > 0:
                    arms[got] = order[lo + j]
                    reps[got] = alloc[j]
                    got += 1
            yield engine.request_pull(ctx, arms[:got], reps[:got])
    else:
        m = hi - lo
        surv = order[lo:hi]
        nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
        while engine.pulls_left(ctx) != 0 and engine.batches_left(ctx) != 0:
            verdict, length, nx = LL.plan_batch(ctx, surv, m, work, nw, nx)
            if verdict == LL.PLAN_PULL:
                yield engine.request_pull(ctx, work[LL.P_RA, :length], work[LL.P_RR, :length])
            elif verdict == LL.PLAN_EACH:
                yield engine.request_each(ctx, work[LL.P_PICK, :length], 1)
            else:
                yield engine.request_batch(ctx, surv)
                nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
    engine.finish(ctx, engine.current_answer(ctx))


class BatchSAR(ScriptedAgent):
    """Successive Accepts and Rejects in stages of RoundRobin batches, for a batch budget B.

    Paper:
        Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu. "Top arm
        identification in multi-armed bandits with batch arm pulls". AISTATS 2016
        (JMLR W&CP 51), Algorithm 3 (BatchSAR), with ``m'_s`` of eq. (10) ("Practical
        considerations", Sec. 4) in place of ``m_s``; Theorem 2. It extends SAR
        (Bubeck, Wang, Viswanathan, ICML 2013).

    With ``r~ = min(r, ceil(b/2))`` and ``n~ = max(ceil(b/r), 2)`` the algorithm runs
    ``n - n~ + 1`` stages. In stage ``s <= n - n~`` it makes RoundRobin batches over the
    surviving set ``S`` (:func:`agents.engine.request_batch`) until every surviving arm has ``m'_s``
    pulls, where (eq. 10)::

        m'_s = ceil( (bB - sum_{s' < s} T_{j_s'} - sum_{i = n~+1}^{n-s+1} ceil(b/i) - c'_1)
                     / ((n~/2 + sum_{i = n~+1}^{n-s+1} 1/i) (n - s + 1)) ),
        c'_1 = b + n~ r~ + n - s + 1,

    ``T_{j_s'}`` being the pulls of the arm removed at stage ``s'`` when it was removed.
    Then, with ``k' = k - |A|`` and the surviving arms ranked by empirical mean
    ``rho(1), ..., rho(|S|)``, it removes whichever of ``rho(1)`` (gap
    ``mu_rho(1) - mu_rho(k'+1)``) and ``rho(|S|)`` (gap ``mu_rho(k') - mu_rho(|S|)``) has
    the larger empirical gap, accepting it if it is ``rho(1)``. Early exits: all
    survivors are accepted when ``|S| = k - |A|``; sampling ends when ``|A| = k``. The
    last stage samples the ``n~`` survivors until the budget is spent and answers
    ``A`` plus their ``k'`` best empirical means.

    Args:
        seed: seed of the tie-breaking generator. (B, b and r come from the problem.)

    Settings: fixed budget only. The batch budget is ``B = problem.max_batches``, or
    ``ceil(budget / b)`` when only a pull budget is given; ``bB`` in eq. (10) is the
    pull capacity ``min(b * B, budget)``.

    Departures from the paper, and why:

    * ``m'_s`` (eq. 10) replaces ``m_s`` and the last stage samples until the budget is
      spent (the paper's own practical variant; ``m_s`` leaves much of B unused).
    * The brackets of eq. (10) were lost in the text extraction; we use the ceiling
      (the ``+ n`` of ``c_1`` pays for rounding every arm's target up). ``m'_s`` is
      floored at 1 so that no arm is judged unpulled; for budgets too small for the
      formula's slack the stages may then run out of budget, and the answer is
      :meth:`current_answer` (accepted arms plus the best survivors).
    * ``n~`` is capped at ``n`` (with ``b/r >= n`` the algorithm is uniform sampling:
      one last stage), otherwise no stage at all would run.
    * ``batch_size=None`` (no batch constraint): BatchSAR is run as its b = r = 1 case,
      which is SAR (Bubeck et al. 2013) with the pull budget: ``n~ = 2``, ``bB`` is the
      pull budget, and each stage is one :class:`~agents.base.Pull` request (one step,
      or several if a repeat limit applies) that tops every survivor up to ``m'_s``;
      the last stage spreads all the pulls left by RoundRobin
      (:func:`agents.engine.round_robin`). A ``max_batches`` given with
      ``batch_size=None`` is not planned for (the episode may end at it; the answer
      is then :meth:`current_answer`).
    * Ties (ranking, equal gaps, RoundRobin, the final top k') are broken uniformly at
      random (the paper: "arbitrarily").

    Implementation: with ``batch_size=1`` a RoundRobin batch is one pull of a least-pulled
    survivor (ties at random), so a stage is asked as one pull request topping every
    survivor up to ``m'_s`` and the last stage as the RoundRobin allocation of the
    pulls left: the same law as batch after batch, O(1) per pull. The ranking is kept
    (:func:`agents.elimination.nsar.order_by_mean`) until the means change: only ``rho(1)``,
    ``rho(k')``, ``rho(k'+1)`` and ``rho(|S|)`` are read. With larger batches the
    survivors sit at two pull levels, and a batch that takes arms of the lowest level
    only (or ends a sweep of it) is drawn by :func:`agents.engine.lowest_level.plan_batch` with
    exactly the draws of the engine's RoundRobin batch over ``S`` (in the ranking's
    order), in O(b + n/64) instead of O(|S|); other batches are the engine's.
    """

    name = "batch_sar"
    settings = frozenset({FIXED_BUDGET})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)

    # ------------------------------------------------------------------ plan
    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode: compute b, r, n~, r~ and the pull capacity ``bB``."""
        super().reset(problem, seed=seed)
        n = problem.n_arms
        if problem.batch_size is None:
            b = r = 1
            capacity = int(problem.budget)
        else:
            b = int(problem.batch_size)
            r = int(problem.repeat_limit) if problem.repeat_limit is not None else b
            n_batches = problem.max_batches
            if n_batches is None:
                n_batches = -(-int(problem.budget) // b)
            capacity = b * int(n_batches)
            if problem.budget is not None:
                capacity = min(capacity, int(problem.budget))
        self.b, self.r = b, r
        self.r_tilde = min(r, -(-b // 2))
        self.n_tilde = min(max(-(-b // r), 2), n)
        self.capacity = capacity
        prm = np.zeros(_TARGETS + n)
        prm[[_CAPACITY, _B, _R, _NT, _RT]] = capacity, b, r, self.n_tilde, self.r_tilde
        prm[_LAST] = -1
        self._prm = prm

    def params(self) -> np.ndarray:
        """The episode's ``prm`` (layout at ``_CAPACITY``; ``run`` writes its record there)."""
        return self._prm

    def stage_target(self, s: int, removed_pulls: int) -> int:
        """``m'_s`` of eq. (10), stage ``s`` (1-based), ``removed_pulls`` of removed arms."""
        b, nt, rt = self.b, self.n_tilde, self.r_tilde
        a = self.problem.n_arms - s + 1  # alive
        extra, harm = stage_sums(self.problem.n_arms, b, nt)
        return int(eq10_target(self.capacity, removed_pulls, b, nt, rt, a, extra[a], harm[a]))

    # ------------------------------------------------- the kernel's record
    @property
    def stage_targets(self) -> list[int]:
        """``m'_s`` of every elimination stage run so far."""
        return self._prm[_TARGETS : _TARGETS + int(self._prm[_NSTAGES])].astype(np.int64).tolist()

    @property
    def last_stage_start(self) -> int | None:
        """Pulls made when the last stage began (``None``: not reached)."""
        start = int(self._prm[_LAST])
        return None if start < 0 else start

    @property
    def early_exit(self) -> bool:
        """Whether the answer was settled before the last stage."""
        return bool(self._prm[_EARLY])

    @property
    def removed_pulls(self) -> int:
        """Sum over past stages of ``T_{j_s'}``, the pulls of the removed arms."""
        return int(self._prm[_REMOVED])

    @property
    def surviving(self) -> np.ndarray:
        """The arms neither accepted nor rejected (ascending)."""
        return self.undecided
