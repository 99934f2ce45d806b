"""Exact Bayes-optimal values and exact policy evaluation on tiny Beta-Bernoulli families.

The model: ``n`` Bernoulli arms whose means are i.i.d. Beta(a, b), a budget of ``T``
pulls made one at a time, and the terminal value ``sum of the k largest posterior
means`` (the Bayes-optimal answer for aggregate regret is the posterior top k, and the
Bayes risk of a policy is ``E[sum of the k largest means]`` minus its expected terminal
value). The posterior is the per-arm pair (successes, failures); the arms are
exchangeable, so a state is the *multiset* of the ``n`` pairs. This module solves the
Bellman recursion over those states exactly, by backward induction on the pulls made
(Bellman 1956; Gittins, Glazebrook & Weber 2011, Ch. 1-2; Frazier, Powell & Dayanik
2008, Sec. 2 for ranking and selection with a sampling budget), and evaluates any policy
whose decision is a function of the posterior state on the same states.

**Indexing.** A pair ``(s, f)`` with ``m = s + f`` pulls has the code ``m (m + 1) / 2 +
f`` (codes grow with ``m``). A state after ``t`` pulls is its codes sorted in
decreasing order, ``c_1 >= ... >= c_n`` with ``sum m(c_i) = t``, and its index among the
states of level ``t`` is its rank in increasing lexicographic order,

    rank(c; t) = sum_i F(n - i + 1, c_i, t - m(c_1) - ... - m(c_{i-1})),

with ``F(j, c, t)`` the number of decreasing code sequences of length ``j`` whose first
code is ``< c`` and whose pulls sum to ``t`` (a table of ``(n + 1) (P + 1) (T + 1)``
integers, ``P = (T + 1)(T + 2) / 2`` codes; ``F(j, c, t) = F(j, c - 1, t) + F(j - 1, c,
t - m(c - 1))``). The rank is perfect (level ``t`` has exactly ``F(n, P, t)`` states,
about ``C(t + 2n - 1, 2n - 1) / n!``) and costs ``n`` table reads; a pull moves one code
up by one level and re-sorts it in ``n`` steps. The values of level ``t`` need those of
level ``t + 1`` only.

**Policies.** :meth:`BetaBernoulliDP.evaluate` computes ``E[terminal value]`` of a policy
exactly: a decision is a weight per arm (a tied set gets equal weights, so its
continuation values are averaged: a policy that breaks ties at random), given either as
a compiled rule ``rule(alpha, beta, k, pulls_left, out)`` (posterior parameters of the
state's arms, float64[n]; ``out`` float64[n] receives the weights; e.g.
:func:`kg_rule`, :func:`uniform_rule`) or as a Python callable taking whole levels at
once, ``policy(alpha, beta, k, pulls_left) -> weights`` with arrays of shape
``(states, n)`` (a torch network can be evaluated batched). The arms of a state are
passed in the state's canonical order, so a rule must be a function of the multiset
(equivariant under permuting the arms), as every Bayesian agent's decision with random
tie-breaking is; the terminal answer is always the posterior top k.

:class:`BatchDP` is the same recursion when each step is a batch of pulls from Jun et
al.'s set ``A = {a in {0..r}^n : 1 <= sum a <= b}`` and the budget is a number of
batches.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from agents.bayesian.beta_prior import check_beta_prior
from agents.bayesian.knowledge_gradient import TIE, _values_into

__all__ = [
    "MAX_STATES",
    "BatchDP",
    "BetaBernoulliDP",
    "batch_uniform_rule",
    "kg_rule",
    "kg_top_batch_rule",
    "policy_value",
    "rule_weights",
    "state_count",
    "uniform_rule",
]

#: The most posterior states (over all levels) a solve may hold: the values of every
#: level are kept (8 bytes a state): 3 arms with budget <= 71, 4 arms <= 45, 5 arms <= 36.
MAX_STATES = 40_000_000

#: Python-callable policies are called on at most this many states at once.
CHUNK = 1 << 16


# ---------------------------------------------------------------------------------------
# Codes of (successes, failures) pairs and the rank of a sorted multiset of codes


@numba.njit(cache=True)
def _pair_tables(horizon, a, b):
    """Per code ``c < P``: successes, failures, pulls, posterior mean, codes after a win/loss."""
    size = (horizon + 1) * (horizon + 2) // 2
    s_of = np.empty(size, np.int64)
    f_of = np.empty(size, np.int64)
    m_of = np.empty(size, np.int64)
    mean = np.empty(size)
    win = np.full(size, -1, np.int64)
    loss = np.full(size, -1, np.int64)
    for m in range(horizon + 1):
        base = m * (m + 1) // 2
        for f in range(m + 1):
            c = base + f
            s = m - f
            s_of[c], f_of[c], m_of[c] = s, f, m
            # the posterior mean (a + s) / (a + b + s + f), summed left to right
            mean[c] = (a + s) / (a + b + s + f)
            if m < horizon:
                win[c] = (m + 1) * (m + 2) // 2 + f
                loss[c] = win[c] + 1
    return s_of, f_of, m_of, mean, win, loss


@numba.njit(cache=True)
def _count_table(n, horizon, m_of):
    """``F[j, c, t]``: decreasing code sequences of length ``j``, first code ``< c``, sum ``t``."""
    size = m_of.shape[0]
    table = np.zeros((n + 1, size + 1, horizon + 1), np.int64)
    for c in range(size + 1):
        table[0, c, 0] = 1  # the empty sequence (its bound is vacuous)
    for j in range(1, n + 1):
        for c in range(1, size + 1):
            mc = m_of[c - 1]
            for t in range(horizon + 1):
                v = table[j, c - 1, t]
                if t >= mc:
                    v += table[j - 1, c, t - mc]
                table[j, c, t] = v
    return table


@numba.njit(cache=True, inline="always")
def _rank(codes, t, table, m_of):
    """The index of the decreasing codes ``codes`` among the states of level ``t``."""
    n = codes.shape[0]
    r = 0
    rem = t
    for i in range(n):
        r += table[n - i, codes[i], rem]
        rem -= m_of[codes[i]]
    return r


@numba.njit(cache=True, inline="always")
def _moved(row, i, new, buf):
    """``row`` (decreasing) with position ``i`` replaced by ``new >= row[i]``, re-sorted."""
    n = row.shape[0]
    for j in range(n):
        buf[j] = row[j]
    j = i
    while j > 0 and buf[j - 1] < new:
        buf[j] = buf[j - 1]
        j -= 1
    buf[j] = new
    return buf


@numba.njit(cache=True)
def _level_codes(n, t, table, m_of):
    """Every state of level ``t`` (rows of decreasing codes), in rank order."""
    size = m_of.shape[0]
    count = table[n, size, t]
    out = np.empty((count, n), np.int32)
    cur = np.full(n, -1, np.int64)
    rem = np.zeros(n + 1, np.int64)
    rem[0] = t
    i = 0
    row = 0
    while i >= 0:
        left = n - i
        r = rem[i]
        low_m = (r + left - 1) // left  # the largest code carries at least this many pulls
        c = max(cur[i] + 1, low_m * (low_m + 1) // 2)
        hi = r * (r + 1) // 2 + r
        if hi > size - 1:
            hi = size - 1
        if i > 0 and cur[i - 1] < hi:
            hi = cur[i - 1]
        found = -1
        while c <= hi:
            if table[left - 1, c + 1, r - m_of[c]] > 0:
                found = c
                break
            c += 1
        if found < 0:
            i -= 1
            continue
        cur[i] = found
        if i == n - 1:
            for j in range(n):
                out[row, j] = cur[j]
            row += 1
        else:
            rem[i + 1] = r - m_of[found]
            i += 1
            cur[i] = -1
    return out


@numba.njit(cache=True)
def _terminal_level(codes, k, mean, out):
    """``out[r]``: the sum of the ``k`` largest posterior means of state ``r``."""
    n = codes.shape[1]
    buf = np.empty(n)
    for r in range(codes.shape[0]):
        for i in range(n):
            buf[i] = mean[codes[r, i]]
        buf.sort()
        v = 0.0
        for j in range(k):
            v += buf[n - 1 - j]
        out[r] = v


@numba.njit(cache=True, inline="always")
def _q(row, i, t, table, m_of, mean, win, loss, v_next, buf):
    """Pull the arm at position ``i`` of state ``row`` (level ``t``): E[value of level t + 1]."""
    c = row[i]
    p = mean[c]
    vw = v_next[_rank(_moved(row, i, win[c], buf), t + 1, table, m_of)]
    vl = v_next[_rank(_moved(row, i, loss[c], buf), t + 1, table, m_of)]
    return p * vw + (1 - p) * vl


@numba.njit(cache=True)
def _optimal_level(codes, t, table, m_of, mean, win, loss, v_next, out):
    """``out[r] = max over arms`` of the continuation value (one pull, then optimal)."""
    n = codes.shape[1]
    buf = np.empty(n, np.int64)
    for r in range(codes.shape[0]):
        row = codes[r]
        best = -np.inf
        for i in range(n):
            if i > 0 and row[i] == row[i - 1]:
                continue  # an arm of the same posterior: the same value
            q = _q(row, i, t, table, m_of, mean, win, loss, v_next, buf)
            if q > best:
                best = q
        out[r] = best


@numba.njit(cache=True, inline="always")
def _weighted(row, w, t, table, m_of, mean, win, loss, v_next, buf):
    """The weighted average over arms of the continuation values (weights ``w``)."""
    n = row.shape[0]
    acc = 0.0
    total = 0.0
    q = 0.0
    for i in range(n):
        if i == 0 or row[i] != row[i - 1]:
            q = np.nan  # evaluated when needed
        if w[i] == 0.0:
            continue
        if q != q:
            q = _q(row, i, t, table, m_of, mean, win, loss, v_next, buf)
        acc += w[i] * q
        total += w[i]
    return acc / total


@numba.njit(cache=True)
def _weighted_level(codes, weights, t, table, m_of, mean, win, loss, v_next, out):
    """``out[r]``: the continuation value of state ``r`` under the arm weights ``weights[r]``."""
    buf = np.empty(codes.shape[1], np.int64)
    for r in range(codes.shape[0]):
        out[r] = _weighted(codes[r], weights[r], t, table, m_of, mean, win, loss, v_next, buf)


@numba.njit(cache=True)
def _posterior_level(codes, a, b, s_of, m_of, alpha, beta):
    """Posterior parameters of every arm of every state, as ``beta_prior.posterior``.

    ``alpha = a + s``, ``beta = (b + m) - s`` (the same floating-point sums).
    """
    for r in range(codes.shape[0]):
        for i in range(codes.shape[1]):
            c = codes[r, i]
            alpha[r, i] = a + s_of[c]
            beta[r, i] = (b + m_of[c]) - s_of[c]


@numba.njit
def _rule_level(codes, rule, k, pulls, a, b, s_of, t, table, m_of, mean, win, loss, v_next, out):
    """:func:`_weighted_level` with the weights of the compiled ``rule`` at every state."""
    n = codes.shape[1]
    buf = np.empty(n, np.int64)
    alpha, beta, w = np.empty(n), np.empty(n), np.empty(n)
    for r in range(codes.shape[0]):
        row = codes[r]
        for i in range(n):
            c = row[i]
            alpha[i] = a + s_of[c]
            beta[i] = (b + m_of[c]) - s_of[c]
        rule(alpha, beta, k, pulls, w)
        total = 0.0
        for i in range(n):
            if not w[i] >= 0.0 or w[i] == np.inf:
                raise ValueError("a rule's weights must be finite and >= 0")
            total += w[i]
        if not total > 0.0:
            raise ValueError("a rule's weights must not all be 0")
        out[r] = _weighted(row, w, t, table, m_of, mean, win, loss, v_next, buf)


@numba.njit(cache=True)
def _codes_of(successes, failures, out):
    for i in range(successes.shape[0]):
        m = successes[i] + failures[i]
        out[i] = m * (m + 1) // 2 + failures[i]


@numba.njit(cache=True)
def _arm_values(successes, failures, t, table, m_of, mean, win, loss, v_next, out):
    """Each arm's continuation value (arms in their own order), as :func:`_q`."""
    n = successes.shape[0]
    own = np.empty(n, np.int64)
    _codes_of(successes, failures, own)
    row = np.sort(own)[::-1].copy()
    buf = np.empty(n, np.int64)
    for i in range(n):
        # the arm's position in the decreasing row: the first of its code
        j = 0
        while row[j] != own[i]:
            j += 1
        out[i] = _q(row, j, t, table, m_of, mean, win, loss, v_next, buf)


@numba.njit(cache=True)
def _optimal_rows(successes, failures, t, tie, table, m_of, mean, win, loss, v_next, out):
    """Per row (a state of level ``t``): weight 1 on the arms within ``tie`` of the best value."""
    q = np.empty(successes.shape[1])
    for r in range(successes.shape[0]):
        _arm_values(successes[r], failures[r], t, table, m_of, mean, win, loss, v_next, q)
        best = q.max()
        for i in range(q.shape[0]):
            out[r, i] = 1.0 if q[i] >= best - tie else 0.0


# ---------------------------------------------------------------------------------------
# Decision rules (compiled): weights over the arms of one posterior state


@numba.njit(cache=True)
def kg_rule(alpha, beta, k, pulls, out):
    """KG*'s decision (the ``kg`` agent's): weight 1 on every arm within ``TIE`` of the best.

    The values are :mod:`agents.bayesian.knowledge_gradient`'s (its ``_values_into``, every arm
    evaluated in full); the agent's pruned choice draws uniformly among exactly these
    arms (``tests/test_agents_bayes.py::test_kg_choice_is_the_tied_argmax_of_every_value``).
    """
    _values_into(alpha, beta, k, pulls, out)
    best = out.max()
    for i in range(out.shape[0]):
        out[i] = 1.0 if out[i] >= best - TIE else 0.0


@numba.njit(cache=True)
def uniform_rule(alpha, beta, k, pulls, out):
    """Round robin: weight 1 on every arm of the fewest pulls.

    Its final allocation is ``floor(T / n)`` pulls of every arm and one more for ``T mod
    n`` arms drawn independently of the rewards, so its terminal value is that of the
    ``uniform`` and ``round_robin`` agents' allocation (answered by the posterior top k).
    """
    n = alpha.shape[0]
    least = np.inf
    for i in range(n):
        least = min(least, alpha[i] + beta[i])
    for i in range(n):
        # pull counts differ by whole numbers (a tolerance for the rounding of a + b + m)
        out[i] = 1.0 if alpha[i] + beta[i] < least + 0.5 else 0.0


@numba.njit
def _rule_rows(rule, alpha, beta, k, pulls, out):
    for r in range(alpha.shape[0]):
        rule(alpha[r], beta[r], k, pulls, out[r])


# ---------------------------------------------------------------------------------------
# Python API


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    if value < low:
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    return int(value)


def _lower_count(n: int, horizon: int) -> int:
    """``C(T + 2n, 2n) / n!``: at most the number of states (ordered states / n!)."""
    return math.comb(horizon + 2 * n, 2 * n) // math.factorial(n)


def state_count(n_arms: int, budget: int) -> int:
    """The exact number of posterior states up to arm permutation, over pulls 0..budget."""
    n = _check_int("n_arms", n_arms, 1)
    horizon = _check_int("budget", budget, 0)
    if _lower_count(n, horizon) > 50 * MAX_STATES:
        raise ValueError(
            f"n_arms={n} with budget={horizon} has more than {_lower_count(n, horizon):.3g} "
            "posterior states: too many to count here"
        )
    _, _, m_of, _, _, _ = _pair_tables(horizon, 1.0, 1.0)
    table = _count_table(n, horizon, m_of)
    return int(table[n, m_of.shape[0], :].sum())


def _too_many(n: int, horizon: int, count: str, max_states: int) -> str:
    example = " (3 arms: budget <= 71, 4 arms: <= 45, 5 arms: <= 36)"
    return (
        f"n_arms={n} with budget={horizon} has {count} posterior states (arms exchangeable); "
        f"the exact DP allows at most max_states={max_states}"
        + (example if max_states == MAX_STATES else "")
    )


class _Levels:
    """Codes, count table and level sizes of ``n`` arms up to ``horizon`` pulls."""

    def __init__(self, n: int, k: int, horizon: int, a: float, b: float, max_states: int):
        self.n, self.k, self.horizon = n, k, horizon
        self.a, self.b = check_beta_prior(a, b)
        if not 1 <= k <= n:
            raise ValueError(f"k={k} must satisfy 1 <= k <= n_arms={n}")
        low = _lower_count(n, horizon)
        if low > max_states:
            raise ValueError(_too_many(n, horizon, f"at least {low}", max_states))
        tables = _pair_tables(horizon, self.a, self.b)
        self.s_of, self.f_of, self.m_of, self.mean, self.win, self.loss = tables
        self.table = _count_table(n, horizon, self.m_of)
        self.sizes = self.table[n, self.m_of.shape[0], :].copy()
        self.n_states = int(self.sizes.sum())
        if self.n_states > max_states:
            raise ValueError(_too_many(n, horizon, str(self.n_states), max_states))
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])

    def codes(self, t: int) -> np.ndarray:
        return _level_codes(self.n, t, self.table, self.m_of)

    def posterior(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        alpha = np.empty(codes.shape)
        beta = np.empty(codes.shape)
        _posterior_level(codes, self.a, self.b, self.s_of, self.m_of, alpha, beta)
        return alpha, beta

    def terminal(self, codes: np.ndarray) -> np.ndarray:
        out = np.empty(codes.shape[0])
        _terminal_level(codes, self.k, self.mean, out)
        return out


Policy = Callable[..., Any]


class BetaBernoulliDP:
    """The exact Bayes-optimal fixed-budget DP and policy evaluation (module docstring).

    Args:
        n_arms: arms (exchangeable: i.i.d. Beta(a, b) means, Bernoulli rewards).
        k: the size of the answer (terminal value: the k largest posterior means).
        budget: pulls, one at a time.
        a: the Beta prior's first parameter.
        b: the Beta prior's second parameter.
        max_states: refuse families with more posterior states than this
            (:data:`MAX_STATES`).

    :meth:`solve` keeps the optimal value of every state (8 bytes a state; 4 arms with
    budget 40: 16.4 million states, 131 MB, solved in 3-6 s) for :meth:`q_values`;
    :meth:`evaluate` keeps two levels.
    """

    def __init__(
        self,
        n_arms: int,
        k: int,
        budget: int,
        a: float = 1.0,
        b: float = 1.0,
        *,
        max_states: int = MAX_STATES,
    ) -> None:
        n = _check_int("n_arms", n_arms, 1)
        self.levels = _Levels(
            n,
            _check_int("k", k, 1),
            _check_int("budget", budget, 0),
            a,
            b,
            _check_int("max_states", max_states, 1),
        )
        self.n_arms, self.k, self.budget = n, int(k), int(budget)
        self.a, self.b = self.levels.a, self.levels.b
        self._values: np.ndarray | None = None
        self.solve_seconds: float | None = None

    @property
    def n_states(self) -> int:
        """Posterior states up to arm permutation, over every level 0..budget."""
        return self.levels.n_states

    @property
    def level_sizes(self) -> np.ndarray:
        """``level_sizes[t]``: the states after ``t`` pulls."""
        return self.levels.sizes.copy()

    def level_states(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``(successes, failures)``, int64 arrays ``(states, n)``: the states of level ``t``.

        In rank order (the order of :meth:`values`), each state's arms in its canonical
        order (decreasing codes).
        """
        t = self._level(t)
        codes = self.levels.codes(t)
        return self.levels.s_of[codes], self.levels.f_of[codes]

    def rank(self, successes: Any, failures: Any) -> int:
        """The index of a state (any order of its arms) among the states of its level."""
        s, f = self._state(successes, failures)
        codes = np.empty(self.n_arms, np.int64)
        _codes_of(s, f, codes)
        codes = np.sort(codes)[::-1].copy()
        return int(_rank(codes, int((s + f).sum()), self.levels.table, self.levels.m_of))

    def solve(self) -> float:
        """The optimal expected terminal value ``V*`` from the empty state (kept per state)."""
        if self._values is None:
            start = time.perf_counter()
            lv = self.levels
            values = np.empty(lv.n_states)
            for t in range(self.budget, -1, -1):
                codes = lv.codes(t)
                out = values[lv.offsets[t] : lv.offsets[t + 1]]
                if t == self.budget:
                    _terminal_level(codes, self.k, lv.mean, out)
                else:
                    v_next = values[lv.offsets[t + 1] : lv.offsets[t + 2]]
                    _optimal_level(
                        codes, t, lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out
                    )
            self._values = values
            self.solve_seconds = time.perf_counter() - start
        return float(self._values[0])

    @property
    def value(self) -> float:
        """``V*`` (solving first if needed)."""
        return self.solve()

    def values(self, t: int) -> np.ndarray:
        """The optimal values of the states of level ``t`` (in :meth:`level_states` order)."""
        t = self._level(t)
        self.solve()
        return self._values[self.levels.offsets[t] : self.levels.offsets[t + 1]].copy()

    def q_values(self, successes: Any, failures: Any) -> np.ndarray:
        """Each arm's value: pull it now, then play optimally (arms in the given order).

        The state has ``t = sum(successes + failures) < budget`` pulls.
        """
        s, f = self._state(successes, failures)
        t = int((s + f).sum())
        if t >= self.budget:
            raise ValueError(f"the state has {t} pulls: no pull is left of budget={self.budget}")
        self.solve()
        lv = self.levels
        v_next = self._values[lv.offsets[t + 1] : lv.offsets[t + 2]]
        out = np.empty(self.n_arms)
        _arm_values(s, f, t, lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out)
        return out

    def optimal_weights(self, alpha: Any, beta: Any, k: int, pulls: int) -> np.ndarray:
        """The optimal policy as a level policy: weight 1 on the arms within 1e-12 of the best.

        The ``bayes_dp`` agent's rule, as a Python callable for :meth:`evaluate`
        (``alpha``, ``beta``: shape ``(states, n)``, every state with ``budget - pulls``
        pulls; ``k`` is this solver's).
        """
        s = np.rint(np.asarray(alpha) - self.a).astype(np.int64)
        f = np.rint(np.asarray(beta) - self.b).astype(np.int64)
        t = self.budget - int(pulls)
        if s.ndim != 2 or s.shape != f.shape or s.shape[1] != self.n_arms:
            raise ValueError(f"alpha {s.shape} and beta {f.shape} must be (states, {self.n_arms})")
        if (s + f).sum(axis=1).tolist() != [t] * s.shape[0]:
            raise ValueError(f"every state must have budget - pulls = {t} pulls")
        self.solve()
        lv = self.levels
        v_next = self._values[lv.offsets[t + 1] : lv.offsets[t + 2]]
        out = np.empty(s.shape)
        _optimal_rows(s, f, t, 1e-12, lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out)
        return out

    def evaluate(self, policy: Policy | str, *, chunk: int = CHUNK) -> float:
        """The exact expected terminal value of ``policy`` from the empty state.

        ``policy``: ``"kg"``, ``"uniform"``, ``"optimal"``, a compiled rule
        ``rule(alpha, beta, k, pulls_left, out)`` (a ``numba.njit`` function), or a
        Python callable ``policy(alpha, beta, k, pulls_left) -> weights`` over arrays of
        shape ``(states, n)`` (called with at most ``chunk`` states). Weights are
        non-negative, not all zero per state; the value of a state is the weighted
        average of its arms' continuation values.
        """
        return float(self._policy_level(policy, 0, chunk)[0])

    def policy_q_values(
        self, policy: Policy | str, successes: Any, failures: Any, *, chunk: int = CHUNK
    ) -> np.ndarray:
        """Each arm's value: pull it now, then follow ``policy`` (arms in the given order).

        ``Q(s, i) = E[terminal value | pull i at s, then policy]``, exactly: the policy's
        values of the next level (as :meth:`evaluate` computes them) averaged over the
        pull's outcome. The state has ``t = sum(successes + failures) < budget`` pulls;
        ``policy`` as in :meth:`evaluate`.
        """
        s, f = self._state(successes, failures)
        t = int((s + f).sum())
        if t >= self.budget:
            raise ValueError(f"the state has {t} pulls: no pull is left of budget={self.budget}")
        lv = self.levels
        v_next = self._policy_level(policy, t + 1, chunk)
        out = np.empty(self.n_arms)
        _arm_values(s, f, t, lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out)
        return out

    def _policy_level(self, policy: Policy | str, level: int, chunk: int) -> np.ndarray:
        """The values under ``policy`` of the states of ``level`` (backward from the budget)."""
        lv = self.levels
        if isinstance(policy, str):
            named = {"kg": kg_rule, "uniform": uniform_rule}
            if policy == "optimal":
                policy = self.optimal_weights
            elif policy in named:
                policy = named[policy]
            else:
                raise ValueError(
                    f"policy={policy!r} must be 'kg', 'uniform', 'optimal', a compiled rule "
                    "or a callable"
                )
        compiled = isinstance(policy, CPUDispatcher)
        if not compiled and not callable(policy):
            raise ValueError(f"policy={policy!r} is neither a compiled rule nor a callable")
        chunk = _check_int("chunk", chunk, 1)
        v_next = lv.terminal(lv.codes(self.budget))
        for t in range(self.budget - 1, level - 1, -1):
            codes = lv.codes(t)
            out = np.empty(codes.shape[0])
            pulls = self.budget - t
            args = (lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out)
            if compiled:
                _rule_level(codes, policy, self.k, pulls, lv.a, lv.b, lv.s_of, t, *args)
            else:
                for lo in range(0, codes.shape[0], chunk):
                    part = codes[lo : lo + chunk]
                    alpha, beta = lv.posterior(part)
                    w = _check_weights(policy(alpha, beta, self.k, pulls), part.shape, t)
                    args = (lv.table, lv.m_of, lv.mean, lv.win, lv.loss, v_next, out[lo:])
                    _weighted_level(part, w, t, *args)
            v_next = out
        return v_next

    def _level(self, t: Any) -> int:
        t = _check_int("t", t, 0)
        if t > self.budget:
            raise ValueError(f"t={t} must be <= budget={self.budget}")
        return t

    def _state(self, successes: Any, failures: Any) -> tuple[np.ndarray, np.ndarray]:
        s = np.asarray(successes, dtype=np.int64).reshape(-1)
        f = np.asarray(failures, dtype=np.int64).reshape(-1)
        if s.shape != (self.n_arms,) or f.shape != (self.n_arms,):
            raise ValueError(
                f"successes {s.shape} and failures {f.shape} must have n_arms={self.n_arms} entries"
            )
        if (s < 0).any() or (f < 0).any() or int((s + f).sum()) > self.budget:
            raise ValueError(
                f"successes {s.tolist()} and failures {f.tolist()} must be >= 0 with at most "
                f"budget={self.budget} pulls in all"
            )
        return s, f


def _check_weights(w: Any, shape: tuple[int, int], t: int) -> np.ndarray:
    w = np.ascontiguousarray(np.asarray(w, dtype=np.float64))
    if w.shape != shape:
        raise ValueError(f"the policy's weights at level t={t} have shape {w.shape}, not {shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"the policy's weights at level t={t} must be finite and >= 0")
    if not (w.sum(axis=1) > 0).all():
        raise ValueError(f"the policy's weights at level t={t} are all 0 for some state")
    return w


def rule_weights(rule: Any, alpha: Any, beta: Any, k: int, pulls: int) -> np.ndarray:
    """A compiled rule applied to every row of ``alpha``, ``beta`` (shape ``(states, n)``).

    Turns a rule into a level policy (a Python callable for
    :meth:`BetaBernoulliDP.evaluate`), e.g. to play it with another look-ahead:
    ``lambda al, be, k, pulls: rule_weights(kg_rule, al, be, k, pulls + 6)``.
    """
    if not isinstance(rule, CPUDispatcher):
        raise ValueError(f"rule={rule!r} must be a compiled (numba.njit) rule")
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if alpha.ndim != 2 or alpha.shape != beta.shape:
        raise ValueError(f"alpha {alpha.shape} and beta {beta.shape} must be equal (states, n)")
    out = np.empty(alpha.shape)
    _rule_rows(rule, alpha, beta, int(k), _check_int("pulls", pulls, 1), out)
    return out


def policy_value(
    policy: Policy | str, n_arms: int, k: int, budget: int, a: float = 1.0, b: float = 1.0
) -> float:
    """The exact expected terminal value of ``policy`` (:meth:`BetaBernoulliDP.evaluate`)."""
    return BetaBernoulliDP(n_arms, k, budget, a, b).evaluate(policy)


# ---------------------------------------------------------------------------------------
# Batches: each step pulls a vector of A = {a in {0..r}^n : sum a <= b}


@numba.njit(cache=True, inline="always")
def _choose(m, x):
    out = 1.0
    for j in range(x):
        out = out * (m - j) / (j + 1)
    return out


@numba.njit(cache=True)
def _pmf_into(n_pulls, alpha, beta, out):
    """Beta-binomial pmf of the successes in ``n_pulls`` pulls (posterior Beta(alpha, beta)).

    ``P(x) = C(n, x) prod_{j<x} (alpha + j) / (alpha + beta + j) prod_{j<n-x} (beta + j)
    / (alpha + beta + x + j)`` (Polya's urn).
    """
    for x in range(n_pulls + 1):
        p = 1.0
        for j in range(x):
            p *= (alpha + j) / (alpha + beta + j)
        for j in range(n_pulls - x):
            p *= (beta + j) / (alpha + beta + x + j)
        out[x] = _choose(n_pulls, x) * p


@numba.njit(cache=True)
def _action_value(row, action, t, a, b, s_of, f_of, m_of, table, v_next, off_next):
    """E[value of the next batch step] after the pull vector ``action`` (by position)."""
    n = row.shape[0]
    width = 1
    for i in range(n):
        width = max(width, action[i] + 1)
    pmf = np.zeros((n, width))
    for i in range(n):
        c = row[i]
        alpha = a + s_of[c]
        beta = (b + m_of[c]) - s_of[c]
        _pmf_into(action[i], alpha, beta, pmf[i])
    u = 0
    for i in range(n):
        u += action[i]
    x = np.zeros(n, np.int64)
    child = np.empty(n, np.int64)
    total = 0.0
    while True:
        p = 1.0
        for i in range(n):
            p *= pmf[i, x[i]]
            s = s_of[row[i]] + x[i]
            f = f_of[row[i]] + action[i] - x[i]
            m = s + f
            child[i] = m * (m + 1) // 2 + f
        child.sort()
        child = child[::-1].copy()
        total += p * v_next[off_next[t + u] + _rank(child, t + u, table, m_of)]
        # next outcome (odometer over x_i in 0..action[i])
        i = 0
        while i < n and x[i] == action[i]:
            x[i] = 0
            i += 1
        if i == n:
            break
        x[i] += 1
    return total


@numba.njit
def _batch_level(codes, t, actions, a, b, k, batches, rule, optimal, lv_args, v_next, out):
    """Step values of the states ``codes`` (level ``t``): the best action, or ``rule``'s."""
    s_of, f_of, m_of, table, off = lv_args
    n = codes.shape[1]
    alpha, beta = np.empty(n), np.empty(n)
    w = np.empty(actions.shape[0])
    for r in range(codes.shape[0]):
        row = codes[r]
        if optimal:
            best = -np.inf
            for j in range(actions.shape[0]):
                q = _action_value(row, actions[j], t, a, b, s_of, f_of, m_of, table, v_next, off)
                if q > best:
                    best = q
            out[r] = best
        else:
            for i in range(n):
                c = row[i]
                alpha[i] = a + s_of[c]
                beta[i] = (b + m_of[c]) - s_of[c]
            rule(alpha, beta, k, batches, actions, w)
            acc = 0.0
            tot = 0.0
            for j in range(actions.shape[0]):
                if w[j] > 0.0:
                    q = _action_value(
                        row, actions[j], t, a, b, s_of, f_of, m_of, table, v_next, off
                    )
                    acc += w[j] * q
                    tot += w[j]
            if not tot > 0.0:
                raise ValueError("a batch rule's weights must not all be 0")
            out[r] = acc / tot


@numba.njit(cache=True)
def _no_rule(alpha, beta, k, batches, actions, out):
    out[:] = 1.0


@numba.njit(cache=True)
def batch_uniform_rule(alpha, beta, k, batches, actions, out):
    """Round robin in batches: weight 1 on every full batch of least-pulled arms.

    A batch of size ``u`` is chosen if its arms are ``u`` arms of the fewest pulls (ties
    at random), ``u = min(b, n r)`` the largest action size.
    """
    n = alpha.shape[0]
    size = 0
    for j in range(actions.shape[0]):
        size = max(size, actions[j].sum())
    counts = np.rint(alpha + beta - (alpha + beta).min())  # pulls, less the fewest
    order = np.sort(counts)
    for j in range(actions.shape[0]):
        out[j] = 0.0
        if actions[j].sum() != size or actions[j].max() > 1:
            continue
        # the chosen counts must be the `size` smallest counts (as a multiset)
        chosen = np.empty(size)
        u = 0
        for i in range(n):
            if actions[j, i] > 0:
                chosen[u] = counts[i]
                u += 1
        chosen.sort()
        same = True
        for i in range(size):
            if chosen[i] != order[i]:
                same = False
        out[j] = 1.0 if same else 0.0


@numba.njit(cache=True)
def kg_top_batch_rule(alpha, beta, k, batches, actions, out):
    """A myopic batch: the ``u`` arms of largest KG* value, one pull each (ties averaged).

    ``u = min(b, n r)``, the largest action size; KG*'s look-ahead is the pulls left,
    ``u * batches``. Weight 1 on every action of ``u`` single pulls whose arms' values
    are all within ``TIE`` of (or above) every other arm's (the top-u sets of the values).
    Not an algorithm of a paper: the simplest way to fill a batch from KG*'s scores.
    """
    n = alpha.shape[0]
    size = 0
    for j in range(actions.shape[0]):
        size = max(size, actions[j].sum())
    val = np.empty(n)
    _values_into(alpha, beta, k, size * batches, val)
    for j in range(actions.shape[0]):
        out[j] = 0.0
        if actions[j].sum() != size or actions[j].max() > 1:
            continue
        low = np.inf
        high = -np.inf
        for i in range(n):
            if actions[j, i] > 0:
                low = min(low, val[i])
            else:
                high = max(high, val[i])
        out[j] = 1.0 if low >= high - TIE else 0.0


def _actions(n: int, batch_size: int, repeat_limit: int, partial: bool) -> np.ndarray:
    """Jun et al.'s A (sum >= 1), or its full batches (sum = min(b, n r)) if not ``partial``."""
    full = min(batch_size, n * repeat_limit)
    rows = [
        a
        for a in np.ndindex(*(repeat_limit + 1,) * n)
        if 1 <= sum(a) <= batch_size and (partial or sum(a) == full)
    ]
    return np.array(rows, dtype=np.int64)


class BatchDP:
    """The exact Bayes-optimal DP when every step is a batch (Jun et al. 2016's (b, r) model).

    Paper (the batch model): Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu,
    "Top arm identification in multi-armed bandits with batch arm pulls", AISTATS 2016,
    Sec. 2: a step pulls ``a in A = {a in {0..r}^n : sum a <= b}``.

    Each of ``max_batches`` steps pulls a vector of ``A`` (``partial=True``: every
    ``a`` with ``1 <= sum a <= b``, as the environment allows fewer than ``b`` pulls a
    step; ``partial=False``: full batches, ``sum a = min(b, n r)``); the terminal value is
    the sum of the ``k`` largest posterior means. The optimum plans whole batches: its
    value is ``max over a`` of the expected value of the next step's state. Observing
    more never lowers a Bayes-optimal value, so the two action sets give the same optimum
    (a check, ``tests/test_bayes_exact.py``). A state after ``j`` batches has between
    ``j`` and ``b j`` pulls; the values of step ``j`` cover those levels.
    """

    def __init__(
        self,
        n_arms: int,
        k: int,
        batch_size: int,
        repeat_limit: int,
        max_batches: int,
        a: float = 1.0,
        b: float = 1.0,
        *,
        partial: bool = True,
        max_states: int = MAX_STATES,
    ) -> None:
        n = _check_int("n_arms", n_arms, 1)
        self.batch_size = _check_int("batch_size", batch_size, 1)
        self.repeat_limit = _check_int("repeat_limit", repeat_limit, 1)
        self.max_batches = _check_int("max_batches", max_batches, 0)
        #: the largest batch: min(b, n r) pulls
        self.full = min(self.batch_size, n * self.repeat_limit)
        horizon = self.full * self.max_batches
        self.levels = _Levels(n, _check_int("k", k, 1), horizon, a, b, max_states)
        self.n_arms, self.k, self.partial = n, int(k), bool(partial)
        self.a, self.b = self.levels.a, self.levels.b
        self.actions = _actions(n, self.batch_size, self.repeat_limit, self.partial)
        self.solve_seconds: float | None = None

    @property
    def n_states(self) -> int:
        """Posterior states over the levels 0..b max_batches (the states it may visit)."""
        return self.levels.n_states

    def _levels_of_step(self, j: int) -> range:
        """The pulls a state may have after ``j`` batches."""
        if self.partial:
            return range(j, j * self.full + 1)
        return range(j * self.full, j * self.full + 1)

    def _run(self, rule: Any) -> float:
        lv = self.levels
        codes = [lv.codes(t) for t in range(lv.horizon + 1)]
        lv_args = (lv.s_of, lv.f_of, lv.m_of, lv.table, lv.offsets)
        v_next = np.zeros(lv.n_states)
        for t in self._levels_of_step(self.max_batches):
            _terminal_level(codes[t], self.k, lv.mean, v_next[lv.offsets[t] : lv.offsets[t + 1]])
        for j in range(self.max_batches - 1, -1, -1):
            values = np.zeros(lv.n_states)
            for t in self._levels_of_step(j):
                _batch_level(
                    codes[t],
                    t,
                    self.actions,
                    lv.a,
                    lv.b,
                    self.k,
                    self.max_batches - j,
                    _no_rule if rule is None else rule,
                    rule is None,
                    lv_args,
                    v_next,
                    values[lv.offsets[t] : lv.offsets[t + 1]],
                )
            v_next = values
        return float(v_next[0])

    def solve(self) -> float:
        """The optimal expected terminal value over ``max_batches`` batches."""
        start = time.perf_counter()
        out = self._run(None)
        self.solve_seconds = time.perf_counter() - start
        return out

    def evaluate(self, rule: Any) -> float:
        """The exact value of a compiled batch rule ``rule(alpha, beta, k, batches_left,
        actions, out)`` writing a weight per row of :attr:`actions` (ties: equal weights)."""
        if not isinstance(rule, CPUDispatcher):
            raise ValueError(f"rule={rule!r} must be a compiled (numba.njit) batch rule")
        return self._run(rule)
