"""Kullback-Leibler divergences of one-parameter reward families, compiled.

The quantities of the fixed-confidence lower bound and of the GLR (Chernoff) stopping
rule (Garivier & Kaufmann, "Optimal best arm identification with fixed confidence",
COLT 2016, Sec. 2-3; Kaufmann & Kalyanakrishnan, "Information complexity in bandit
subset selection", COLT 2013, Sec. 2 for KL confidence bounds) live here once, for the
environments' hardness measures and for the agents.

* :func:`kl`: ``d(p, q)``, Bernoulli ``p log(p/q) + (1-p) log((1-p)/(1-q))`` or Gaussian
  ``(p - q)^2 / (2 sigma^2)``;
* :func:`kl_upper` / :func:`kl_lower`: ``max/min {q : d(p, q) <= level}`` (KL-UCB / KL-LCB
  indices);
* :func:`transport_cost`: ``inf_x n_i d(mu_i, x) + n_j d(mu_j, x)`` over ``x`` between the
  two means, the cost of making arm ``j`` at least as good as arm ``i`` (0 if it already is).

``family`` is :data:`GAUSSIAN` (unit: ``sigma``) or :data:`BERNOULLI`. Bernoulli
divergences also serve rewards bounded in [0, 1] (the Bernoulli KL lower-bounds the
exponential moment of any [0, 1] reward with the same mean, Garivier & Cappé 2011),
which is how the agents use them for categorical rewards. Bernoulli means are kept
inside ``[EPS, 1 - EPS]`` inside the logarithms so that ``d(0, q)`` and ``d(p, 1)`` stay
finite where a proportion is exactly 0 or 1.
"""

from __future__ import annotations

import math

import numba

from bandit_envs import _jit  # noqa: F401  (cache stamps; before any njit)

__all__ = [
    "BERNOULLI",
    "EPS",
    "GAUSSIAN",
    "family_code",
    "kl",
    "kl_bernoulli",
    "kl_gaussian",
    "kl_lower",
    "kl_upper",
    "transport_cost",
]

#: ``family`` codes.
GAUSSIAN, BERNOULLI = 0, 1
#: Bernoulli means are clamped to ``[EPS, 1 - EPS]`` inside the logarithms.
EPS = 1e-15
#: bisection steps of :func:`kl_upper` / :func:`kl_lower` (interval width ``2^-50``).
_BISECTIONS = 50


def family_code(distribution: str) -> int:
    """The divergence family for an environment's reward ``distribution``.

    ``"gaussian"`` -> :data:`GAUSSIAN`; ``"bernoulli"`` and ``"categorical"`` (rewards in
    [0, 1]) -> :data:`BERNOULLI`.
    """
    if distribution == "gaussian":
        return GAUSSIAN
    if distribution in ("bernoulli", "categorical"):
        return BERNOULLI
    raise ValueError(
        f"no KL divergence for distribution {distribution!r}: "
        "expected 'bernoulli', 'categorical' or 'gaussian'"
    )


@numba.njit(cache=True, _nrt=False)
def kl_bernoulli(p: float, q: float) -> float:
    """``d(p, q)`` of Bernoulli laws (means clamped to ``[EPS, 1 - EPS]``)."""
    p = min(max(p, EPS), 1.0 - EPS)
    q = min(max(q, EPS), 1.0 - EPS)
    return p * math.log(p / q) + (1.0 - p) * math.log((1.0 - p) / (1.0 - q))


@numba.njit(cache=True, _nrt=False)
def kl_gaussian(p: float, q: float, sigma: float) -> float:
    """``d(p, q) = (p - q)^2 / (2 sigma^2)`` of Gaussian laws of variance ``sigma^2``."""
    d = p - q
    return d * d / (2.0 * sigma * sigma)


@numba.njit(cache=True, _nrt=False)
def kl(family: int, p: float, q: float, sigma: float) -> float:
    """``d(p, q)`` of ``family`` (``sigma`` is read by :data:`GAUSSIAN` only)."""
    if family == GAUSSIAN:
        return kl_gaussian(p, q, sigma)
    return kl_bernoulli(p, q)


@numba.njit(cache=True, _nrt=False)
def kl_upper(family: int, p: float, level: float, sigma: float) -> float:
    """``max {q >= p : d(p, q) <= level}`` (1 at most for Bernoulli): the KL-UCB index."""
    if level <= 0.0:
        return p
    if family == GAUSSIAN:
        return p + sigma * math.sqrt(2.0 * level)
    lo, hi = p, 1.0
    if kl_bernoulli(p, hi) <= level:
        return 1.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if kl_bernoulli(p, mid) > level:
            hi = mid
        else:
            lo = mid
    return lo


@numba.njit(cache=True, _nrt=False)
def kl_lower(family: int, p: float, level: float, sigma: float) -> float:
    """``min {q <= p : d(p, q) <= level}`` (0 at least for Bernoulli): the KL-LCB index."""
    if level <= 0.0:
        return p
    if family == GAUSSIAN:
        return p - sigma * math.sqrt(2.0 * level)
    lo, hi = 0.0, p
    if kl_bernoulli(p, lo) <= level:
        return 0.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if kl_bernoulli(p, mid) > level:
            lo = mid
        else:
            hi = mid
    return hi


@numba.njit(cache=True, _nrt=False)
def transport_cost(
    family: int, sigma: float, n_i: float, mu_i: float, n_j: float, mu_j: float
) -> float:
    """``inf_{mu'_j >= mu'_i} n_i d(mu_i, mu'_i) + n_j d(mu_j, mu'_j)``.

    The GLR statistic of "arm i is better than arm j" (Garivier & Kaufmann 2016, Sec. 3,
    eq. (9)): 0 if ``mu_i <= mu_j``; else both means move to their weighted average
    ``x = (n_i mu_i + n_j mu_j) / (n_i + n_j)``, the minimiser for one-parameter
    exponential families. With ``n`` read as weights ``w`` it is the pair term of the
    lower bound's max-min (eq. (1)). Zero weights give 0.
    """
    if mu_i <= mu_j or n_i <= 0.0 or n_j <= 0.0:
        return 0.0
    if family == GAUSSIAN:
        d = mu_i - mu_j
        return d * d / (2.0 * sigma * sigma * (1.0 / n_i + 1.0 / n_j))
    x = (n_i * mu_i + n_j * mu_j) / (n_i + n_j)
    return n_i * kl_bernoulli(mu_i, x) + n_j * kl_bernoulli(mu_j, x)
