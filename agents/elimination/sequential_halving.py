"""Sequential Halving (Karnin, Koren, Somekh 2013, Algorithm 1): fixed budget, best arm."""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent

__all__ = ["SequentialHalving", "run"]


@numba.njit
def run(ctx, prm):
    """Sequential Halving (``prm = [round_means]``); see :class:`SequentialHalving`."""
    iv = ctx.iv
    n = iv[engine.N]
    budget = iv[engine.BUDGET]
    round_means = prm[0] > 0.0
    rounds = int(math.ceil(math.log2(n)))
    surv = np.arange(n)
    m = n
    sums0 = np.zeros(n)
    counts0 = np.zeros(n, dtype=np.int64)
    values = np.empty(n)
    keep = np.empty(n, dtype=np.int64)
    for _ in range(rounds):
        if m == 1:
            break
        t_r = budget // (m * rounds)
        engine.snapshot(ctx, surv[:m], counts0, sums0)
        if t_r > 0:
            yield engine.request_each(ctx, surv[:m], t_r)
        for j in range(m):
            a = surv[j]
            c = ctx.counts[a]
            if round_means and c > counts0[a]:
                values[a] = (ctx.means[a] * c - sums0[a]) / (c - counts0[a])
            elif c > 0:
                values[a] = ctx.means[a]
            else:
                values[a] = -np.inf
        size = (m + 1) // 2
        engine.top_k_into(values, surv[:m], size, ctx.rng, keep, 0)
        for j in range(m):
            ctx.status[surv[j]] = engine.REJECTED
        kept = np.sort(keep[:size])
        for j in range(size):
            surv[j] = kept[j]
            ctx.status[kept[j]] = engine.UNDECIDED
        m = size
    engine.finish(ctx, surv[:1])


class SequentialHalving(ScriptedAgent):
    """Sequential Halving for best-arm identification with a fixed budget ``T``.

    Paper:
        Zohar Karnin, Tomer Koren, Oren Somekh. "Almost optimal exploration in
        multi-armed bandits". ICML 2013 (PMLR 28(3):1238-1246), Algorithm 1: for
        ``r = 0, ..., ceil(log2 n) - 1``, sample every arm of ``S_r`` exactly
        ``t_r = floor(T / (|S_r| ceil(log2 n)))`` times, and keep the ``ceil(|S_r| / 2)``
        arms of ``S_r`` with the highest empirical means of round ``r``'s samples; answer
        the last arm left (Theorem 4.1: error at most ``3 log2(n) exp(-T / (8 log2(n) H2))``).

    Relation to :class:`~agents.elimination.halving.Halving` (Jun et al. 2016, Alg. 4): Halving
    adapts this algorithm to top-k with batches (``ceil(log2(n/k))`` stages, the budget split in
    batches, means over all samples). With k = 1 and one pull per step the two differ in the budget
    split (``floor(T / (|S_r| ceil(log2 n)))`` per arm here) and in the means (round-only here, as
    in the paper's analysis, which needs rounds independent).

    Args:
        round_means: ``True`` (paper): rank by the means of the round's samples only;
            ``False``: by all samples so far (a common variant).
        seed: seed of the tie-breaking generator.

    Settings: fixed budget, k = 1. Any ``batch_size``/``repeat_limit`` (a round is one
    request; RoundRobin spreads it over batches). Ties at random. The budget left over by
    the floors is not used (as in the paper).
    """

    name = "sequential_halving"
    settings = frozenset({FIXED_BUDGET})
    k_values = frozenset({1})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, round_means: bool = True, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        if not isinstance(round_means, (bool, np.bool_)):
            raise ValueError(f"round_means={round_means!r} must be True or False")
        self.round_means = bool(round_means)

    def params(self) -> np.ndarray:
        return np.array([1.0 if self.round_means else 0.0])
