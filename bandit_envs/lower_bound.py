"""The fixed-confidence lower bound: characteristic time T*(mu) and optimal weights w*(mu).

For any delta-correct algorithm, ``E[pulls] >= T*(mu) kl(delta, 1 - delta)`` with

    T*(mu)^-1 = max_{w in simplex} min_{i in top k, j outside} W_ij(w),
    W_ij(w) = inf_x w_i d(mu_i, x) + w_j d(mu_j, x)   (bandit_envs.divergences.transport_cost)

(Garivier & Kaufmann, "Optimal best arm identification with fixed confidence", COLT
2016, Theorem 1 and Lemma 3 for k = 1; Kaufmann, Cappe, Garivier, "On the complexity of
best-arm identification in multi-armed bandit models", JMLR 2016, Sec. 3-4 and Chen,
Gupta, Li, Qiao, Wang, "Nearly optimal sampling algorithms for combinatorial pure
exploration", COLT 2017, for the top-k max-min), so ``pulls / (T*(mu) log(1/delta))``
is an algorithm's sample count in units of the optimum.

* ``k = 1``: :func:`optimal_weights_k1` (compiled; Track-and-Stop calls it every step):
  Garivier & Kaufmann's Theorem 5. With ``a* `` the best arm and
  ``g_a(x) = d(mu*, m) + x d(mu_a, m)``, ``m = (mu* + x mu_a)/(1 + x)``, let ``x_a(y)``
  solve ``g_a(x) = y``; ``y*`` solves ``F(y) = sum_a d(mu*, m_a) / d(mu_a, m_a) = 1`` on
  ``(0, min_a d(mu*, mu_a))``; then ``w*_{a*} = 1 / (1 + sum_a x_a(y*))``,
  ``w*_a = x_a(y*) w*_{a*}`` and ``T* = 1 / (w*_{a*} y*)``. ``x_a(y)`` by Newton (``g_a``
  is increasing and concave, ``g_a'(x) = d(mu_a, m)``), warm-started; ``y*`` by regula
  falsi (Illinois), to ``|F - 1| <= 1e-12``.
* ``k > 1``: :func:`characteristic_time` solves the max-min as a smooth program over
  ``(w, t)`` (maximise ``t`` subject to ``t <= W_ij(w)`` for the ``k (n - k)`` pairs,
  concave constraints) with scipy's SLSQP, started from the k = 1-style heuristic of
  equal weights; it is checked against the exact k = 1 solution in the tests. Limited to
  ``k (n - k) <= 2500`` pairs (beyond that the program is too large for SLSQP).

Ties at the top-k boundary (``mu_(k) == mu_(k+1)``) make the answer non-unique:
``T* = inf``.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from bandit_envs import _jit  # noqa: F401  (cache stamps; before any njit)
from bandit_envs._means_check import check_means_k
from bandit_envs.divergences import family_code, kl, transport_cost

__all__ = ["characteristic_time", "optimal_weights", "optimal_weights_k1"]

_ITERS = 100  # bisection steps of y (interval shrinks by 2^-100: to machine precision)
_MAX_PAIRS = 2500


@numba.njit(cache=True, _nrt=False)
def _g(family, sigma, mu_b, mu_a, x):
    m = (mu_b + x * mu_a) / (1.0 + x)
    return kl(family, mu_b, m, sigma) + x * kl(family, mu_a, m, sigma)


@numba.njit(cache=True, _nrt=False)
def _x_of_y(family, sigma, mu_b, mu_a, y, x0):
    """``x >= 0`` with ``g_a(x) = y`` (``0 <= y < d(mu_b, mu_a)``), by Newton from ``x0``.

    ``g_a`` is increasing and concave (``g_a'(x) = d(mu_a, m)`` decreases), so Newton's
    iterates approach the root from the left monotonically after the first step,
    whatever ``x0 >= 0``.
    """
    if y <= 0.0:
        return 0.0
    x = max(x0, 0.0)
    for _ in range(100):
        m = (mu_b + x * mu_a) / (1.0 + x)
        gx = kl(family, mu_b, m, sigma) + x * kl(family, mu_a, m, sigma) - y
        slope = kl(family, mu_a, m, sigma)
        if slope <= 0.0:
            return x
        step = gx / slope
        nx = max(x - step, 0.0)
        if abs(nx - x) <= 1e-13 * max(1.0, nx):
            return nx
        x = nx
    return x


@numba.njit(cache=True, _nrt=False)
def _f_of_y(family, sigma, means, b, y, w):
    """``F(y) - 1``; ``w`` holds a warm start of ``x_a`` and receives ``x_a(y)``."""
    total = 0.0
    mu_b = means[b]
    for a in range(means.shape[0]):
        if a == b:
            w[a] = 1.0
            continue
        x = _x_of_y(family, sigma, mu_b, means[a], y, w[a])
        w[a] = x
        m = (mu_b + x * means[a]) / (1.0 + x)
        den = kl(family, means[a], m, sigma)
        total += kl(family, mu_b, m, sigma) / den if den > 0.0 else np.inf
    return total - 1.0


@numba.njit(cache=True, _nrt=False)
def optimal_weights_k1(family, sigma, means, w):
    """Write ``w*(mu)`` (k = 1) into ``w``; return ``T*(mu)`` (``inf`` if the best arm is tied).

    ``F(y) = 1`` is solved by regula falsi with the Illinois modification inside the
    bracket ``(0, min_a d(mu*, mu_a))`` (bisection while ``F`` is infinite at the right
    end), to ``|F - 1| <= 1e-12``. A tie for the best mean gives ``T* = inf`` and uniform
    weights.
    """
    n = means.shape[0]
    b = 0
    for a in range(1, n):
        if means[a] > means[b]:
            b = a
    ymax = np.inf
    for a in range(n):
        if a != b:
            d = kl(family, means[b], means[a], sigma)
            if d < ymax:
                ymax = d
    if not ymax > 0.0:
        for a in range(n):
            w[a] = 1.0 / n
        return np.inf
    for a in range(n):
        w[a] = 1.0
    lo, flo, hi, fhi = 0.0, -1.0, ymax, np.inf
    y = 0.5 * ymax
    side = 0
    for _ in range(_ITERS):
        f = _f_of_y(family, sigma, means, b, y, w)
        if f > 0.0:
            hi, fhi = y, f
            if side == 1:
                flo *= 0.5  # Illinois: the left end was kept twice
            side = 1
        else:
            lo, flo = y, f
            if side == -1 and np.isfinite(fhi):
                fhi *= 0.5
            side = -1
        if abs(f) <= 1e-12 or hi - lo <= 1e-14 * ymax:
            break
        if np.isfinite(fhi):
            y = (lo * fhi - hi * flo) / (fhi - flo)
            if not lo < y < hi:
                y = 0.5 * (lo + hi)
        else:
            y = 0.5 * (lo + hi)
    _f_of_y(family, sigma, means, b, y, w)
    s = 0.0
    for a in range(n):
        s += w[a]
    for a in range(n):
        w[a] /= s
    return 1.0 / (w[b] * y)


def _check(means: object, k: int, distribution: str, sigma: float) -> tuple[np.ndarray, int, int]:
    arr, k_int = check_means_k(means, k)
    family = family_code(distribution)
    if distribution != "gaussian" and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(
            f"means of {distribution!r} rewards must lie in [0, 1], got {arr.min()}..{arr.max()}"
        )
    if not (isinstance(sigma, (int, float)) and sigma > 0.0):
        raise ValueError(f"sigma={sigma!r} must be > 0")
    return arr, k_int, family


def _min_pair_cost(
    family: int, sigma: float, arr: np.ndarray, top: np.ndarray, w: np.ndarray
) -> float:
    rest = np.setdiff1d(np.arange(arr.size), top)
    return min(transport_cost(family, sigma, w[i], arr[i], w[j], arr[j]) for i in top for j in rest)


def optimal_weights(
    means: object, k: int = 1, distribution: str = "bernoulli", sigma: float = 0.5
) -> tuple[np.ndarray, float]:
    """``(w*(mu), T*(mu))`` for top-``k`` identification (see the module docstring)."""
    arr, k, family = _check(means, k, distribution, sigma)
    desc = np.sort(arr)[::-1]
    if desc[k - 1] == desc[k]:
        return np.full(arr.size, 1.0 / arr.size), math.inf
    if k == 1:
        w = np.empty(arr.size)
        t_star = float(optimal_weights_k1(family, float(sigma), arr, w))
        return w, t_star
    n = arr.size
    if k * (n - k) > _MAX_PAIRS:
        raise ValueError(
            f"top-k characteristic time: k (n - k) = {k * (n - k)} pairs is over the "
            f"solver's limit of {_MAX_PAIRS}"
        )
    return _solve_max_min(arr, k, family, float(sigma))


def _solve_max_min(arr: np.ndarray, k: int, family: int, sigma: float) -> tuple[np.ndarray, float]:
    """The top-k max-min by SLSQP (any k; the tests compare k = 1 with the exact oracle)."""
    n = arr.size
    from scipy.optimize import minimize

    top = np.argsort(-arr, kind="mergesort")[:k]
    rest = np.setdiff1d(np.arange(n), top)
    pairs = [(i, j) for i in top for j in rest]
    scale = 1.0 / max(transport_cost(family, sigma, 1.0, arr[i], 1.0, arr[j]) for i, j in pairs)

    def cons(z: np.ndarray) -> np.ndarray:
        w = np.maximum(z[:n], 0.0)
        return (
            np.array(
                [
                    scale * transport_cost(family, sigma, w[i], arr[i], w[j], arr[j])
                    for i, j in pairs
                ]
            )
            - z[n]
        )

    w0 = np.full(n, 1.0 / n)
    z0 = np.append(w0, scale * _min_pair_cost(family, sigma, arr, top, w0))
    res = minimize(
        lambda z: -z[n],
        z0,
        jac=lambda z: np.append(np.zeros(n), -1.0),
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * n + [(0.0, None)],
        constraints=[
            {"type": "ineq", "fun": cons},
            {"type": "eq", "fun": lambda z: z[:n].sum() - 1.0},
        ],
        options={"maxiter": 1000, "ftol": 1e-14},
    )
    w = np.maximum(res.x[:n], 0.0)
    w /= w.sum()
    value = _min_pair_cost(family, sigma, arr, top, w)
    return w, 1.0 / value


def characteristic_time(
    means: object, k: int = 1, distribution: str = "bernoulli", sigma: float = 0.5
) -> float:
    """``T*(mu)``: the lower bound's constant (see the module docstring)."""
    return optimal_weights(means, k, distribution, sigma)[1]
