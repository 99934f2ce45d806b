"""Confidence radii shared by the fixed-confidence agents.

Every function takes pull counts ``t`` (scalar or array) and returns the half-width of
a confidence interval around the empirical mean, ``inf`` where ``t == 0``. ``sigma`` is
the sub-Gaussian scale of one reward (``problem.sigma``: 1/2 for rewards in [0, 1]).

* :func:`hoeffding`: ``sigma * sqrt(2 log(1/delta) / t)`` (one fixed ``t``).
* :func:`lucb_beta`: LUCB1's exploration rate, Kalyanakrishnan, Tewari, Auer, Stone
  (ICML 2012), Sec. 3: ``beta(u, t) = sqrt(log(k1 n t^4 / delta) / (2u))`` with
  ``k1 = 5/4`` for rewards in [0, 1]; scaled by ``2 sigma`` for sub-Gaussian rewards.
* :func:`jun_deviation`: Jun et al. (2016) eq. 2,
  ``D(t, w) = sqrt(4 log(log2(2t) / w) / t)``, ``w = sqrt(delta / (6n))``; derived for
  rewards in [0, 1] (sigma = 1/2) and scaled by ``2 sigma`` for sigma-sub-Gaussian rewards.
* :func:`lil_bound`: the lil' bound of Jiang, Li, Qiao (2017) Sec. 5 (after Jamieson et
  al. 2014), ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t *
  log(log((1 + eps) t + 2) / w))``.
* :func:`lil_c_eps`: the constant ``c_eps = (2 + eps)/eps * (1/log(1 + eps))^(1 + eps)`` of the
  finite LIL (Jiang et al. 2017 Lemma 2.1; Jamieson et al. 2014 Lemma 3).
* :func:`lil_faithful_delta`: the largest ``delta`` for which a lil' algorithm's proven
  error bound is at most the target ``nu`` ("faithful" parameters, Jiang et al. 2017 Sec. 5).
* :func:`kl_rate`: KL-LUCB's exploration rate ``beta(t, delta)`` (Kaufmann &
  Kalyanakrishnan, COLT 2013, Theorem 3: ``log(k1 n t^alpha / delta) + log log(k1 n
  t^alpha / delta)``; or the practical ``log((1 + log t) / delta)``), the level of the KL
  bounds of :mod:`bandit_envs.divergences`; not a radius.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = [
    "LIL_GUARANTEES",
    "hoeffding",
    "jun_deviation",
    "jun_width",
    "kl_rate",
    "lil_bound",
    "lil_c_eps",
    "lil_faithful_delta",
    "lil_width",
    "lucb_beta",
    "lucb_coef",
    "lucb_rate",
    "lucb_width",
]


def _counts(t: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t, dtype=np.float64)
    safe = np.where(t > 0, t, 1.0)
    return t, safe


def _finish(t: np.ndarray, width: np.ndarray) -> np.ndarray | float:
    width = np.where(t > 0, width, np.inf)
    return float(width) if width.ndim == 0 else width


def hoeffding(t: np.ndarray | float, delta: float, sigma: float = 0.5) -> np.ndarray | float:
    """Sub-Gaussian (Hoeffding) radius for a fixed number of pulls ``t``."""
    t, safe = _counts(t)
    return _finish(t, sigma * np.sqrt(2.0 * np.log(1.0 / delta) / safe))


def lucb_beta(
    u: np.ndarray | float, t: float, n_arms: int, delta: float, sigma: float = 0.5, k1: float = 1.25
) -> np.ndarray | float:
    """LUCB1 radius ``beta(u, t)`` for ``u`` pulls at round ``t`` (Kalyanakrishnan et al. 2012)."""
    u, safe = _counts(u)
    rate = np.log(k1 * n_arms * max(float(t), 1.0) ** 4 / delta)
    return _finish(u, 2.0 * sigma * np.sqrt(rate / (2.0 * safe)))


@numba.njit(cache=True)
def jun_width(t: float, omega: float, sigma: float) -> float:
    """``D(t, omega)`` of Jun et al. (2016) eq. 2, scaled by ``2 sigma``, for one count ``t``.

    The one formula behind :func:`jun_deviation` (compiled: agents' kernels call it);
    ``inf`` for ``t <= 0``.
    """
    if t <= 0:
        return np.inf
    return 2.0 * sigma * math.sqrt(4.0 * math.log(math.log2(2.0 * t) / omega) / t)


@numba.njit(cache=True)
def _jun_widths(t, omega, sigma):
    out = np.empty(t.shape[0])
    for i in range(t.shape[0]):
        out[i] = jun_width(t[i], omega, sigma)
    return out


@numba.njit(cache=True)
def lucb_rate(t: float, n_arms: int, delta: float, k1: float) -> float:
    """``log(k1 n max(t, 1)^4 / delta)``: the rate inside :func:`lucb_beta` (compiled)."""
    tt = t if t > 1.0 else 1.0
    return math.log(k1 * n_arms * tt**4 / delta)


@numba.njit(cache=True)
def lucb_coef(u: float, sigma: float) -> float:
    """The count factor of :func:`lucb_beta`: ``2 sigma / sqrt(2u)`` (compiled, inf at 0).

    ``beta(u, t) = sqrt(lucb_rate(t, ...)) * lucb_coef(u, sigma)`` (the same formula as
    :func:`lucb_width`, split into a factor of the round and one of the arm's count: the
    LUCB family's kernels key their structures by the count factor).
    """
    if u <= 0:
        return np.inf
    return 2.0 * sigma / math.sqrt(2.0 * u)


@numba.njit(cache=True)
def lucb_width(u: float, rate: float, sigma: float) -> float:
    """:func:`lucb_beta` for one count ``u``: ``2 sigma sqrt(rate / (2u))`` (compiled, inf at 0)."""
    if u <= 0:
        return np.inf
    return 2.0 * sigma * math.sqrt(rate / (2.0 * u))


#: :func:`kl_rate` kinds: Kaufmann & Kalyanakrishnan (2013) Theorem 3's rate; the
#: practical ``log((1 + log t) / delta)``.
KL_RATE_THEOREM3, KL_RATE_PRACTICAL = 0, 1


@numba.njit(cache=True)
def kl_rate(t: float, n_arms: int, delta: float, k1: float, alpha: float, kind: int) -> float:
    """KL-LUCB's exploration rate ``beta(t, delta)`` at round ``t >= 1`` (compiled).

    ``kind`` :data:`KL_RATE_THEOREM3`: ``log(x) + log(log(x))`` with ``x = k1 n t^alpha /
    delta`` (Kaufmann & Kalyanakrishnan 2013, Theorem 3; ``x > e`` for the theorem's
    ``k1``); :data:`KL_RATE_PRACTICAL`: ``log((1 + log t) / delta)`` (``k1`` and
    ``alpha`` unused). Nondecreasing in ``t``; ``t < 1`` is read as 1.
    """
    tt = t if t > 1.0 else 1.0
    if kind == KL_RATE_PRACTICAL:
        return math.log((1.0 + math.log(tt)) / delta)
    x = math.log(k1 * n_arms / delta) + alpha * math.log(tt)
    return x + math.log(x)


def jun_deviation(t: np.ndarray | float, omega: float, sigma: float = 0.5) -> np.ndarray | float:
    """``D(t, omega)`` of Jun et al. (2016) eq. 2, scaled by ``2 sigma`` (:func:`jun_width`)."""
    t = np.asarray(t, dtype=np.float64)
    width = _jun_widths(t.reshape(-1), float(omega), float(sigma)).reshape(t.shape)
    return float(width) if width.ndim == 0 else width


def lil_bound(
    t: np.ndarray | float, w: float, eps: float = 0.0, sigma: float = 0.5
) -> np.ndarray | float:
    """The lil' confidence radius ``U(t, w)`` of Jiang et al. (2017) Sec. 5."""
    t, safe = _counts(t)
    inner = np.log(np.log((1.0 + eps) * safe + 2.0) / w)
    width = (1.0 + np.sqrt(eps)) * np.sqrt(2.0 * sigma**2 * (1.0 + eps) / safe * inner)
    return _finish(t, width)


@numba.njit(cache=True)
def lil_width(t: float, w: float, eps: float, sigma: float) -> float:
    """:func:`lil_bound` for one count ``t`` (compiled; ``inf`` at 0): the same formula."""
    if t <= 0:
        return np.inf
    inner = math.log(math.log((1.0 + eps) * t + 2.0) / w)
    return (1.0 + math.sqrt(eps)) * math.sqrt(2.0 * sigma**2 * (1.0 + eps) / t * inner)


def lil_c_eps(eps: float) -> float:
    """``c_eps = (2 + eps)/eps * (1/log(1 + eps))^(1 + eps)`` (Jiang et al. 2017, Lemma 2.1).

    With probability at least ``1 - c_eps w^(1 + eps)`` the empirical mean of a
    sigma-sub-Gaussian arm stays within ``U(t, w)`` (:func:`lil_bound`) of its mean for
    every ``t >= 1`` (one side; ``eps`` in (0, 1), ``w < log(1 + eps)/e``).
    """
    if not 0.0 < eps < 1.0:
        raise ValueError(
            f"eps={eps} must lie in (0, 1) for the finite LIL (c_eps is infinite at 0)"
        )
    return (2.0 + eps) / eps * (1.0 / np.log1p(eps)) ** (1.0 + eps)


LIL_GUARANTEES = ("theorem_3_1", "union", "lil_ucb")


def lil_faithful_delta(nu: float, eps: float, guarantee: str, n_arms: int | None = None) -> float:
    """The largest ``delta`` whose proven error bound is at most ``nu``.

    ``guarantee`` names the bound (``c = c_eps``, :func:`lil_c_eps`):

    * ``"theorem_3_1"``: ``c delta <= nu``, Jiang et al. (2017) Theorem 3.1 (lil'RandLUCB;
      the same union bound covers LUCB++'s radii ``U(T, delta/(2(N-K)))`` and
      ``U(T, delta/(2K))``).
    * ``"union"``: ``c delta^(1 + eps) / N^eps <= nu``, Jiang et al. (2017) Theorem 4.1
      (lil'CLUCB; also every algorithm that uses ``U(T, delta/N)`` for all ``N`` arms,
      e.g. lil'LUCB), needs ``n_arms``.
    * ``"lil_ucb"``: ``4 sqrt(c delta) + 4 c delta <= nu``, Jamieson et al. (2014),
      lil'UCB's guarantee: ``delta = (sqrt(1 + nu) - 1)^2 / (4 c)``.
    """
    if not 0.0 < nu < 1.0:
        raise ValueError(f"nu={nu} must lie in (0, 1)")
    c = lil_c_eps(eps)
    if guarantee == "theorem_3_1":
        return float(nu / c)
    if guarantee == "union":
        if n_arms is None or n_arms < 1:
            raise ValueError(f"guarantee 'union' needs n_arms >= 1, got {n_arms}")
        return float((nu * n_arms**eps / c) ** (1.0 / (1.0 + eps)))
    if guarantee == "lil_ucb":
        return float((np.sqrt(1.0 + nu) - 1.0) ** 2 / (4.0 * c))
    raise ValueError(f"guarantee={guarantee!r} must be one of {list(LIL_GUARANTEES)}")
