"""The top-k set of one sample from independent Beta or normal posteriors, drawing few arms.

Thompson-style agents (``bayes_ttts``, T3C) need only *which* arms are the k largest of
a posterior sample, not the ``n`` values. The posterior of arm ``i`` has two parameters
``(pa_i, pb_i)``: ``theta_i ~ Beta(pa_i, pb_i)`` (0/1 rewards), or, after
:func:`set_normal`, ``theta_i ~ N(pa_i, pb_i^2)`` (Gaussian rewards). This module
draws that set with its exact law while drawing values for a handful of arms:

* **Levels.** ``L`` thresholds ``x_0 < ... < x_{L-1}`` around the top-k boundary cut
  the real line into zones; ``Q[i, j] = P(theta_i > x_j)`` is cached per arm: computed
  by :func:`agents.engine.beta_math.beta_tail` (:func:`agents.engine.normal_math.normal_tail`)
  when the levels are chosen (once per distinct posterior: few are for Beta
  posteriors), and after a pull for the pulled arms only (Beta: moved by the
  incomplete-beta recurrences; normal: computed again, one ``erfc`` per level).
* **Zones by one uniform.** ``u ~ U(0, 1)`` puts arm ``i`` in the zone its draw would
  fall in (above ``x_j`` iff ``u < Q[i, j]``). Arms far below the boundary (most of them)
  are visited by geometric jumps at rate ``2^-t`` for the tier ``t`` of arms with
  ``Q[i, 0] <= 2^-t``, each candidate kept with probability ``Q[i, 0] 2^t``: the same
  independent Bernoulli events, without a uniform per arm.
* **The boundary zone.** Counting from the top, the zone where the count reaches k is
  the only one whose arms need values: they are drawn conditioned on the zone
  (:func:`agents.engine.beta_math.beta_between`,
  :func:`agents.engine.normal_math.normal_between`) and the largest fill the set. If fewer than
  k arms are above ``x_0`` the zone below it is drawn (rare by the choice of ``x_0``).

Nothing allocates after :func:`new_state` (its scratch room holds the levels' search),
so callers may be compiled without reference counts (``_nrt=False``).

The thresholds change only the cost, never the law: the sampled set is distributed as
the top k of a full draw, up to the rounding of the cached tails (about 1e-13).
``tests/test_posterior_top_set.py`` checks the zones and the sets against full draws
(Hoeffding and Bretagnolle-Huber-Carol bounds). The random numbers used are not those of
a full ``rng.beta`` (``rng.normal``) draw.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from agents.engine.beta_math import beta_between_logs, beta_tail, log_beta
from agents.engine.normal_math import normal_between, normal_tail
from agents.engine.selection import merge_by_keys, sort_by_keys

__all__ = ["assign_zones", "new_state", "sample_top_set", "set_band", "set_normal", "update"]

#: The most levels (columns of ``Q``; a power of 2 for the zone search).
LMAX = 16
#: Arms with ``P(theta > x_0) <= 2^-t`` (tier ``t``, ``FIRST_TIER <= t <= LAST_TIER``, the
#: largest such ``t``) are visited by geometric jumps at rate ``2^-t``; the others (tier
#: 0, "warm") get a uniform each. A candidate (an exponential and a uniform) costs about
#: three uniforms; tiers from 1/4 measured no faster than from 1/8.
FIRST_TIER, LAST_TIER = 3, 24
#: The scale of tier ``t``'s geometric gaps, ``-1 / log(1 - 2^-t)`` (see :func:`assign_zones`).
_GAP_SCALE = np.array(
    [-1.0 / math.log1p(-(0.5**t)) if t >= FIRST_TIER else 0.0 for t in range(LAST_TIER + 1)]
)
#: Levels are spaced for about this many arms per zone between ``x_0`` and ``x_{L-1}``.
ARMS_PER_ZONE = 4.0
#: ``x_0`` leaves at least k arms above it by ``_Z_SET`` standard deviations plus one, and
#: is chosen again once that falls under ``_Z_LOW`` (plus half an arm) or rises over
#: ``_Z_HIGH`` (plus ``_SLACK`` arms) (the defaults of :func:`new_state`; :func:`set_band`
#: sets others). A sample with fewer than k arms above ``x_0`` draws
#: every other arm (about n truncated draws): at 2.5 deviations that is at most about 1
#: sample in 160 (at 1.5, 1 in 15 cost more than choosing the levels again more often).
_Z_SET, _Z_LOW, _Z_HIGH, _SLACK = 3.0, 2.5, 6.0, 4.0
#: The band of T3C (:mod:`agents.glr.top_two`), whose posteriors drift faster (each pull
#: goes to a leader or its challenger, near the boundary): a wider band chooses the levels
#: about a sixth as often at n = 1000, k = 10 (10 times per budget-20n episode instead of
#: 60) for about one more arm above ``x_0`` per sample.
T3C_BAND = (4.5, 2.0, 9.0)

#: ``info`` layout: the number of levels (0: none yet), the sums over the arms of
#: ``Q[0]`` and ``Q[0] (1 - Q[0])``, of the same at the top level, the posterior changes
#: since the levels were chosen, how many times the levels were chosen, and the band
#: (``_Z_SET``, ``_Z_LOW``, ``_Z_HIGH``; :func:`set_band`), the posteriors' family
#: (``BETA`` or ``NORMAL``; :func:`set_normal`).
I_LEVELS, I_SUM_LO, I_VAR_LO, I_SUM_HI, I_VAR_HI, I_SINCE, I_CHOSEN = range(7)
I_Z_SET, I_Z_LOW, I_Z_HIGH, I_FAMILY = range(7, 11)
#: The posteriors' family: ``Beta(pa, pb)`` or ``N(pa, pb^2)``.
BETA, NORMAL = 0, 1
#: The normal posteriors' levels are searched within this many deviations of the means.
_NORMAL_REACH = 12.0


@numba.njit(cache=True)
def new_state(n):
    """The sampler's state for ``n`` arms (a tuple of arrays; see :func:`update`)."""
    return (
        np.empty(n),  # 0 lbeta: log B(pa_i, pb_i) (Beta posteriors)
        np.zeros((n, LMAX)),  # 1 Q: tails at the levels (arm-major: a zone search reads one row)
        np.zeros(LMAX),  # 2 levels
        np.array([0.0, 0, 0, 0, 0, 0, 0, _Z_SET, _Z_LOW, _Z_HIGH, BETA]),  # 3 info
        np.full((2, n), -1.0),  # 4 the posterior the tails are of
        np.empty((LAST_TIER + 1, n), dtype=np.int64),  # 5 the arms of each tier
        np.zeros(LAST_TIER + 1, dtype=np.int64),  # 6 the size of each tier
        np.empty((2, n), dtype=np.int64),  # 7 each arm's tier and place in it
        np.empty(n, dtype=np.int64),  # 8 scratch: arms above x_0 in a sample (or changed arms)
        np.empty(n, dtype=np.int64),  # 9 scratch: their zones (or the arms not changed)
        np.empty(n),  # 10 scratch: values drawn
        np.zeros(n, dtype=np.int8),  # 11 scratch: flags
        np.zeros(LMAX + 1, dtype=np.int64),  # 12 scratch: count per zone
        np.zeros((2, LMAX)),  # 13 log x_j and log(1 - x_j) of the levels
        np.empty(n),  # 14 scratch: the uniforms of the arms above x_0
        _first_order(n),  # 15 the arms by posterior (kept across choices), group starts
        np.empty((6, n)),  # 16 scratch: per group log B, (pa, pb), size, normal mean and sd
        np.full((2, n), np.nan),  # 17 each arm's (pa, pb) when the arms were last sorted
    )


@numba.njit(cache=True)
def _first_order(n):
    """``st[15]``'s first value: row 0 every arm (an order to sort), row 1 scratch."""
    out = np.zeros((2, n + 1), dtype=np.int64)
    for i in range(n):
        out[0, i] = i
    return out


@numba.njit(cache=True, _nrt=False)
def set_band(st, z_set, z_low, z_high):
    """The band of ``x_0`` (see ``_Z_SET``), before the first :func:`update`: any band
    with ``z_low < z_set < z_high`` (it changes the cost, never the law)."""
    if not 0.0 <= z_low < z_set < z_high:
        raise ValueError("posterior_top_set.set_band: the band needs 0 <= z_low < z_set < z_high")
    info = st[3]
    info[I_Z_SET], info[I_Z_LOW], info[I_Z_HIGH] = z_set, z_low, z_high


@numba.njit(cache=True, _nrt=False)
def set_normal(st):
    """Read the posteriors as normal, ``N(pa_i, pb_i^2)`` (``pb > 0``: the standard
    deviations), before the first :func:`update`."""
    st[3][I_FAMILY] = NORMAL


@numba.njit(cache=True, _nrt=False)
def _posterior_groups(pa, pb, st):
    """The arms by posterior, into the state: ``order = st[15][0, :n]``, the arms sorted
    by ``(pa, pb, arm)``; group ``g`` = ``order[starts[g]:starts[g + 1]]`` (one
    posterior), ``starts = st[15][1]``; ``st[16][0, g]`` its ``log B`` (0 for normal
    posteriors). Returns the number of groups. Few Beta posteriors are distinct (in TTTS
    episodes of 1,000 arms, about 40 to 240): the levels are chosen on the groups.

    The order is kept from the last call: the arms whose posterior changed since
    (``st[17]``) are taken out, sorted (:func:`sort_by_keys`) and merged back
    (:func:`merge_by_keys`); the order by ``(pa, pb, arm)`` is unique, so it is the
    order a sort of all arms gives."""
    n = pa.shape[0]
    normal = st[3][I_FAMILY] == NORMAL
    order, starts, log_b, last = st[15][0], st[15][1], st[16][0], st[17]
    changed, kept = st[8], st[9]  # (the sampler's scratch: free between samples)
    c = u = 0
    for p in range(n):
        i = order[p]
        if pa[i] != last[0, i] or pb[i] != last[1, i]:
            changed[c] = i
            c += 1
            last[0, i], last[1, i] = pa[i], pb[i]
        else:
            kept[u] = i
            u += 1
    sort_by_keys(pa, pb, changed, 0, c)
    merge_by_keys(pa, pb, kept, u, changed, c, order)
    g = 0
    for p in range(n):
        i = order[p]
        if p == 0 or pa[i] != pa[order[p - 1]] or pb[i] != pb[order[p - 1]]:
            starts[g] = p
            g += 1
    starts[g] = n
    for h in range(g):
        i = order[starts[h]]
        log_b[h] = 0.0 if normal else log_beta(pa[i], pb[i])
    return g


@numba.njit(cache=True, _nrt=False)
def _normal_sums(mean, sd, weight, x):
    """``(sum q, sum q (1 - q))`` at ``x`` over the groups (``weight``: their sizes), each
    posterior taken as normal (``sd`` x sqrt 2)."""
    s = v = 0.0
    for g in range(mean.shape[0]):
        q = 0.5 * math.erfc((x - mean[g]) / sd[g])
        s += weight[g] * q
        v += weight[g] * q * (1.0 - q)
    return s, v


@numba.njit(cache=True, _nrt=False)
def _exact_sums(pa, pb, log_b, weight, x):
    """``(sum q, sum q (1 - q))`` at ``x`` over the groups with the exact tails."""
    s = v = 0.0
    for g in range(pa.shape[0]):
        q = beta_tail(pa[g], pb[g], log_b[g], x)
        s += weight[g] * q
        v += weight[g] * q * (1.0 - q)
    return s, v


@numba.njit(cache=True, _nrt=False)
def _sums(pa, pb, log_b, mean, sd, weight, x, exact):
    if exact:
        return _exact_sums(pa, pb, log_b, weight, x)
    return _normal_sums(mean, sd, weight, x)


@numba.njit(cache=True, _nrt=False)
def _lowest_level(pa, pb, log_b, mean, sd, weight, k, exact, z_set, lo, hi, steps):
    """About the largest ``x`` in ``(lo, hi)`` with k arms above by ``z_set`` deviations
    plus one (``n > k`` arms are above ``lo``), by ``steps`` bisections."""
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        s, v = _sums(pa, pb, log_b, mean, sd, weight, mid, exact)
        if s - k >= z_set * math.sqrt(v) + 1.0:
            lo = mid
        else:
            hi = mid
    return lo


@numba.njit(cache=True, _nrt=False)
def _top_level(pa, pb, log_b, mean, sd, weight, k, exact, start, z_set, hi, steps):
    """About the smallest ``x`` in ``(start, hi)`` short of k arms by as much, or with
    half an arm."""
    lo = start
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        s, v = _sums(pa, pb, log_b, mean, sd, weight, mid, exact)
        if k - s >= z_set * math.sqrt(v) + 1.0 or s <= 0.5:
            hi = mid
        else:
            lo = mid
    return hi


@numba.njit(cache=True, _nrt=False)
def _tier(q0):
    """The tier of an arm with ``P(theta > x_0) = q0`` (see ``FIRST_TIER``)."""
    if q0 > 0.5**FIRST_TIER:
        return 0
    t, bound = FIRST_TIER, 0.5 ** (FIRST_TIER + 1)
    while t < LAST_TIER and q0 <= bound:
        t += 1
        bound *= 0.5
    return t


@numba.njit(cache=True, _nrt=False)
def _place(st, i, t):
    """Put arm ``i`` at the end of tier ``t`` (it is in none)."""
    lists, sizes, where = st[5], st[6], st[7]
    p = sizes[t]
    lists[t, p] = i
    where[0, i], where[1, i] = t, p
    sizes[t] = p + 1


@numba.njit(cache=True, _nrt=False)
def _unplace(st, i):
    """Take arm ``i`` out of its tier (the tier's last arm takes its place)."""
    lists, sizes, where = st[5], st[6], st[7]
    t, p = where[0, i], where[1, i]
    last = sizes[t] - 1
    lists[t, p] = lists[t, last]
    where[1, lists[t, p]] = p
    sizes[t] = last


@numba.njit(cache=True, _nrt=False)
def _count_arm(st, i):
    """Count arm ``i``'s tails into the sums."""
    q, info = st[1], st[3]
    top = int(info[I_LEVELS]) - 1
    info[I_SUM_LO] += q[i, 0]
    info[I_VAR_LO] += q[i, 0] * (1.0 - q[i, 0])
    info[I_SUM_HI] += q[i, top]
    info[I_VAR_HI] += q[i, top] * (1.0 - q[i, top])


@numba.njit(cache=True, _nrt=False)
def _set_row(st, i, a, b, log_b):
    """Arm ``i``'s ``log B`` and its tails at every level for ``Beta(a, b)``
    (:func:`beta_tail`), or for ``N(a, b^2)`` (:func:`normal_tail`); the columns past the
    levels 0 (the zone search reads them all)."""
    lbeta, q, levels, info = st[0], st[1], st[2], st[3]
    used = int(info[I_LEVELS])
    lbeta[i] = log_b
    if info[I_FAMILY] == NORMAL:
        for j in range(used):
            q[i, j] = normal_tail(a, b, levels[j])
    else:
        for j in range(used):
            q[i, j] = beta_tail(a, b, log_b, levels[j])
    q[i, used:] = 0.0


@numba.njit(cache=True, _nrt=False)
def _step_arm(st, i, a, b, wins, losses):
    """Arm ``i``'s tails and ``log B`` from ``Beta(a, b)`` to ``Beta(a + wins, b +
    losses)`` by the recurrences (DLMF 8.17.20-21): with ``g = x^a (1 - x)^b / B(a, b)``,
    ``P_{a+1,b}(theta > x) = P_{a,b}(theta > x) + g / a`` and ``P_{a,b+1}(theta > x) =
    P_{a,b}(theta > x) - g / b``; ``B(a + 1, b) = B(a, b) a / (a + b)``, ``B(a, b + 1) =
    B(a, b) b / (a + b)``. One exponential per level and pull instead of a continued
    fraction; rounding adds up to about an ulp of the tail per step."""
    lbeta, q, info, logs = st[0], st[1], st[3], st[13]
    levels = int(info[I_LEVELS])
    lb = lbeta[i]
    for _ in range(wins):
        for j in range(levels):
            q[i, j] += math.exp(a * logs[0, j] + b * logs[1, j] - lb) / a
        lb += math.log(a / (a + b))
        a += 1.0
    for _ in range(losses):
        for j in range(levels):
            q[i, j] -= math.exp(a * logs[0, j] + b * logs[1, j] - lb) / b
        lb += math.log(b / (a + b))
        b += 1.0
    lbeta[i] = lb


#: At most this many new pulls of an arm are taken by the recurrences (else afresh).
_MAX_STEPS = 64


@numba.njit(cache=True, _nrt=False)
def _unset_arm(st, i):
    """Take arm ``i``'s tails out of the sums."""
    q, info = st[1], st[3]
    top = int(info[I_LEVELS]) - 1
    info[I_SUM_LO] -= q[i, 0]
    info[I_VAR_LO] -= q[i, 0] * (1.0 - q[i, 0])
    info[I_SUM_HI] -= q[i, top]
    info[I_VAR_HI] -= q[i, top] * (1.0 - q[i, top])


@numba.njit(cache=True, _nrt=False)
def _off_band(info, k):
    """Should the levels be chosen again: k too near or too far below ``x_0``, too many
    arms above the top level, or too many arms between per zone."""
    sd = math.sqrt(max(info[I_VAR_LO], 0.0))
    gap = info[I_SUM_LO] - k
    if gap < info[I_Z_LOW] * sd + 0.5 or gap > info[I_Z_HIGH] * sd + _SLACK:
        return True
    if info[I_SUM_HI] > k:
        return True
    zones = info[I_LEVELS] - 1.0
    return (info[I_SUM_LO] - info[I_SUM_HI]) > zones * (2.0 * ARMS_PER_ZONE) + 2.0


@numba.njit(cache=True, _nrt=False)
def _set_levels(pa, pb, st, x_lo, x_hi, spread, groups):
    """``L`` levels evenly from ``x_lo`` to ``x_hi`` (``spread`` arms between), every
    arm's tails (once per group of :func:`_posterior_groups`, ``groups`` of them, with the
    group's fresh ``log B``) and tiers."""
    lbeta, q, levels, info = st[0], st[1], st[2], st[3]
    order, starts, log_b = st[15][0], st[15][1], st[16][0, :groups]
    n = pa.shape[0]
    zones = min(max(math.ceil(spread / ARMS_PER_ZONE), 1), LMAX - 1)
    logs = st[13]
    for j in range(zones + 1):
        levels[j] = x_lo + (x_hi - x_lo) * j / zones
        if info[I_FAMILY] == BETA:  # (for the recurrences)
            logs[0, j] = math.log(levels[j]) if levels[j] > 0.0 else -math.inf
            logs[1, j] = math.log1p(-levels[j]) if levels[j] < 1.0 else -math.inf
    info[I_LEVELS] = zones + 1
    info[I_SUM_LO] = info[I_VAR_LO] = info[I_SUM_HI] = info[I_VAR_HI] = 0.0
    info[I_SINCE] = 0.0
    for g in range(log_b.shape[0]):
        first = order[starts[g]]
        _set_row(st, first, pa[first], pb[first], log_b[g])
        for p in range(starts[g] + 1, starts[g + 1]):
            i = order[p]
            lbeta[i] = log_b[g]
            for j in range(LMAX):
                q[i, j] = q[first, j]
    st[6][:] = 0
    for i in range(n):  # (the tiers list the arms in index order)
        _count_arm(st, i)
        _place(st, i, _tier(q[i, 0]))


@numba.njit(cache=True, _nrt=False)
def _choose_levels(pa, pb, k, st):
    """Levels for the current posterior: ``x_0`` and the top level by bisection on the
    normal approximation of every posterior, and on the exact tails if ``x_0`` then
    misses its band (wide Beta posteriors: few pulls; the normal posteriors' are their
    own); the rest evenly between."""
    info = st[3]
    normal = info[I_FAMILY] == NORMAL
    size = _posterior_groups(pa, pb, st)
    order, starts, log_b = st[15][0], st[15][1], st[16][0, :size]
    ga, gb, weight = st[16][1, :size], st[16][2, :size], st[16][3, :size]
    mean, sd = st[16][4, :size], st[16][5, :size]
    for g in range(size):
        i = order[starts[g]]
        ga[g], gb[g], weight[g] = pa[i], pb[i], starts[g + 1] - starts[g]
        if normal:
            mean[g], sd[g] = ga[g], math.sqrt(2.0) * gb[g]
        else:
            tot = ga[g] + gb[g]
            mean[g] = ga[g] / tot
            sd[g] = math.sqrt(2.0 * ga[g] * gb[g] / (tot * tot * (tot + 1.0)))
    lo, hi, steps = 0.0, 1.0, 16  # (0, 1) holds every Beta draw
    if normal:  # every arm above lo and none above hi but with probability < 1e-32
        lo, hi, steps = np.inf, -np.inf, 24
        for g in range(size):
            lo = min(lo, ga[g] - _NORMAL_REACH * gb[g])
            hi = max(hi, ga[g] + _NORMAL_REACH * gb[g])
    for exact in (False, True):
        z_set = info[I_Z_SET]
        x_lo = _lowest_level(ga, gb, log_b, mean, sd, weight, k, exact, z_set, lo, hi, steps)
        x_hi = _top_level(ga, gb, log_b, mean, sd, weight, k, exact, x_lo, z_set, hi, steps)
        s_lo, _ = _sums(ga, gb, log_b, mean, sd, weight, x_lo, exact)
        s_hi, _ = _sums(ga, gb, log_b, mean, sd, weight, x_hi, exact)
        _set_levels(pa, pb, st, x_lo, x_hi, s_lo - s_hi, size)
        info[I_CHOSEN] += 1.0
        if normal or not _off_band(info, k):
            break


@numba.njit(cache=True, _nrt=False)
def _fold(pa, pb, st, arms):
    """The new tails, sums and tiers of the ``arms`` whose posterior changed (the part of
    :func:`update` run at every pull)."""
    q, info, seen = st[1], st[3], st[4]
    normal = info[I_FAMILY] == NORMAL
    for i in arms:
        if pa[i] == seen[0, i] and pb[i] == seen[1, i]:
            continue
        _unset_arm(st, i)
        if normal:
            _set_row(st, i, pa[i], pb[i], 0.0)
        else:
            wins, losses = np.rint(pa[i] - seen[0, i]), np.rint(pb[i] - seen[1, i])
            if 0.0 <= wins and 0.0 <= losses and wins + losses <= _MAX_STEPS:
                _step_arm(st, i, seen[0, i], seen[1, i], int(wins), int(losses))
            else:
                _set_row(st, i, pa[i], pb[i], log_beta(pa[i], pb[i]))
        _count_arm(st, i)
        seen[0, i], seen[1, i] = pa[i], pb[i]
        t = _tier(q[i, 0])
        if t != st[7][0, i]:
            _unplace(st, i)
            _place(st, i, t)
        info[I_SINCE] += 1.0


@numba.njit(cache=True, _nrt=False)
def update(pa, pb, k, st, arms):
    """Bring the state up to date with the posterior ``Beta(pa, pb)`` (``N(pa, pb^2)``
    after :func:`set_normal`).

    ``arms``: the arms whose posterior may have changed since the last call (the arms
    just pulled); all arms at the first call. They get new tails (one per level; for a
    Beta posterior by :func:`_step_arm` when it only gained up to ``_MAX_STEPS`` pulls). The
    levels are chosen again when the counts above them leave their bands (see
    :func:`_off_band`), at most once per ``n / 8`` changed posteriors, and at the first
    call.
    """
    n = pa.shape[0]
    info, seen = st[3], st[4]
    if info[I_LEVELS] == 0.0:
        for i in range(n):
            seen[0, i], seen[1, i] = pa[i], pb[i]
        _choose_levels(pa, pb, k, st)  # (sets every lbeta)
        return
    _fold(pa, pb, st, arms)
    if info[I_SINCE] * 8.0 >= n and _off_band(info, k):
        _choose_levels(pa, pb, k, st)


@numba.njit(cache=True, _nrt=False, inline="always")
def _zone(q, i, u):
    """The zone of arm ``i`` whose uniform is ``u < Q[i, 0]``: the number of levels ``j``
    with ``u < Q[i, j]`` (1 + the levels below its draw), by a branch-free bisection
    over the ``LMAX`` columns (a row decreases; its columns past the levels are 0)."""
    lo, step = 0, LMAX >> 1  # u < Q[i, lo]
    while step > 0:
        lo += step * (u < q[i, lo + step])
        step >>= 1
    return lo + 1


@numba.njit(cache=True, _nrt=False)
def assign_zones(st, rng):
    """The arms above ``x_0`` in one sample and their zones: ``m``, with ``st[8][:m]``
    the arms and ``st[9][:m]`` their zones (``z``: above ``z`` levels; arm ``i`` is in
    zone ``z >= 1`` with probability ``Q[i, z - 1] - Q[i, z]``, ``Q[i, L] = 0``)."""
    q, lists, sizes, rec, rec_zone, rec_u = st[1], st[5], st[6], st[8], st[9], st[14]
    m = 0
    for p in range(sizes[0]):  # warm arms: a uniform each (written always, kept if above)
        i = lists[0, p]
        u = rng.random()
        rec[m], rec_u[m] = i, u
        m += u < q[i, 0]
    eps = 0.5**FIRST_TIER
    for t in range(FIRST_TIER, LAST_TIER + 1):  # the tiers: candidates at rate eps
        size = sizes[t]
        if size > 0:
            scale = _GAP_SCALE[t]
            p = -1
            while True:
                # a geometric gap: P(floor(E scale) >= g) = exp(-g / scale) = (1 - eps)^g
                p += 1 + int(rng.standard_exponential() * scale)
                if p >= size:
                    break
                i = lists[t, p]
                u = eps * rng.random()  # uniform on (0, eps): kept w.p. Q / eps
                rec[m], rec_u[m] = i, u
                m += u < q[i, 0]
        eps *= 0.5
    for j in range(m):  # the zones, in a loop of their own (no branch to mispredict)
        rec_zone[j] = _zone(q, rec[j], rec_u[j])
    return m


@numba.njit(cache=True, _nrt=False)
def sample_top_set(pa, pb, k, st, rng, members):
    """``members[:k]`` = the top k of one sample ``theta ~ Beta(pa, pb)`` (or ``N(pa,
    pb^2)``, :func:`set_normal`; see the
    module docstring; :func:`update` must have seen this posterior).

    The order: the arms above the boundary zone in the order they were found, then the
    boundary zone's chosen arms by decreasing draw (equal draws have probability zero).
    """
    n = pa.shape[0]
    lbeta, q, levels, info = st[0], st[1], st[2], st[3]
    rec, rec_zone, theta, flag, count = st[8], st[9], st[10], st[11], st[12]
    top = int(info[I_LEVELS]) - 1  # zones 0 (below x_0) .. top + 1 (above x_top)
    m = assign_zones(st, rng)
    count[: top + 2] = 0
    for j in range(m):
        count[rec_zone[j]] += 1
    z, above = top + 1, 0  # the boundary zone: the count from the top reaches k in it
    while z >= 1 and above + count[z] < k:
        above += count[z]
        z -= 1
    take = k - above
    got = cand = 0
    if z >= 1:  # one branch-free pass: the arms above zone z, and zone z's compacted
        for j in range(m):
            i, zone = rec[j], rec_zone[j]
            members[got] = i  # (got <= above < k: a slot the boundary zone fills later)
            got += zone > z
            rec[cand] = i  # (in place: cand <= j)
            cand += zone == z
    else:  # fewer than k arms above x_0: all of them, and the zone below it: every other arm
        for j in range(m):
            members[got] = rec[j]
            got += 1
            flag[rec[j]] = 1
        for i in range(n):
            if flag[i] == 0:
                rec[cand] = i
                cand += 1
            else:
                flag[i] = 0
    if take == cand:
        for j in range(cand):
            members[got + j] = rec[j]
        return
    normal = info[I_FAMILY] == NORMAL
    lo = levels[z - 1] if z >= 1 else (-np.inf if normal else 0.0)
    hi = levels[z] if z <= top else (np.inf if normal else 1.0)
    logs = st[13]  # (Beta posteriors: log x_j and log(1 - x_j); log 0 = -inf)
    log_lo, log1m_lo = (logs[0, z - 1], logs[1, z - 1]) if z >= 1 else (-np.inf, 0.0)
    log_hi, log1m_hi = (logs[0, z], logs[1, z]) if z <= top else (0.0, -np.inf)
    for j in range(cand):
        i = rec[j]
        if normal:
            theta[j] = normal_between(pa[i], pb[i], lo, hi, rng)
        else:
            mass = (q[i, z - 1] if z >= 1 else 1.0) - (q[i, z] if z <= top else 0.0)
            theta[j] = beta_between_logs(
                pa[i], pb[i], lbeta[i], lo, hi, log_lo, log1m_lo, log_hi, log1m_hi, mass, rng
            )
    for j in range(take):  # the take largest draws by selection (few: one zone's arms)
        best = j
        for c in range(j + 1, cand):
            if theta[c] > theta[best]:
                best = c
        theta[j], theta[best] = theta[best], theta[j]
        rec[j], rec[best] = rec[best], rec[j]
        members[got + j] = rec[j]
