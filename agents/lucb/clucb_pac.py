"""CLUCB-PAC: combinatorial LUCB for epsilon-top-k arms (Chen, Lin, King, Lyu, Chen 2014)."""

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
from agents.engine import count_buckets
from agents.engine.count_buckets import (
    BCNT,
    BND,
    ORD,
    PS,
    QS,
    R_D,
    R_JM,
    R_JN,
    RAD,
    REG,
    TB,
    build,
    pulled,
    repair_top,
)

__all__ = ["CLUCBPAC", "scale"]

#: ``prm`` layout (:meth:`CLUCBPAC.params`): the PAC tolerance ``epsilon_sum = k epsilon``
#: and ``delta``.
P_EPS_SUM, P_DELTA = 0, 1
#: ``ctx.fv`` register: the steps made after the initial round (:attr:`CLUCBPAC.steps`).
F_STEPS = engine.ALG_F


@numba.njit(cache=True, _nrt=False)
def scale(t, n, delta, sigma):
    """``R sqrt(2 ln(4 n t^3 / delta))``: ``rad_t(i)`` is this over ``sqrt(T_t(i))``."""
    return sigma * math.sqrt(2.0 * math.log(4.0 * n * math.pow(float(t), 3.0) / delta))


@numba.njit(cache=True, _nrt=False)
def _before(v1, t1, v2, t2):
    """(value, key) order."""
    return v1 < v2 or (v1 == v2 and t1 < t2)


@numba.njit(cache=True, _nrt=False)
def _select(S, F, means, cap):
    """Settle ``q``/``p`` so that ``M~`` is the top ``k`` of the adjusted weights.

    With ``a_1 <= a_2 <= ...`` the lower bounds in ``M`` and ``b_1 >= b_2 >= ...`` the
    upper bounds outside (in (value, key) order), ``M~`` swaps exactly the pairs ``j``
    with ``b_j > a_j`` (a prefix, ``j* = sum q = sum p``). Starting from the last step's
    counts, each pass scans the buckets for the four boundary arms (last counted and
    first uncounted on each side) and fixes one violation: O(D) per pass, few passes per
    step (one arm and the scale changed).
    """
    order, bnd, q, p, reg = S[ORD], S[BND], S[QS], S[PS], S[REG]
    tb, rad = F[TB], F[RAD]
    nd = reg[R_D]
    while True:
        xo = -1  # last swapped-out M arm (largest LCB among them)
        xi = -1  # first kept M arm (smallest LCB among them)
        yi = -1  # last swapped-in arm (smallest UCB among them)
        yo = -1  # first other arm not swapped in (largest UCB)
        vxo = vxi = vyi = vyo = 0.0
        dxo = dxi = dyi = dyo = 0
        for d in range(nd):
            s0, s1, s2 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
            r = rad[d]
            qd = q[d]
            if qd > 0:
                a = order[s0 + qd - 1]
                v = means[a] - r
                if xo < 0 or _before(vxo, tb[xo], v, tb[a]):
                    xo, vxo, dxo = a, v, d
            if s0 + qd < s1:
                a = order[s0 + qd]
                v = means[a] - r
                if xi < 0 or _before(v, tb[a], vxi, tb[xi]):
                    xi, vxi, dxi = a, v, d
            pd = p[d]
            if pd > 0:
                a = order[s2 - pd]
                v = means[a] + r
                if yi < 0 or _before(v, tb[a], vyi, tb[yi]):
                    yi, vyi, dyi = a, v, d
            if s2 - pd > s1:
                a = order[s2 - pd - 1]
                v = means[a] + r
                if yo < 0 or _before(vyo, tb[yo], v, tb[a]):
                    yo, vyo, dyo = a, v, d
        if xo >= 0 and xi >= 0 and _before(vxi, tb[xi], vxo, tb[xo]):
            q[dxo] -= 1
            q[dxi] += 1
        elif yo >= 0 and yi >= 0 and _before(vyi, tb[yi], vyo, tb[yo]):
            p[dyi] -= 1
            p[dyo] += 1
        elif reg[R_JM] > reg[R_JN]:
            q[dxo] -= 1
            reg[R_JM] -= 1
        elif reg[R_JN] > reg[R_JM]:
            p[dyi] -= 1
            reg[R_JN] -= 1
        elif reg[R_JM] > 0 and _before(vyi, tb[yi], vxo, tb[xo]):
            q[dxo] -= 1
            p[dyi] -= 1
            reg[R_JM] -= 1
            reg[R_JN] -= 1
        elif reg[R_JM] < cap and xi >= 0 and yo >= 0 and _before(vxi, tb[xi], vyo, tb[yo]):
            q[dxi] += 1
            p[dyo] += 1
            reg[R_JM] += 1
            reg[R_JN] += 1
        else:
            return


@numba.njit(cache=True, _nrt=False)
def _gain_above(S, F, means, eps_sum):
    """Whether ``w~(M~) - w~(M) > eps_sum``.

    The gain is ``sum_j (b_j - a_j)`` over the swapped pairs, at least ``b_1 - a_1``:
    that bound decides almost every step in O(D); the exact sum (O(j*)) is computed only
    when it does not.
    """
    order, bnd, q, p, reg = S[ORD], S[BND], S[QS], S[PS], S[REG]
    rad = F[RAD]
    nd = reg[R_D]
    if reg[R_JM] == 0:
        return 0.0 > eps_sum
    a1 = np.inf
    b1 = -np.inf
    for d in range(nd):
        if q[d] > 0:
            v = means[order[bnd[2 * d]]] - rad[d]
            if v < a1:
                a1 = v
        if p[d] > 0:
            v = means[order[bnd[2 * d + 2] - 1]] + rad[d]
            if v > b1:
                b1 = v
    if b1 - a1 > eps_sum:
        return True
    up = 0.0
    low = 0.0
    for d in range(nd):
        r = rad[d]
        for j in range(bnd[2 * d], bnd[2 * d] + q[d]):
            low += means[order[j]] - r
        for j in range(bnd[2 * d + 2] - p[d], bnd[2 * d + 2]):
            up += means[order[j]] + r
    return up - low > eps_sum


@numba.njit(cache=True, _nrt=False)
def _pick(S, rng):
    """The arm of ``M (+) M~`` with the largest radius (fewest pulls), ties uniformly at random.

    Equal radii are equal counts: the tied arms are the counted ones of the first
    bucket that has any, ``M`` part ascending then the other part descending.
    """
    order, bnd, q, p = S[ORD], S[BND], S[QS], S[PS]
    for d in range(S[REG, R_D]):
        tot = q[d] + p[d]
        if tot > 0:
            u = engine.below(rng, tot) if tot > 1 else 0
            if u < q[d]:
                return order[bnd[2 * d] + u]
            return order[bnd[2 * d + 2] - 1 - (u - q[d])]
    return -1


@numba.njit(cache=True, _nrt=False)
def _radii(S, F, s):
    """``rad[d] = scale / sqrt(count)`` of every bucket."""
    bc, rad = S[BCNT], F[RAD]
    for d in range(S[REG, R_D]):
        rad[d] = s / math.sqrt(bc[d])


@numba.njit
def run(ctx, prm):
    """CLUCB-PAC (the compiled algorithm; ``prm`` as :meth:`CLUCBPAC.params`)."""
    iv = ctx.iv
    n = iv[engine.N]
    k = iv[engine.K]
    eps_sum = prm[P_EPS_SUM]
    delta = prm[P_DELTA]
    sigma = ctx.fv[engine.SIGMA]
    cap = min(k, n - k)
    yield engine.request_each(ctx, np.arange(n), 1)
    S, F = build(ctx, k)
    while True:
        _radii(S, F, scale(iv[engine.PULLS], n, delta, sigma))
        _select(S, F, ctx.means, cap)
        if not _gain_above(S, F, ctx.means, eps_sum):
            high = np.empty(k, dtype=np.int64)
            count_buckets.top_set(S, n, high)
            engine.finish(ctx, high)
            return
        arm = _pick(S, ctx.rng)
        ctx.fv[F_STEPS] += 1.0
        yield arm
        pulled(S, F, ctx, arm)
        repair_top(S, F, ctx.means)


def _is_real(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class CLUCBPAC(ScriptedAgent):
    """CLUCB with the PAC stopping rule, for the decision class of size-k sets.

    Paper:
        Shouyuan Chen, Tian Lin, Irwin King, Michael R. Lyu, Wei Chen. "Combinatorial
        pure exploration of multi-armed bandits". NIPS 2014. Algorithm 1 (CLUCB) with
        the (epsilon, delta)-PAC stopping condition of its Appendix (CLUCB-PAC), applied
        to top-k as chen2017 (Sec. 1.2 and Sec. 3) uses it: the baseline whose answer
        has aggregate regret at most ``epsilon`` with probability ``1 - delta``.

    Formula used (Chen et al. 2014, Alg. 1; the decision class is all k-subsets, whose
    maximization oracle is "the k largest weights"):

    * initialize: pull every arm once; ``t = n``;
    * every step ``t``: ``M_t`` = top k of the empirical means; radius
      ``rad_t(i) = R sqrt(2 ln(4 n t^3 / delta) / T_t(i))`` with ``T_t(i)`` the pulls of
      arm ``i`` and ``R`` the sub-Gaussian scale (``R = problem.sigma``, 1/2 for rewards
      in [0, 1]); adjusted weights ``w~_i = mean_i - rad_t(i)`` for ``i in M_t`` and
      ``mean_i + rad_t(i)`` otherwise; ``M~_t`` = top k of ``w~``;
    * stop and answer ``M_t`` if ``w~(M~_t) - w~(M_t) <= epsilon_sum`` (PAC condition;
      ``epsilon_sum = 0`` is plain CLUCB);
    * else pull once the arm of the symmetric difference ``M_t (+) M~_t`` with the
      largest radius; ``t = t + 1``.

    The PAC guarantee of CLUCB-PAC is on the total ``w(M*) - w(M_out) <= epsilon_sum``.
    chen2017 measures aggregate regret (the average, zhou2014 eq. 1), so we use
    ``epsilon_sum = k * epsilon``: the answer's aggregate regret is at most
    ``epsilon`` with probability at least ``1 - delta``.

    Args:
        epsilon: aggregate-regret tolerance, >= 0 (0: exact top-k, plain CLUCB).
            Default 0.01 (chen2017 Sec. 3).
        delta: failure probability, in (0, 1). Default 0.01 (chen2017 Sec. 3).
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (its own stopping rule; ``max_batches`` may truncate)
    and fixed budget, anytime as chen2017 runs it: when the budget ends the answer is
    the current ``M_t`` (:meth:`current_answer`, the top k empirical means).

    Departures from the paper, and why:

    * Ties (in both oracle calls and in the choice of the arm to pull) are broken
      uniformly at random; the paper's oracle is arbitrary. Equal means
      and equal adjusted weights are ordered by a tie key per arm (i.i.d. uniform,
      redrawn whenever the arm is pulled: :mod:`agents.engine.count_buckets`), so the tied arms'
      order is a uniformly random permutation at every step; equal radii (equal counts)
      go to a uniform draw among the tied arms of ``M (+) M~`` at every step.

    Implementation (one compiled generator, :func:`run`): the arms are kept in buckets
    of equal pull count (:mod:`agents.engine.count_buckets`), where the order of the bounds is
    the order of the means at every ``t``; ``M`` is repaired after each pull, and ``M~``
    is kept as the number of arms of each bucket swapped in and out (a prefix of its
    ``M`` arms, a suffix of the others), re-settled at each step (:func:`_select`). A
    step costs O(D) for D distinct counts (tens at n = 1000), not O(n): the PAC test
    reads the gain's lower bound ``b_1 - a_1`` and sums the swapped pairs only when that
    bound does not already exceed ``k epsilon``. ``tests/test_one_pull.py`` compares it
    exactly with the paper's loop written literally.
    * One pull per step: CLUCB is sequential, so in the batch model every step is a
      batch with one pull (it runs at any ``batch_size`` but does not use batches).
    * ``t`` is the number of pulls made so far (the paper's round counter, which
      starts at ``n`` after the initialization).
    """

    name = "clucb_pac"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_EMPIRICAL

    def __init__(
        self, epsilon: float = 0.01, delta: float = 0.01, *, seed: int | None = None
    ) -> None:
        super().__init__(seed=seed)
        if not _is_real(epsilon) or not 0.0 <= float(epsilon) < math.inf:
            raise ValueError(f"epsilon={epsilon!r} must be a finite number >= 0")
        check_probability("delta", delta)
        self.epsilon = float(epsilon)
        self.delta = float(delta)

    def params(self) -> np.ndarray:
        """``prm = [epsilon_sum, delta]`` with ``epsilon_sum = k epsilon``."""
        return np.array([self.problem.k * self.epsilon, self.delta])

    @property
    def steps(self) -> int:
        """Pulls made after the initial round (CLUCB steps; read-only)."""
        return int(self.ctx.fv[F_STEPS])

    def radius(self, counts: np.ndarray, t: int) -> np.ndarray:
        """``rad_t(i) = R sqrt(2 ln(4 n t^3 / delta) / T_t(i))`` (counts must be >= 1)."""
        p = self.problem
        return scale(t, p.n_arms, self.delta, p.sigma) / np.sqrt(counts)
