"""Rollout of the knowledge gradient: one-step look-ahead with a simulated KG* continuation.

A rollout policy improves on a base policy by one step of policy iteration, each
Q-value estimated by simulating the base policy (Bertsekas & Tsitsiklis, *Neuro-Dynamic
Programming*, 1996, Sec. 6.1.2; Bertsekas, Tsitsiklis & Wu, "Rollout algorithms for
combinatorial optimization", J. Heuristics 3(3), 1997; Bertsekas, *Rollout, Policy
Iteration, and Distributed Reinforcement Learning*, 2020, Ch. 2). Here the base policy
is KG* (:mod:`agents.bayesian.knowledge_gradient`; Frazier & Powell 2010), the state is
the Beta posterior of every arm, and the value of a terminal state is ``V = sum of the k
largest posterior means`` (the Bayes-optimal answer for aggregate regret is the
posterior top k, and the Bayes risk of a policy is ``E[sum of the k largest means] -
E[V]``, :mod:`agents.bayesian.exact`). With ``R`` pulls left,

    Q(s, i) = E[V_T | pull arm i now, then follow KG* for the R - 1 pulls left],

and the rollout pulls ``argmax_i Q(s, i)``. Each ``Q(s, i)`` is estimated by ``M``
simulated continuations from the posterior: per simulation the means are drawn,
``theta_j ~ Beta(alpha_j, beta_j)``, and a table of uniforms ``U[j, l]`` fixes the
``l``-th reward of arm ``j``, ``1{U[j, l] < theta_j}``; the same draws serve every
candidate arm (common random numbers: the Q differences, which decide, have a far smaller
variance than the Q-values). Only KG*'s tie-breaking draws differ between candidates.

**Candidates.** All arms, or the ``top`` arms of largest KG* value (the arms tied with
the ``top``-th value included); KG*'s own arm is always one. Arms of equal posterior have
equal Q-values (the arms are exchangeable given the state) and share one estimate. With
one candidate posterior, or one pull left (then ``Q(s, i)`` is the current value plus
``KG_1(i)``, and KG*'s choice is its argmax), the rollout pulls KG*'s arm without
simulating.

**Decision.** ``d_i`` is the mean over the simulations of ``Q(s, i) - Q(s, kg)``,
``kg`` KG*'s arm, and ``se_i`` its standard error. The rollout pulls the candidate of
largest ``d_i`` if ``d_i > z se_i`` (an arm of that posterior at random), else KG*'s
arm. ``z = 0`` is the plain rollout (the argmax of the estimates; KG*'s arm on a tie);
``z > 0`` leaves KG* only where the simulations give evidence against it.

**Cost.** A decision with ``R`` pulls left simulates ``M`` continuations of ``R - 1``
KG* decisions per distinct candidate posterior: an episode of budget ``T`` makes about
``M c T^2 / 2`` KG* decisions (``c`` candidates).
"""

from __future__ import annotations

import math
import numbers
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
from agents.bayesian.knowledge_gradient import TIE, _values_into, choose

__all__ = ["KGRollout", "rollout_candidates", "rollout_choice", "rollout_q_values"]

#: ``prm`` indices: the prior, the simulations, the candidates (0: all), the threshold.
P_A, P_B, P_SIMS, P_TOP, P_Z = range(5)


@numba.njit(cache=True)
def top_sum(alpha, beta, k, buf):
    """``V``: the sum of the ``k`` largest posterior means ``alpha / (alpha + beta)``."""
    n = alpha.shape[0]
    for i in range(n):
        buf[i] = alpha[i] / (alpha[i] + beta[i])
    buf.sort()
    v = 0.0
    for j in range(k):
        v += buf[n - 1 - j]
    return v


@numba.njit(cache=True)
def simulate(alpha0, beta0, k, first, pulls, theta, u, rng, work):
    """``V_T`` of one continuation: pull ``first``, then KG* for the ``pulls - 1`` left.

    The ``l``-th pull (0-based, counted from this state) of arm ``j`` rewards
    ``U[j, l] < theta_j``. ``work``: (alpha, beta, used, mu, c, val, table, buf) scratch.
    """
    alpha, beta, used, mu, c, val, table, buf = work
    n = alpha0.shape[0]
    for j in range(n):
        alpha[j] = alpha0[j]
        beta[j] = beta0[j]
        used[j] = 0
    arm = first
    for step in range(pulls):
        if step > 0:
            arm = choose(alpha, beta, k, pulls - step, rng, mu, c, val, table)
        if u[arm, used[arm]] < theta[arm]:
            alpha[arm] += 1.0
        else:
            beta[arm] += 1.0
        used[arm] += 1
    return top_sum(alpha, beta, k, buf)


@numba.njit(cache=True)
def _scratch(n):
    size = 1
    while size < 2 * n:
        size *= 2
    return (
        np.empty(n),
        np.empty(n),
        np.zeros(n, np.int64),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(size, np.int64),
        np.empty(n),
    )


@numba.njit(cache=True)
def candidates_into(alpha, beta, k, pulls, top, values, out):
    """The candidate arms (module docstring) in ``out``; returns their number.

    ``values``: float64[n] receives every arm's KG* value. ``top <= 0`` or ``>= n``: all
    arms; else the arms whose value is within :data:`TIE` of the ``top``-th largest or
    above it.
    """
    n = alpha.shape[0]
    _values_into(alpha, beta, k, pulls, values)
    if top <= 0 or top >= n:
        for i in range(n):
            out[i] = i
        return n
    cut = np.sort(values)[n - top] - TIE
    count = 0
    for i in range(n):
        if values[i] >= cut:
            out[count] = i
            count += 1
    return count


@numba.njit(cache=True)
def estimate(alpha, beta, k, pulls, arms, sims, rng, q_sum, q_sq, d_sum, d_sq, base):
    """Sums over ``sims`` simulations of ``Q``, ``Q^2``, ``Q - Q(base)`` and its square.

    Per arm of ``arms``.

    ``arms[j]`` is simulated for every ``j`` (``base`` is an index into ``arms``); the
    same means and reward uniforms serve every arm of a simulation.
    """
    n = alpha.shape[0]
    work = _scratch(n)
    theta = np.empty(n)
    u = np.empty((n, pulls))
    q = np.empty(arms.shape[0])
    for j in range(arms.shape[0]):
        q_sum[j] = 0.0
        q_sq[j] = 0.0
        d_sum[j] = 0.0
        d_sq[j] = 0.0
    for _ in range(sims):
        for i in range(n):
            theta[i] = rng.beta(alpha[i], beta[i])
            for step in range(pulls):
                u[i, step] = rng.random()
        for j in range(arms.shape[0]):
            q[j] = simulate(alpha, beta, k, arms[j], pulls, theta, u, rng, work)
        for j in range(arms.shape[0]):
            d = q[j] - q[base]
            q_sum[j] += q[j]
            q_sq[j] += q[j] * q[j]
            d_sum[j] += d
            d_sq[j] += d * d


@numba.njit(cache=True)
def rollout_choose(alpha, beta, k, pulls, sims, top, z, rng):
    """The rollout's arm (module docstring) at the posterior ``alpha``, ``beta``."""
    n = alpha.shape[0]
    mu, c, val = np.empty(n), np.empty(n), np.empty(n)
    size = 1
    while size < 2 * n:
        size *= 2
    table = np.empty(size, np.int64)
    kg = choose(alpha, beta, k, pulls, rng, mu, c, val, table)
    if pulls <= 1:
        return kg
    values = np.empty(n)
    cand = np.empty(n, np.int64)
    count = candidates_into(alpha, beta, k, pulls, top, values, cand)
    # one representative per distinct candidate posterior; KG*'s first
    reps = np.empty(count + 1, np.int64)
    reps[0] = kg
    nrep = 1
    for j in range(count):
        i = cand[j]
        new = True
        for r in range(nrep):
            if alpha[reps[r]] == alpha[i] and beta[reps[r]] == beta[i]:
                new = False
                break
        if new:
            reps[nrep] = i
            nrep += 1
    if nrep == 1:
        return kg
    arms = reps[:nrep].copy()
    q_sum, q_sq = np.empty(nrep), np.empty(nrep)
    d_sum, d_sq = np.empty(nrep), np.empty(nrep)
    estimate(alpha, beta, k, pulls, arms, sims, rng, q_sum, q_sq, d_sum, d_sq, 0)
    best = 0
    for j in range(1, nrep):
        if d_sum[j] > d_sum[best]:
            best = j
    if best == 0:
        return kg
    mean = d_sum[best] / sims
    var = max(d_sq[best] / sims - mean * mean, 0.0)
    if sims > 1:
        var *= sims / (sims - 1.0)
    if not mean > z * math.sqrt(var / sims):
        return kg
    # an arm of the chosen posterior at random (they are exchangeable)
    pick = arms[best]
    tied = 0
    for i in range(n):
        if alpha[i] == alpha[pick] and beta[i] == beta[pick]:
            tied += 1
    which = rng.integers(0, tied)
    for i in range(n):
        if alpha[i] == alpha[pick] and beta[i] == beta[pick]:
            if which == 0:
                return i
            which -= 1
    return pick


@numba.njit
def run(ctx, prm):
    """The rollout of KG* (``prm``: a, b, sims, top, z): one pull per decision."""
    a, b = prm[P_A], prm[P_B]
    sims, top, z = int(prm[P_SIMS]), int(prm[P_TOP]), prm[P_Z]
    n, k = ctx.iv[engine.N], ctx.iv[engine.K]
    alpha, beta = np.empty(n), np.empty(n)
    while True:
        posterior_into(a, b, ctx.counts, ctx.means, alpha, beta)
        pulls = max(engine.pulls_left(ctx), 1)
        yield rollout_choose(alpha, beta, k, pulls, sims, top, z, ctx.rng)


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    if value < low:
        raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    return int(value)


def _check_state(alpha: Any, beta: Any, k: int, pulls: int) -> tuple[np.ndarray, np.ndarray]:
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    if alpha.ndim != 1 or alpha.shape != beta.shape or alpha.shape[0] < 1:
        raise ValueError(f"alpha {alpha.shape} and beta {beta.shape} must be equal 1-d shapes")
    if not (np.all(alpha > 0) and np.all(beta > 0) and np.all(np.isfinite(alpha + beta))):
        raise ValueError("alpha and beta must be positive and finite")
    k = _check_int("k", k, 1)
    if k > alpha.shape[0]:
        raise ValueError(f"k={k} must satisfy 1 <= k <= n={alpha.shape[0]}")
    _check_int("pulls", pulls, 1)
    return alpha, beta


def rollout_q_values(
    alpha: Any, beta: Any, k: int, pulls: int, sims: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Estimates of every arm's ``Q(s, i)`` (module docstring) from ``sims`` simulations.

    Returns ``(q, q_sq, d, d_sq)``: per arm the means over the simulations of the terminal
    value, of its square, of its difference to arm 0's in the same simulation, and of
    that difference's square (every arm simulated, equal posteriors not shared).
    """
    alpha, beta = _check_state(alpha, beta, k, pulls)
    sims = _check_int("sims", sims, 1)
    n = alpha.shape[0]
    q, q_sq, d, d_sq = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    estimate(alpha, beta, int(k), int(pulls), np.arange(n), sims, rng, q, q_sq, d, d_sq, 0)
    return q / sims, q_sq / sims, d / sims, d_sq / sims


def rollout_candidates(alpha: Any, beta: Any, k: int, pulls: int, top: int | None) -> np.ndarray:
    """The candidate arms (increasing): all (``top=None``) or the ``top`` of largest KG* value.

    Arms tied (within 1e-12) with the ``top``-th largest value are included.
    """
    alpha, beta = _check_state(alpha, beta, k, pulls)
    top = 0 if top is None else _check_int("top", top, 1)
    n = alpha.shape[0]
    out = np.empty(n, np.int64)
    count = candidates_into(alpha, beta, int(k), int(pulls), top, np.empty(n), out)
    return out[:count].copy()


def rollout_choice(
    alpha: Any,
    beta: Any,
    k: int,
    pulls: int,
    rng: np.random.Generator,
    *,
    sims: int = 64,
    top: int | None = 3,
    z: float = 0.0,
) -> int:
    """The ``kg_rollout`` agent's decision at the posterior ``alpha``, ``beta``."""
    alpha, beta = _check_state(alpha, beta, k, pulls)
    sims, top, z = _check_params(sims, top, z)
    return int(rollout_choose(alpha, beta, int(k), int(pulls), sims, top or 0, z, rng))


def _check_params(sims: Any, top: Any, z: Any) -> tuple[int, int | None, float]:
    sims = _check_int("sims", sims, 1)
    if top is not None:
        top = _check_int("top", top, 1)
    real = isinstance(z, numbers.Real) and not isinstance(z, (bool, np.bool_))
    if not real or not 0.0 <= z < math.inf:
        raise ValueError(f"z={z!r} must be a finite number >= 0")
    return sims, top, float(z)


class KGRollout(ScriptedAgent):
    """Rollout of KG*: pull the arm of largest simulated Q-value under a KG* continuation.

    Paper:
        The rollout algorithm (one step of policy improvement on a base policy, its
        Q-values by simulation): D. P. Bertsekas, J. N. Tsitsiklis, *Neuro-Dynamic
        Programming*, Athena Scientific 1996, Sec. 6.1.2; D. P. Bertsekas,
        J. N. Tsitsiklis, C. Wu, "Rollout algorithms for combinatorial optimization",
        J. Heuristics 3(3), 1997; D. P. Bertsekas, *Rollout, Policy Iteration, and
        Distributed Reinforcement Learning*, Athena Scientific 2020, Ch. 2. The base
        policy KG*: P. I. Frazier, W. B. Powell, "Paradoxes in learning and the marginal
        value of information", Decision Analysis 7(4), 2010 (the ``kg`` agent).

    At each pull, every candidate arm's ``Q(s, i) = E[sum of the top-k posterior means
    at the end | pull i, then KG*]`` is estimated from ``sims`` continuations simulated
    from the posterior with common random numbers, and the arm of largest estimate is
    pulled (module docstring). The answer is the posterior top k. Compiled (:func:`run`).

    Args:
        a: the Beta prior's first parameter (default 1).
        b: the Beta prior's second parameter (default 1).
        sims: simulated continuations per decision (``M``, default 64).
        top: candidate arms: the ``top`` of largest KG* value (default 3); ``None``: all.
        z: leave KG*'s arm only for a candidate whose mean Q-difference exceeds ``z``
            standard errors (default 0: the plain argmax).
        seed: seeds the simulations and tie-breaking.

    Setting: fixed budget with a pull budget; Bernoulli arms only.
    """

    name = "kg_rollout"
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET})
    kernel = staticmethod(run)

    def __init__(
        self,
        a: float = 1.0,
        b: float = 1.0,
        sims: int = 64,
        top: int | None = 3,
        z: float = 0.0,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)
        self.sims, self.top, self.z = _check_params(sims, top, z)

    def params(self) -> np.ndarray:
        prm = np.zeros(5)
        prm[P_A], prm[P_B], prm[P_SIMS], prm[P_Z] = self.a, self.b, self.sims, self.z
        prm[P_TOP] = 0 if self.top is None else self.top
        return prm

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms and a pull budget only)."""
        check_bernoulli(problem, self.name)
        super().reset(problem, seed=seed)
        if problem.budget is None:
            raise ValueError(
                f"agent {self.name!r} needs a pull budget (its continuations run to the end "
                f"of it), got budget=None"
            )

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def __repr__(self) -> str:
        return (
            f"KGRollout(a={self.a}, b={self.b}, sims={self.sims}, top={self.top}, z={self.z}, "
            f"seed={self.seed})"
        )
