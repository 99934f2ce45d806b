"""The posterior probability that a set of arms is the top k, bounded from both sides.

Under independent posteriors ``theta_i ~ Beta(alpha_i, beta_i)``, a set ``S`` of ``k``
arms is the top-k set iff every member exceeds every other arm:

    P(S) = P(min_{i in S} theta_i > max_{j not in S} theta_j) = integral_0^1 G(x) dH(x),

with ``G(x) = prod_{i in S} P(theta_i > x)`` (all members above ``x``, decreasing) and
``H(x) = prod_{j not in S} P(theta_j <= x)`` (the law of the others' maximum,
increasing). On a grid ``x_0 < ... < x_m``, the monotonicity of ``G`` brackets the
Stieltjes integral:

    lower = G(x_0) H(x_0) + sum_t G(x_{t+1}) (H(x_{t+1}) - H(x_t)),
    upper = H(x_0) + sum_t G(x_t) (H(x_{t+1}) - H(x_t)) + G(x_m) (1 - H(x_m)),

(on ``[0, x_0]`` ``G`` lies in ``[G(x_0), 1]``, on the last piece in ``[0, G(x_m)]``).
Both are exact bounds up to the rounding of the Beta tails
(:func:`agents.bayesian.beta_prior.beta_tail`, relative error about 1e-14), and the gap
``upper - lower`` is ``sum_t (G(x_t) - G(x_{t+1})) (H(x_{t+1}) - H(x_t))`` plus the two
end terms. The first grid is even on ``[x_lo, x_hi]``: ``x_lo`` the lowest ``mean - 10
sd`` of the members, ``x_hi`` the highest ``mean + 10 sd`` of the others (clipped to
[0, 1]), where the integrand lives; then the intervals with the largest shares of the
gap are halved, pass after pass (:func:`top_set_bounds`), so the points go where ``G``
and ``H`` change together.

:func:`confident` decides ``P(S) >= 1 - delta``: it refines until the bracket lies on
one side of ``1 - delta`` or the grid holds :data:`MAX_POINTS` points, and answers with
the lower bound (conservative: it may stop later than the exact probability would, never
on a probability below ``1 - delta``). Arms whose factor is 1 over the whole grid (a
member surely above ``x_hi``, another arm surely below ``x_lo``, to the last bit) are
left out of the products.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from agents.bayesian.beta_prior import beta_tail, log_beta

__all__ = ["confident", "top_set_bounds", "top_set_probability"]

#: The grid's ends: this many posterior standard deviations beyond the means.
Z = 10.0
#: The first grid's intervals, and the most points :func:`confident` refines it to.
FIRST_INTERVALS, MAX_POINTS = 16, 4096


@numba.njit(cache=True)
def _range(alpha, beta, member):
    """``(x_lo, x_hi)``: the grid's ends (module docstring); equal if the members' range
    lies above the others' (one point between them then bounds ``P(S)``)."""
    x_lo, x_hi = 1.0, 0.0
    for i in range(alpha.shape[0]):
        ab = alpha[i] + beta[i]
        mean = alpha[i] / ab
        sd = math.sqrt(alpha[i] * beta[i] / (ab * ab * (ab + 1.0)))
        if member[i]:
            x_lo = min(x_lo, mean - Z * sd)
        else:
            x_hi = max(x_hi, mean + Z * sd)
    x_lo, x_hi = max(x_lo, 0.0), min(x_hi, 1.0)
    if x_hi < x_lo:
        x_lo = x_hi = 0.5 * (x_lo + x_hi)
    return x_lo, x_hi


@numba.njit(cache=True)
def _factors(alpha, beta, member, lbeta, active, na, x):
    """``(G(x), H(x))`` over the ``active[:na]`` arms."""
    g = h = 1.0
    for p in range(na):
        i = active[p]
        tail = beta_tail(alpha[i], beta[i], lbeta[i], x)
        if member[i]:
            g *= tail
        else:
            h *= 1.0 - tail
    return g, h


@numba.njit(cache=True, _nrt=False)
def _sums(gs, hs, m):
    """``(lower, upper)`` of the module docstring over the points ``0..m-1``."""
    lower, upper = gs[0] * hs[0], hs[0]
    for t in range(1, m):
        dh = hs[t] - hs[t - 1]
        lower += gs[t] * dh
        upper += gs[t - 1] * dh
    upper += gs[m - 1] * (1.0 - hs[m - 1])
    return lower, min(upper, 1.0)


@numba.njit(cache=True)
def top_set_bounds(alpha, beta, member, target, tol, max_points):
    """``(lower, upper, points)``: bounds of ``P(S)`` (module docstring), ``S`` the arms
    with ``member[i] = 1`` (int8[n]).

    Starts from an even grid of ``FIRST_INTERVALS`` intervals and splits, pass after pass,
    every interval whose share ``(G(x_t) - G(x_{t+1})) (H(x_{t+1}) - H(x_t))`` of the gap
    ``upper - lower`` is above the mean share, until ``upper - lower <= tol``, or
    ``target`` (if >= 0) is outside ``(lower, upper]`` (the decision ``P(S) >= target``
    is known), or the grid holds ``max_points`` points.
    """
    n = alpha.shape[0]
    x_lo, x_hi = _range(alpha, beta, member)
    lbeta = np.empty(n)
    active = np.empty(n, dtype=np.int64)
    na = 0
    for i in range(n):  # the arms whose factor is not 1 on [x_lo, x_hi]
        lbeta[i] = log_beta(alpha[i], beta[i])
        if member[i]:
            keep = beta_tail(alpha[i], beta[i], lbeta[i], x_hi) < 1.0
        else:
            keep = beta_tail(alpha[i], beta[i], lbeta[i], x_lo) > 0.0
        if keep:
            active[na] = i
            na += 1
    m = 1 if x_hi == x_lo else FIRST_INTERVALS + 1
    cap = max(max_points, m)
    xs, gs, hs = np.empty(cap), np.empty(cap), np.empty(cap)
    nx, ng, nh = np.empty(cap), np.empty(cap), np.empty(cap)
    for t in range(m):
        xs[t] = x_lo if m == 1 else x_lo + (x_hi - x_lo) * t / (m - 1)
        gs[t], hs[t] = _factors(alpha, beta, member, lbeta, active, na, xs[t])
    while True:
        lower, upper = _sums(gs, hs, m)
        if upper - lower <= tol or (target >= 0.0 and (lower >= target or upper < target)):
            break
        if m == 1 or m >= cap:
            break
        inner = 0.0
        for t in range(m - 1):
            inner += (gs[t] - gs[t + 1]) * (hs[t + 1] - hs[t])
        mean_share = inner / (m - 1)
        q = 0
        for t in range(m - 1):
            nx[q], ng[q], nh[q] = xs[t], gs[t], hs[t]
            q += 1
            share = (gs[t] - gs[t + 1]) * (hs[t + 1] - hs[t])
            if share > 0.0 and share >= mean_share and q + (m - 1 - t) < cap:
                x = 0.5 * (xs[t] + xs[t + 1])
                nx[q] = x
                ng[q], nh[q] = _factors(alpha, beta, member, lbeta, active, na, x)
                q += 1
        nx[q], ng[q], nh[q] = xs[m - 1], gs[m - 1], hs[m - 1]
        q += 1
        if q == m:  # nothing could be split
            break
        xs, nx = nx, xs
        gs, ng = ng, gs
        hs, nh = nh, hs
        m = q
    return lower, upper, m


@numba.njit(cache=True)
def confident(alpha, beta, member, delta):
    """Whether ``P(S) >= 1 - delta`` is certain: the lower bound of :func:`top_set_bounds`
    (refined up to :data:`MAX_POINTS` points) reaches ``1 - delta``."""
    lower, _, _ = top_set_bounds(alpha, beta, member, 1.0 - delta, 0.0, MAX_POINTS)
    return lower >= 1.0 - delta


def top_set_probability(
    alpha: Any, beta: Any, members: Any, *, tol: float = 1e-6, max_points: int = 1 << 16
) -> tuple[float, float]:
    """``(lower, upper)`` bounds of the posterior probability that ``members`` is the top k.

    ``alpha``, ``beta``: the arms' Beta posteriors; ``members``: the arms of the set (any
    size from 1 to n - 1). The grid is refined (module docstring) until ``upper - lower
    <= tol`` or it holds ``max_points`` points.
    """
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    beta = np.ascontiguousarray(beta, dtype=np.float64)
    n = alpha.shape[0]
    if alpha.ndim != 1 or alpha.shape != beta.shape or n < 2:
        raise ValueError(
            f"alpha {alpha.shape} and beta {beta.shape} must be equal 1-d shapes, n >= 2"
        )
    if not (np.all(alpha > 0) and np.all(beta > 0) and np.all(np.isfinite(alpha + beta))):
        raise ValueError("alpha and beta must be positive and finite")
    members = np.asarray(members, dtype=np.int64).reshape(-1)
    if np.unique(members).size != members.size or not 1 <= members.size < n:
        raise ValueError(f"members={members.tolist()} must be 1 to n - 1 = {n - 1} distinct arms")
    if members.min() < 0 or members.max() >= n:
        raise ValueError(f"members={members.tolist()} must lie in [0, {n})")
    if not tol >= 0:
        raise ValueError(f"tol={tol!r} must be >= 0")
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
        raise ValueError(f"max_points={max_points!r} must be an integer >= 2")
    member = np.zeros(n, dtype=np.int8)
    member[members] = 1
    lower, upper, _ = top_set_bounds(alpha, beta, member, -1.0, float(tol), max_points)
    return float(lower), float(upper)
