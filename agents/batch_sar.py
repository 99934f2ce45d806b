"""BatchSAR: Successive Accepts and Rejects with batch pulls (Jun et al. 2016, Alg. 3)."""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from agents.base import FIXED_BUDGET, Batch, Pull, Request, ScriptedAgent
from agents.scheduling import round_robin
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = ["BatchSAR"]


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
    surviving set ``S`` (``yield Batch(S)``) until every surviving arm has ``m'_s``
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
      (:func:`agents.scheduling.round_robin`). A ``max_batches`` given with
      ``batch_size=None`` is not planned for (the episode may end at it; the answer
      is then :meth:`current_answer`).
    * Ties (ranking, equal gaps, RoundRobin, the final top k') are broken uniformly at
      random (the paper: "arbitrarily").
    """

    name = "batch_sar"
    settings = frozenset({FIXED_BUDGET})

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
        self.surviving = np.arange(n, dtype=np.int64)
        self.accepted = np.empty(0, dtype=np.int64)
        self.removed_pulls = 0  # sum over past stages of T_{j_s'}(t_s')
        self.stage_targets: list[int] = []  # m'_s of every elimination stage run
        self.last_stage_start: int | None = None  # pulls made when the last stage began
        self.early_exit = False  # the answer was settled before the last stage

    def stage_target(self, s: int, removed_pulls: int) -> int:
        """``m'_s`` of eq. (10), stage ``s`` (1-based), ``removed_pulls`` of removed arms."""
        n, b, nt = self.problem.n_arms, self.b, self.n_tilde
        alive = n - s + 1
        extra = sum(-(-b // i) for i in range(nt + 1, alive + 1))
        harmonic = sum(1.0 / i for i in range(nt + 1, alive + 1))
        c1 = b + nt * self.r_tilde + alive
        num = self.capacity - removed_pulls - extra - c1
        return max(1, math.ceil(num / ((nt / 2.0 + harmonic) * alive)))

    def current_answer(self) -> np.ndarray:
        """Accepted arms plus the best empirical means among the surviving arms."""
        need = self.problem.k - self.accepted.size
        if need <= 0:
            return self.accepted[: self.problem.k]
        s = self.surviving
        values = np.where(self.counts[s] > 0, self.means[s], -np.inf)
        return np.concatenate((self.accepted, s[top_k(values, need, self.rng)]))

    # -------------------------------------------------------------- algorithm
    def _sample_to(self, arms: np.ndarray, target: int) -> Generator[Request, None, None]:
        """Sample ``arms`` until each has ``target`` pulls (or the budget ends)."""
        if self.problem.batch_size is None:
            need = target - self.counts[arms]
            if need.max() > 0:
                yield Pull(arms, np.maximum(need, 0))
            return
        counts = self.counts
        while counts[arms].min() < target:
            yield Batch(arms)

    def _run(self) -> Generator[Request, None, np.ndarray]:
        p = self.problem
        n, k = p.n_arms, p.k
        for s in range(1, n - self.n_tilde + 1):
            target = self.stage_target(s, self.removed_pulls)
            self.stage_targets.append(target)
            yield from self._sample_to(self.surviving, target)
            if self.pulls_left() == 0 or self.batches_left() == 0:
                return self.current_answer()
            self._remove_one()
            kp = k - self.accepted.size
            if kp == 0:  # early exit case 2
                self.early_exit = True
                return self.accepted
            if self.surviving.size == kp:  # early exit case 1
                self.early_exit = True
                self.accepted = np.concatenate((self.accepted, self.surviving))
                self.surviving = self.surviving[:0]
                return self.accepted
        # Last stage: sample the survivors until the budget is spent.
        self.last_stage_start = self.total_pulls
        arms = self.surviving
        if p.batch_size is None:
            left = self.pulls_left()
            if left:
                alloc = round_robin(self.counts[arms], np.full(arms.size, left), left, self.rng)
                keep = alloc > 0
                yield Pull(arms[keep], alloc[keep])
        else:
            while self.pulls_left() != 0 and self.batches_left() != 0:
                yield Batch(arms)
        return self.current_answer()

    def _remove_one(self) -> None:
        """Stage decision: accept the empirical best or reject the empirical worst survivor."""
        s = self.surviving
        kp = self.problem.k - self.accepted.size
        mu = self.means[s]
        order = np.lexsort((self.rng.random(s.size), -mu))  # descending, random ties
        gap_top = mu[order[0]] - mu[order[kp]]
        gap_bottom = mu[order[kp - 1]] - mu[order[-1]]
        if gap_top > gap_bottom or (gap_top == gap_bottom and self.rng.random() < 0.5):
            j = order[0]
            self.accepted = np.append(self.accepted, s[j])
        else:
            j = order[-1]
        self.removed_pulls += int(self.counts[s[j]])
        self.surviving = np.delete(s, j)
