"""The fixed-budget rule of ``zero_shot``: a fitted knowledge-gradient score on an
empirical-Bayes normal posterior, one kernel for the one-pull and the (b, r)-batch models.

**Posterior** (empirical Bayes across arms, recomputed before every block of pulls). With
``x_i`` the empirical mean of arm ``i`` after ``n_i`` pulls and ``P`` the arms pulled so
far: ``m0`` the mean of their ``x_i``, ``D = sum n_i (x_i - m0)^2``, and the prior variance
``v0`` by the method of moments (``E[n_i (x_i - m0)^2] = n_i v0 + (within-arm variance)``;
Efron & Morris, "Data analysis using Stein's estimator and its generalizations", JASA
1975):

* Gaussian rewards (the env's ``sigma``): ``v0 = (D - P sigma^2) / sum n_i``, prior weight
  ``n0 = sigma^2 / v0`` pulls;
* rewards in [0, 1] (Bernoulli, or any law on [0, 1] bounded by it): ``q = m0 (1 - m0)``,
  ``v0 = (D - P q) / (sum n_i - P)`` (``q / 3``, a Beta prior of weight 2, until some arm
  has two pulls), a Beta prior of weight ``n0 = q / v0 - 1`` (at least 0.1);

``v0`` is kept in ``[1e-3 s2, s2]`` (``s2`` = ``sigma^2`` or ``q``), ``n0`` is multiplied by
``e^{w_prior}``, and each arm's posterior has mean ``mu_i = (n0 m0 + n_i x_i) / (n0 + n_i)``
and ``n0 + n_i`` pulls' worth of precision: ``Beta(mu_i (n0 + n_i), (1 - mu_i) (n0 + n_i))``
for rewards in [0, 1], normal of variance ``sigma^2 / (n0 + n_i)`` for Gaussian rewards.

**Score** of arm ``i``, after the Gaussian knowledge gradient of Frazier, Powell & Dayanik
(SIAM J. Control Optim. 47(5), 2008, Sec. 4, eq. (16)) with the KG* look-ahead of Frazier
& Powell (Decision Analysis 7(4), 2010): ``c_i`` the k-th largest posterior mean of the
other arms, ``d_i = |mu_i - c_i|``, ``s_i`` the posterior standard deviation, ``z_i = d_i /
s_i``, ``m`` more pulls move the mean by a normal of standard deviation ``t_m = s_i
sqrt(m / (m + n0 + n_i))`` and::

    KG_m(i) = t_m f(-d_i / t_m),   f(u) = u Phi(u) + phi(u)     (Gaussian rewards),
    log KG*(i) = max over m in {1, 4, 16, ..., <= H} of log(KG_m(i) / m),
    score_i = log KG*(i) + w_z z_i + w_zt z_i tau + w_s log s_i + w_q q_i,

and for rewards in [0, 1] ``KG_m(i)`` exact on the Beta posterior (the Beta-binomial sum
of :func:`agents.bayesian.knowledge_gradient.kg_gain`) for ``m <= 16``, the normal form
above with the Beta posterior's variance beyond; ``H = max(1, round(h e^{w_look}))``,
``h`` the most pulls one arm can still get (``min(pulls left, r x batches left)``),
``tau`` the share of the budget left and ``q_i`` the arm's pulls in the block so far
over ``r`` (0 without a repeat limit). ``log f(-u)`` is computed in logs (Mills' ratio,
its asymptotic series beyond ``u = 8``) so that far arms keep distinct, finite scores.
All weights zero is Gaussian KG* on the empirical-Bayes posterior.

**Blocks.** Where the number of batches is free (no ``max_batches``) the episode opens
with every arm once, then (``opening`` > 0, a share of the budget) every arm the same
number of times more, ``floor(opening x budget / n) - 1`` pulls each (as many whole
rounds as the pulls left allow), and each later block is ``max(b, floor(pulls left / BLOCK))`` pulls
(at most ``r`` per arm when it is one batch; a longer block is spread over batches by
RoundRobin), so the posterior and every score are recomputed about ``BLOCK log(budget)``
times per episode instead of once per pull (``block`` = :data:`BLOCK` = 32 by default:
at n = 1,000 this gives about 1e5 pulls per second, and one decision per pull does not
play measurably better, ``benchmarks/zero_shot_speed.py``). Where ``max_batches`` binds,
each block is one batch: ``min(b, pulls left, n r)`` pulls (with no batch size, the
pulls left spread evenly over the batches left). Inside a block the pulls are chosen one
at a time on a fantasy posterior (the "kriging believer" of
:mod:`agents.bayesian.batch_knowledge_gradient`: each chosen pull keeps the arm's mean
and adds one pull to its count), the next pull to the arm of largest score among those
with room, scores within a relative ``1e-12`` tied at random.

The answer is the ``k`` arms of largest posterior mean (ties at random).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.bayesian.batch_knowledge_gradient import as_request
from agents.bayesian.knowledge_gradient import TIE, _boundary, kg_gain

__all__ = [
    "BLOCK",
    "N_WEIGHTS",
    "P_BLOCK",
    "P_GAUSS",
    "P_OPEN",
    "P_SIGMA",
    "P_W",
    "WEIGHT_NAMES",
    "log_kg_star",
    "posterior",
    "run",
    "top_k",
]

#: where batches are free, a block is ``max(b, pulls left // BLOCK)`` pulls (default).
BLOCK = 32
#: the score's weights, in ``prm[P_W:]`` order.
WEIGHT_NAMES = ("w_look", "w_z", "w_zt", "w_s", "w_q", "w_prior")
N_WEIGHTS = len(WEIGHT_NAMES)
#: ``prm`` layout: Gaussian rewards (1.0) or rewards in [0, 1] (0.0); sigma; the block
#: divisor (:data:`BLOCK` as shipped); the opening's share of the budget; the weights.
P_GAUSS, P_SIGMA, P_BLOCK, P_OPEN, P_W = 0, 1, 2, 3, 4
#: rewards in [0, 1]: ``KG_m`` exact (Beta-binomial) up to this ``m``, normal beyond.
EXACT = 16
#: the prior variance is at least ``V0_FLOOR`` times the per-pull variance.
V0_FLOOR = 1e-3
#: a Beta prior's weight ``a + b`` is at least this many pulls.
N0_MIN = 0.1
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT2 = math.sqrt(2.0)


@numba.njit(cache=True, _nrt=False)
def log_f_neg(u):
    """``log f(-u)`` for ``u >= 0``, ``f(v) = v Phi(v) + phi(v)``: ``log phi(u) + log(1 - u
    R(u))``, ``R`` Mills' ratio (its asymptotic series ``1/u^2 - 3/u^4 + 15/u^6 - 105/u^8``
    for ``1 - u R(u)`` beyond ``u = 8``)."""
    log_phi = -0.5 * u * u - _LOG_SQRT_2PI
    if u < 8.0:
        tail = 0.5 * math.erfc(u / _SQRT2)  # Phi(-u)
        rest = 1.0 - u * tail / math.exp(log_phi)
        if rest <= 0.0:  # (rounding; cannot happen below u = 8)
            rest = 1e-300
        return log_phi + math.log(rest)
    v = 1.0 / (u * u)
    return log_phi + math.log(v * (1.0 - v * (3.0 - v * (15.0 - 105.0 * v))))


@numba.njit(cache=True, _nrt=False)
def _log_kg_normal(m, d, noise, neff):
    """``log(KG_m / m)`` in the normal form (module docstring)."""
    t = math.sqrt(noise * m / (neff * (neff + m)))
    return math.log(t) + log_f_neg(d / t) - math.log(m)


@numba.njit(cache=True, _nrt=False)
def _log_kg_max(d, noise, neff, look, exact, a, b, c, now):
    """The max over ``m`` in 1, 4, 16, ... (``<= look``, and ``look``) of ``log(KG_m / m)``:
    exact on ``Beta(a, b)`` for ``m <= exact``, the normal form beyond; the scan stops one
    unit of log below the best value (past the peak)."""
    best = -np.inf
    m = 1
    while True:
        if m <= exact:
            g = kg_gain(a, b, c, now, m)
            v = math.log(g / m) if g > 0.0 else -np.inf
        else:
            v = _log_kg_normal(m, d, noise, neff)
        if v > best:
            best = v
        elif v < best - 1.0:
            break  # past the peak
        if m >= look:
            break
        m = 4 * m if 4 * m <= look else look
    return best


@numba.njit(cache=True, _nrt=False)
def log_kg_star(d, noise, neff, look):
    """``log KG*`` of an arm at distance ``d`` from its boundary, per-pull variance ``noise``
    and ``neff`` pulls' worth of posterior (prior included): the max over ``m`` in 1, 4,
    16, ... (``<= look``, and ``look`` itself) of ``log(KG_m / m)`` (module docstring)."""
    return _log_kg_max(d, noise, neff, look, 0, 0.0, 0.0, 0.0, 0.0)


@numba.njit(cache=True, _nrt=False)
def posterior(counts, means, gauss, sigma, w_prior, mu, noise, neff):
    """The empirical-Bayes normal posterior (module docstring) into ``mu`` (means),
    ``noise`` (per-pull variances) and ``neff`` (``n0 + n_i``); returns ``n0``."""
    n = counts.shape[0]
    pulled = 0
    total = 0.0
    for i in range(n):
        if counts[i] > 0:
            pulled += 1
            total += means[i]
    m0 = total / pulled if pulled > 0 else (0.0 if gauss else 0.5)
    spread = 0.0  # sum of n_i (x_i - m0)^2
    pulls = 0.0
    for i in range(n):
        if counts[i] > 0:
            spread += counts[i] * (means[i] - m0) ** 2
            pulls += counts[i]
    if gauss:
        s2 = sigma * sigma
        v0 = (spread - pulled * s2) / pulls if pulled > 1 else s2
        v0 = max(v0, V0_FLOOR * s2)
        n0 = s2 / v0
    else:
        m0 = min(max(m0, 1e-3), 1.0 - 1e-3)  # (so every posterior is a proper Beta)
        q = m0 * (1.0 - m0)
        v0 = (spread - pulled * q) / (pulls - pulled) if pulls > pulled and pulled > 1 else q / 3.0
        v0 = min(max(v0, V0_FLOOR * q), q)
        n0 = max(q / v0 - 1.0, N0_MIN)
    n0 = min(math.exp(w_prior) * n0, 1e12)
    for i in range(n):
        ni = float(counts[i])
        neff[i] = n0 + ni
        mu[i] = (n0 * m0 + ni * means[i]) / neff[i]
        if gauss:
            noise[i] = s2
        else:
            noise[i] = max(mu[i] * (1.0 - mu[i]), 0.25 / (neff[i] + 1.0))
    return n0


@numba.njit(cache=True, _nrt=False)
def log_kg_star_beta(mu, c, neff, look):
    """``log KG*`` of an arm of posterior ``Beta(mu neff, (1 - mu) neff)`` (rewards in [0, 1]):
    ``KG_m`` exact (the Beta-binomial sum of :func:`agents.bayesian.knowledge_gradient.
    kg_gain`) for ``m <= EXACT``, the normal form of :func:`log_kg_star` with the Beta
    posterior's variance beyond, ``m`` in 1, 4, 16, ... (``<= look``, and ``look``)."""
    a = mu * neff
    b = neff - a
    now = max(mu, c)
    noise = max(mu * (1.0 - mu), 0.25 / (neff + 1.0)) * neff / (neff + 1.0)
    d = abs(mu - c)
    best = _log_kg_max(d, noise, neff, look, EXACT, a, b, c, now)
    if best == -np.inf:  # no outcome of up to look pulls moves the arm across c
        best = _log_kg_normal(look, d, noise, neff)
    return best


@numba.njit(cache=True, _nrt=False)
def _score(mu_i, c_i, noise_i, neff_i, look, tau, q, w, gauss):
    s = math.sqrt(noise_i / neff_i)
    d = abs(mu_i - c_i)
    z = d / s
    kg = (
        log_kg_star(d, noise_i, neff_i, look)
        if gauss
        else log_kg_star_beta(mu_i, c_i, neff_i, look)
    )
    return kg + w[1] * z + w[2] * z * tau + w[3] * math.log(s) + w[4] * q


@numba.njit(cache=True)
def fill(mu, noise, neff, k, size, horizon, tau, r, w, gauss, rng, reps, c, val):
    """Choose one block of ``size`` pulls into ``reps`` (int64[n], zeros on entry) on the
    fantasy posterior (module docstring; ``r = -1``: no per-arm limit). ``neff`` is
    overwritten with the fantasy; ``c``, ``val`` are float64[n] scratch."""
    n = mu.shape[0]
    hi, lo = _boundary(mu, k)
    look = max(1, int(horizon * math.exp(w[0]) + 0.5))
    for i in range(n):
        c[i] = lo if mu[i] >= hi else hi
        val[i] = _score(mu[i], c[i], noise[i], neff[i], look, tau, 0.0, w, gauss)
    for _ in range(size):
        best = -np.inf
        for i in range(n):
            if (r < 0 or reps[i] < r) and val[i] > best:
                best = val[i]
        cut = best - TIE * max(1.0, abs(best))
        tied = 0
        arm = -1
        for i in range(n):
            if (r < 0 or reps[i] < r) and val[i] >= cut:
                tied += 1
                arm = i
        if tied > 1:
            pick = rng.integers(0, tied)
            for i in range(n):
                if (r < 0 or reps[i] < r) and val[i] >= cut:
                    if pick == 0:
                        arm = i
                        break
                    pick -= 1
        reps[arm] += 1
        neff[arm] += 1.0
        q = reps[arm] / r if r > 0 else 0.0
        val[arm] = _score(mu[arm], c[arm], noise[arm], neff[arm], look, tau, q, w, gauss)


@numba.njit(cache=True)
def _block_shape(n, b, r, left, total, batches, block):
    """``(size, limit, horizon, tau)``: the block's pulls, the most pulls of one arm in it
    (-1: none), the look-ahead's base ``h`` and the share of the budget left. ``left``:
    pulls left (-1: no pull budget); ``batches``: batches left (-1: no limit); ``b``, ``r``:
    the batch model (-1: no limit); ``total``: the whole budget in pulls."""
    if batches >= 0 and b > 0:
        room = batches * b
        left = room if left < 0 else min(left, room)
    if batches < 0:  # the number of batches is free: a block of several batches
        size = max(min(left, max(b, 1)), left // block)
        limit = r if size <= b else -1
    else:  # one batch per block
        size = min(left, b) if b > 0 else -(-left // max(batches, 1))
        limit = r
    if limit >= 0:
        size = min(size, n * limit)
    horizon = left
    if batches >= 0 and r >= 0:
        horizon = min(horizon, r * batches)
    return max(size, 1), limit, max(horizon, 1), left / max(total, 1)


@numba.njit
def run(ctx, prm):
    """``zero_shot`` in fixed budget (``prm``: :data:`P_GAUSS`, :data:`P_SIGMA`,
    :data:`P_BLOCK`, :data:`P_OPEN`, the weights): every arm once, the opening's rounds,
    then blocks chosen by the fitted score, until the budget ends."""
    iv = ctx.iv
    n, k, b, r = iv[engine.N], iv[engine.K], iv[engine.B], iv[engine.R]
    gauss = prm[P_GAUSS] > 0.0
    sigma = prm[P_SIGMA]
    block = max(1, int(prm[P_BLOCK]))
    w = prm[P_W:]
    total = iv[engine.BUDGET]
    if iv[engine.MAX_BATCHES] >= 0 and b > 0:
        room = iv[engine.MAX_BATCHES] * b
        total = room if total < 0 else min(total, room)
    # every arm once (not where the number of batches binds: the blocks fill every batch)
    first = n if engine.pulls_left(ctx) < 0 else min(n, engine.pulls_left(ctx))
    if first > 0 and engine.batches_left(ctx) < 0:
        yield engine.request_each(ctx, np.sort(ctx.rng.permutation(n)[:first]), 1)
        rounds = int(prm[P_OPEN] * total / n) - 1
        if engine.pulls_left(ctx) >= 0:
            rounds = min(rounds, engine.pulls_left(ctx) // n)
        if rounds > 0:
            yield engine.request_each(ctx, np.arange(n), rounds)
    mu, noise, neff = np.empty(n), np.empty(n), np.empty(n)
    c, val = np.empty(n), np.empty(n)
    reps = np.zeros(n, dtype=np.int64)
    arms = np.empty(n, dtype=np.int64)
    times = np.empty(n, dtype=np.int64)
    while True:
        size, limit, horizon, tau = _block_shape(
            n, b, r, engine.pulls_left(ctx), total, engine.batches_left(ctx), block
        )
        posterior(ctx.counts, ctx.means, gauss, sigma, w[5], mu, noise, neff)
        fill(mu, noise, neff, k, size, horizon, tau, limit, w, gauss, ctx.rng, reps, c, val)
        m = as_request(reps, arms, times)
        if size == 1:
            yield arms[0]
        else:
            yield engine.request_pull(ctx, arms[:m], times[:m])


@numba.njit(cache=True)
def top_k(counts, means, gauss, sigma, w_prior, k, rng):
    """The answer: the ``k`` arms of largest posterior mean, ties at random (sorted)."""
    n = counts.shape[0]
    mu, noise, neff = np.empty(n), np.empty(n), np.empty(n)
    posterior(counts, means, gauss, sigma, w_prior, mu, noise, neff)
    order = np.argsort(-(mu + 1e-13 * rng.random(n)))
    return np.sort(order[:k])
