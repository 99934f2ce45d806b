"""AdaHedge (de Rooij, van Erven, Grünwald, Koolen 2014), compiled: Hedge with its adaptive rate.

Paper:
    Steven de Rooij, Tim van Erven, Peter D. Grünwald, Wouter M. Koolen. "Follow the
    leader if you can, hedge if you must". JMLR 15 (2014) 1281-1316, Sec. 2 (AdaHedge).

The learner keeps the cumulative losses ``L`` of its ``K`` experts and the cumulative
mixability gap ``Delta``. Round ``t``:

* learning rate ``eta_t = log(K) / Delta_{t-1}`` (``Delta_0 = 0``, so ``eta_1 = inf``);
* weights ``w_t ∝ exp(-eta_t (L - min L))`` (for ``eta = inf``: uniform over the
  minimisers of ``L``, Follow the Leader);
* mix loss ``M(L) = min L - log(sum_k exp(-eta (L_k - min L)) / K) / eta`` (``min L`` for
  ``eta = inf``);
* after the loss vector ``l_t``: Hedge loss ``h_t = w_t . l_t``, mix loss
  ``m_t = M(L + l_t) - M(L)`` (same ``eta_t``), mixability gap
  ``delta_t = h_t - m_t >= 0``, ``Delta_t = Delta_{t-1} + delta_t``.

``delta_t >= 0`` holds exactly (convexity); it is clamped at 0 against rounding, as in
the paper's reference code. The loss scale need not be known: AdaHedge is invariant to
rescaling the losses (the rate scales with ``1 / Delta``). A gain vector ``g`` is fed as
the loss ``-g``.

Compiled API (one learner = one row ``L`` of losses and one float ``Delta``)::

    m_prev = adahedge.weights(L, Delta, w)           # w_t into ``w``
    Delta = adahedge.incur(L, Delta, w, loss, m_prev)  # L += loss; the new Delta
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["incur", "learning_rate", "mix_loss", "weights"]


@numba.njit(cache=True, _nrt=False)
def learning_rate(n: int, gap: float) -> float:
    """``eta = log(K) / Delta`` (``inf`` while ``Delta = 0``)."""
    if gap <= 0.0:
        return np.inf
    return math.log(n) / gap


@numba.njit(cache=True, _nrt=False)
def mix_loss(cum, eta):
    """``M(L)`` at rate ``eta`` (``min L`` for ``eta = inf``, the mean of ``L`` for ``eta = 0``)."""
    n = cum.shape[0]
    mn = np.inf
    for a in range(n):
        mn = min(mn, cum[a])
    if eta == np.inf:
        return mn
    if eta == 0.0:
        s = 0.0
        for a in range(n):
            s += cum[a]
        return s / n
    s = 0.0
    for a in range(n):
        s += math.exp(-eta * (cum[a] - mn))
    return mn - math.log(s / n) / eta


@numba.njit(cache=True, _nrt=False)
def weights(cum, gap, out):
    """Write AdaHedge's weights ``w_t`` into ``out``; return the mix loss ``M(L)`` at ``eta_t``."""
    n = cum.shape[0]
    eta = learning_rate(n, gap)
    mn = np.inf
    for a in range(n):
        mn = min(mn, cum[a])
    s = 0.0
    for a in range(n):
        if eta == np.inf:
            v = 1.0 if cum[a] == mn else 0.0
        else:
            v = math.exp(-eta * (cum[a] - mn))
        out[a] = v
        s += v
    for a in range(n):
        out[a] /= s
    if eta == np.inf or eta == 0.0:
        return mix_loss(cum, eta)
    return mn - math.log(s / n) / eta


@numba.njit(cache=True, _nrt=False)
def incur(cum, gap, w, loss, m_prev):
    """Feed ``loss`` to the learner that played ``w`` (``m_prev`` from :func:`weights`).

    Adds ``loss`` to ``cum`` in place and returns the new ``Delta``.
    """
    n = cum.shape[0]
    eta = learning_rate(n, gap)
    h = 0.0
    for a in range(n):
        h += w[a] * loss[a]
        cum[a] += loss[a]
    m = mix_loss(cum, eta) - m_prev
    return gap + max(0.0, h - m)
