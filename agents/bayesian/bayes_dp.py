"""The Bayes-optimal fixed-budget policy on tiny families, by dynamic programming."""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np

from agents.base import FIXED_BUDGET, PullOne, ScriptedAgent
from agents.bayesian.beta_prior import check_bernoulli, check_beta_prior, posterior_top_k

__all__ = ["BayesOptimalDP", "MAX_STATES", "bayes_value"]

#: The most posterior states (up to arm permutation) a solve may visit.
MAX_STATES = 3_000_000

State = tuple[tuple[int, int], ...]


class _Solver:
    """Memoised Bellman recursion over posterior states (successes, failures) per arm.

    ``value(state, t)`` is the largest expected terminal value ``sum of the top-k
    posterior means`` reachable with ``t`` pulls left; states are stored sorted (the
    arms are exchangeable under an i.i.d. prior), so a solve visits about ``C(T + 2n,
    2n) / n!`` states.
    """

    def __init__(self, a: float, b: float, k: int) -> None:
        self.a, self.b, self.k = a, b, k
        self.memo: dict[tuple[State, int], float] = {}

    def terminal(self, state: State) -> float:
        means = sorted(((self.a + s) / (self.a + self.b + s + f) for s, f in state), reverse=True)
        return float(sum(means[: self.k]))

    def q_values(self, state: State, t: int) -> list[float]:
        """Expected value of pulling each arm now, then playing optimally."""
        out = []
        for i, (s, f) in enumerate(state):
            p = (self.a + s) / (self.a + self.b + s + f)
            win = state[:i] + ((s + 1, f),) + state[i + 1 :]
            loss = state[:i] + ((s, f + 1),) + state[i + 1 :]
            out.append(p * self.value(win, t - 1) + (1 - p) * self.value(loss, t - 1))
        return out

    def value(self, state: State, t: int) -> float:
        if t == 0:
            return self.terminal(state)
        key = (tuple(sorted(state)), t)
        v = self.memo.get(key)
        if v is None:
            v = self.memo[key] = max(self.q_values(key[0], t))
        return v


_SOLVERS: dict[tuple[float, float, int, int], _Solver] = {}


def _states(n: int, budget: int) -> int:
    return math.comb(budget + 2 * n, 2 * n) // math.factorial(n)


def bayes_value(n_arms: int, k: int, budget: int, a: float = 1.0, b: float = 1.0) -> float:
    """The Bayes-optimal expected sum of the chosen arms' true means (exact).

    With means i.i.d. Beta(a, b) and ``budget`` Bernoulli pulls, one at a time; the
    Bayes risk of the optimal policy is ``E[sum of the k largest means]`` minus this.
    """
    solver = _solver(n_arms, k, budget, *check_beta_prior(a, b))
    return solver.value(((0, 0),) * n_arms, budget)


def _solver(n: int, k: int, budget: int, a: float, b: float) -> _Solver:
    if _states(n, budget) > MAX_STATES:
        raise ValueError(
            f"n_arms={n} with budget={budget} has about {_states(n, budget)} posterior states; "
            f"the exact DP allows at most {MAX_STATES} (e.g. 3 arms and budget <= 30)"
        )
    key = (a, b, k, n)
    if key not in _SOLVERS:
        _SOLVERS[key] = _Solver(a, b, k)
    return _SOLVERS[key]


class BayesOptimalDP(ScriptedAgent):
    """The exact Bayes-optimal fixed-budget policy for a Beta prior (tiny families).

    Paper:
        The Bayesian formulation of sequential sampling as a Markov decision process over
        posterior states, solved by backward induction: Richard Bellman, "A problem in
        the sequential design of experiments", Sankhya 16, 1956; John Gittins, Kevin
        Glazebrook, Richard Weber, "Multi-armed Bandit Allocation Indices", 2nd ed.,
        Wiley 2011, Ch. 1-2. For ranking and selection with a sampling budget, the
        dynamic program whose one-step approximation is the knowledge gradient: Frazier,
        Powell, Dayanik, SIAM J. Control Optim. 47(5), 2008, Sec. 2.

    The means are i.i.d. Beta(a, b) (the catalog's ``uniform-random``: a = b = 1;
    ``beta-random``: its ``a``, ``b``), rewards Bernoulli, ``budget`` pulls made one at
    a time (:class:`~agents.base.PullOne`), and the terminal reward is the sum of the
    chosen arms' means, so the Bayes-optimal answer is the posterior top k and the
    value of a posterior state with ``t`` pulls left is ``max_i E[value after pulling
    i]``. The recursion is exact (memoised over states up to arm permutation, shared by
    every episode of the same ``(a, b, k, n_arms)`` in this process); ties between arms
    of equal value go at random. It is the ceiling on expected regret any policy, learned
    or scripted, can reach on such a family (:func:`bayes_value`).

    Args:
        a: the Beta prior's first parameter (default 1: with ``b = 1``, ``uniform-random``).
        b: the Beta prior's second parameter (default 1).
        seed: seeds tie-breaking.

    Setting: fixed budget, Bernoulli arms, ``C(T + 2n, 2n) / n!`` states at most
    :data:`MAX_STATES` (3 arms: budget <= 30); otherwise ``reset`` raises.
    """

    name = "bayes_dp"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET})

    def __init__(self, a: float = 1.0, b: float = 1.0, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode; raises if the family is too large for the exact DP."""
        check_bernoulli(problem, self.name)
        self._solver = _solver(problem.n_arms, problem.k, problem.budget, self.a, self.b)
        super().reset(problem, seed=seed)

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def _run(self) -> Generator[PullOne, None, np.ndarray]:
        while self.pulls_left() > 0 and (self.batches_left() is None or self.batches_left() > 0):
            wins = np.rint(self.means * self.counts).astype(np.int64)
            state = tuple(
                (int(s), int(n - s)) for s, n in zip(wins, self.counts.tolist(), strict=True)
            )
            q = np.array(self._solver.q_values(state, self.pulls_left()))
            best = np.flatnonzero(q >= q.max() - 1e-12)
            yield PullOne(int(self.rng.choice(best)))
        return self.current_answer()
