"""Halving: Sequential Halving for top-k with batch pulls (Jun et al. 2016, Alg. 4)."""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent
from agents.engine import lowest_level as LL
from bandit_envs.problem import Problem

__all__ = ["Halving"]


@numba.njit
def run(ctx, prm):
    """Halving, Alg. 4 (the compiled algorithm; ``prm = [L, B_1..B_L, |S_2|..|S_{L+1}|]``)."""
    iv = ctx.iv
    n = iv[engine.N]
    n_stages = int(prm[0])
    as_pulls = iv[engine.B] <= 1  # b = 1 or None: a stage is one pull request
    surv = np.arange(n)  # S, ascending, in surv[:m]
    m = n
    arms = np.empty(n, dtype=np.int64)
    reps = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    values = np.empty(n)
    keep = np.empty(n, dtype=np.int64)
    nw = (n + 63) >> 6
    work = LL.plan_work(1 if as_pulls else n)
    for st in range(n_stages):
        share = int(prm[1 + st])
        size = int(prm[1 + n_stages + st])
        if as_pulls:
            if share > 0:
                for j in range(m):
                    counts[j] = ctx.counts[surv[j]]
                alloc = np.empty(m, dtype=np.int64)
                caps = np.full(m, share, dtype=np.int64)
                engine.round_robin(counts[:m], caps, share, ctx.rng, alloc)
                got = 0
                for j in range(m):
                    if alloc[j] > 0:
                        arms[got] = surv[j]
                        reps[got] = alloc[j]
                        got += 1
                yield engine.request_pull(ctx, arms[:got], reps[:got])
        else:
            # The stage's RoundRobin batches over S. S sits at two pull levels (round robin
            # keeps counts within one of each other); a batch that takes arms of the lowest
            # level only, or that ends a sweep of it, is drawn here with the engine's draws
            # (agents.engine.lowest_level) and asked for as exactly that batch, in O(b + n/64);
            # any other batch is the engine's BATCH over S (O(|S|)).
            nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
            for _ in range(share):
                verdict, length, nx = LL.plan_batch(ctx, surv, m, work, nw, nx)
                if verdict == LL.PLAN_PULL:
                    yield engine.request_pull(ctx, work[LL.P_RA, :length], work[LL.P_RR, :length])
                elif verdict == LL.PLAN_EACH:
                    yield engine.request_each(ctx, work[LL.P_PICK, :length], 1)
                else:
                    yield engine.request_batch(ctx, surv[:m])
                    nx = LL.two_levels(ctx.counts, surv, m, work[LL.P_SB], work[LL.P_X], nw)
        # Keep the `size` best empirical means of S (never-pulled arms last).
        for j in range(m):
            a = surv[j]
            values[a] = ctx.means[a] if ctx.counts[a] > 0 else -np.inf
        engine.top_k_into(values, surv[:m], size, ctx.rng, keep, 0)
        for j in range(m):
            ctx.status[surv[j]] = engine.REJECTED
        kept = np.sort(keep[:size])
        for j in range(size):
            surv[j] = kept[j]
            ctx.status[kept[j]] = engine.UNDECIDED
        m = size
    engine.finish(ctx, engine.current_answer(ctx))


class Halving(ScriptedAgent):
    """Split the batch budget over ``ceil(log2(n/k))`` stages; each stage keeps the better half.

    Paper:
        Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu. "Top arm
        identification in multi-armed bandits with batch arm pulls". AISTATS 2016
        (JMLR W&CP 51), Algorithm 4 (Halving), Sec. 5.2 "Methods". It adapts
        Sequential Halving (Karnin, Koren, Somekh, ICML 2013) to top-k with
        ``ceil(log2(n/k))`` stages (after Kalyanakrishnan et al. 2012) and stages
        measured in batches. The paper gives no guarantee for it.

    With ``L = ceil(log2(n/k))`` stages, stage ``s`` makes ``B_s`` RoundRobin batches
    over the surviving set ``S`` (:func:`agents.engine.request_batch`),
    ``B_s = floor(B / L)`` plus one for ``B mod L`` stages chosen uniformly at random
    (Sec. 5.2: "we randomly spread out the remaining budget over stages"), then keeps
    the ``max(ceil(|S|/2), ceil(b/r), k)`` arms of ``S`` with the largest empirical means.
    The answer is the ``k`` best empirical means of the final ``S``.

    Args:
        seed: seed of the generator (budget spreading and ties).

    Settings: fixed budget only. The batch budget is ``B = problem.max_batches``, or
    ``ceil(budget / b)`` when only a pull budget is given.

    Departures from the paper, and why:

    * Line 11 keeps ``max(ceil(|S|/2), ceil(b/r))`` arms, which falls below ``k`` when
      ``n/k`` is not a power of two (n = 100, k = 10: 100, 50, 25, 13, 7); we keep at
      least ``k``.
    * Line 13 outputs ``S_{L+1}``, which has more than ``k`` arms when
      ``ceil(b/r) > k``; we output its ``k`` best empirical means.
    * ``batch_size=None`` (no batch constraint): the pull budget is split over the
      stages instead (``floor(T / L)`` pulls each, the remainder spread at random, as
      Karnin et al.'s Sequential Halving splits samples), and a stage is one
      pull request that spreads its pulls over ``S`` by
      RoundRobin (:func:`agents.engine.round_robin`); ``ceil(b/r)`` is dropped
      from the rule. A ``max_batches`` given with ``batch_size=None`` is not planned
      for (the episode may end at it; the answer is then :meth:`current_answer`).
    * Ties (RoundRobin, the kept half, the answer) are broken uniformly at random.

    Implementation: with ``batch_size=1`` a RoundRobin batch is one pull of a least-pulled
    survivor (ties at random), so a stage's ``B_s`` batches are asked as one pull request
    of their RoundRobin allocation (the same law, O(1) per pull). With larger batches the
    survivors sit at two pull levels, and a batch that takes arms of the lowest level only
    (or ends a sweep of it) is drawn by :mod:`agents.engine.lowest_level` with exactly the draws
    of the engine's RoundRobin batch over ``S``, in O(b + n/64) instead of O(|S|); other
    batches are the engine's.
    """

    name = "halving"
    settings = frozenset({FIXED_BUDGET})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode: the stage count and each stage's share of the budget."""
        super().reset(problem, seed=seed)
        n, k = problem.n_arms, problem.k
        self.n_stages = max(1, math.ceil(math.log2(n / k)))
        if problem.batch_size is None:
            total = int(problem.budget)
            self.min_keep = k
        else:
            b = int(problem.batch_size)
            r = int(problem.repeat_limit) if problem.repeat_limit is not None else b
            total = problem.max_batches
            if total is None:
                total = -(-int(problem.budget) // b)
            total = int(total)
            self.min_keep = max(k, -(-b // r))
        per, extra = divmod(total, self.n_stages)
        shares = np.full(self.n_stages, per, dtype=np.int64)
        pool = np.arange(self.n_stages, dtype=np.int64)
        engine.choose_distinct(pool, self.n_stages, extra, self.rng)  # `extra` stages at random
        shares[pool[:extra]] += 1
        self.stage_budgets = shares  # batches per stage (pulls per stage if b is None)
        sizes = [n]  # |S_s| for s = 1 .. L + 1: keep max(ceil(|S|/2), ceil(b/r), k)
        for _ in range(self.n_stages):
            sizes.append(min(sizes[-1], max(-(-sizes[-1] // 2), self.min_keep)))
        self.stage_sizes = sizes

    def params(self) -> np.ndarray:
        """``prm = [L, B_1, ..., B_L, |S_2|, ..., |S_{L+1}|]`` (stage shares and sizes)."""
        return np.concatenate(([self.n_stages], self.stage_budgets, self.stage_sizes[1:])).astype(
            np.float64
        )

    @property
    def surviving(self) -> np.ndarray:
        """The surviving set ``S`` (ascending; arms not eliminated by a stage)."""
        return self.undecided
