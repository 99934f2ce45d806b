"""Hardness measures of top-K identification instances.

All measures are functions of the true means and of K only. The arms may be given in
any order; the papers' convention of sorted means ``mu_1 >= mu_2 >= ... >= mu_n`` is
applied internally.

| function | quantity | source |
| --- | --- | --- |
| :func:`gaps` | ``Delta_i``: mu_i - mu_(k+1) in the top k, else mu_(k) - mu_i | jun2016 eq. (3) |
| :func:`h1` | ``H1 = sum_i Delta_i^-2`` | shahrampour2017 eq. (4) (``H_1^(M)``) |
| :func:`h2` | ``H2 = max_{i != 1} i Delta_(i)^-2`` | shahrampour2017 eq. (4) (``H_2^(M)``) |
| :func:`h_nsar` | ``H^(M)(p) = max_{i != 1} i^p Delta_(i)^-2`` | shahrampour2017 eq. (4) |
| :func:`chen_t` | ``t(eps, K)`` | chen2017 eq. (3) |
| :func:`h_chen` | ``H(t, eps) = sum_i min(Delta_i^-2, (Psi_t^eps)^-2)`` | chen2017 eqs. (4)-(6) |
| :func:`characteristic_time` | ``T*(mu)`` of the lower bound | GK2016 Thm. 1 (lower_bound) |
| :func:`optimal_weights` | ``(w*(mu), T*(mu))`` | GK2016 Thm. 5 (k = 1); top-k max-min |

Ties: when ``mu_(k) == mu_(k+1)`` the top k is not unique. The arms tied at the
boundary then have gap 0 and ``h1``, ``h2`` and ``h_nsar`` are ``inf``. This is
documented behaviour, not an error. ``h_chen`` stays finite because every term is
capped at ``(Psi_t^eps)^-2 <= eps^-2``.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

from bandit_envs._means_check import check_means_k as _check
from bandit_envs.lower_bound import characteristic_time, optimal_weights

__all__ = [
    "Hardness",
    "characteristic_time",
    "chen_t",
    "gaps",
    "h1",
    "h2",
    "h_chen",
    "h_nsar",
    "hardness",
    "optimal_weights",
]


def _gaps(arr: np.ndarray, k: int) -> np.ndarray:
    desc = np.sort(arr)[::-1]
    mu_k, mu_k1 = desc[k - 1], desc[k]
    # An arm with mean >= mu_(k) is in the top k. Arms tied at a boundary
    # mu_(k) == mu_(k+1) get gap 0 under either branch, so the tie needs no special case.
    return np.where(arr >= mu_k, arr - mu_k1, mu_k - arr)


def _inv_sq(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return 1.0 / np.square(x)


def gaps(means: object, k: int) -> np.ndarray:
    """Gaps of the arms with respect to the top-k boundary.

    ``Delta_i = mu_i - mu_(k+1)`` if arm i is among the k largest means, and
    ``Delta_i = mu_(k) - mu_i`` otherwise, where ``mu_(j)`` is the j-th largest mean
    (jun2016 Sec. 3, eq. (3); shahrampour2017 Sec. II.B, eq. (4), first line;
    chen2017 eq. (2)). The two smallest gaps are always equal
    (``Delta_(1) = Delta_(2) = mu_(k) - mu_(k+1)``, jun2016 eq. (3)).

    Args:
        means: True means, any order, shape ``(n_arms,)``.
        k: Number of top arms, ``1 <= k < n_arms``.

    Returns:
        A new float64 array of gaps in the arms' own order (all ``>= 0``).

    Raises:
        ValueError: If ``means`` is not a finite 1-D array of at least 2 values or
            ``k`` is out of range.
    """
    arr, k = _check(means, k)
    return _gaps(arr, k)


def h1(means: object, k: int) -> float:
    """``H1 = sum_i Delta_i^-2`` (shahrampour2017 eq. (4), ``H_1^(M)``; sum over all arms).

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms.

    Returns:
        H1, or ``inf`` if some gap is 0 (a tie at the top-k boundary).
    """
    arr, k = _check(means, k)
    return float(np.sum(_inv_sq(_gaps(arr, k))))


def _max_rank_power(arr: np.ndarray, k: int, p: float) -> float:
    asc = np.sort(_gaps(arr, k))
    ranks = np.arange(1, asc.size + 1, dtype=np.float64)
    # max over i != 1 (shahrampour2017 eq. (4)); since Delta_(1) == Delta_(2), the i = 1
    # term never attains the maximum for p > 0, so this also equals jun2016's max over [n].
    terms = ranks[1:] ** p * _inv_sq(asc[1:])
    return float(np.max(terms))


def h2(means: object, k: int) -> float:
    """``H2 = max_{i != 1} i * Delta_(i)^-2`` over the gaps sorted ascending.

    shahrampour2017 eq. (4) (``H_2^(M)``) excludes ``i = 1``; jun2016 Sec. 4 takes the
    max over all ``i``. Both agree because ``Delta_(1) == Delta_(2)``.

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms.

    Returns:
        H2, or ``inf`` if the top-k boundary is tied.
    """
    arr, k = _check(means, k)
    return _max_rank_power(arr, k, 1.0)


def h_nsar(means: object, k: int, p: float) -> float:
    """``H^(M)(p) = max_{i != 1} i^p * Delta_(i)^-2`` (shahrampour2017 eq. (4)).

    ``H^(M)(1) == H2`` (shahrampour2017, below eq. (4)).

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms (M in the paper).
        p: NSAR nonlinearity, ``p > 0`` (Fig. 1; the analysis uses ``p in (0, 2]``).

    Returns:
        ``H^(M)(p)``, or ``inf`` if the top-k boundary is tied.

    Raises:
        ValueError: If ``p`` is not a finite number ``> 0``.
    """
    arr, k = _check(means, k)
    p_f = _positive(p, "p")
    return _max_rank_power(arr, k, p_f)


def _positive(value: object, name: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return x


def _t_max(n: int, k: int) -> int:
    # chen2017 eq. (3) takes t in {0, ..., K-1}; Delta_{K+t+1} must also exist, so t <= n-K-1.
    return min(k - 1, n - k - 1)


def _chen_parts(arr: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (gaps in sorted-descending order, the same gaps in the arms' order)."""
    g = _gaps(arr, k)
    desc_gaps = _gaps(np.sort(arr)[::-1], k)
    return desc_gaps, g


def chen_t(means: object, k: int, eps: float) -> int:
    """``t(eps, K)`` of chen2017 eq. (3).

    The largest ``t in {0, ..., K-1}`` with ``Delta_{K-t} * t <= K eps`` and
    ``Delta_{K+t+1} * t <= K eps``, where arms are indexed by decreasing mean. Both left
    sides are non-decreasing in t, so the feasible t form a prefix and t = 0 is always
    feasible. ``Delta_{K+t+1}`` exists only for ``t <= n - K - 1``; t is capped there.

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms.
        eps: Aggregate-regret tolerance, ``eps > 0``.

    Returns:
        t(eps, K).
    """
    arr, k = _check(means, k)
    eps_f = _positive(eps, "eps")
    desc_gaps, _ = _chen_parts(arr, k)
    t = 0
    for cand in range(1, _t_max(arr.size, k) + 1):
        # desc_gaps is 0-based: Delta_j (1-based) is desc_gaps[j - 1].
        if desc_gaps[k - cand - 1] * cand <= k * eps_f and desc_gaps[k + cand] * cand <= k * eps_f:
            t = cand
        else:
            break
    return t


def h_chen(means: object, k: int, t: int | None, eps: float) -> float:
    """Hardness ``H(t, eps)`` of chen2017 eq. (6).

    With arms indexed by decreasing mean (chen2017 Sec. 1),
    ``Psi_t = min(Delta_{K-t}, Delta_{K+t+1})`` (eq. (4)),
    ``Psi_t^eps = max(eps, Psi_t)`` (eq. (5)) and
    ``H(t, eps) = sum_{i=1}^n min(Delta_i^-2, (Psi_t^eps)^-2)`` (eq. (6)).
    The symbols lost in the text extraction were restored from the paper's remarks
    (``H(t, eps) <= n eps^-2``; ``Psi_t`` non-decreasing in t so H non-increasing in t;
    ``Delta_{K-t} t = (theta_{K-t} - theta_{K+1}) t``) and from the proof of Theorem 4.

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms.
        t: Exchange count, ``0 <= t <= min(K - 1, n - K - 1)``; ``None`` uses
            ``t(eps, K)`` of eq. (3) (:func:`chen_t`).
        eps: Aggregate-regret tolerance, ``eps > 0``.

    Returns:
        ``H(t, eps)``; finite even when the top-k boundary is tied.

    Raises:
        ValueError: If ``t`` or ``eps`` is out of range.
    """
    arr, k = _check(means, k)
    eps_f = _positive(eps, "eps")
    if t is None:
        t_int = chen_t(arr, k, eps_f)
    else:
        if isinstance(t, bool):
            raise ValueError(f"t must be an integer or None, got {t!r}")
        try:
            t_int = operator.index(t)
        except TypeError:
            raise ValueError(f"t must be an integer or None, got {t!r}") from None
        t_hi = _t_max(arr.size, k)
        if not 0 <= t_int <= t_hi:
            raise ValueError(
                f"t must satisfy 0 <= t <= min(k - 1, n_arms - k - 1) = {t_hi} "
                f"(chen2017 eq. (3)), got t = {t_int}"
            )
    desc_gaps, g = _chen_parts(arr, k)
    psi = min(desc_gaps[k - t_int - 1], desc_gaps[k + t_int])
    psi_eps = max(eps_f, float(psi))
    return float(np.sum(np.minimum(_inv_sq(g), psi_eps**-2)))


@dataclass(frozen=True, eq=False)
class Hardness:
    """Hardness measures of one instance at a given k.

    Attributes:
        means: The true means (read-only copy), in the arms' own order.
        k: Number of top arms.
        gaps: ``Delta_i`` in the arms' order (read-only), see :func:`gaps`.
        h1: ``H1``, see :func:`h1`.
        h2: ``H2``, see :func:`h2`.
    """

    means: np.ndarray
    k: int
    gaps: np.ndarray
    h1: float
    h2: float

    def nsar(self, p: float) -> float:
        """``H^(M)(p)`` of shahrampour2017 eq. (4); see :func:`h_nsar`."""
        return h_nsar(self.means, self.k, p)

    def chen(self, t: int | None, eps: float) -> float:
        """``H(t, eps)`` of chen2017 eq. (6); see :func:`h_chen`."""
        return h_chen(self.means, self.k, t, eps)

    def chen_t(self, eps: float) -> int:
        """``t(eps, K)`` of chen2017 eq. (3); see :func:`chen_t`."""
        return chen_t(self.means, self.k, eps)


def hardness(means: object, k: int) -> Hardness:
    """Compute gaps, H1 and H2 of ``means`` at ``k``.

    Args:
        means: True means, shape ``(n_arms,)``.
        k: Number of top arms, ``1 <= k < n_arms``.

    Returns:
        A :class:`Hardness` with read-only arrays.

    Example:
        >>> h = hardness([0.9, 0.8, 0.5, 0.4, 0.1], k=2)
        >>> h.gaps.round(2).tolist(), round(h.h1, 2), round(h.h2, 2)
        ([0.4, 0.3, 0.3, 0.4, 0.7], 36.76, 25.0)
    """
    arr, k = _check(means, k)
    arr = arr.copy()
    arr.setflags(write=False)
    g = _gaps(arr, k)
    g.setflags(write=False)
    return Hardness(means=arr, k=k, gaps=g, h1=h1(arr, k), h2=h2(arr, k))
