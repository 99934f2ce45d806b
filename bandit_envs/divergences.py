"""Kullback-Leibler divergences of one-parameter reward families, compiled.

The quantities of the fixed-confidence lower bound and of the GLR (Chernoff) stopping
rule (Garivier & Kaufmann, "Optimal best arm identification with fixed confidence",
COLT 2016, Sec. 2-3; Kaufmann & Kalyanakrishnan, "Information complexity in bandit
subset selection", COLT 2013, Sec. 2 for KL confidence bounds) live here once, for the
environments' hardness measures and for the agents.

* :func:`kl`: ``d(p, q)``, Bernoulli ``p log(p/q) + (1-p) log((1-p)/(1-q))`` or Gaussian
  ``(p - q)^2 / (2 sigma^2)``;
* :func:`kl_upper` / :func:`kl_lower`: ``max/min {q : d(p, q) <= level}`` (KL-UCB / KL-LCB
  indices); for Bernoulli laws the value of a 50-step bisection, computed bit for bit
  from a Newton estimate of the root (:func:`_replay_bisection`: about 10 divergences
  instead of 50);
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
    "kl_lower_from",
    "kl_lower_outer",
    "kl_upper",
    "kl_upper_from",
    "kl_upper_outer",
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


#: unit roundoff of float64 (``2^-53``), for :func:`_replay_bisection`'s error bound.
_U = 2.0**-53


@numba.njit(cache=True, _nrt=False)
def _bisect(p: float, level: float, upper: bool, past: float, near: float) -> float:
    """The 50-step bisection of :func:`kl_upper` (``upper``, on ``[p, 1]``) or of
    :func:`kl_lower` (on ``[0, p]``), told the comparisons of the midpoints beyond ``past``
    (``d > level`` there) and short of ``near`` (``d <= level``); the others it computes.

    With ``past`` and ``near`` at the infinities it is the plain loop (the reference).
    """
    lo, hi = (p, 1.0) if upper else (0.0, p)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if upper:
            over = mid >= past or (mid > near and kl_bernoulli(p, mid) > level)
        else:
            over = mid <= past or (mid < near and kl_bernoulli(p, mid) > level)
        if over == upper:
            hi = mid
        else:
            lo = mid
    return lo if upper else hi


@numba.njit(cache=True, _nrt=False)
def _bisect_upper(p: float, level: float) -> float:
    """The reference loop of :func:`kl_upper` (Bernoulli, ``d(p, 1) > level``)."""
    return _bisect(p, level, True, math.inf, -math.inf)


@numba.njit(cache=True, _nrt=False)
def _bisect_lower(p: float, level: float) -> float:
    """The reference loop of :func:`kl_lower` (Bernoulli, ``d(p, 0) > level``)."""
    return _bisect(p, level, False, -math.inf, math.inf)


@numba.njit(cache=True, _nrt=False)
def _newton_root(p: float, level: float, q: float, upper: bool, steps: int = 60) -> float:
    """Newton's iterates (at most ``steps``) for ``d(p, q) = level`` from ``q``.

    In the variable ``y = log(1 - q)`` (``upper``) or ``y = log(q)``, ``d(p, q(y))`` is
    convex and monotone, and nearly linear far from ``p`` (large levels), so from a
    start beyond the root the iterates approach it monotonically and fast (from a start
    short of it, the first step overshoots it). They stop
    when a step moves ``q`` by at most ``1e-9`` (the next error is then about its
    square). Only an estimate: the caller checks it (:func:`_replay_bisection`).
    """
    q = min(max(q, EPS), 1.0 - EPS)
    y = math.log1p(-q) if upper else math.log(q)
    for _ in range(steps):
        g = kl_bernoulli(p, q) - level
        # dd/dy: d'(q) = (q - p) / (q (1 - q)) times dq/dy = -(1 - q) or q
        slope = -(q - p) / q if upper else (q - p) / (1.0 - q)
        if slope == 0.0:
            break
        y -= g / slope
        nq = -math.expm1(y) if upper else math.exp(y)
        nq = min(max(nq, EPS), 1.0 - EPS)
        if abs(nq - q) <= 1e-9:
            return nq
        q = nq
    return q


@numba.njit(cache=True, _nrt=False)
def _replay_bisection(p: float, level: float, r: float, upper: bool) -> float:
    """The reference bisection's result, bit for bit, with few divergences (see below).

    The reference loop (:func:`_bisect_upper` / :func:`_bisect_lower`) compares the
    computed ``d~(p, mid)`` with ``level`` at 50 midpoints. ``d(p, .)`` is monotone on the
    bracket, and the computed value is within ``E(q) = u (6.3 + 4 d(p, q))`` of the exact
    one (``u = 2^-53``; the rounding of the two divisions, the two logarithms (< 1 ulp),
    ``1 - p``, ``1 - q``, the products and the sum, with ``|p log(p/q)| <= 1/e`` on the
    side where it is the smaller term). So if, around the root estimate ``r``, the
    computed values at ``r - w`` and ``r + w`` are beyond ``level`` by more than twice
    that error (``level * 8u + 12.6u``; with a factor 2 to spare: ``level * 16u +
    25u``), every midpoint farther
    from ``r`` than ``w`` compares the way its side says, and only the midpoints within
    ``w`` of ``r`` (the last few steps) need ``d~``. Replays the 50 steps that way; when
    the window cannot be certified (``r`` too rough, after widening it 4 times) it runs
    the reference loop itself.
    """
    lo, hi = (p, 1.0) if upper else (0.0, p)
    rc = min(max(r, EPS), 1.0 - EPS)
    pc = min(max(p, EPS), 1.0 - EPS)
    slope = abs(rc - pc) / (rc * (1.0 - rc))
    margin = level * 16.0 * _U + 25.0 * _U
    w = 2.0 * margin / max(slope, 1e-300) + 4.0 * _U * abs(r)
    for _ in range(4):
        # past side: the midpoints where d~ > level; near side: where d~ <= level
        past = r + w if upper else r - w
        near = r - w if upper else r + w
        ok = True
        if lo < past < hi:
            ok = kl_bernoulli(p, past) > level + margin
        if ok and lo < near < hi:
            ok = kl_bernoulli(p, near) < level - margin
        if ok:
            break
        w *= 16.0
    else:
        return _bisect_upper(p, level) if upper else _bisect_lower(p, level)
    return _bisect(p, level, upper, past, near)


@numba.njit(cache=True, _nrt=False)
def _upper_start(p: float, level: float) -> float:
    """A point above the root of ``d(p, q) = level``: ``d(p, q) >= 2 (q - p)^2`` (Pinsker)
    and ``>= (q - p)^2 / (2q)``."""
    s = min(p + math.sqrt(0.5 * level), p + level + math.sqrt(level * level + 2.0 * level * p))
    return min(s, 1.0)


@numba.njit(cache=True, _nrt=False)
def _lower_start(p: float, level: float) -> float:
    """A point below the root of ``d(p, q) = level`` on ``[0, p]`` (the mirror images)."""
    c = 1.0 - p
    s = max(p - math.sqrt(0.5 * level), p - level - math.sqrt(level * level + 2.0 * level * c))
    return max(s, 0.0)


@numba.njit(cache=True, _nrt=False)
def kl_upper(family: int, p: float, level: float, sigma: float) -> float:
    """``max {q >= p : d(p, q) <= level}`` (1 at most for Bernoulli): the KL-UCB index.

    Bernoulli: the value of a 50-step bisection of ``[p, 1]`` (``lo``, the last point
    with ``d(p, q) <= level``), computed bit for bit by :func:`_replay_bisection`
    from a Newton estimate of the root (about 10 divergences instead of 50).
    """
    if level <= 0.0:
        return p
    if family == GAUSSIAN:
        return p + sigma * math.sqrt(2.0 * level)
    return _index_from(p, level, _upper_start(p, level), True)


@numba.njit(cache=True, _nrt=False)
def kl_lower(family: int, p: float, level: float, sigma: float) -> float:
    """``min {q <= p : d(p, q) <= level}`` (0 at least for Bernoulli): the KL-LCB index.

    Bernoulli: the value of a 50-step bisection of ``[0, p]`` (``hi``), computed as
    :func:`kl_upper`'s.
    """
    if level <= 0.0:
        return p
    if family == GAUSSIAN:
        return p - sigma * math.sqrt(2.0 * level)
    return _index_from(p, level, _lower_start(p, level), False)


@numba.njit(cache=True, _nrt=False)
def _index_from(p: float, level: float, guess: float, upper: bool) -> float:
    """:func:`kl_upper_from` (``upper``) or :func:`kl_lower_from`."""
    if level <= 0.0:
        return p
    end = 1.0 if upper else 0.0
    if kl_bernoulli(p, end) <= level:
        return end
    g = min(max(guess, p), 1.0) if upper else max(min(guess, p), 0.0)
    return _replay_bisection(p, level, _newton_root(p, level, g, upper), upper)


@numba.njit(cache=True, _nrt=False)
def kl_upper_from(p: float, level: float, guess: float) -> float:
    """:func:`kl_upper` of Bernoulli laws (the same value), Newton started at ``guess``.

    A guess near the index (e.g. the index at a nearby level) saves Newton steps; any
    guess in ``[0, 1]`` gives the same value.
    """
    return _index_from(p, level, guess, True)


@numba.njit(cache=True, _nrt=False)
def kl_lower_from(p: float, level: float, guess: float) -> float:
    """:func:`kl_lower` of Bernoulli laws (the same value), Newton started at ``guess``."""
    return _index_from(p, level, guess, False)


#: Newton steps of :func:`kl_upper_outer` / :func:`kl_lower_outer`, and their step
#: outwards when Newton has converged (the result must be strictly beyond the index).
_OUTER_STEPS = 2
_OUTER_BUMP = 1e-9


@numba.njit(cache=True, _nrt=False)
def _index_outer(p: float, level: float, upper: bool, guess: float) -> float:
    """:func:`kl_upper_outer` (``upper``) or :func:`kl_lower_outer`."""
    if level <= 0.0:
        return p
    end = 1.0 if upper else 0.0
    if kl_bernoulli(p, end) <= level:
        return end
    steps = 1
    if not 0.0 <= guess <= 1.0:  # (no guess: start beyond the root, two steps)
        guess = _upper_start(p, level) if upper else _lower_start(p, level)
        steps = _OUTER_STEPS
    # on the index's side of p, where d(p, .) is monotone (the proof below needs it)
    guess = min(max(guess, p), 1.0) if upper else max(min(guess, p), 0.0)
    q = _newton_root(p, level, guess, upper, steps)
    for bump in (0.0, _OUTER_BUMP):  # (Newton may have converged: a step outwards)
        x = min(q + bump, 1.0) if upper else max(q - bump, 0.0)
        side = x >= p if upper else x <= p
        if side and kl_bernoulli(p, x) > level + level * 16.0 * _U + 25.0 * _U:
            return x
    return _index_from(p, level, q, upper)


@numba.njit(cache=True, _nrt=False)
def kl_upper_outer(p: float, level: float, guess: float = math.nan) -> float:
    """A number ``>=`` :func:`kl_upper` of Bernoulli laws, cheaply (2-5 divergences).

    Two Newton steps from above the root stay above it (convexity; about ``1e-8`` above
    it), and so does one step from a ``guess`` near the root on either side (the step
    from below overshoots the root). The result (or, if Newton converged, the result
    plus ``1e-9``) is kept only if its computed divergence exceeds ``level`` by more
    than twice the divergence's rounding error (:func:`_replay_bisection`), which proves
    it above the bisection's value; else the index itself is returned.
    """
    return _index_outer(p, level, True, guess)


@numba.njit(cache=True, _nrt=False)
def kl_lower_outer(p: float, level: float, guess: float = math.nan) -> float:
    """A number ``<=`` :func:`kl_lower` of Bernoulli laws, cheaply (as :func:`kl_upper_outer`)."""
    return _index_outer(p, level, False, guess)


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
