"""RoundRobin: the non-adaptive batch baseline of Jun et al. (2016), Sec. 5.2."""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    Batch,
    Pull,
    Request,
    ScriptedAgent,
    check_probability,
)
from agents.confidence import jun_deviation
from agents.scheduling import round_robin
from bandit_envs.problem import Problem

__all__ = ["RoundRobin"]


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
    (:func:`agents.scheduling.round_robin`), i.e. uniform allocation.

    Fixed confidence (not in the paper; our choice): the paper uses RoundRobin only with
    a budget. Its Table 1 "speedup" baseline is a different thing, BatchRacing run at
    b = r = 1 (Sec. 5.1: average batches at (1, 1) over average batches at (b, r)),
    which is :class:`agents.batch_racing.BatchRacing` on a b = r = 1 environment. For a
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
    """

    name = "round_robin"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode (``omega = sqrt(delta / (6n))`` for the stopping rule)."""
        super().reset(problem, seed=seed)
        self.omega = math.sqrt(self.delta / (6.0 * problem.n_arms))

    def _run(self) -> Generator[Request, None, np.ndarray]:
        p = self.problem
        arms = np.arange(p.n_arms, dtype=np.int64)
        if p.fixed_budget:
            if p.batch_size is None:
                left = int(self.pulls_left())
                yield Pull(arms, round_robin(self.counts, np.full(arms.size, left), left, self.rng))
            else:
                while self.pulls_left() != 0 and self.batches_left() != 0:
                    yield Batch(arms)
            return self.current_answer()
        n, k = p.n_arms, p.k
        while True:
            yield Batch(arms)
            width = jun_deviation(self.counts, self.omega, p.sigma)
            lo = self.means - width
            hi = self.means + width
            if np.partition(lo, n - k)[n - k] > np.partition(hi, n - k - 1)[n - k - 1]:
                return np.argpartition(lo, n - k)[n - k :]
