"""Compiled (numba) reward draws and episode bookkeeping: the fast episode path's half.

One reward source per episode, held in plain arrays so that compiled code can use it:
:class:`~bandit_envs.sampling.IndependentRewards` and
:class:`~bandit_envs.sampling.PairedRewards` expose :meth:`kernel_state` (a
:class:`RewardState`), and :func:`draw_sums` / :func:`draw_one` make, for that state,
exactly the draws the source's ``sums`` / ``one`` make:

* independent Bernoulli and Gaussian draws come from the episode's
  ``numpy.random.Generator`` (numba's ``Generator`` methods advance the same bit
  generator with NumPy's algorithms, so the Python source and these kernels produce the
  same numbers; ``tests/test_fast_path.py`` checks it bit for bit), including the block
  buffer of uniforms that one-pull steps read;
* categorical draws (both sources) and paired draws (Gaussian included) are computed by
  these kernels in both paths: one implementation.

Paired rewards (common random numbers): the j-th reward of arm i is a function of the
episode key, i and j only. Its uniform is ``u(key, i, j) = splitmix64(s_i + (j + 1) g) /
2^64`` (53 bits) with the arm's stream seed ``s_i = splitmix64(key + (i + 1) g)`` and
the golden-ratio increment ``g`` (Steele, Lea, Flood 2014, SplitMix); a Bernoulli reward
is ``u < mu_i``, a categorical one the first support point whose cumulative probability
exceeds ``u``, a Gaussian one ``mu_i + sigma z`` with ``z`` from the Box-Muller
transform of the uniforms of indices ``2j`` and ``2j + 1``.

:func:`apply_pulls` is the environment's bookkeeping of one batch (counts, reward sums,
empirical means), shared by the environment and the fast path.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from bandit_envs import _jit  # noqa: F401  (project-wide cache invalidation; before any njit)

__all__ = [
    "BERNOULLI",
    "CATEGORICAL",
    "DISTRIBUTION_CODES",
    "GAUSSIAN",
    "INDEPENDENT",
    "PAIRED",
    "RewardState",
    "apply_pulls",
    "draw_one",
    "draw_sums",
    "paired_uniform",
]

BERNOULLI, GAUSSIAN, CATEGORICAL = 0, 1, 2
DISTRIBUTION_CODES = {"bernoulli": BERNOULLI, "gaussian": GAUSSIAN, "categorical": CATEGORICAL}
INDEPENDENT, PAIRED = 0, 1
#: Bernoulli batches with at most this many pulls per arm on average draw one uniform per pull.
UNIFORM_PULLS_PER_ARM = 6

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TWO_PI = 2.0 * math.pi


class RewardState(NamedTuple):
    """A reward source as arrays (see the module docstring).

    ``kind``: :data:`INDEPENDENT` or :data:`PAIRED`; ``dist``: a distribution code;
    ``rng``: the episode's generator (independent draws); ``buf``/``pos``: the block
    buffer of uniforms of one-pull steps and the next position in it (``pos[0] ==
    len(buf)``: empty); ``key``: the paired episode key (``uint64[1]``); ``used``: paired
    rewards drawn per arm (the next reward's index; unused by independent sources);
    ``means``, ``sigma``; ``cdf``,
    ``probs``, ``support``: categorical cumulative probabilities and
    probabilities ``(n, m)`` and the reward values ``(m,)`` (1-element dummies otherwise).
    """

    kind: int
    dist: int
    rng: np.random.Generator
    buf: np.ndarray
    pos: np.ndarray
    key: np.ndarray
    used: np.ndarray
    means: np.ndarray
    sigma: float
    cdf: np.ndarray
    probs: np.ndarray
    support: np.ndarray


@numba.njit(cache=True, inline="always", _nrt=False)
def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True, _nrt=False)
def _arm_seed(key, arm):
    """The seed of ``arm``'s paired stream (:func:`paired_uniform`)."""
    return _mix(key + np.uint64(arm + 1) * _GOLDEN)


@numba.njit(cache=True, _nrt=False)
def _stream_uniform(seed, j):
    """The ``j``-th uniform of the paired stream of ``seed`` (:func:`paired_uniform`)."""
    return float(_mix(seed + np.uint64(j + 1) * _GOLDEN) >> _S11) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True, _nrt=False)
def paired_uniform(key: np.uint64, arm: int, j: int) -> float:
    """The uniform in [0, 1) behind the ``j``-th paired reward of ``arm`` (0-based)."""
    return _stream_uniform(_arm_seed(key, arm), j)


@numba.njit(cache=True, _nrt=False)
def _categorical(cdf_row, support, u):
    # np.searchsorted(cdf_row, u, side="right"): the first index with cdf > u
    m = cdf_row.shape[0]
    for i in range(m):
        if cdf_row[i] > u:
            return support[i]
    return support[m - 1]


@numba.njit(cache=True, _nrt=False)
def _paired_reward(key, dist, means, sigma, cdf, support, arm, j):
    return _seeded_reward(_arm_seed(key, arm), dist, means, sigma, cdf, support, arm, j)


@numba.njit(cache=True, _nrt=False)
def _seeded_reward(seed, dist, means, sigma, cdf, support, arm, j):
    """The ``j``-th paired reward of ``arm`` from its stream's seed (:func:`_arm_seed`)."""
    if dist == BERNOULLI:
        return 1.0 if _stream_uniform(seed, j) < means[arm] else 0.0
    if dist == GAUSSIAN:
        u1 = 1.0 - _stream_uniform(seed, 2 * j)
        u2 = _stream_uniform(seed, 2 * j + 1)
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)
        return means[arm] + sigma * z
    return _categorical(cdf[arm], support, _stream_uniform(seed, j))


@numba.njit(cache=True, _nrt=False)
def _buffered_uniform(rng, buf, pos):
    p = pos[0]
    if p >= buf.shape[0]:
        for i in range(buf.shape[0]):
            buf[i] = rng.random()
        p = 0
    pos[0] = p + 1
    return buf[p]


@numba.njit(cache=True, _nrt=False)
def _multinomial_dot(rng, n, probs_row, support):
    """``Multinomial(n, probs_row) . support`` by NumPy's sequential binomial method."""
    m = probs_row.shape[0]
    remaining = 1.0
    left = n
    total = 0.0
    for i in range(m - 1):
        p = probs_row[i] / remaining if remaining > 0.0 else 1.0
        if p > 1.0:
            p = 1.0
        x = rng.binomial(left, p) if p > 0.0 else 0
        total += x * support[i]
        left -= x
        if left <= 0:
            return total
        remaining -= probs_row[i]
    return total + left * support[m - 1]


@numba.njit(cache=True, _nrt=False)
def draw_one(kind, dist, rng, buf, pos, key, used, means, sigma, cdf, probs, support, arm):
    """One fresh reward of ``arm`` (``IndependentRewards.one`` / ``PairedRewards.one``)."""
    if kind == PAIRED:
        j = used[arm]
        used[arm] = j + 1
        return _paired_reward(key[0], dist, means, sigma, cdf, support, arm, j)
    if dist == BERNOULLI:
        return 1.0 if _buffered_uniform(rng, buf, pos) < means[arm] else 0.0
    if dist == GAUSSIAN:
        return means[arm] + sigma * rng.standard_normal()
    return _categorical(cdf[arm], support, _buffered_uniform(rng, buf, pos))


@numba.njit(cache=True, _nrt=False)
def draw_sums(
    kind, dist, rng, buf, pos, key, used, means, sigma, cdf, probs, support, arms, reps, out
):
    """``out[j]`` = sum of ``reps[j]`` fresh rewards of ``arms[j]`` (``RewardSource.sums``)."""
    m = arms.shape[0]
    if kind == PAIRED:
        k = key[0]
        for j in range(m):
            a = arms[j]
            start = used[a]
            seed = _arm_seed(k, a)  # (once per arm, not per reward)
            s = 0.0
            for t in range(start, start + reps[j]):
                s += _seeded_reward(seed, dist, means, sigma, cdf, support, a, t)
            used[a] = start + reps[j]
            out[j] = s
        return
    total = 0
    for j in range(m):
        total += reps[j]
    if dist == BERNOULLI:
        if total <= UNIFORM_PULLS_PER_ARM * m:
            # one uniform per pull, in order (rng.random(total) < repeat(means, reps))
            for j in range(m):
                mu = means[arms[j]]
                hits = 0
                for _ in range(reps[j]):
                    if rng.random() < mu:
                        hits += 1
                out[j] = hits
        else:
            for j in range(m):
                out[j] = rng.binomial(reps[j], means[arms[j]])
    elif dist == GAUSSIAN:
        for j in range(m):
            out[j] = rng.standard_normal()
        for j in range(m):
            r = reps[j]
            out[j] = r * means[arms[j]] + sigma * math.sqrt(r) * out[j]
    else:
        for j in range(m):
            a = arms[j]
            out[j] = _multinomial_dot(rng, reps[j], probs[a], support)


@numba.njit(cache=True, _nrt=False)
def apply_pulls(arms, reps, drawn, counts, sums, emp):
    """Fold one batch into the episode: ``counts``, reward ``sums``, empirical means ``emp``."""
    for j in range(arms.shape[0]):
        a = arms[j]
        c = counts[a] + reps[j]
        counts[a] = c
        s = sums[a] + drawn[j]
        sums[a] = s
        emp[a] = s / c
