"""Halving: Sequential Halving for top-k with batch pulls (Jun et al. 2016, Alg. 4)."""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from agents.base import FIXED_BUDGET, Batch, Pull, Request, ScriptedAgent
from agents.scheduling import round_robin
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = ["Halving"]


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
    over the surviving set ``S`` (``yield Batch(S)``), ``B_s = floor(B / L)`` plus one
    for ``B mod L`` stages chosen uniformly at random (Sec. 5.2: "we randomly spread
    out the remaining budget over stages"), then keeps the
    ``max(ceil(|S|/2), ceil(b/r), k)`` arms of ``S`` with the largest empirical means.
    The answer is the ``k`` best empirical means of the final ``S``.

    Args:
        seed: seed of the generator (budget spreading and ties).

    Settings: fixed budget only. The batch budget is ``B = problem.max_batches``, or
    ``ceil(budget / b)`` when only a pull budget is given.

    Departures from the paper, and why:

    * Line 11 keeps ``max(ceil(|S|/2), ceil(b/r))`` arms, which falls below ``k`` when
      ``n/k`` is not a power of two (n = 100, k = 10: 100, 50, 25, 13, 7); we keep at
      least ``k`` (paper-notes, "Ambiguities").
    * Line 13 outputs ``S_{L+1}``, which has more than ``k`` arms when
      ``ceil(b/r) > k``; we output its ``k`` best empirical means.
    * ``batch_size=None`` (no batch constraint): the pull budget is split over the
      stages instead (``floor(T / L)`` pulls each, the remainder spread at random, as
      Karnin et al.'s Sequential Halving splits samples), and a stage is one
      :class:`~agents.base.Pull` request that spreads its pulls over ``S`` by
      RoundRobin (:func:`agents.scheduling.round_robin`); ``ceil(b/r)`` is dropped
      from the rule. A ``max_batches`` given with ``batch_size=None`` is not planned
      for (the episode may end at it; the answer is then :meth:`current_answer`).
    * Ties (RoundRobin, the kept half, the answer) are broken uniformly at random.
    """

    name = "halving"
    settings = frozenset({FIXED_BUDGET})

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
        shares[self.rng.choice(self.n_stages, size=extra, replace=False)] += 1
        self.stage_budgets = shares  # batches per stage (pulls per stage if b is None)
        sizes = [n]  # |S_s| for s = 1 .. L + 1: keep max(ceil(|S|/2), ceil(b/r), k)
        for _ in range(self.n_stages):
            sizes.append(min(sizes[-1], max(-(-sizes[-1] // 2), self.min_keep)))
        self.stage_sizes = sizes
        self.surviving = np.arange(n, dtype=np.int64)

    def current_answer(self) -> np.ndarray:
        """The ``k`` best empirical means among the surviving arms."""
        s = self.surviving
        values = np.where(self.counts[s] > 0, self.means[s], -np.inf)
        return s[top_k(values, self.problem.k, self.rng)]

    def _run(self) -> Generator[Request, None, np.ndarray]:
        for share, size in zip(self.stage_budgets, self.stage_sizes[1:], strict=True):
            s = self.surviving
            share = int(share)
            if self.problem.batch_size is None:
                if share > 0:
                    alloc = round_robin(self.counts[s], np.full(s.size, share), share, self.rng)
                    keep = alloc > 0
                    yield Pull(s[keep], alloc[keep])
            else:
                for _ in range(share):
                    yield Batch(s)
            values = np.where(self.counts[s] > 0, self.means[s], -np.inf)
            self.surviving = s[top_k(values, size, self.rng)]
        return self.current_answer()
