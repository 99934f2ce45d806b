"""GLR (Chernoff) stopping for top-k identification: the statistic and its thresholds.

Any sampling rule can stop with it: stop at the first ``t`` (total pulls) with

    Z(t) = min_{i in S_t, j not in S_t} W_ij(t) > beta(t, delta),

where ``S_t`` is the empirical top ``k`` and ``W_ij = inf_{x} N_i d(mu_i, x) + N_j d(mu_j, x)``
(:func:`bandit_envs.divergences.transport_cost`) is the generalized likelihood ratio of
"arm i is better than arm j" (Garivier & Kaufmann, "Optimal best arm identification
with fixed confidence", COLT 2016, Sec. 3, eqs. (8)-(9); for top-k the pairs
(i in S_t, j outside), Kaufmann & Kalyanakrishnan 2013 / Jourdan & Degenne's top-m
GLR). The minimising pair is the Top-Two "transportation cost" challenger pair
(Shang et al. 2020; Jourdan et al. 2022), so :func:`statistic` returns it too.

Thresholds (:data:`THRESHOLDS`; ``P`` = number of pairs in the union bound, ``K - 1``
for ``k = 1`` and ``k (n - k)`` for top-k):

* ``"gk2016"``: ``log(2 t P / delta)``: Garivier & Kaufmann (2016) Theorem 10 (``K - 1``
  alternatives, one-parameter exponential families, Bernoulli and Gaussian included):
  the GLR stopping rule with this threshold is delta-correct whatever the sampling rule.
  For top-k the same argument runs over the ``k (n - k)`` pairs (true top arm, true
  bottom arm) that a wrong answer must invert.
* ``"kk2021"``: ``2 C_G(log(P / delta) / 2) + 4 log(4 + log(t / 2))``, with
  ``C_G(x) = min_{lambda in (1/2, 1)} (g_G(lambda) + x) / lambda`` and
  ``g_G(lambda) = 2 lambda - 2 lambda log(4 lambda) + log zeta(2 lambda) - log(1 - lambda) / 2``:
  the mixture-martingale threshold of Kaufmann & Koolen, "Mixture martingales revisited
  with applications to sequential tests and confidence intervals" (JMLR 2021,
  Theorem 9), in the form used by Jourdan, Degenne, Baudry, de Heide, Kaufmann, "Top Two
  algorithms revisited" (NeurIPS 2022, Sec. 2). Proven delta-correct for Gaussian
  rewards (known variance). It grows as ``log log t`` rather than ``log t``, so it is
  tighter than ``gk2016`` only at large ``t`` (at ``delta = 0.1``, ``K = 4``: beyond
  about ``t = 10^6``). Used with the
  Bernoulli divergence it is the literature's practice, without that proof.
* ``"log"``: ``log((1 + log t) / delta)``: the practical threshold of most experiments
  (Garivier & Kaufmann 2016 Sec. 5; Jourdan et al. 2022). **No proof of
  delta-correctness**; it is what the published tables use.

Compiled API (numba, for agents' generators)::

    z, i, j = stopping.statistic(family, sigma, counts, means, top, in_top, rng)
    if z > stopping.threshold(kind, t, delta, pairs, c_g): ...   # stop, answer ``top``

Python API: :func:`threshold_code` (name -> code, validated), :func:`pairs` and
:func:`kk_constant` (the ``C_G`` term, computed once per episode), :func:`beta` (the
threshold as a Python float, for tests and tables).

:func:`statistic` is the full pass, O(k (n - k)); the agents keep the same minimum
across pulls over the Pareto fronts of (mean, pull count), :mod:`agents.glr.fronts`.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent
from agents.glr import fronts
from bandit_envs.divergences import family_code, transport_cost

__all__ = [
    "GLRAgent",
    "GK2016",
    "KK2021",
    "LOG",
    "THRESHOLDS",
    "beta",
    "kk_constant",
    "new_candidates",
    "pairs",
    "statistic",
    "threshold",
    "threshold_code",
    "empirical_statistic",
    "set_statistic",
    "top_set",
]

GK2016, KK2021, LOG = 0, 1, 2
#: threshold names -> codes.
THRESHOLDS = {"gk2016": GK2016, "kk2021": KK2021, "log": LOG}


def threshold_code(name: str) -> int:
    """The code of threshold ``name`` (``"gk2016"``, ``"kk2021"`` or ``"log"``)."""
    if name not in THRESHOLDS:
        raise ValueError(f"threshold={name!r} must be one of {sorted(THRESHOLDS)}")
    return THRESHOLDS[name]


def pairs(n_arms: int, k: int) -> int:
    """The number of pairs of the union bound: ``n - 1`` for ``k = 1``, ``k (n - k)``."""
    return k * (n_arms - k)


def _g_gauss(lam: float) -> float:
    from scipy.special import zeta

    return (
        2.0 * lam
        - 2.0 * lam * math.log(4.0 * lam)
        + math.log(zeta(2.0 * lam))
        - 0.5 * math.log(1.0 - lam)
    )


def kk_constant(n_pairs: int, delta: float) -> float:
    """``2 C_G(log(P / delta) / 2)``, the time-independent part of the ``kk2021`` threshold."""
    from scipy.optimize import minimize_scalar

    x = 0.5 * math.log(n_pairs / delta)
    res = minimize_scalar(
        lambda lam: (_g_gauss(lam) + x) / lam,
        bounds=(0.5 + 1e-9, 1.0 - 1e-9),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return 2.0 * float(res.fun)


@numba.njit(cache=True)
def new_candidates(n):
    """The ``cand`` argument of :func:`top_set` for ``n`` arms: int64[2, n], row 0 the
    arms ``0 .. n - 1``, row 1 scratch room."""
    cand = np.empty((2, n), dtype=np.int64)
    for a in range(n):
        cand[0, a] = a
    return cand


@numba.njit(cache=True, _nrt=False)
def top_set(values, k, rng, cand, top, in_top):
    """``top`` = the ``k`` largest ``values`` (ties at random); ``in_top`` its indicator;
    ``cand``: :func:`new_candidates` (no allocation)."""
    n = values.shape[0]
    for a in range(n):
        in_top[a] = 0
    if k == 1:
        top[0] = engine.argmax_random_ties(values, rng)
    else:
        engine.top_k_into_scratch(values, cand[0], k, rng, top, 0, cand[1])
    for a in range(k):
        in_top[top[a]] = 1


@numba.njit(cache=True, _nrt=False)
def threshold(kind: int, t: float, delta: float, n_pairs: float, c_g: float) -> float:
    """``beta(t, delta)`` of threshold ``kind`` after ``t >= 1`` pulls (see the module doc).

    ``c_g`` is :func:`kk_constant` (read by ``kk2021`` only).
    """
    if kind == GK2016:
        return math.log(2.0 * t * n_pairs / delta)
    if kind == KK2021:
        return c_g + 4.0 * math.log(4.0 + math.log(t / 2.0))
    return math.log((1.0 + math.log(t)) / delta)


def beta(name: str, t: float, delta: float, n_arms: int, k: int) -> float:
    """The threshold ``name`` after ``t`` pulls, as a Python float (tables, tests)."""
    kind = threshold_code(name)
    p = pairs(n_arms, k)
    c_g = kk_constant(p, delta) if kind == KK2021 else 0.0
    return float(threshold(kind, float(t), float(delta), float(p), c_g))


@numba.njit(cache=True, _nrt=False)
def statistic(family, sigma, counts, means, top, in_top, rng):
    """``(Z, i, j)``: the GLR statistic and its minimising pair (i in ``top``, j outside).

    ``top``: the ``k`` arms of the empirical top ``k``; ``in_top[a]`` is nonzero iff
    ``a`` is one of them. Exact ties of the cost are broken uniformly at random with
    ``rng`` (reservoir sampling over the tied pairs). O(k (n - k)).
    """
    n = counts.shape[0]
    best = np.inf
    bi = -1
    bj = -1
    ties = 0
    for a in range(top.shape[0]):
        i = top[a]
        ni = float(counts[i])
        mi = means[i]
        for j in range(n):
            if in_top[j]:
                continue
            c = transport_cost(family, sigma, ni, mi, float(counts[j]), means[j])
            if c < best:
                best = c
                bi = i
                bj = j
                ties = 1
            elif c == best:
                ties += 1
                if rng.random() * ties < 1.0:
                    bi = i
                    bj = j
    return best, bi, bj


@numba.njit(cache=True, _nrt=False)
def empirical_statistic(pruned, S, F, family, sigma, counts, means, k, rng, cand, top, in_top):
    """``(Z, i, j)``, the GLR statistic over the empirical top ``k`` and its pair.

    ``pruned``: :func:`agents.pairs.eb_query` on ``(S, F)`` (kept up to date by the
    caller with :func:`agents.pairs.pulled`); ``top``/``in_top`` then hold the top
    arm for ``k = 1`` (initially ``top[0] = 0``, ``in_top`` all zero) and are not
    written for ``k > 1`` (:func:`agents.pairs.top_into` at the end). Otherwise the
    top set (ties at random) into ``top``/``in_top`` and the full pass
    :func:`statistic`.
    """
    if pruned:
        z, i, j = fronts.eb_query(S, F, family, sigma, counts, means, rng)
        if k == 1:
            in_top[top[0]] = 0
            top[0] = i
            in_top[i] = 1
        return z, i, j
    top_set(means, k, rng, cand, top, in_top)
    return statistic(family, sigma, counts, means, top, in_top, rng)


@numba.njit(cache=True, _nrt=False)
def set_statistic(pruned, S, F, family, sigma, counts, means, lead, in_lead, rng):
    """``(Z, i, j)`` over the pairs (i in the set ``lead``, j outside): pruned or full pass.

    The Top-Two challenger pair of a leader set (Shang et al. 2020, TC).
    """
    if pruned:
        return fronts.set_query(S, F, family, sigma, counts, means, lead, in_lead, rng)
    return statistic(family, sigma, counts, means, lead, in_lead, rng)


def check_threshold_args(threshold_name: str, delta: float) -> None:
    """Validate a sampling rule's GLR parameters (``ValueError`` naming the bad value)."""
    threshold_code(threshold_name)
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)):
        raise ValueError(f"delta={delta!r} must be a number in (0, 1)")
    if not 0.0 < float(delta) < 1.0:
        raise ValueError(f"delta={delta!r} must lie in (0, 1)")


DIVERGENCES = ("auto", "bernoulli", "gaussian")


def check_divergence(divergence: str) -> None:
    """Validate a sampling rule's ``divergence`` choice (``ValueError`` naming it)."""
    if divergence not in DIVERGENCES:
        raise ValueError(f"divergence={divergence!r} must be 'auto', 'bernoulli' or 'gaussian'")


def stopping_params(
    problem: Any, divergence: str, threshold_name: str, delta: float
) -> tuple[float, float, float, float, float]:
    """``(family, delta, threshold kind, pairs, c_g)``: the GLR entries of a ``prm`` vector.

    ``family`` is the divergence family (``divergence``, or the problem's reward
    distribution when ``"auto"``), ``pairs`` the number of (top, other) pairs the
    statistic minimises over, ``c_g`` the Kaufmann-Koolen constant (0 unless the
    threshold is ``"kk2021"``). Shared by every GLR-stopped agent.
    """
    name = problem.distribution if divergence == "auto" else divergence
    n_pairs = pairs(problem.n_arms, problem.k)
    kind = threshold_code(threshold_name)
    c_g = kk_constant(n_pairs, delta) if kind == KK2021 else 0.0
    return float(family_code(name)), float(delta), float(kind), float(n_pairs), c_g


class GLRAgent(ScriptedAgent):
    """Base of the GLR-stopped agents: the stopping rule's parameters, both settings.

    A subclass sets ``kernel`` (its sampling rule, a generator that stops when
    :func:`statistic` exceeds :func:`threshold` and answers the empirical top ``k``) and
    returns its own entries of the parameter vector from :meth:`sampling_params`;
    :meth:`params` is :func:`stopping_params` followed by them.

    Args (common to every GLR-stopped agent):
        delta: the confidence parameter, in (0, 1).
        threshold: ``"log"`` (default, the papers' experiments; no proof), ``"gk2016"``
            or ``"kk2021"`` (module docstring).
        divergence: ``"auto"`` (the env's reward family), ``"bernoulli"`` or
            ``"gaussian"``.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence, and fixed budget as an anytime algorithm (answer: the
    empirical top ``k``).
    """

    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    answer_rule = engine.RULE_EMPIRICAL

    def __init__(
        self,
        delta: float = 0.1,
        threshold: str = "log",
        divergence: str = "auto",
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_threshold_args(threshold, delta)
        check_divergence(divergence)
        self.delta = float(delta)
        self.threshold = threshold
        self.divergence = divergence

    def sampling_params(self) -> tuple[float, ...]:
        """The sampling rule's entries of ``prm``, after the stopping rule's five."""
        return ()

    def params(self) -> np.ndarray:
        """:func:`stopping_params`, :meth:`sampling_params`, then whether the pruned pass
        of :mod:`agents.glr.fronts` is exact here (``fronts.applies``; else the full pass)."""
        stop = stopping_params(self.problem, self.divergence, self.threshold, self.delta)
        pruned = fronts.applies(self.problem, int(stop[0]))
        return np.array([*stop, *self.sampling_params(), pruned], dtype=float)
