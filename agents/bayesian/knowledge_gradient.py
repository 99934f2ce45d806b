"""Knowledge gradient for top-k identification with a fixed budget (Beta-Bernoulli prior).

Every pull goes to the arm of largest KG* value (Frazier & Powell 2010): the best gain
per pull, over ``m`` more pulls of that arm, in the terminal value ``V = sum of the
top-k posterior means``. With ``c`` the k-th largest posterior mean of the *other* arms,

    KG_m(i) = E[max(mu_i', c)] - max(mu_i, c),
    mu_i' = (alpha_i + J) / (alpha_i + beta_i + m),  J ~ BetaBinomial(m, alpha_i, beta_i),

and ``KG*(i) = max over m in {1, 2, 4, ..., 2^11, pulls left} (m <= pulls left)`` of
``KG_m(i) / m``.

**Cost.** ``KG_m(i)`` sums ``m + 1`` Beta-binomial terms, and ``m`` runs up to the pulls
left (20,000 at the start of a budget-20n episode of 1,000 arms): evaluated in full, one
decision costs about 2.5e7 terms. Two bounds make it cost a few arms' small ``m``
instead, without changing a decision. ``E[mu_i'] = mu_i``, so ``KG_m(i) = E[Y^+]`` for
``Y = mu_i' - c`` (or ``c - mu_i'``) of mean ``-d``, ``d = |mu_i - c|``, and variance
``s_m^2 = m V_i / (alpha_i + beta_i + m)`` (``V_i`` the posterior variance); the
mean-variance bound ``E[Y^+] <= (sqrt(s^2 + d^2) - d) / 2`` (Lo 1987; tight over all
laws) gives

    KG_m(i) / m <= U_m(i) = s_m^2 / (2 m (sqrt(s_m^2 + d^2) + d)),

which decreases in ``m`` (``s_m^2`` is concave in ``m`` and zero at 0). So an arm's
``m``-loop stops once ``U_m`` is below its best value so far (the rest cannot exceed
it), and an arm whose ``U_1`` is below the best value of the arms computed so far
(less the tie tolerance) cannot be chosen and is skipped. The bounds are compared with
a margin (``1e-9``) far above the rounding of the values (about ``1e-12`` at
``m = 20,000``), so the chosen set of arms is the one the full evaluation gives. Arms of
equal posterior (hence equal ``c``) share one evaluation: in a 1,000-arm episode the arms
that pass the bound fall in 1-67 distinct posteriors. A decision over 1,000 arms costs
about 90 us (``benchmarks/agent_speed.py``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, ScriptedAgent
from agents.bayesian.beta_prior import (
    check_bernoulli,
    check_beta_prior,
    posterior_into,
    posterior_top_k,
)

__all__ = ["KnowledgeGradient", "choose_among", "kg_choice", "kg_values"]

#: two values closer than this are a tie (ties are broken at random).
TIE = 1e-12
#: margin of the pruning bounds (far above the values' rounding, ~1e-12).
MARGIN = 1e-9
#: the look-ahead lengths are 1, 2, 4, ..., 2^MAX_DOUBLING and the pulls left.
MAX_DOUBLING = 11


@numba.njit(cache=True, _nrt=False)
def kg_gain(a, b, c, now, m):
    """``KG_m`` of an arm with posterior Beta(a, b): ``E[max(mu', c)] - now``.

    ``now = max(a / (a + b), c)``. The Beta-binomial pmf of ``J`` is built unnormalised
    from ``P(J = 0)`` by the ratios ``P(j + 1) / P(j) = (m - j) (a + j) / ((j + 1)
    (b + m - j - 1))`` and normalised by its sum; the running terms are scaled down when
    they grow past 1e200. (No term underflows before a larger one: for a, b >= 1 the
    pmf is log-concave, for a < 1 <= b it decreases, for a, b < 1 it is bounded below
    by a power of m.)
    """
    denom = a + b + m
    p = 1.0
    total = 1.0
    weighted = max(a / denom, c)
    for t in range(m):
        p *= (m - t) / (t + 1.0) * ((a + t) / (b + m - t - 1.0))
        total += p
        weighted += p * max((a + t + 1.0) / denom, c)
        if total > 1e200:
            p *= 1e-200
            total *= 1e-200
            weighted *= 1e-200
    return weighted / total - now


@numba.njit(cache=True, _nrt=False)
def _bound(var, ab, d, m):
    """``U_m``: an upper bound of ``KG_m / m`` (module docstring), decreasing in ``m``."""
    s2 = var * m / (ab + m)
    return s2 / (2.0 * m * (math.sqrt(s2 + d * d) + d))


@numba.njit(cache=True, _nrt=False)
def arm_value(a, b, c, pulls, cut):
    """KG* of an arm of posterior Beta(a, b): ``max(0, max over m of KG_m / m)``.

    ``c`` is the k-th largest posterior mean of the other arms, ``pulls`` the pulls left
    (>= 1). The ``m``-loop stops once ``U_m`` (+ :data:`MARGIN`) is below the larger of
    the value so far and ``cut``: the result is then exact, or it and the exact value
    are both below ``cut`` (``cut = -inf``: always exact).
    """
    ab = a + b
    mu = a / ab
    now = max(mu, c)
    var = a * b / (ab * ab * (ab + 1.0))
    d = abs(mu - c)
    best = 0.0
    m = 1
    while _bound(var, ab, d, m) + MARGIN >= max(best, cut):
        g = kg_gain(a, b, c, now, m) / m
        if g > best:
            best = g
        if m >= pulls:
            break
        # m runs over 1, 2, 4, ..., 2^MAX_DOUBLING (those <= pulls), then pulls
        m = 2 * m if (m < (1 << MAX_DOUBLING) and 2 * m <= pulls) else pulls
    return best


@numba.njit(cache=True)
def _boundary(mu, k):
    """``(hi, lo)``: the k-th and the (k+1)-th largest of ``mu`` (``lo = hi`` if k = n)."""
    n = mu.shape[0]
    if k >= n:
        low = mu.min()
        return low, low
    part = np.partition(mu, n - k - 1)  # part[n - k - 1]: the (k+1)-th largest
    hi = part[n - k]
    for j in range(n - k + 1, n):
        hi = min(hi, part[j])
    return hi, part[n - k - 1]


@numba.njit(cache=True)
def _other_boundaries(alpha, beta, k, mu, c):
    """Posterior means ``mu`` and each arm's ``c``: the k-th largest mean of the others.

    With ``hi >= lo`` the k-th and (k+1)-th largest means: ``c_i = lo`` for an arm in the
    top k (``mu_i >= hi``), else ``hi`` (when ``hi = lo`` both are the same).
    """
    for i in range(alpha.shape[0]):
        mu[i] = alpha[i] / (alpha[i] + beta[i])
    hi, lo = _boundary(mu, k)
    for i in range(alpha.shape[0]):
        c[i] = lo if mu[i] >= hi else hi


@numba.njit(cache=True)
def _values_into(alpha, beta, k, pulls, out):
    mu = np.empty(alpha.shape[0])
    c = np.empty(alpha.shape[0])
    _other_boundaries(alpha, beta, k, mu, c)
    for i in range(alpha.shape[0]):
        out[i] = arm_value(alpha[i], beta[i], c[i], pulls, -np.inf)


@numba.njit(cache=True, _nrt=False)
def _slot(alpha, beta, c, i, table):
    """The slot of arm ``i``'s key ``(alpha_i, beta_i, c_i)`` in the open-addressing ``table``.

    Returns the slot holding an arm with the same key, else the empty slot (-1) where
    the key goes. Equal keys hash equally (posterior parameters are whole numbers plus
    the prior, so ``int(64 x)`` separates them well).
    """
    mask = table.shape[0] - 1
    h = (int(alpha[i] * 64.0) * 1000003 + int(beta[i] * 64.0) * 8191 + int(c[i] * 1e6)) & mask
    while True:
        j = table[h]
        if j < 0 or (alpha[j] == alpha[i] and beta[j] == beta[i] and c[j] == c[i]):
            return h
        h = (h + 1) & mask


@numba.njit(cache=True)
def choose_among(alpha, beta, k, pulls, room, rng, mu, c, val, table):
    """KG*'s arm among the arms with ``room[i] > 0`` (all arms if ``room`` is ``None``).

    The largest :func:`arm_value`, values within :data:`TIE` tied at random. ``c`` is
    computed over all arms (an arm without room is still in the posterior). ``mu``,
    ``c``, ``val`` are float64[n] scratch, ``table`` int64 scratch of a power of two
    >= 2n entries. Arms whose bound ``U_1`` cannot reach the best value found so far are
    skipped (module docstring), and arms of equal posterior and ``c`` (most arms, late
    in an episode) share one evaluation. The tie is broken as ``rng.choice(tied arms in
    index order)`` (one ``rng.integers``; none if one arm is tied). Returns -1 if no arm
    has room.
    """
    n = alpha.shape[0]
    _other_boundaries(alpha, beta, k, mu, c)
    # U_1 of every arm with room (kept in val), and the arm of the largest: evaluated first
    first = -1
    for i in range(n):
        if room is not None and room[i] <= 0:
            val[i] = -np.inf
            continue
        ab = alpha[i] + beta[i]
        var = alpha[i] * beta[i] / (ab * ab * (ab + 1.0))
        val[i] = _bound(var, ab, abs(mu[i] - c[i]), 1)
        if first < 0 or val[i] > val[first]:
            first = i
    if first < 0:
        return -1
    best = arm_value(alpha[first], beta[first], c[first], pulls, -np.inf)
    val[first] = best
    table[:] = -1
    table[_slot(alpha, beta, c, first, table)] = first
    for i in range(n):
        if i == first or val[i] == -np.inf:
            continue
        if val[i] + MARGIN < best - TIE:
            val[i] = -np.inf  # cannot be within TIE of the largest value
            continue
        h = _slot(alpha, beta, c, i, table)
        if table[h] >= 0:
            # the same value (exact, or below an earlier and so lower cut)
            val[i] = val[table[h]]
            continue
        table[h] = i
        val[i] = arm_value(alpha[i], beta[i], c[i], pulls, best - TIE)
        best = max(best, val[i])
    cut = best - TIE
    tied = 0
    for i in range(n):
        if val[i] >= cut:
            tied += 1
    pick = rng.integers(0, tied)
    for i in range(n):
        if val[i] >= cut:
            if pick == 0:
                return i
            pick -= 1
    return -1  # (unreachable: the largest value is always tied with itself)


@numba.njit(cache=True)
def choose(alpha, beta, k, pulls, rng, mu, c, val, table):
    """KG*'s arm: :func:`choose_among` over all arms."""
    return choose_among(alpha, beta, k, pulls, None, rng, mu, c, val, table)


def _table(n: int) -> np.ndarray:
    return np.empty(1 << (2 * n - 1).bit_length(), dtype=np.int64)


@numba.njit
def run(ctx, prm):
    """KG* (``prm = [a, b]``, the Beta prior): one pull per decision, until the budget ends."""
    a, b = prm[0], prm[1]
    n, k = ctx.iv[engine.N], ctx.iv[engine.K]
    alpha, beta = np.empty(n), np.empty(n)
    mu, c, val = np.empty(n), np.empty(n), np.empty(n)
    size = 1
    while size < 2 * n:
        size *= 2
    table = np.empty(size, dtype=np.int64)
    while True:
        posterior_into(a, b, ctx.counts, ctx.means, alpha, beta)
        pulls = max(engine.pulls_left(ctx), 1)
        yield choose(alpha, beta, k, pulls, ctx.rng, mu, c, val, table)


def _check_values_args(alpha: Any, beta: Any, k: int, pulls: int) -> tuple[np.ndarray, np.ndarray]:
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if alpha.ndim != 1 or alpha.shape != beta.shape or alpha.shape[0] < 1:
        raise ValueError(f"alpha {alpha.shape} and beta {beta.shape} must be equal 1-d shapes")
    if not (np.all(alpha > 0) and np.all(beta > 0) and np.all(np.isfinite(alpha + beta))):
        raise ValueError("alpha and beta must be positive and finite")
    if not 1 <= k <= alpha.shape[0]:
        raise ValueError(f"k={k} must satisfy 1 <= k <= n={alpha.shape[0]}")
    if pulls < 1:
        raise ValueError(f"pulls={pulls} must be >= 1 (the pulls left)")
    return alpha, beta


def kg_values(alpha: np.ndarray, beta: np.ndarray, k: int, pulls: int) -> np.ndarray:
    """Each arm's KG* value: ``max over m`` of ``KG_m(i) / m`` (module docstring).

    ``alpha``, ``beta``: the arms' posterior Beta parameters; ``pulls``: the pulls left
    (the longest look-ahead). ``m`` runs over 1, 2, 4, ..., 2^11 and ``pulls``.
    """
    alpha, beta = _check_values_args(alpha, beta, k, pulls)
    out = np.empty(alpha.shape[0])
    _values_into(alpha, beta, int(k), int(pulls), out)
    return out


def kg_choice(
    alpha: np.ndarray, beta: np.ndarray, k: int, pulls: int, rng: np.random.Generator
) -> int:
    """KG*'s arm (the ``kg`` agent's decision): the largest :func:`kg_values`, ties at random.

    Values within ``1e-12`` of the largest are tied; the arm is
    ``rng.choice(tied arms in index order)``.
    """
    alpha, beta = _check_values_args(alpha, beta, k, pulls)
    n = alpha.shape[0]
    scratch = np.empty(n), np.empty(n), np.empty(n), _table(n)
    return int(choose(alpha, beta, int(k), int(pulls), rng, *scratch))


class KnowledgeGradient(ScriptedAgent):
    """Knowledge gradient (KG*) with a Beta prior: pull the arm of largest value per pull.

    Paper:
        Peter I. Frazier, Warren B. Powell, Savas Dayanik. "A knowledge-gradient policy
        for sequential information collection". SIAM J. Control Optim. 47(5), 2008
        (the KG policy: the one-step Bayes-optimal measurement). KG* (the best value
        per pull over several pulls of one arm, which avoids KG's zero values when one
        pull cannot change the answer): Frazier & Powell, "Paradoxes in learning and
        the marginal value of information", Decision Analysis 7(4), 2010.

    Here the terminal value is the sum of the top-k posterior means (the Bayes-optimal
    answer for aggregate regret is the posterior top k), the prior is Beta(a, b) on
    every Bernoulli mean (the catalog's ``uniform-random`` is a = b = 1, ``beta-random``
    its ``a``, ``b``: :func:`agents.bayesian.beta_prior.prior_of`), and each decision is one
    pull (in the batch model one pull per batch, so use it with a pull budget). Values
    within ``1e-12`` are tied, and ties go at random. Compiled (:func:`run`); the bounds
    of the module docstring skip the arms and look-aheads that cannot be chosen, so a
    decision over 1,000 arms costs tens of microseconds, not the 2.5e7 terms of a full
    evaluation.

    Args:
        a: the Beta prior's first parameter (default 1: with ``b = 1``, ``uniform-random``).
        b: the Beta prior's second parameter (default 1).
        seed: seeds tie-breaking.

    Setting: fixed budget with a pull budget; Bernoulli arms only.
    """

    name = "kg"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET})
    kernel = staticmethod(run)

    def __init__(self, a: float = 1.0, b: float = 1.0, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)

    def params(self) -> np.ndarray:
        return np.array([self.a, self.b])

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms and a pull budget only)."""
        check_bernoulli(problem, self.name)
        super().reset(problem, seed=seed)  # (refuses fixed confidence first)
        if problem.budget is None:
            raise ValueError(
                f"agent {self.name!r} needs a pull budget (its look-ahead is the pulls left), "
                f"got budget=None"
            )

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def __repr__(self) -> str:
        return f"KnowledgeGradient(a={self.a}, b={self.b}, seed={self.seed})"
