"""Normal posteriors in compiled code: tails and truncated draws.

T3C on Gaussian rewards (:mod:`agents.glr.top_two`) has the flat-prior posterior
``N(mean_a, sigma^2 / N_a)`` per arm; the top-k-set sampler
(:mod:`agents.engine.posterior_top_set`) draws only the arms near the top-k boundary,
which needs ``P(theta > x)`` and draws of ``theta`` conditioned on an interval. The
truncated draws are exact rejection samplers (Robert 1995, "Simulation of truncated
normal variables", Statistics and Computing 5: the exponential proposal of Sec. 2.2 in a
tail, a uniform proposal on short intervals, the untruncated normal on wide ones).
"""

from __future__ import annotations

import math

import numba

__all__ = ["normal_between", "normal_tail", "std_normal_between"]

_SQRT2 = math.sqrt(2.0)


@numba.njit(cache=True, _nrt=False, inline="always")
def normal_tail(mean, sd, x):
    """``P(theta > x)`` for ``theta ~ N(mean, sd^2)`` (``erfc``: accurate far in the upper
    tail)."""
    return 0.5 * math.erfc((x - mean) / (sd * _SQRT2))


@numba.njit(cache=True, _nrt=False)
def _uniform_proposal(a, b, peak, rng):
    """``Z ~ N(0, 1)`` conditioned on ``a < Z < b`` (finite), by uniform proposals kept
    with probability ``exp((peak^2 - z^2) / 2)``, ``peak`` the point of ``[a, b]`` nearest
    0 (where the density is largest)."""
    while True:
        z = a + (b - a) * rng.random()
        if rng.random() < math.exp(0.5 * (peak - z) * (peak + z)) and a < z:
            return z


@numba.njit(cache=True, _nrt=False)
def _right_of_zero(a, b, rng):
    """``Z ~ N(0, 1)`` conditioned on ``a < Z < b``, ``0 <= a < b <= inf``.

    Intervals longer than the exponential's scale ``1 / lam``: Robert's exponential
    proposal ``a + E / lam``, ``lam = (a + sqrt(a^2 + 4)) / 2``, kept with probability
    ``exp(-(z - lam)^2 / 2)`` and if below ``b`` (at least 0.51 of the proposals are
    kept, the worst case ``a = 0``, ``b = 1``). Shorter ones: a uniform proposal kept
    with probability ``exp((a^2 - z^2) / 2)`` (at least 0.63 of them on average).
    """
    lam = 0.5 * (a + math.sqrt(a * a + 4.0))
    if b - a > 1.0 / lam:
        while True:
            z = a + rng.standard_exponential() / lam
            if z < b and rng.random() < math.exp(-0.5 * (z - lam) * (z - lam)):
                return z
    return _uniform_proposal(a, b, a, rng)


@numba.njit(cache=True, _nrt=False)
def std_normal_between(a, b, rng):
    """``Z ~ N(0, 1)`` conditioned on ``a < Z < b`` (``a < b``, either may be infinite).

    One side of 0: :func:`_right_of_zero` (mirrored for ``b <= 0``). Across 0: the
    untruncated normal until it falls inside when ``b - a >= 2`` (probability at least
    ``P(0 < Z < 2) = 0.48``), else a uniform proposal kept with probability
    ``exp(-z^2 / 2)`` (at least 0.59 of them on average, the worst case ``(0, 2)``).
    """
    if a >= 0.0:
        return _right_of_zero(a, b, rng)
    if b <= 0.0:
        return -_right_of_zero(-b, -a, rng)
    if b - a >= 2.0:
        while True:
            z = rng.standard_normal()
            if a < z < b:
                return z
    return _uniform_proposal(a, b, 0.0, rng)


@numba.njit(cache=True, _nrt=False)
def normal_between(mean, sd, lo, hi, rng):
    """``theta ~ N(mean, sd^2)`` conditioned on ``lo < theta < hi`` (either may be
    infinite); :func:`std_normal_between` on the standardised interval."""
    return mean + sd * std_normal_between((lo - mean) / sd, (hi - mean) / sd, rng)
