"""AT-LUCB: anytime LUCB for top-k identification (Jun & Nowak, ICML 2016)."""

from __future__ import annotations

import math
import numbers

import numba
import numpy as np

from agents import engine
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    ScriptedAgent,
    check_probability,
)
from agents.engine import confidence, count_buckets
from agents.engine.count_buckets import BCNT, BND, ORD, R_D, REG, SIDE, TB
from agents.engine.dispatch import compiled_call
from bandit_envs.problem import Problem

__all__ = ["ATLUCB", "widths"]

#: ``prm`` layout (:meth:`ATLUCB.params`).
P_DELTA_1, P_ALPHA, P_EPS, P_DELTA, P_K1 = 0, 1, 2, 3, 4
#: ``ctx.fv`` registers of the algorithm: ``S``, the time ``t`` of the last ``J`` update,
#: and whether the final anytime update (:meth:`ATLUCB.recommend`) has run.
F_S, F_T, F_FINAL = engine.ALG_F, engine.ALG_F + 1, engine.ALG_F + 2


@numba.njit(cache=True)
def widths(counts, t, n_arms, delta, sigma, k1):
    """``beta(T_i, t, delta)`` for every arm (:func:`~agents.engine.confidence.lucb_width`)."""
    rate = confidence.lucb_rate(float(t), n_arms, delta, k1)
    out = np.empty(counts.shape[0])
    for i in range(counts.shape[0]):
        out[i] = confidence.lucb_width(float(counts[i]), rate, sigma)
    return out


@numba.njit(cache=True, _nrt=False)
def _delta_s(prm, s):
    return prm[P_DELTA_1] * prm[P_ALPHA] ** (s - 1)


@numba.njit(cache=True, _nrt=False)
def _extremes(S, F, means, rate, sigma):
    """``(h*, L_{h*}, l*, U_{l*})`` at the rate ``log(k1 n t^4 / delta)``.

    Arms with equal counts share ``beta``: the smallest ``L`` over ``High`` is the smallest
    over the buckets of their lowest ``High`` mean minus the bucket's ``beta``, the largest
    ``U`` over ``Low`` likewise (:mod:`agents.engine.count_buckets`); O(D), one ``beta`` per
    bucket. Ties (equal bounds) go by the arms' tie keys.
    """
    order, bnd, bc = S[ORD], S[BND], S[BCNT]
    tb = F[TB]
    h = -1
    l_ = -1
    lo = np.inf
    up = -np.inf
    for d in range(S[REG, R_D]):
        s0, s1, s2 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        w = confidence.lucb_width(float(bc[d]), rate, sigma)
        if s1 > s0:
            a = order[s0]
            v = means[a] - w
            if h < 0 or v < lo or (v == lo and tb[a] < tb[h]):
                h, lo = a, v
        if s2 > s1:
            a = order[s2 - 1]
            v = means[a] + w
            if l_ < 0 or v > up or (v == up and tb[a] > tb[l_]):
                l_, up = a, v
    return h, lo, l_, up


@numba.njit(cache=True, _nrt=False)
def _term(S, F, ctx, prm, t, s):
    """``Term(t, delta_s, eps)``: ``U_{l*} - L_{h*} < eps``."""
    n = ctx.counts.shape[0]
    rate = confidence.lucb_rate(float(t), n, _delta_s(prm, s), prm[P_K1])
    _, lo, _, up = _extremes(S, F, ctx.means, rate, ctx.fv[engine.SIGMA])
    return up - lo < prm[P_EPS]


@numba.njit(cache=True, _nrt=False)
def _update(S, F, ctx, prm, t):
    """The ``S(t)``/``J(t)`` lines of AT-LUCB at time ``t`` (``High^t``: the top side of ``S``).

    ``J`` is ``High^t`` while ``S = 1``; once ``S > 1`` it is kept in ``ctx.status``
    (:data:`~agents.engine.ACCEPTED`), the set the anytime answer returns.
    """
    fv = ctx.fv
    s0 = int(fv[F_S])
    if _term(S, F, ctx, prm, t, s0):
        # S(t) = the smallest s > s0 with not Term(t, delta_s): Term holds at s0 and is
        # monotone in s (true up to some s*, false beyond), so double, then bisect.
        lo_s, step = s0, 1
        hi_s = s0 + step
        while _term(S, F, ctx, prm, t, hi_s):
            lo_s, step = hi_s, step * 2
            hi_s = s0 + step
        while hi_s - lo_s > 1:
            mid = (lo_s + hi_s) // 2
            if _term(S, F, ctx, prm, t, mid):
                lo_s = mid
            else:
                hi_s = mid
        fv[F_S] = hi_s
        side = S[SIDE]
        for i in range(ctx.counts.shape[0]):  # J(t) = High^t (O(n), only when S grows)
            ctx.status[i] = engine.ACCEPTED if side[i] == 0 else engine.UNDECIDED
    fv[F_T] = t


@numba.njit(cache=True, _nrt=False)
def _pair(S, F, ctx, prm, t):
    """``h* = argmin_{High} L`` and ``l* = argmax_{Low} U`` at ``delta_{S(t)}``."""
    n = ctx.counts.shape[0]
    rate = confidence.lucb_rate(float(t), n, _delta_s(prm, int(ctx.fv[F_S])), prm[P_K1])
    h, _, l_, _ = _extremes(S, F, ctx.means, rate, ctx.fv[engine.SIGMA])
    return h, l_


@numba.njit
def run(ctx, prm):
    """AT-LUCB (the compiled algorithm; ``prm`` as :meth:`ATLUCB.params`).

    O(D) per round (two pulls) for D distinct pull counts: the arms live in count
    buckets split into ``High`` and ``Low`` (:mod:`agents.engine.count_buckets`), ``High`` is
    repaired after the pulls, and every ``Term`` and the pair read the buckets' extreme
    means; ``S`` grows by doubling and bisection on ``Term``.
    """
    iv = ctx.iv
    n = iv[engine.N]
    k = iv[engine.K]
    fixed_conf = iv[engine.SETTING] == engine.FIXED_CONFIDENCE
    ctx.fv[F_S] = 1.0
    yield engine.request_each(ctx, np.arange(n), 1)
    S, F = count_buckets.build(ctx, k)
    t = 1
    while True:
        _update(S, F, ctx, prm, t)
        if fixed_conf:
            rate = confidence.lucb_rate(float(t), n, prm[P_DELTA], prm[P_K1])
            _, lo, _, up = _extremes(S, F, ctx.means, rate, ctx.fv[engine.SIGMA])
            if up - lo < prm[P_EPS]:
                high = np.empty(k, dtype=np.int64)
                count_buckets.top_set(S, n, high)
                engine.finish(ctx, high)
                return
        h, l_ = _pair(S, F, ctx, prm, t)
        yield engine.request_two(ctx, h, l_)
        count_buckets.pulled(S, F, ctx, h)
        count_buckets.pulled(S, F, ctx, l_)
        count_buckets.repair_top(S, F, ctx.means)
        t += 1


@numba.njit(cache=True)
def final_update(ctx, prm):
    """The anytime output ``J(t + 1)``: the ``J`` update once more on the final statistics.

    Needed only once ``S > 1`` (before, ``J`` is ``High`` of the latest statistics, the
    empirical top k that the anytime rule returns anyway); runs once per episode, on
    buckets built afresh (new tie keys: ``High^(t+1)``'s ties at random).
    """
    fv = ctx.fv
    if fv[F_FINAL] != 0.0 or ctx.iv[engine.HAS_ANSWER] == 1 or fv[F_S] <= 1.0:
        return
    fv[F_FINAL] = 1.0
    S, F = count_buckets.build(ctx, ctx.iv[engine.K])
    _update(S, F, ctx, prm, int(fv[F_T]) + 1)


class ATLUCB(ScriptedAgent):
    """AnyTime Lower and Upper Confidence Bound: LUCB1 with a confidence level that decays.

    Paper:
        Kwang-Sung Jun, Robert Nowak. "Anytime exploration for multi-armed bandits
        using confidence information". ICML 2016 (PMLR 48:974-982), Algorithm AT-LUCB.
        Its confidence bound is LUCB1's: Shivaram Kalyanakrishnan, Ambuj Tewari, Peter
        Auer, Peter Stone. "PAC subset selection in stochastic multi-armed bandits".
        ICML 2012, Sec. 3. Shahrampour & Tarokh (2017, Sec. IV) run it in fixed budget
        "with the parameters as instructed in [Jun & Nowak]".

    Formulas used (the paper could not be read here; this is the published definition
    as we know it, cross-checked against public re-implementations for the defaults):

    * ``beta(u, t, delta) = sqrt(log(k1 n t^4 / delta) / (2u))``, ``k1 = 5/4``, for
      rewards in [0, 1] (:func:`agents.engine.confidence.lucb_beta`, which scales it by
      ``2 sigma`` for sigma-sub-Gaussian rewards); ``L_i = mean_i - beta(T_i, t, delta)``,
      ``U_i = mean_i + beta(T_i, t, delta)``.
    * ``High^t`` = the ``k`` largest empirical means, ``Low^t`` = the rest;
      ``h*_t(delta) = argmin_{i in High^t} L_i``, ``l*_t(delta) = argmax_{i in Low^t} U_i``;
      ``Term(t, delta, eps)``: ``U_{l*} - L_{h*} < eps``.
    * ``delta_s = delta_1 alpha^(s - 1)``, ``S(0) = 1``. At each time ``t``: if
      ``Term(t, delta_{S(t-1)}, eps)`` then ``S(t)`` is the smallest ``s > S(t-1)`` with
      not ``Term(t, delta_s, eps)`` and ``J(t) = High^t``; else ``S(t) = S(t-1)`` and
      ``J(t) = High^t`` if ``S(t) = 1``, ``J(t - 1)`` otherwise. Then pull
      ``h*_t(delta_{S(t)})`` and ``l*_t(delta_{S(t)})``. The output at time ``t`` is
      ``J(t)``.

    ``Term`` is monotone in ``delta`` (a smaller delta widens every interval), so
    ``S(t)`` is found by doubling and bisection instead of stepping ``s`` one by one
    (the same ``S(t)``, in O(log) evaluations).

    Args:
        delta_1: initial confidence level ``delta_1``, in (0, 1). Default 0.5.
        alpha: decay factor of the confidence level, in (0, 1). Default 0.99.
        epsilon: tolerance ``eps >= 0`` of ``Term``. Default 0 (exact top-k).
        delta: fixed confidence only: the target error probability, in (0, 1).
            Default 0.1.
        k1: LUCB1's constant ``k1 >= 1`` in ``beta``. Default 5/4 (Kalyanakrishnan
            et al. 2012, the value for which their union bound gives ``delta``).
        seed: seed of the tie-breaking generator.

    The defaults ``delta_1 = 0.5``, ``alpha = 0.99``, ``eps = 0`` are the values we
    attribute to Jun & Nowak's experiments. They could not be checked against the
    paper's text here; the public AT-LUCB re-implementation in Libin et al.'s BFTS
    code ("Bayesian anytime m-top exploration") uses the same values. At the budgets
    of Shahrampour & Tarokh's Fig. 2 (T = H1) the certification did not trigger in our
    checks (``S`` stayed 1): ``J(t) = High^t``, ``alpha`` played no part and
    ``delta_1`` entered only through the widths ``beta(., t, delta_1)`` of the sampling.

    Settings:

    * fixed budget (anytime, as Shahrampour & Tarokh use it): it runs until the budget
      ends and answers with ``J`` updated with the last statistics
      (:meth:`recommend`, :func:`final_update`).
    * fixed confidence: it stops at the first ``t`` at which ``Term(t, delta, eps)``
      holds and answers ``High^t``. This is LUCB1's stopping rule at level ``delta``
      on AT-LUCB's sampling: with ``eps = 0``, the error probability is at most
      ``delta zeta(3) / k1 < delta`` (one-sided Hoeffding per arm, union over arms,
      ``u <= t`` and ``t``, as in Kalyanakrishnan et al.'s Lemma 2). With ``eps > 0`` the
      answer is only ``eps``-good (every returned arm is above ``mu_(k) - eps``).

    Departures from the paper, and why:

    * The initial round pulls every arm once (``t = 1``): ``beta`` is infinite at
      ``u = 0``. ``t`` then counts rounds (two pulls each), as in LUCB1, so every arm
      has ``T_i <= t`` (what the union bound needs).
    * In fixed budget the answer at the end is ``J(t + 1)``: the ``J`` update is run
      once more on the final statistics (the anytime output after the last pulls).
    * Ties (``High^t``, ``h*``, ``l*``) are broken uniformly at random with ``self.rng``.
    * Batches: a round is one request of ``{h*, l*}`` once each
      (:func:`~agents.engine.request_two`); with ``batch_size=1`` it is two one-pull
      steps in RoundRobin's order (the decisions are made before either pull, as in
      the paper).
    """

    name = "at_lucb"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(
        self,
        delta_1: float = 0.5,
        alpha: float = 0.99,
        epsilon: float = 0.0,
        delta: float = 0.1,
        k1: float = 1.25,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        for nm, v in (("delta_1", delta_1), ("alpha", alpha), ("delta", delta)):
            check_probability(nm, v)
        if not _real(epsilon) or not (0.0 <= float(epsilon) < math.inf):
            raise ValueError(f"epsilon={epsilon!r} must be a finite number >= 0")
        if not _real(k1) or not (1.0 <= float(k1) < math.inf):
            raise ValueError(f"k1={k1!r} must be a finite number >= 1")
        self.delta_1 = float(delta_1)
        self.alpha = float(alpha)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.k1 = float(k1)

    def __repr__(self) -> str:
        return (
            f"ATLUCB(delta_1={self.delta_1}, alpha={self.alpha}, epsilon={self.epsilon}, "
            f"delta={self.delta}, seed={self.seed})"
        )

    def params(self) -> np.ndarray:
        """``prm = [delta_1, alpha, epsilon, delta, k1]``."""
        return np.array([self.delta_1, self.alpha, self.epsilon, self.delta, self.k1])

    def reset(self, problem: Problem, *, seed: int | None = None) -> None:
        """Start an episode (``S = 1``)."""
        super().reset(problem, seed=seed)
        self.ctx.fv[F_S] = 1.0

    @property
    def S(self) -> int:  # noqa: N802 (the paper's name)
        """The current confidence index ``S(t)`` (read-only)."""
        return int(self.ctx.fv[F_S])

    @property
    def t(self) -> int:
        """The time ``t`` of the last ``J`` update (read-only; 0 before the first)."""
        return int(self.ctx.fv[F_T])

    def recommend(self) -> np.ndarray:
        """The answer; in anytime use ``J(t + 1)`` (:func:`final_update`), then the base's rule."""
        compiled_call(final_update, self.ctx, self.params())
        return super().recommend()


def _real(v: object) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))
