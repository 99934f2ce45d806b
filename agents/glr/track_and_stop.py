"""Track-and-Stop (Garivier & Kaufmann 2016): track the optimal weights w*(mu_hat), GLR stopping."""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.glr import fronts, stopping
from bandit_envs.lower_bound import optimal_weights_k1

__all__ = ["TrackAndStop", "run"]

P_FAMILY, P_DELTA, P_THRESH, P_PAIRS, P_CG, P_TRACKING, P_PRUNED = range(7)
C_TRACKING, D_TRACKING = 0, 1


@numba.njit(cache=True, _nrt=False)
def _project(w, eps, out):
    """Euclidean projection of ``w`` onto ``{v in simplex : v_a >= eps}``: ``max(w - lam, eps)``."""
    n = w.shape[0]
    lo, hi = -1.0, 1.0
    for _ in range(100):
        lam = 0.5 * (lo + hi)
        s = 0.0
        for a in range(n):
            s += max(w[a] - lam, eps)
        if s > 1.0:
            lo = lam
        else:
            hi = lam
    lam = 0.5 * (lo + hi)
    for a in range(n):
        out[a] = max(w[a] - lam, eps)


@numba.njit
def run(ctx, prm):
    """Track-and-Stop (see :class:`TrackAndStop`); ``prm`` as :meth:`TrackAndStop.params`."""
    iv = ctx.iv
    n = iv[engine.N]
    family = int(prm[P_FAMILY])
    sigma = ctx.fv[engine.SIGMA]
    delta, kind, n_pairs, c_g = prm[P_DELTA], int(prm[P_THRESH]), prm[P_PAIRS], prm[P_CG]
    c_track = int(prm[P_TRACKING]) == C_TRACKING
    counts, means, rng = ctx.counts, ctx.means, ctx.rng
    yield engine.request_each(ctx, np.arange(n), 1)
    cand = stopping.new_candidates(n)
    top = np.zeros(1, dtype=np.int64)
    in_top = np.zeros(n, dtype=np.int8)
    w = np.empty(n)
    wp = np.empty(n)
    cum = np.zeros(n)  # C-tracking: sum over rounds of the projected weights
    score = np.empty(n)  # tracking: how far each arm lags behind its target
    pruned = prm[P_PRUNED] > 0.0
    S, F = fronts.build_top(counts, means, 1)
    arm = -1
    while True:
        t = float(iv[engine.PULLS])
        if pruned and arm >= 0:
            fronts.pulled(S, counts, means, arm)
        z, _i, _j = stopping.empirical_statistic(
            pruned, S, F, family, sigma, counts, means, 1, rng, cand, top, in_top
        )
        if z > stopping.threshold(kind, t, delta, n_pairs, c_g):
            break
        optimal_weights_k1(family, sigma, means, w)
        if c_track:
            eps = 0.5 / math.sqrt(n * n + t)
            _project(w, eps, wp)
            for a in range(n):
                cum[a] += wp[a]
        # D-tracking's forced exploration: the least pulled undersampled arm
        arm = -1
        if not c_track:
            floor = math.sqrt(t) - 0.5 * n
            for a in range(n):
                if counts[a] < floor and (arm < 0 or counts[a] < counts[arm]):
                    arm = a
        if arm < 0:
            for a in range(n):
                score[a] = (cum[a] if c_track else t * w[a]) - counts[a]
            arm = engine.argmax_random_ties(score, rng)
        yield arm
    engine.finish(ctx, top)


class TrackAndStop(stopping.GLRAgent):
    """Track-and-Stop: the asymptotically optimal best-arm identification strategy.

    Paper:
        Aurelien Garivier, Emilie Kaufmann. "Optimal best arm identification with fixed
        confidence". COLT 2016 (PMLR 49:998-1027), Sec. 3: sampling rule by tracking
        ``w*(mu_hat(t))`` (Theorem 5's oracle, :func:`bandit_envs.lower_bound.optimal_weights_k1`)
        with forced exploration, and the Chernoff (GLR) stopping rule (their eqs. (8)-(9),
        :mod:`agents.glr.stopping`); the answer is the empirical best arm.

    Tracking (``tracking=``):

    * ``"D"`` (D-Tracking, Sec. 3.1 / Lemma 8, default): if some arm has
      ``N_a(t) < sqrt(t) - K/2``, pull the least pulled such arm; else
      ``argmax_a t w*_a(mu_hat(t)) - N_a(t)``.
    * ``"C"`` (C-Tracking, Lemma 7): ``argmax_a sum_{s <= t} w^{eps_s}_a(s) - N_a(t)``
      with ``eps_s = (K^2 + s)^{-1/2} / 2`` and ``w^eps`` the projection of
      ``w*(mu_hat(s))`` onto ``{w : w_a >= eps}``. Departure: the Euclidean projection
      (``max(w - lambda, eps)``); the paper takes an L-infinity projection. Both lie in the
      set the lemma needs.

    Args:
        delta: confidence parameter in (0, 1) (default 0.1, Sec. 5).
        tracking: ``"D"`` or ``"C"``.
        threshold: GLR threshold, ``"log"`` (Sec. 5's ``log((log t + 1)/delta)``, default),
            ``"gk2016"`` (Theorem 10, proven) or ``"kk2021"``.
        divergence: ``"auto"`` (the env's reward family), ``"bernoulli"`` or ``"gaussian"``.
        seed: seed of the tie-breaking generator.

    Settings: k = 1 only; fixed confidence, and fixed budget as an anytime algorithm.
    Initialisation: every arm once. Ties (equal tracking scores, equal means) at random.
    Cost: one w* oracle call per pull (nested bisections over the arms, about 1-3 us per
    arm), so it is the slowest modern agent per pull.
    """

    name = "track_and_stop"
    k_values = frozenset({1})
    kernel = staticmethod(run)

    def __init__(
        self,
        delta: float = 0.1,
        tracking: str = "D",
        threshold: str = "log",
        divergence: str = "auto",
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(delta, threshold, divergence, seed=seed)
        if tracking not in ("C", "D"):
            raise ValueError(f"tracking={tracking!r} must be 'C' or 'D'")
        self.tracking = tracking

    def sampling_params(self) -> tuple[float, ...]:
        return (C_TRACKING if self.tracking == "C" else D_TRACKING,)

    def __repr__(self) -> str:
        return (
            f"TrackAndStop(delta={self.delta}, tracking={self.tracking!r}, "
            f"threshold={self.threshold!r})"
        )
