"""LUCB1 (Kalyanakrishnan, Tewari, Auer, Stone 2012)."""

from __future__ import annotations

import numpy as np

from agents.base import check_probability
from agents.lucb.family import LUCBFamily
from agents.lucb.layout import RADIUS_LUCB1, RULE_BOTH

__all__ = ["LUCB"]


class LUCB(LUCBFamily):
    """LUCB1: pull the weakest-looking top arm and the strongest-looking other arm.

    Paper:
        Shivaram Kalyanakrishnan, Ambuj Tewari, Peter Auer, Peter Stone. "PAC subset
        selection in stochastic multi-armed bandits". ICML 2012, Sec. 3 (algorithm LUCB,
        exploration rate of LUCB1). The "LUCB" baseline of Jiang, Li, Qiao (2017) Sec. 5.

    Formula used: after one pull of every arm, at round ``t = 1, 2, ...``: ``High`` = the
    ``k`` largest empirical means, ``Low`` = the rest;
    ``beta(u, t) = sqrt(log(k1 n t^4 / delta) / (2u))`` with ``k1 = 5/4`` (LUCB1, for
    rewards in [0, 1]); ``LCB_i = mean_i - beta(T_i, t)``, ``UCB_i = mean_i + beta(T_i, t)``;
    ``h = argmin_{High} LCB``, ``l = argmax_{Low} UCB``; stop and return ``High`` when
    ``UCB_l - LCB_h < epsilon``, else pull ``h`` and ``l`` (one round = two pulls).
    Error probability at most ``delta`` (``(epsilon, k, delta)``-PAC; exact top-k for
    ``epsilon = 0``).

    Args:
        delta: target error probability, in (0, 1). Default 0.01 (jiang2017 Sec. 5).
        epsilon: PAC tolerance ``>= 0``; 0 (default) identifies the exact top-k, as
            in jiang2017's comparison (stop rule then ``LCB_h > UCB_l``).
        k1: the constant of ``beta``, ``>= 1``. Default 5/4 (the paper's LUCB1).
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence and fixed budget (anytime: current ``High``); any
    ``batch_size``/``repeat_limit`` (the pair is one request).

    Departures from the paper, and why:

    * ``beta`` is scaled by ``2 sigma`` for sigma-sub-Gaussian rewards
      (:func:`agents.engine.confidence.lucb_beta`); for [0, 1] rewards ``2 sigma = 1``.
    * ``t`` counts LUCB rounds (two pulls each), starting at 1 after the initial pull of
      every arm, as in the paper's loop.
    * Ties are broken uniformly at random (the paper does not say).
    * Speed: ``beta(u, t) = sqrt(log(k1 n t^4 / delta)) * 2 sigma / sqrt(2u)`` grows with
      ``t`` for every arm; the bounds are lines in ``sqrt(log(k1 n t^4 / delta))``, kept
      in the kinetic tournament trees of :mod:`agents.lucb.kinetic` (exact, O(log n)
      per update, replays only where the order of two bounds changed).
    """

    name = "lucb"
    rule = RULE_BOTH

    def __init__(
        self,
        delta: float = 0.01,
        epsilon: float = 0.0,
        k1: float = 1.25,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_probability("delta", delta)
        if not (isinstance(epsilon, (int, float)) and epsilon >= 0.0):
            raise ValueError(f"epsilon={epsilon!r} must be >= 0 (PAC tolerance)")
        if not (isinstance(k1, (int, float)) and k1 >= 1.0):
            raise ValueError(f"k1={k1!r} must be >= 1")
        self.delta = float(delta)
        self.epsilon = float(epsilon)
        self.k1 = float(k1)

    def params(self) -> np.ndarray:
        """``prm``: LUCB1's radius (``delta``, ``k1``) and stop rule ``UCB_l - LCB_h < epsilon``."""
        return self._prm(stop_eps=self.epsilon, radius=RADIUS_LUCB1, delta=self.delta, k1=self.k1)
