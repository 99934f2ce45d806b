"""The LUCB family's confidence bounds: radius coefficients, their scale, KL bounds.

Every member bounds arm ``i`` by ``LCB_i = mean_i - scale * a(T_i)`` and ``UCB_i =
mean_i + scale * b(T_i)``: the coefficients ``a`` and ``b`` depend only on the arm's own
pull count ``T_i`` (:func:`coef`), so only a pulled arm's bounds change. The lil' radius
(Jiang et al. 2017 Sec. 5, :func:`agents.engine.confidence.lil_width`) has ``scale`` 1
and its own ``w`` per side; LUCB1's (Kalyanakrishnan et al. 2012,
:func:`agents.engine.confidence.lucb_coef`) has ``a = b`` and a ``scale`` that grows
with the round (:func:`scale`: ``sqrt(log(k1 n t^4 / delta))``). KL-LUCB's bounds
(Kaufmann & Kalyanakrishnan 2013) are KL (Chernoff) bounds instead, ``UCB_i = max {q :
T_i d(mean_i, q) <= beta(t)}`` and ``LCB_i = min {q : ...}`` (:func:`kl_key`, at the
rate :func:`kl_beta`), functions of the mean, the count and the round; the heap keys of
an epoch of rounds are taken at a level ``>= beta(t)`` (:func:`kl_level`; see
:mod:`agents.lucb.kl_bounds`).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from agents.engine import confidence
from agents.lucb.layout import (
    KL_EPOCH_SHIFT,
    P_ALPHA,
    P_DELTA,
    P_EPS,
    P_FAMILY,
    P_K1,
    P_RADIUS,
    P_RATE,
    P_W_LOW,
    P_W_UP,
    RADIUS_KL,
    RADIUS_LIL,
    RADIUS_LUCB1,
)
from bandit_envs import divergences

__all__ = ["coef", "coef_memo", "kl_beta", "kl_key", "kl_key_from", "kl_level", "scale"]


@numba.njit(cache=True, _nrt=False)
def coef(prm, t, low_side, sigma):
    """The radius coefficient ``a(t)`` (``low_side=False``) or ``b(t)`` of ``t`` pulls."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return confidence.lucb_coef(float(t), sigma)
    if prm[P_RADIUS] == RADIUS_KL:
        return 0.0  # (no radius: KL bounds are not mean +- radius)
    w = prm[P_W_UP] if low_side else prm[P_W_LOW]
    return confidence.lil_width(float(t), w, prm[P_EPS], sigma)


@numba.njit(cache=True, _nrt=False)
def coef_memo(prm, t, low_side, sigma, memo):
    """:func:`coef`, remembered per count for the lil' radius (the same value).

    ``memo`` (the kinetic trees' ``kexp``, unused by the lil' radius): row 1 the UCB
    side, row 0 the LCB side, ``inf`` until computed, counts below its length.
    """
    if prm[P_RADIUS] != RADIUS_LIL or t >= memo.shape[1]:
        return coef(prm, t, low_side, sigma)
    row = 1 if low_side else 0
    v = memo[row, t]
    if v == np.inf:
        v = coef(prm, t, low_side, sigma)
        memo[row, t] = v
    return v


@numba.njit(cache=True, _nrt=False)
def scale(prm, n, rounds):
    """The radius multiplier at round ``rounds`` (LUCB1: ``sqrt(log(k1 n t^4 / delta))``)."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return math.sqrt(confidence.lucb_rate(float(rounds), n, prm[P_DELTA], prm[P_K1]))
    return 1.0


@numba.njit(cache=True, _nrt=False)
def kl_beta(prm, n, rounds):
    """KL-LUCB's exploration rate ``beta(t, delta)`` at round ``rounds``."""
    return confidence.kl_rate(
        float(rounds), n, prm[P_DELTA], prm[P_K1], prm[P_ALPHA], int(prm[P_RATE])
    )


@numba.njit(cache=True, _nrt=False)
def kl_key(prm, mu, count, beta, sigma, high):
    """KL bound at level ``beta / count``: ``-LCB`` (``high``, the HL key) or ``UCB``."""
    fam = int(prm[P_FAMILY])
    level = beta / float(count)
    if high:
        return -divergences.kl_lower(fam, mu, level, sigma)
    return divergences.kl_upper(fam, mu, level, sigma)


@numba.njit(cache=True, _nrt=False)
def kl_key_from(prm, mu, count, beta, sigma, high, guess, outer):
    """:func:`kl_key` from a ``guess`` of it (a nearby key, or nan), for Bernoulli rewards.

    ``outer=False``: the same value; ``outer=True``: a heap key, a bound at least as
    optimistic, about ``1e-8`` beyond and cheaper (no bisection; see
    :func:`bandit_envs.divergences.kl_upper_outer`).
    """
    if int(prm[P_FAMILY]) != divergences.BERNOULLI:
        return kl_key(prm, mu, count, beta, sigma, high)
    level = beta / float(count)
    if high:
        if outer:
            return -divergences.kl_lower_outer(mu, level, -guess)
        return -divergences.kl_lower_from(mu, level, -guess)
    if outer:
        return divergences.kl_upper_outer(mu, level, guess)
    return divergences.kl_upper_from(mu, level, guess)


@numba.njit(cache=True, _nrt=False)
def kl_level(prm, n, rounds):
    """The keys' level for the epoch starting at round ``rounds`` (``>= beta(rounds)``)."""
    last = rounds + max(1, rounds >> KL_EPOCH_SHIFT)
    return max(kl_beta(prm, n, last), kl_beta(prm, n, rounds))
