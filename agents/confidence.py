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
  rewards in [0, 1] (sigma = 1/2) and scaled by ``2 sigma`` otherwise (paper-notes).
* :func:`lil_bound`: the lil' bound of Jiang, Li, Qiao (2017) Sec. 5 (after Jamieson et
  al. 2014), ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t *
  log(log((1 + eps) t + 2) / w))``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hoeffding", "jun_deviation", "lil_bound", "lucb_beta"]


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


def jun_deviation(t: np.ndarray | float, omega: float, sigma: float = 0.5) -> np.ndarray | float:
    """``D(t, omega)`` of Jun et al. (2016) eq. 2, scaled by ``2 sigma``."""
    t, safe = _counts(t)
    return _finish(t, 2.0 * sigma * np.sqrt(4.0 * np.log(np.log2(2.0 * safe) / omega) / safe))


def lil_bound(
    t: np.ndarray | float, w: float, eps: float = 0.0, sigma: float = 0.5
) -> np.ndarray | float:
    """The lil' confidence radius ``U(t, w)`` of Jiang et al. (2017) Sec. 5."""
    t, safe = _counts(t)
    inner = np.log(np.log((1.0 + eps) * safe + 2.0) / w)
    width = (1.0 + np.sqrt(eps)) * np.sqrt(2.0 * sigma**2 * (1.0 + eps) / safe * inner)
    return _finish(t, width)
