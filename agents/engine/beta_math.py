"""Beta posteriors in compiled code: the posterior of 0/1 rewards, tails and truncated draws.

Shared by the Thompson-sampling agents (``bayes_ttts``, T3C) through
:mod:`agents.engine.posterior_top_set`, and re-exported by
:mod:`agents.bayesian.beta_prior` with the Beta prior's Python API. With Bernoulli
rewards the posterior of arm ``i`` after ``s_i`` successes in ``n_i`` pulls on a
Beta(a, b) prior is Beta(a + s_i, b + n_i - s_i).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "beta_between",
    "beta_between_logs",
    "beta_tail",
    "log_beta",
    "posterior_into",
    "posterior_of_arms_into",
]


@numba.njit(cache=True, _nrt=False, inline="always")
def _posterior_of(a, b, counts, means, alpha, beta, i):
    c = float(counts[i])
    wins = np.rint(means[i] * c)
    alpha[i] = a + wins
    beta[i] = b + c - wins


@numba.njit(cache=True, _nrt=False)
def posterior_into(a, b, counts, means, alpha, beta):
    """The posterior (:func:`agents.bayesian.beta_prior.posterior`) in compiled code:
    ``alpha``/``beta`` (float64[n]) overwritten.

    The wins are ``rint(mean * count)`` (the empirical mean of 0/1 rewards times the
    count, rounded to the integer it is), as in :func:`agents.bayesian.beta_prior.posterior`.
    """
    for i in range(counts.shape[0]):
        _posterior_of(a, b, counts, means, alpha, beta, i)


@numba.njit(cache=True, _nrt=False)
def posterior_of_arms_into(a, b, counts, means, alpha, beta, arms):
    """:func:`posterior_into` for the listed ``arms`` only (the others are left as they are)."""
    for i in arms:
        _posterior_of(a, b, counts, means, alpha, beta, i)


# ---------------------------------------------------------------------------------------
# Beta tails and truncated Beta draws (compiled): the top-k-set sampler
# draws only the arms near the top-k boundary, which needs P(theta > x) and draws of
# theta conditioned on an interval.

#: Continued-fraction stop: relative change of one step below this.
_CF_EPS = 1e-16
#: Guard against a zero denominator in Lentz's method.
_CF_TINY = 1e-300


@numba.njit(cache=True, _nrt=False)
def log_beta(alpha, beta):
    """``log B(alpha, beta)``, the log of the Beta function."""
    return math.lgamma(alpha) + math.lgamma(beta) - math.lgamma(alpha + beta)


@numba.njit(cache=True, _nrt=False, inline="always")
def _lentz_step(num, c, d):
    """One term ``num`` of Lentz's method: the new ``(C, 1 / D)`` (kept off zero)."""
    d = 1.0 + num * d
    if abs(d) < _CF_TINY:
        d = _CF_TINY
    c = 1.0 + num / c
    if abs(c) < _CF_TINY:
        c = _CF_TINY
    return c, 1.0 / d


@numba.njit(cache=True, _nrt=False)
def _incomplete_beta_fraction(a, b, x):
    """The continued fraction of ``I_x(a, b)`` (DLMF 8.17.22), by Lentz's method.

    ``I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * fraction``; it converges fast for
    ``x < (a + 1) / (a + b + 2)`` (in about ``sqrt(max(a, b))`` steps).
    """
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    if abs(d) < _CF_TINY:
        d = _CF_TINY
    d = 1.0 / d
    h = d
    m = 1
    while m < 100_000:
        m2 = 2 * m
        # the even step d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m))
        c, d = _lentz_step(m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)), c, d)
        h *= d * c
        # the odd step d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))
        c, d = _lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)), c, d)
        step = d * c
        h *= step
        if abs(step - 1.0) < _CF_EPS:
            break
        m += 1
    return h


@numba.njit(cache=True, _nrt=False)
def beta_tail(alpha, beta, lbeta, x):
    """``P(theta > x)`` for ``theta ~ Beta(alpha, beta)``; ``lbeta = log_beta(alpha, beta)``.

    The regularised incomplete beta function ``1 - I_x(alpha, beta) = I_{1-x}(beta,
    alpha)`` from its continued fraction on the side where it converges; relative error
    about 1e-14 on the side computed directly (``tests/test_posterior_top_set.py`` checks it
    against SciPy's ``betaincc``).
    """
    if x <= 0.0:
        return 1.0
    if x >= 1.0:
        return 0.0
    front = math.exp(alpha * math.log(x) + beta * math.log1p(-x) - lbeta)
    if x < (alpha + 1.0) / (alpha + beta + 2.0):
        return 1.0 - front * _incomplete_beta_fraction(alpha, beta, x) / alpha
    return front * _incomplete_beta_fraction(beta, alpha, 1.0 - x) / beta


@numba.njit(cache=True, _nrt=False, inline="always")
def _log_density(alpha, beta, lbeta, t):
    """``log`` of the Beta(alpha, beta) density at ``t`` (a zero exponent adds nothing,
    and its logarithm is not taken)."""
    log_t = math.log(t) if alpha != 1.0 else 0.0
    log1m_t = math.log1p(-t) if beta != 1.0 else 0.0
    return _log_density_of_logs(alpha, beta, lbeta, log_t, log1m_t)


@numba.njit(cache=True, _nrt=False, inline="always")
def _log_density_of_logs(alpha, beta, lbeta, log_t, log1m_t):
    """:func:`_log_density` from ``log t`` and ``log(1 - t)``."""
    out = -lbeta
    if alpha != 1.0:
        out += (alpha - 1.0) * log_t
    if beta != 1.0:
        out += (beta - 1.0) * log1m_t
    return out


#: Take the exponential envelope when its mass is below this (else draw from the whole
#: Beta and keep a draw inside): one envelope trial (two uniforms, a few logs) costs about
#: half a Beta variate.
_ENVELOPE_MASS = 2.0


@numba.njit(cache=True, _nrt=False)
def _beta_between_by_inversion(alpha, beta, lbeta, lo, hi, rng):
    """Inverse-CDF draw on ``(lo, hi)`` by bisection on :func:`beta_tail` (the last resort)."""
    t_lo, t_hi = beta_tail(alpha, beta, lbeta, lo), beta_tail(alpha, beta, lbeta, hi)
    target = t_hi + rng.random() * (t_lo - t_hi)  # the tail at the draw
    left, right = lo, hi
    for _ in range(64):
        mid = 0.5 * (left + right)
        if mid <= left or mid >= right:
            break
        if beta_tail(alpha, beta, lbeta, mid) > target:
            left = mid
        else:
            right = mid
    return 0.5 * (left + right)


@numba.njit(cache=True, _nrt=False, inline="always")
def _end_logs(x):
    """``(log x, log(1 - x))`` for ``0 <= x <= 1`` (``-inf`` at the ends)."""
    log_x = math.log(x) if x > 0.0 else -math.inf
    log1m_x = math.log1p(-x) if x < 1.0 else -math.inf
    return log_x, log1m_x


@numba.njit(cache=True, _nrt=False)
def beta_between(alpha, beta, lbeta, lo, hi, mass_in, rng):
    """Draw ``theta ~ Beta(alpha, beta)`` conditioned on ``lo < theta < hi``.

    ``mass_in = P(lo < theta < hi)`` (from :func:`beta_tail`) picks the method:

    * a log-concave density (``alpha, beta >= 1``) lies under its tangent line in the log
      domain, so under ``f(e) exp(-lam (t - e))`` at the interval's end ``e`` nearer the
      mode (the constant ``f(mode)`` if the mode is inside): rejection from that
      truncated exponential, taken when the envelope's mass is below ``_ENVELOPE_MASS``
      (tight in the tails, where the interval holds little of the distribution); the
      density lies above its chord between the ends in the log domain, and
      ``exp(x) >= 1 + x``, so a proposal under ``1 + chord - envelope`` is kept without
      evaluating the density (a squeeze: the same decisions, fewer logarithms);
    * else rejection from the whole distribution (``rng.beta`` until a draw falls inside,
      ``1 / mass_in`` draws on average), unless ``mass_in < 1e-3``;
    * else inversion of the CDF by bisection.

    Every branch draws exactly from the conditional law; they differ only in cost.
    """
    log_lo, log1m_lo = _end_logs(lo)
    log_hi, log1m_hi = _end_logs(hi)
    return beta_between_logs(
        alpha, beta, lbeta, lo, hi, log_lo, log1m_lo, log_hi, log1m_hi, mass_in, rng
    )


@numba.njit(cache=True, _nrt=False)
def beta_between_logs(alpha, beta, lbeta, lo, hi, log_lo, log1m_lo, log_hi, log1m_hi, mass_in, rng):
    """:func:`beta_between` given ``log lo``, ``log(1 - lo)``, ``log hi`` and ``log(1 -
    hi)`` (``-inf`` at 0 and 1; the top-set sampler keeps them for its levels): the
    same draws."""
    width = hi - lo
    if alpha >= 1.0 and beta >= 1.0:
        if alpha == 1.0 and beta == 1.0:
            return lo + width * rng.random()
        mode = (alpha - 1.0) / (alpha + beta - 2.0)
        f_lo = _log_density_of_logs(alpha, beta, lbeta, log_lo, log1m_lo)
        f_hi = _log_density_of_logs(alpha, beta, lbeta, log_hi, log1m_hi)
        if mode <= lo:  # decreasing on the interval: lam = -(log f)'(lo) >= 0
            anchor, sign = lo, 1.0
            lam = (beta - 1.0) / (1.0 - lo)
            if alpha != 1.0:
                lam -= (alpha - 1.0) / lo
            log_top = f_lo
        elif mode >= hi:  # increasing: lam = (log f)'(hi) >= 0
            anchor, sign = hi, -1.0
            lam = (alpha - 1.0) / hi
            if beta != 1.0:
                lam -= (beta - 1.0) / (1.0 - hi)
            log_top = f_hi
        else:
            anchor, sign, lam = mode, 0.0, 0.0
            log_top = _log_density(alpha, beta, lbeta, mode)
        flat = lam * width < 1e-9  # the envelope is a constant on the interval
        drop = 0.0 if flat else -math.expm1(-lam * width)  # 1 - the envelope's fall across
        span = width if flat else drop / lam
        if math.exp(log_top) * span < _ENVELOPE_MASS:
            # the squeeze: 1 + chord(t) - envelope(t), linear in t (off at an infinite end)
            squeeze = f_lo > -math.inf and f_hi > -math.inf
            slope = (f_hi - f_lo) / width if squeeze else 0.0
            while True:
                u = rng.random()
                if flat:
                    e = u * width
                    t = lo + e
                    envelope = log_top
                else:
                    e = -math.log1p(-u * drop) / lam
                    t = anchor + sign * e
                    envelope = log_top - lam * e
                if not lo < t < hi:
                    continue
                v = rng.random()
                if squeeze and v < 1.0 + (f_lo + slope * (t - lo) - envelope):
                    return t
                if v < math.exp(_log_density(alpha, beta, lbeta, t) - envelope):
                    return t
    if mass_in >= 1e-3:
        while True:
            t = rng.beta(alpha, beta)
            if lo < t < hi:
                return t
    return _beta_between_by_inversion(alpha, beta, lbeta, lo, hi, rng)
