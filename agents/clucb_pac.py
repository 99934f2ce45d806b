"""CLUCB-PAC: combinatorial LUCB for epsilon-top-k arms (Chen, Lin, King, Lyu, Chen 2014)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Generator

import numpy as np

from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    PullOne,
    Request,
    ScriptedAgent,
    check_probability,
)
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = ["CLUCBPAC"]


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class CLUCBPAC(ScriptedAgent):
    """CLUCB with the PAC stopping rule, for the decision class of size-k sets.

    Paper:
        Shouyuan Chen, Tian Lin, Irwin King, Michael R. Lyu, Wei Chen. "Combinatorial
        pure exploration of multi-armed bandits". NIPS 2014. Algorithm 1 (CLUCB) with
        the (epsilon, delta)-PAC stopping condition of its Appendix (CLUCB-PAC), applied
        to top-k as chen2017 (Sec. 1.2 and Sec. 3) uses it: the baseline whose answer
        has aggregate regret at most ``epsilon`` with probability ``1 - delta``.

    Formula used (Chen et al. 2014, Alg. 1; the decision class is all k-subsets, whose
    maximization oracle is "the k largest weights"):

    * initialize: pull every arm once; ``t = n``;
    * every step ``t``: ``M_t`` = top k of the empirical means; radius
      ``rad_t(i) = R sqrt(2 ln(4 n t^3 / delta) / T_t(i))`` with ``T_t(i)`` the pulls of
      arm ``i`` and ``R`` the sub-Gaussian scale (``R = problem.sigma``, 1/2 for rewards
      in [0, 1]); adjusted weights ``w~_i = mean_i - rad_t(i)`` for ``i in M_t`` and
      ``mean_i + rad_t(i)`` otherwise; ``M~_t`` = top k of ``w~``;
    * stop and answer ``M_t`` if ``w~(M~_t) - w~(M_t) <= epsilon_sum`` (PAC condition;
      ``epsilon_sum = 0`` is plain CLUCB);
    * else pull once the arm of the symmetric difference ``M_t (+) M~_t`` with the
      largest radius; ``t = t + 1``.

    The PAC guarantee of CLUCB-PAC is on the total ``w(M*) - w(M_out) <= epsilon_sum``.
    chen2017 measures aggregate regret (the average, zhou2014 eq. 1), so we use
    ``epsilon_sum = k * epsilon``: the answer's aggregate regret is at most
    ``epsilon`` with probability at least ``1 - delta``.

    Args:
        epsilon: aggregate-regret tolerance, >= 0 (0: exact top-k, plain CLUCB).
            Default 0.01 (chen2017 Sec. 3).
        delta: failure probability, in (0, 1). Default 0.01 (chen2017 Sec. 3).
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (its own stopping rule; ``max_batches`` may truncate)
    and fixed budget, anytime as chen2017 runs it: when the budget ends the answer is
    the current ``M_t`` (:meth:`current_answer`, the top k empirical means).

    Departures from the paper, and why:

    * Ties (in both oracle calls and in the choice of the arm to pull) are broken
      uniformly at random (paper-notes); the paper's oracle is arbitrary.
    * One pull per step: CLUCB is sequential, so in the batch model every step is a
      batch with one pull (it runs at any ``batch_size`` but does not use batches).
    * ``t`` is the number of pulls made so far (the paper's round counter, which
      starts at ``n`` after the initialization).
    """

    name = "clucb_pac"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(
        self, epsilon: float = 0.01, delta: float = 0.01, *, seed: int | None = None
    ) -> None:
        super().__init__(seed=seed)
        if not _is_real(epsilon) or not 0.0 <= float(epsilon) < math.inf:
            raise ValueError(f"epsilon={epsilon!r} must be a finite number >= 0")
        check_probability("delta", delta)
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode."""
        super().reset(problem, seed=seed)
        self.steps = 0

    def radius(self, counts: np.ndarray, t: int) -> np.ndarray:
        """``rad_t(i) = R sqrt(2 ln(4 n t^3 / delta) / T_t(i))`` (counts must be >= 1)."""
        return self._scale(t) / np.sqrt(counts)

    def _scale(self, t: int) -> float:
        """``R sqrt(2 ln(4 n t^3 / delta))``: ``rad_t(i)`` is this over ``sqrt(T_t(i))``."""
        n = self.problem.n_arms
        return self.problem.sigma * math.sqrt(2.0 * math.log(4.0 * n * float(t) ** 3 / self.delta))

    def _run(self) -> Generator[Request, None, np.ndarray]:
        # The direct computation, with sqrt(T_i) kept per arm (one arm changes per
        # step) and M_t, M~_t as ascending index lists instead of masks: the same
        # values, sets and draws from self.rng as recomputing everything.
        p = self.problem
        n, k = p.n_arms, p.k
        eps_sum = k * self.epsilon
        counts, means = self.counts, self.means
        rng = self.rng
        yield from self._each_once(np.arange(n))
        single: list[PullOne | None] = [None] * n  # one cached request per arm
        sq = np.sqrt(counts)  # sqrt(T_i), as radius() computes it
        small = k <= 64
        while True:
            t = self.total_pulls
            high = top_k(means, k, rng)  # M_t, ascending
            rad = self._scale(t) / sq
            w = means + rad
            w_high = means[high] - rad[high]
            w[high] = w_high  # mean - rad in M_t, mean + rad elsewhere
            high_t = top_k(w, k, rng)  # M~_t, ascending
            gain = w[high_t].sum() - w_high.sum()
            if gain <= eps_sum:
                return high
            if small:  # M (+) M~, ascending
                sym = set(high.tolist()).symmetric_difference(high_t.tolist())
                diff = np.array(sorted(sym), dtype=np.int64)
            else:
                diff = np.setxor1d(high, high_t, assume_unique=True)
            rd = rad[diff]
            best = diff[rd == rd.max()]
            arm = int(best[0] if best.shape[0] == 1 else best[int(rng.integers(best.shape[0]))])
            self.steps += 1
            req = single[arm]
            if req is None:
                req = single[arm] = PullOne(arm)
            yield req
            sq[arm] = math.sqrt(counts.item(arm))
