"""The Bayes-optimal fixed-budget policy on tiny families, by dynamic programming."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Generator
from typing import Any, ClassVar

import numpy as np

from agents.base import FIXED_BUDGET, PullOne, ScriptedAgent
from agents.bayesian.beta_prior import check_bernoulli, check_beta_prior, posterior_top_k
from agents.bayesian.exact import MAX_STATES, BetaBernoulliDP

__all__ = ["BayesOptimalDP", "MAX_STATES", "bayes_value", "solved"]

#: Solved families kept in this process (their values, 8 bytes a state) hold at most
#: this many states in all; the least recently used are dropped first.
CACHE_STATES = MAX_STATES

_SOLVERS: OrderedDict[tuple[float, float, int, int, int], BetaBernoulliDP] = OrderedDict()


def bayes_value(n_arms: int, k: int, budget: int, a: float = 1.0, b: float = 1.0) -> float:
    """The Bayes-optimal expected sum of the chosen arms' true means (exact).

    With means i.i.d. Beta(a, b) and ``budget`` Bernoulli pulls, one at a time; the
    Bayes risk of the optimal policy is ``E[sum of the k largest means]`` minus this.
    """
    return solved(n_arms, k, budget, a, b).value


def solved(n_arms: int, k: int, budget: int, a: float = 1.0, b: float = 1.0) -> BetaBernoulliDP:
    """The solved DP of the family, kept in this process for the next call.

    Solved families hold at most :data:`CACHE_STATES` states in all (the least recently
    used are dropped); a family of more than :data:`MAX_STATES` states raises.
    """
    a, b = check_beta_prior(a, b)
    key = (a, b, k, n_arms, budget)
    if key in _SOLVERS:
        _SOLVERS.move_to_end(key)
        return _SOLVERS[key]
    solver = BetaBernoulliDP(n_arms, k, budget, a, b)
    held = sum(s.n_states for s in _SOLVERS.values())
    while _SOLVERS and held + solver.n_states > CACHE_STATES:
        held -= _SOLVERS.popitem(last=False)[1].n_states
    solver.solve()
    _SOLVERS[key] = solver
    return solver


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
    i]``. The values are exact, solved once per family by backward induction over the
    posterior states up to arm permutation (:class:`agents.bayesian.exact.BetaBernoulliDP`,
    compiled; kept for the later episodes of the same ``(a, b, k, n_arms, budget)`` in
    this process); arms whose values are within 1e-12 of the best are tied, and ties go
    at random (``rng.choice`` over the tied arms in index order). It is the ceiling on
    expected regret any policy, learned or scripted, can reach on such a family
    (:func:`bayes_value`).

    Args:
        a: the Beta prior's first parameter (default 1: with ``b = 1``, ``uniform-random``).
        b: the Beta prior's second parameter (default 1).
        seed: seeds tie-breaking.

    Setting: fixed budget, Bernoulli arms, at most :data:`MAX_STATES` posterior states
    (about ``C(T + 2n, 2n) / n!``: 3 arms with budget <= 71, 4 arms <= 45, 5 arms <= 36;
    4 arms and budget 40 solve in about 5 s); otherwise ``reset`` raises.
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
        self._solver = solved(problem.n_arms, problem.k, problem.budget, self.a, self.b)
        super().reset(problem, seed=seed)

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def _run(self) -> Generator[PullOne, None, np.ndarray]:
        while self.pulls_left() > 0 and (self.batches_left() is None or self.batches_left() > 0):
            wins = np.rint(self.means * self.counts).astype(np.int64)
            q = self._solver.q_values(wins, self.counts - wins)
            best = np.flatnonzero(q >= q.max() - 1e-12)
            yield PullOne(int(self.rng.choice(best)))
        return self.current_answer()
