"""The GLR pair minimum of top-k identification, kept exactly across pulls (compiled).

The GLR statistic and the Top-Two transportation-cost challenger (:mod:`agents.glr`,
:mod:`agents.glr.top_two`) are a minimum over the pairs (``i`` in a top set ``T``, ``j``
outside) of

    W_ij = W(mu_i, N_i, mu_j, N_j) = inf_x N_i d(mu_i, x) + N_j d(mu_j, x)

(:func:`bandit_envs.divergences.transport_cost`; 0 when ``mu_i <= mu_j``). A full pass
costs ``k (n - k)`` divergences per pull. This module keeps the arms grouped by pull
count and finds the same minimum over the pairs of the *Pareto fronts* of the two sides,
usually a few arms each.

**Pruning rule.** ``W`` is nondecreasing in ``mu_i``, in ``N_i`` and in ``N_j`` and
nonincreasing in ``mu_j`` (the real function, both divergences):

* in the counts: for every ``x`` the bracket ``N_i d(mu_i, x) + N_j d(mu_j, x)`` is
  nondecreasing in ``N_i`` and ``N_j`` (``d >= 0``), and so is its infimum;
* in ``mu_i`` (``mu_j`` fixed): if ``mu_i <= mu_j``, ``W = 0``, the least value. If
  ``mu_j < mu_i < mu_i'``, the infimum may be taken over ``x`` in ``[mu_j, mu_i]``
  (resp. ``[mu_j, mu_i']``; outside it both terms only grow). For ``x`` in
  ``[mu_j, mu_i]``, ``d(mu_i', x) >= d(mu_i, x)`` (``d(., x)`` increases to the right of
  ``x``, for the Bernoulli KL and for ``(p - x)^2 / 2 sigma^2``); for ``x`` in
  ``(mu_i, mu_i']`` the bracket is at least ``N_j d(mu_j, x) >= N_j d(mu_j, mu_i)``, the
  bracket of ``mu_i`` at ``x = mu_i``. So ``W(mu_i') >= W(mu_i)``. ``mu_j`` is the mirror
  image.

Hence if ``i, i'`` are in ``T`` with ``mu_i <= mu_i'`` and ``N_i <= N_i'``, then
``W_ij <= W_i'j`` for every ``j``: ``i'`` holds the minimum only if ``i`` does too. Arms
of ``T`` with the same pull count are ranked by their means, so the minimum over ``T``
is reached on its *front*: per count the smallest mean, kept if it is below the
smallest mean of every smaller count (strictly: an equal mean with more pulls is
dominated). The arms outside ``T`` mirror it (per count the largest mean, kept if above
every smaller count's). Arms with the same (mean, count) are one *class*: their costs
are equal, and a class enters the tie count with its size.

**Floating point.** The Gaussian cost is computed as
``RN(RN(d d) / RN(RN(RN(2 sigma) sigma) RN(RN(1/N_i) + RN(1/N_j))))`` with
``d = RN(mu_i - mu_j)``: a composition of correctly rounded operations, each monotone in
its operands, so the *computed* cost is monotone in the same directions and the minimum
over the fronts is bit for bit the minimum over all pairs. The Bernoulli cost
(logarithms) is monotone only up to its rounding error: the minimum here is the
computed minimum over the front pairs, which the all-pairs pass can undercut only by a
dominated pair whose computed cost lies within that error (about
``1e-13 (N_i + N_j)``) of it. Likewise a dominated class can tie a minimising front
class exactly only by a rounding coincidence (distinct (mean, count), equal computed
cost); such a class is not among the pairs drawn from.

**The statistic** (:func:`eb_query`), for ``T`` a top-``k`` set by mean (the empirical
top ``k`` of the stopping rule and of EB-TC), counts at least 1:

``T`` is first made a top-``k`` set again (swaps found by the same pass over the
buckets that finds the fronts); then

* if the ``k``-th and ``(k + 1)``-th largest means are equal (ties at the boundary:
  ``T`` is not unique), ``Z = 0`` and the pair is a uniformly random ordered pair of
  distinct arms among those with that mean: the law of the full pass over a top set
  re-drawn with uniform ties followed by a uniform choice among its zero-cost pairs;
* otherwise ``Z`` is the minimum of the computed costs over the pairs of the two
  fronts, and the pair is uniform over the pairs of arms of the minimising classes
  (one draw, only when there are several).

:func:`set_query` does the same for any set ``L`` of leader arms (T3C's sampled top
``k``): zero-cost pairs (``mu_i <= mu_j``) are then counted over all pairs, and one is
drawn uniformly. :func:`ordered_set_query` is the same query with the order of all arms
by mean (``G``, :func:`build_order`, kept by :func:`order_pulled`): it counts and draws
the zero-cost pairs in O(k) instead of a pass over the arms. :func:`tci_query` is
EB-TCI's challenger ``argmin_j W_ij + log N_j`` (``k = 1``), over the same front of the
other arms.

**Cost.** A pull moves one arm to the next count's bucket (a binary search and a shift
of the arms between its two places; an arm alone in its bucket relabels it); a query
scans the ``D`` distinct counts once for the fronts, then bounds the front pairs
(Bernoulli: by the Gaussian cost with variance ``max s (1 - s)`` over
``[mu_j, mu_i]``, Pinsker's refinement, cheap) and computes the exact cost of the pairs
the bound cannot exclude. On EB-TC episodes at n = 1000, budget 20n, the fronts hold
2-5 and 15-29 classes on average and ``D`` is 45-61: about 0.4-0.5 us per pull and
query, against 26-1800 us for the full pass (``benchmarks/glr_fronts_speed.py``).

Layout: ``S`` (int64, rows below): the arms in bucket order (``S[ORD]``), each arm's
place (``S[WHR]``) and side (``S[SIDE]``: 0 in ``T``, 1 not), the part boundaries
(``S[BND]``: bucket ``d``'s ``T`` part is ``[bnd[2d], bnd[2d+1])``, its other part
``[bnd[2d+1], bnd[2d+2])``, each ascending by (mean, arm)), each bucket's count
(``S[BCNT]``, ascending), the fronts of the last query (``S[FT]``, ``S[FO]``: bucket
indices for :func:`eb_query`), registers (``S[REG]``) and scratch rows; ``F`` (float64)
holds the front classes' counts and means and the pair bounds of a query. Usage
(inside ``@numba.njit`` code)::

    S, F = fronts.build(counts, means, in_top)  # T = the arms with in_top[a] != 0
    ...                                            # arm a pulled: counts, means updated
    fronts.pulled(S, counts, means, a)
    z, i, j = fronts.eb_query(S, F, family, sigma, counts, means, rng)
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros  # (LLVM's ctlz; a numba internal)

from agents import engine
from bandit_envs.divergences import GAUSSIAN, transport_cost

__all__ = [
    "applies",
    "build",
    "build_order",
    "build_top",
    "eb_query",
    "front_sizes",
    "min_count",
    "min_count_arm",
    "order_pulled",
    "ordered_set_query",
    "pulled",
    "repair_top",
    "run_start",
    "set_query",
    "set_side",
    "tci_query",
    "top_into",
]

#: rows of ``S``: arms in bucket order, place, side, part boundaries, bucket counts,
#: the fronts of the last query, registers, scratch rows.
ORD, WHR, SIDE, BND, BCNT, FT, FO, REG, SCR, SCR2, MINS = range(11)
ROWS = 11
#: rows of ``F``: the counts and means of the front classes, the pair bounds.
TN, TM, ON, OM, LB = range(5)
FROWS = 5
#: ``S[REG]``: the number of buckets, the size of ``T``, the sizes of the last fronts,
#: the size of the last leader set.
R_D, R_K, R_NT, R_NO, R_NL = 0, 1, 2, 3, 4

#: Relative slack of the Bernoulli exclusion test (see :func:`_margin`).
_SLACK = 1e-12


@numba.njit(cache=True, _nrt=False)
def _before(means, a, b):
    """Whether arm ``a`` precedes arm ``b`` in (mean, arm) order."""
    ma = means[a]
    mb = means[b]
    return ma < mb or (ma == mb and a < b)


@numba.njit(cache=True, _nrt=False)
def _part_of(S, x):
    """The part (``2 d + side``) holding place ``x``."""
    bnd = S[BND]
    lo, hi = 0, 2 * S[REG, R_D]
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if bnd[mid] <= x:
            lo = mid
        else:
            hi = mid
    while bnd[lo + 1] <= x:  # skip empty parts
        lo += 1
    return lo


@numba.njit(cache=True, _nrt=False)
def _find_bucket(S, count):
    """``(d, found)``: the index of the bucket of ``count`` pulls, or where it would go."""
    bc = S[BCNT]
    lo, hi = 0, S[REG, R_D]
    while lo < hi:
        mid = (lo + hi) >> 1
        if bc[mid] < count:
            lo = mid + 1
        else:
            hi = mid
    return lo, lo < S[REG, R_D] and bc[lo] == count


@numba.njit(cache=True, _nrt=False)
def _add_bucket(S, i, count):
    """A new empty bucket at index ``i`` (pull count ``count``)."""
    bnd, bc, reg = S[BND], S[BCNT], S[REG]
    nd = reg[R_D]
    for d in range(nd, i, -1):
        bc[d] = bc[d - 1]
    for j in range(2 * nd, 2 * i - 1, -1):
        bnd[j + 2] = bnd[j]
    bnd[2 * i + 1] = bnd[2 * i]
    bc[i] = count
    reg[R_D] = nd + 1


@numba.njit(cache=True, _nrt=False)
def _drop_bucket(S, i):
    """Remove the empty bucket ``i``."""
    bnd, bc, reg = S[BND], S[BCNT], S[REG]
    nd = reg[R_D]
    for d in range(i, nd - 1):
        bc[d] = bc[d + 1]
    for j in range(2 * i, 2 * nd - 1):
        bnd[j] = bnd[j + 2]
    reg[R_D] = nd - 1


@numba.njit(cache=True, _nrt=False)
def _move(S, means, a, p1, p2):
    """Move arm ``a`` from part ``p1`` to its (mean, arm) place in part ``p2``.

    Only ``a``'s own place may be stale (its mean changed); the arms between its old
    and new places shift by one.
    """
    order, where, bnd = S[ORD], S[WHR], S[BND]
    x = where[a]
    if p2 > p1:
        lo, hi = bnd[p2], bnd[p2 + 1]
        while lo < hi:  # the first arm after a
            mid = (lo + hi) >> 1
            if _before(means, a, order[mid]):
                hi = mid
            else:
                lo = mid + 1
        y = lo - 1
        for i in range(x, y):
            b = order[i + 1]
            order[i] = b
            where[b] = i
        for j in range(p1 + 1, p2 + 1):
            bnd[j] -= 1
    elif p2 < p1:
        lo, hi = bnd[p2], bnd[p2 + 1]
        while lo < hi:
            mid = (lo + hi) >> 1
            if _before(means, a, order[mid]):
                hi = mid
            else:
                lo = mid + 1
        y = lo
        for i in range(x, y, -1):
            b = order[i - 1]
            order[i] = b
            where[b] = i
        for j in range(p2 + 1, p1 + 1):
            bnd[j] += 1
    else:
        y = x
        start, end = bnd[p1], bnd[p1 + 1]
        while y + 1 < end and _before(means, order[y + 1], a):
            b = order[y + 1]
            order[y] = b
            where[b] = y
            y += 1
        while y - 1 >= start and _before(means, a, order[y - 1]):
            b = order[y - 1]
            order[y] = b
            where[b] = y
            y -= 1
    order[y] = a
    where[a] = y
    S[SIDE, a] = p2 & 1


@numba.njit(cache=True)
def build(counts, means, in_top):
    """``(S, F)`` for arms with ``counts`` (each at least 1) and ``means``; ``T`` = the
    arms with ``in_top[a] != 0``. O(n log n), once per episode."""
    n = counts.shape[0]
    S = np.zeros((ROWS, 2 * n + 4), dtype=np.int64)
    k = 0
    for a in range(n):
        if counts[a] < 1:
            raise ValueError("fronts.build: every arm needs a pull count of at least 1")
        if in_top[a] != 0:
            k += 1
    if k < 1 or k >= n:
        raise ValueError("fronts.build: the top set needs between 1 and n - 1 arms")
    side = S[SIDE]
    keys = np.empty(n)
    for a in range(n):
        side[a] = 0 if in_top[a] != 0 else 1
        keys[a] = means[a]
    rank = np.argsort(keys, kind="mergesort")  # ascending (mean, arm)
    ikeys = np.empty(n, dtype=np.int64)
    for j in range(n):
        ikeys[j] = side[rank[j]]
    rank = rank[np.argsort(ikeys, kind="mergesort")]
    for j in range(n):
        ikeys[j] = counts[rank[j]]
    rank = rank[np.argsort(ikeys, kind="mergesort")]  # (count, side, mean, arm)
    order, where, bnd, bc = S[ORD], S[WHR], S[BND], S[BCNT]
    nd = 0
    for j in range(n):
        a = rank[j]
        order[j] = a
        where[a] = j
        c = counts[a]
        if nd == 0 or bc[nd - 1] != c:
            bc[nd] = c
            bnd[2 * nd] = j
            bnd[2 * nd + 1] = j
            nd += 1
        if side[a] == 0:
            bnd[2 * nd - 1] = j + 1
    bnd[2 * nd] = n
    S[REG, R_D] = nd
    S[REG, R_K] = k
    return S, np.zeros((FROWS, 2 * n + 4))


@numba.njit(cache=True)
def build_top(counts, means, k):
    """:func:`build` with ``T`` = the ``k`` largest means (ties to the smaller arm)."""
    n = counts.shape[0]
    in_top = np.zeros(n, dtype=np.int8)
    order = np.argsort(-means, kind="mergesort")
    for q in range(k):
        in_top[order[q]] = 1
    return build(counts, means, in_top)


@numba.njit(cache=True, _nrt=False)
def pulled(S, counts, means, a):
    """Arm ``a``'s count rose (to ``counts[a]``) or its mean changed: its new place.

    Its side is kept (:func:`eb_query` restores a top-``k`` set).
    """
    bnd, bc = S[BND], S[BCNT]
    p1 = _part_of(S, S[WHR, a])
    d1 = p1 >> 1
    c = counts[a]
    if c < bc[d1]:
        raise ValueError("fronts.pulled: a pull count went down")
    if c == bc[d1]:
        _move(S, means, a, p1, p1)
        return
    nd = S[REG, R_D]
    if bnd[2 * d1] + 1 == bnd[2 * d1 + 2] and (d1 + 1 == nd or bc[d1 + 1] > c):
        bc[d1] = c  # alone in its bucket, and no bucket of the new count: relabel it
        return
    d2, found = _find_bucket(S, c)
    if not found:
        _add_bucket(S, d2, c)  # d2 > d1: d1 unchanged
    _move(S, means, a, p1, 2 * d2 + (p1 & 1))
    if bnd[2 * d1] == bnd[2 * d1 + 2]:
        _drop_bucket(S, d1)


@numba.njit(cache=True, _nrt=False)
def set_side(S, means, a, side):
    """Put arm ``a`` in ``T`` (``side`` 0) or out of it (1)."""
    p1 = _part_of(S, S[WHR, a])
    if (p1 & 1) != side:
        _move(S, means, a, p1, (p1 & ~1) + side)


@numba.njit(cache=True, _nrt=False)
def _extremes(S, means):
    """``(w, s)``: the arm of ``T`` with the smallest (mean, arm) and the arm outside
    with the largest (O(D))."""
    order, bnd = S[ORD], S[BND]
    w = -1
    s = -1
    for d in range(S[REG, R_D]):
        t0, t1, o1 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        if t1 > t0:
            a = order[t0]
            if w < 0 or _before(means, a, w):
                w = a
        if o1 > t1:
            a = order[o1 - 1]
            if s < 0 or _before(means, s, a):
                s = a
    return w, s


@numba.njit(cache=True, _nrt=False)
def repair_top(S, means):
    """Make ``T`` a top-``k`` set by mean again: swap its weakest arm and the strongest
    other arm while the first has the smaller mean (equal means stay where they are).
    O(D) per check, one swap per arm that crossed."""
    swaps = 0
    while True:
        w, s = _extremes(S, means)
        if means[w] >= means[s]:
            return swaps
        set_side(S, means, w, 1)
        set_side(S, means, s, 0)
        swaps += 1


@numba.njit(cache=True, _nrt=False)
def _fronts(S, means):
    """Write the two fronts (bucket indices, ascending count) to ``S[FT]`` / ``S[FO]``;
    return ``(smallest mean in T, largest mean outside)``."""
    order, bnd, ft, fo = S[ORD], S[BND], S[FT], S[FO]
    nt = 0
    no = 0
    run_t = math.inf
    run_o = -math.inf
    for d in range(S[REG, R_D]):
        t0, t1, o1 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        if t1 > t0:
            m = means[order[t0]]
            if m < run_t:
                run_t = m
                ft[nt] = d
                nt += 1
        if o1 > t1:
            m = means[order[o1 - 1]]
            if m > run_o:
                run_o = m
                fo[no] = d
                no += 1
    S[REG, R_NT] = nt
    S[REG, R_NO] = no
    return run_t, run_o


@numba.njit(cache=True, _nrt=False)
def front_sizes(S, means):
    """``(classes on T's front, classes on the other front)`` (for measurements)."""
    _fronts(S, means)
    return S[REG, R_NT], S[REG, R_NO]


@numba.njit(cache=True, _nrt=False)
def _run_up(order, means, lo, hi):
    """The end of the run of arms with mean ``means[order[lo]]`` in ``order[lo:hi]``."""
    m = means[order[lo]]
    # galloping then binary search (runs are often long for Bernoulli rewards)
    step = 1
    a = lo
    b = lo + 1
    while b < hi and means[order[b]] == m:
        a = b
        step *= 2
        b = a + step
    if b > hi:
        b = hi
    # means[order[a]] == m; answer in (a, b]
    lo2, hi2 = a + 1, b
    while lo2 < hi2:
        mid = (lo2 + hi2) >> 1
        if means[order[mid]] == m:
            lo2 = mid + 1
        else:
            hi2 = mid
    return lo2


@numba.njit(cache=True, _nrt=False)
def _run_down(order, means, lo, hi):
    """The start of the run of arms with mean ``means[order[hi - 1]]`` in ``order[lo:hi]``."""
    m = means[order[hi - 1]]
    step = 1
    b = hi - 1
    a = hi - 2
    while a >= lo and means[order[a]] == m:
        b = a
        step *= 2
        a = b - step
    if a < lo - 1:
        a = lo - 1
    # means[order[b]] == m; answer in (a, b]
    lo2, hi2 = a + 1, b
    while lo2 < hi2:
        mid = (lo2 + hi2) >> 1
        if means[order[mid]] == m:
            hi2 = mid
        else:
            lo2 = mid + 1
    return lo2


# ------------------------------------------------------------------ pair minimum
#: query modes: the top set of ``S`` (:func:`eb_query`), or a given set (:func:`set_query`).
_EB, _SET = 0, 1


@numba.njit(cache=True, _nrt=False)
def _margin(family, ni, nj, best):
    """How far above ``best`` a bound must lie to exclude a pair (0 for the Gaussian).

    Bernoulli: the computed cost is within ``(N_i + N_j) 200 u + 8 u W`` of the real
    one (``u = 2^-53``: the divergences' rounding, ``bandit_envs.divergences``, and the
    clamping of the means to ``[EPS, 1 - EPS]``, at most ``80 EPS`` per divergence), and
    the computed bound within ``8 u`` (relative) of the real bound: ``1e-12 (1 + N_i +
    N_j) (1 + best)`` covers both with a factor over 10 to spare.
    """
    if family == GAUSSIAN:
        return 0.0
    return _SLACK * (1.0 + ni + nj) * (1.0 + abs(best))


@numba.njit(cache=True, _nrt=False)
def _n_arms(S):
    return (S.shape[1] - 4) // 2


@numba.njit(cache=True, _nrt=False)
def _t_class(S, mode, counts, means, r):
    """``(count, mean)`` of class ``r`` of the leader front."""
    if mode == _EB:
        d = S[FT, r]
        return float(S[BCNT, d]), means[S[ORD, S[BND, 2 * d]]]
    a = S[SCR, S[FT, r]]
    return float(counts[a]), means[a]


@numba.njit(cache=True, _nrt=False)
def _t_weight(S, mode, counts, means, r):
    """The number of arms of class ``r`` of the leader front."""
    if mode == _EB:
        d = S[FT, r]
        t0 = S[BND, 2 * d]
        return _run_up(S[ORD], means, t0, S[BND, 2 * d + 1]) - t0
    p = S[FT, r]
    a = S[SCR, p]
    q = p + 1
    nl = S[REG, R_NL]
    while q < nl and counts[S[SCR, q]] == counts[a] and means[S[SCR, q]] == means[a]:
        q += 1
    return q - p


@numba.njit(cache=True, _nrt=False)
def _t_member(S, mode, r, u):
    """The ``u``-th arm of class ``r`` of the leader front."""
    if mode == _EB:
        return S[ORD, S[BND, 2 * S[FT, r]] + u]
    return S[SCR, S[FT, r] + u]


@numba.njit(cache=True, _nrt=False)
def _o_class(S, mode, means, s):
    """``(count, mean)`` of class ``s`` of the other front."""
    if mode == _EB:
        e = S[FO, s]
        return float(S[BCNT, e]), means[S[ORD, S[BND, 2 * e + 2] - 1]]
    e = S[SCR, _n_arms(S) + s]
    return float(S[BCNT, e]), means[S[ORD, S[FO, s]]]


@numba.njit(cache=True, _nrt=False)
def _leaders_with(S, counts, means, c, m):
    """The number of leader arms (sorted in ``S[SCR, :nl]`` by (count, mean, arm)) with
    count ``c`` and mean ``m``."""
    scr = S[SCR]
    nl = S[REG, R_NL]
    lo, hi = 0, nl
    while lo < hi:  # first (count, mean) >= (c, m)
        mid = (lo + hi) >> 1
        a = scr[mid]
        if counts[a] < c or (counts[a] == c and means[a] < m):
            lo = mid + 1
        else:
            hi = mid
    q = lo
    while q < nl and counts[scr[q]] == c and means[scr[q]] == m:
        q += 1
    return q - lo


@numba.njit(cache=True, _nrt=False)
def _mean_range(order, means, lo, hi, m):
    """``(start, end)``: the places of the arms with mean ``m`` in ``order[lo:hi]``
    (ascending by mean)."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) >> 1
        if means[order[mid]] < m:
            a = mid + 1
        else:
            b = mid
    c, b = a, hi
    while c < b:
        mid = (c + b) >> 1
        if means[order[mid]] <= m:
            c = mid + 1
        else:
            b = mid
    return a, c


@numba.njit(cache=True, _nrt=False)
def _o_weight(S, mode, counts, means, s):
    """The number of arms of class ``s`` of the other front."""
    order, bnd = S[ORD], S[BND]
    if mode == _EB:
        o1 = bnd[2 * S[FO, s] + 2]
        return o1 - _run_down(order, means, bnd[2 * S[FO, s] + 1], o1)
    e = S[SCR, _n_arms(S) + s]
    m = means[order[S[FO, s]]]
    g = 0
    for part in range(2):
        x0, x1 = _mean_range(order, means, bnd[2 * e + part], bnd[2 * e + part + 1], m)
        g += x1 - x0
    return g - _leaders_with(S, counts, means, S[BCNT, e], m)


@numba.njit(cache=True, _nrt=False)
def _o_member(S, mode, means, in_lead, s, u):
    """The ``u``-th arm of class ``s`` of the other front."""
    order, bnd = S[ORD], S[BND]
    if mode == _EB:
        o1 = bnd[2 * S[FO, s] + 2]
        return order[_run_down(order, means, bnd[2 * S[FO, s] + 1], o1) + u]
    e = S[SCR, _n_arms(S) + s]
    m = means[order[S[FO, s]]]
    for part in range(2):
        x0, x1 = _mean_range(order, means, bnd[2 * e + part], bnd[2 * e + part + 1], m)
        for x in range(x0, x1):
            if in_lead[order[x]] == 0:
                if u == 0:
                    return order[x]
                u -= 1
    return -1


@numba.njit(cache=True, _nrt=False)
def _load_classes(S, F, mode, counts, means):
    """The counts and means of the front classes into ``F[TN], F[TM], F[ON], F[OM]``."""
    tn, tm, on, om = F[TN], F[TM], F[ON], F[OM]
    for r in range(S[REG, R_NT]):
        tn[r], tm[r] = _t_class(S, mode, counts, means, r)
    for s in range(S[REG, R_NO]):
        on[s], om[s] = _o_class(S, mode, means, s)


@numba.njit(cache=True, _nrt=False)
def _bernoulli_bound(ni, mi, nj, mj):
    """A lower bound on the real Bernoulli cost, ``mu_i > mu_j``.

    ``d(p, q) = int_q^p (p - s) / (s (1 - s)) ds >= (p - q)^2 / (2 V)`` with
    ``V = max s (1 - s)`` over ``[q, p]`` (at the point of ``[q, p]`` nearest 1/2); both
    divergences of ``W`` have their arguments in ``[mu_j, mu_i]``, so
    ``W >= (mu_i - mu_j)^2 / (2 V (1/N_i + 1/N_j))``.
    """
    x = min(max(0.5, mj), mi)  # the point of [mu_j, mu_i] nearest 1/2
    d = mi - mj
    return d * d / (2.0 * (x * (1.0 - x)) * (1.0 / ni + 1.0 / nj))


@numba.njit(cache=True, _nrt=False)
def _pair_minimum(S, F, mode, family, sigma, counts, means, in_lead, rng):
    """``(Z, i, j)`` over the pairs of the fronts (classes ``S[FT, :nt]`` x ``S[FO, :no]``,
    both nonempty, every leader mean above every other mean); costs computed by
    :func:`transport_cost`; ties uniform over the arm pairs of the minimising classes.

    The minimising class pairs are listed in ``S[MINS]`` (``r * no + s``).
    """
    nt, no = S[REG, R_NT], S[REG, R_NO]
    _load_classes(S, F, mode, counts, means)
    tn, tm, on, om, lbs, mins = F[TN], F[TM], F[ON], F[OM], F[LB], S[MINS]
    cap = mins.shape[0]
    nmin = 0
    best = math.inf
    if family == GAUSSIAN:
        # the computed cost is monotone (module docstring): the corner of the other front
        # (its largest mean, smallest count) bounds a whole row
        n_lo, m_hi = on[0], om[no - 1]
        for r in range(nt):
            ni, mi = tn[r], tm[r]
            if transport_cost(family, sigma, ni, mi, n_lo, m_hi) > best:
                continue
            for s in range(no):
                w = transport_cost(family, sigma, ni, mi, on[s], om[s])
                if w <= best:
                    if w < best:
                        best = w
                        nmin = 0
                    if nmin < cap:
                        mins[nmin] = r * no + s
                    nmin += 1
    else:
        # 1. bounds of every pair (kept if they fit), the smallest one's exact cost
        stored = nt * no <= lbs.shape[0]
        lb_best = math.inf
        q0 = 0
        for r in range(nt):
            ni, mi = tn[r], tm[r]
            for s in range(no):
                lb = _bernoulli_bound(ni, mi, on[s], om[s])
                if stored:
                    lbs[r * no + s] = lb
                if lb < lb_best:
                    lb_best = lb
                    q0 = r * no + s
        r0, s0 = q0 // no, q0 % no
        best = transport_cost(family, sigma, tn[r0], tm[r0], on[s0], om[s0])
        mins[0] = q0
        nmin = 1
        # 2. the exact cost of every pair the bound cannot exclude
        for r in range(nt):
            ni, mi = tn[r], tm[r]
            for s in range(no):
                q = r * no + s
                if q == q0:
                    continue
                nj, mj = on[s], om[s]
                lb = lbs[q] if stored else _bernoulli_bound(ni, mi, nj, mj)
                if lb > best + _margin(family, ni, nj, best):
                    continue
                w = transport_cost(family, sigma, ni, mi, nj, mj)
                if w <= best:
                    if w < best:
                        best = w
                        nmin = 0
                    if nmin < cap:
                        mins[nmin] = q
                    nmin += 1
    if nmin > cap:
        raise RuntimeError("fronts: more minimising class pairs than scratch room")
    # the arm pairs of the minimising classes: u-th of them (one draw, if several)
    weight = 0
    for q in range(nmin):
        r, s = mins[q] // no, mins[q] % no
        weight += _t_weight(S, mode, counts, means, r) * _o_weight(S, mode, counts, means, s)
    u = engine.below(rng, weight) if weight > 1 else 0
    for q in range(nmin):
        r, s = mins[q] // no, mins[q] % no
        wi = _t_weight(S, mode, counts, means, r)
        wo = _o_weight(S, mode, counts, means, s)
        if u < wi * wo:
            return (
                best,
                _t_member(S, mode, r, u // wo),
                _o_member(S, mode, means, in_lead, s, u % wo),
            )
        u -= wi * wo
    raise RuntimeError("fronts: the minimising pair was lost")


# ------------------------------------------------------------------ queries
@numba.njit(cache=True, _nrt=False)
def _tied_at(S, means, m, u):
    """The ``u``-th arm with mean ``m`` (bucket by bucket, ``T`` part first), or the
    number of them if ``u < 0``."""
    order, bnd = S[ORD], S[BND]
    total = 0
    for d in range(S[REG, R_D]):
        t0, t1, o1 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        if t1 > t0 and means[order[t0]] == m:  # the T part ascends: a prefix
            g = _run_up(order, means, t0, t1) - t0
            if 0 <= u < total + g:
                return order[t0 + u - total]
            total += g
        if o1 > t1 and means[order[o1 - 1]] == m:  # the other part ascends: a suffix
            o0 = _run_down(order, means, t1, o1)
            g = o1 - o0
            if 0 <= u < total + g:
                return order[o0 + u - total]
            total += g
    return total


@numba.njit(cache=True, _nrt=False)
def eb_query(S, F, family, sigma, counts, means, rng):
    """``(Z, i, j)`` for the top set ``T`` of ``S``: the statistic and its pair (module
    docstring).

    ``T`` is first made a top-``k`` set again (:func:`repair_top`'s swaps, found by the
    same pass over the buckets that finds the fronts). Draws from ``rng`` only on ties:
    two uniforms for tied means across the boundary, one for tied minimising classes.
    """
    while True:
        m_t, m_o = _fronts(S, means)
        if m_t >= m_o:
            break
        # swap an arm of T with the smallest mean and the arm outside with the largest
        w = S[ORD, S[BND, 2 * S[FT, S[REG, R_NT] - 1]]]
        x = S[ORD, S[BND, 2 * S[FO, S[REG, R_NO] - 1] + 2] - 1]
        set_side(S, means, w, 1)
        set_side(S, means, x, 0)
    if m_t == m_o:  # tied means across the boundary: Z = 0, a uniform ordered pair of them
        g = _tied_at(S, means, m_t, -1)
        u1 = engine.below(rng, g)
        u2 = engine.below(rng, g - 1)
        if u2 >= u1:
            u2 += 1
        return 0.0, _tied_at(S, means, m_t, u1), _tied_at(S, means, m_t, u2)
    return _pair_minimum(S, F, _EB, family, sigma, counts, means, S[SIDE], rng)


@numba.njit(cache=True, _nrt=False)
def _set_fronts(S, counts, means, lead, in_lead):
    """The fronts of the leader set ``lead`` (classes: starts in ``S[SCR]``'s sorted
    leaders) and of the other arms (classes: top places in ``S[FO]``, buckets in
    ``S[SCR, n:]``); returns ``(smallest leader mean, largest other mean)``."""
    n = _n_arms(S)
    scr, ft, fo, order, bnd = S[SCR], S[FT], S[FO], S[ORD], S[BND]
    nl = lead.shape[0]
    for q in range(nl):
        scr[q] = lead[q]
    engine.sort_by_keys(counts, means, scr, 0, nl)  # (count, mean, arm)
    S[REG, R_NL] = nl
    nt = 0
    run_t = math.inf
    q = 0
    while q < nl:
        a = scr[q]
        if means[a] < run_t:
            run_t = means[a]
            ft[nt] = q
            nt += 1
        c = counts[a]
        while q < nl and counts[scr[q]] == c:
            q += 1
    no = 0
    run_o = -math.inf
    for d in range(S[REG, R_D]):
        t0, t1, o1 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        x = -1  # the largest mean outside the leaders: the last non-leader of each part
        for y in range(t1 - 1, t0 - 1, -1):
            if in_lead[order[y]] == 0:
                x = y
                break
        for y in range(o1 - 1, t1 - 1, -1):
            if in_lead[order[y]] == 0:
                if x < 0 or means[order[y]] > means[order[x]]:
                    x = y
                break
        if x >= 0 and means[order[x]] > run_o:
            run_o = means[order[x]]
            fo[no] = x
            scr[n + no] = d
            no += 1
    S[REG, R_NT] = nt
    S[REG, R_NO] = no
    return run_t, run_o


@numba.njit(cache=True, _nrt=False)
def _zero_pairs(S, counts, means, in_lead, lo_mean, u):
    """Over the pairs (leader ``i``, other ``j``) with ``mu_i <= mu_j``: their number if
    ``u < 0``, else the ``u``-th one as ``i * n + j`` (others in bucket order, leaders of
    each ascending by mean). Leaders sorted by (mean, arm) are in ``S[SCR2, :nl]``."""
    n = _n_arms(S)
    order, bnd, lm = S[ORD], S[BND], S[SCR2]
    nl = S[REG, R_NL]
    total = 0
    for d in range(S[REG, R_D]):
        t0, t1, o1 = bnd[2 * d], bnd[2 * d + 1], bnd[2 * d + 2]
        # the bucket's arms with mean >= lo_mean: a suffix of the other part, then the T part
        lo, hi = t1, o1
        while lo < hi:
            mid = (lo + hi) >> 1
            if means[order[mid]] < lo_mean:
                lo = mid + 1
            else:
                hi = mid
        for pass_ in range(2):
            if pass_ == 0:
                x0, x1 = lo, o1
            else:
                lo2, hi2 = t0, t1
                while lo2 < hi2:
                    mid = (lo2 + hi2) >> 1
                    if means[order[mid]] < lo_mean:
                        lo2 = mid + 1
                    else:
                        hi2 = mid
                x0, x1 = lo2, t1
            for x in range(x0, x1):
                j = order[x]
                if in_lead[j] != 0:
                    continue
                mj = means[j]
                a, b = 0, nl  # leaders with mean <= mj
                while a < b:
                    mid = (a + b) >> 1
                    if means[lm[mid]] <= mj:
                        a = mid + 1
                    else:
                        b = mid
                if 0 <= u < total + a:
                    return lm[u - total] * n + j
                total += a
    return total


@numba.njit(cache=True, _nrt=False)
def set_query(S, F, family, sigma, counts, means, lead, in_lead, rng):
    """``(Z, i, j)``: the minimum of the cost over the pairs (``i`` in ``lead``, ``j`` not)
    and its pair, for any leader set (``in_lead[a] != 0`` iff ``a`` is in ``lead``; the
    top set of ``S`` plays no part).

    If some pairs have ``mu_i <= mu_j``, ``Z = 0`` and the pair is uniform over all such
    pairs (one draw); otherwise as :func:`eb_query`'s minimum over the fronts.
    """
    m_t, m_o = _set_fronts(S, counts, means, lead, in_lead)
    if m_t <= m_o:
        lm = S[SCR2]
        nl = lead.shape[0]
        for q in range(nl):
            lm[q] = lead[q]
        engine.sort_by_keys(means, means, lm, 0, nl)  # (mean, arm)
        total = _zero_pairs(S, counts, means, in_lead, m_t, -1)
        u = engine.below(rng, total) if total > 1 else 0
        code = _zero_pairs(S, counts, means, in_lead, m_t, u)
        n = _n_arms(S)
        return 0.0, code // n, code % n
    return _pair_minimum(S, F, _SET, family, sigma, counts, means, in_lead, rng)


# ------------------------------------------------------------- the order of all arms
#: rows of ``G``: the arms by (mean, arm) ascending, each arm's place, the starts of the
#: runs of equal means (a bitset: bit ``p`` of word ``p // 64``), scratch rows.
G_ORD, G_POS, G_RUNS, G_SCR, G_FIRST, G_CUM = range(6)


@numba.njit(cache=True)
def build_order(means):
    """``G`` (int64[6, n + 64]): every arm by ascending (mean, arm) (``G[G_ORD, :n]``),
    its place (``G[G_POS, :n]``) and the places where a run of equal means starts (the
    bitset ``G[G_RUNS]``; :func:`run_start`), for :func:`ordered_set_query`; kept by
    :func:`order_pulled`."""
    n = means.shape[0]
    G = np.zeros((6, n + _RADIX), dtype=np.int64)
    rank = np.argsort(means, kind="mergesort")
    for p in range(n):
        G[G_ORD, p] = rank[p]
        G[G_POS, rank[p]] = p
    for p in range(n):
        _set_start(G, means, p)
    return G


@numba.njit(cache=True, _nrt=False, inline="always")
def _set_start(G, means, p):
    """Bit ``p`` of the run starts from the means: whether place ``p`` begins a run."""
    order, bits = G[G_ORD], G[G_RUNS]
    w, b = p >> 6, p & 63
    if p == 0 or means[order[p - 1]] != means[order[p]]:
        bits[w] |= 1 << b
    else:
        bits[w] &= ~(1 << b)


@numba.njit(cache=True, _nrt=False, inline="always")
def _bit_mask(w, lo, hi):
    """The bits of word ``w`` at the places ``lo <= p < hi`` (the range clipped to the
    word's 64 places; it must meet them)."""
    a = max(lo - 64 * w, 0)
    b = min(hi - 64 * w, 64)
    upper = -1 if b == 64 else (1 << b) - 1
    return upper & ~((1 << a) - 1)


@numba.njit(cache=True, _nrt=False)
def _bits_down(bits, lo, hi):
    """Bit ``p`` takes bit ``p + 1`` for ``lo <= p < hi`` (the places passed by an arm
    that rose: their occupants moved down one place)."""
    if lo >= hi:
        return
    for w in range(lo >> 6, ((hi - 1) >> 6) + 1):
        moved = ((bits[w] >> 1) & 0x7FFFFFFFFFFFFFFF) | (bits[w + 1] << 63)
        mask = _bit_mask(w, lo, hi)
        bits[w] = (bits[w] & ~mask) | (moved & mask)


@numba.njit(cache=True, _nrt=False)
def _bits_up(bits, lo, hi):
    """Bit ``p`` takes bit ``p - 1`` for ``lo < p <= hi`` (the places passed by an arm
    that fell: their occupants moved up one place)."""
    if lo >= hi:
        return
    for w in range(hi >> 6, ((lo + 1) >> 6) - 1, -1):
        carry = ((bits[w - 1] >> 63) & 1) if w > 0 else 0
        moved = (bits[w] << 1) | carry
        mask = _bit_mask(w, lo + 1, hi + 1)
        bits[w] = (bits[w] & ~mask) | (moved & mask)


@numba.njit(cache=True, _nrt=False)
def run_start(G, p):
    """The first place of the run of equal means holding place ``p`` (the last run
    start at or before ``p``; place 0 always starts one)."""
    bits = G[G_RUNS]
    w = p >> 6
    x = bits[w] & ((2 << (p & 63)) - 1)  # (p & 63 == 63: 2 << 63 == 0, all bits)
    while x == 0:
        w -= 1
        x = bits[w]
    return 64 * w + 63 - leading_zeros(x)


@numba.njit(cache=True, _nrt=False)
def order_pulled(G, means, a):
    """Arm ``a``'s mean changed: its new place (the arms passed shift by one, their run
    starts with them: O(places / 64)), and the run starts next to its two places."""
    order, pos, bits = G[G_ORD], G[G_POS], G[G_RUNS]
    n = means.shape[0]
    y = y0 = pos[a]
    while y + 1 < n and _before(means, order[y + 1], a):
        b = order[y + 1]
        order[y] = b
        pos[b] = y
        y += 1
    while y > 0 and _before(means, a, order[y - 1]):
        b = order[y - 1]
        order[y] = b
        pos[b] = y
        y -= 1
    order[y] = a
    pos[a] = y
    if y > y0:  # places y0 + 1 .. y - 1 hold the arms of y0 + 2 .. y; y0, y, y + 1 changed
        _bits_down(bits, y0 + 1, y)
        _set_start(G, means, y0)
    elif y < y0:  # places y + 2 .. y0 hold the arms of y + 1 .. y0 - 1; y, y + 1, y0 + 1
        _bits_up(bits, y + 1, y0)
        if y0 + 1 < n:
            _set_start(G, means, y0 + 1)
    _set_start(G, means, y)
    if y + 1 < n:
        _set_start(G, means, y + 1)


#: Digits of the radix sort of the leaders' places (and the scratch room it needs).
_RADIX_BITS = 6
_RADIX = 1 << _RADIX_BITS


@numba.njit(cache=True, _nrt=False)
def _sort_places(a, tmp, cnt, m, n):
    """Sort ``a[:m]`` (integers in ``[0, n)``) in place: by insertion for a few, else by
    a radix sort on ``_RADIX_BITS``-bit digits (``tmp``: ``m`` entries of scratch,
    ``cnt``: ``_RADIX``)."""
    if m <= 24:
        for q in range(1, m):
            x = a[q]
            r = q - 1
            while r >= 0 and a[r] > x:
                a[r + 1] = a[r]
                r -= 1
            a[r + 1] = x
        return
    shift = 0
    flip = False  # the sorted digits are in tmp
    while shift == 0 or (n - 1) >> shift > 0:
        src, dst = (tmp, a) if flip else (a, tmp)
        for d in range(_RADIX):
            cnt[d] = 0
        for q in range(m):
            cnt[(src[q] >> shift) & (_RADIX - 1)] += 1
        acc = 0
        for d in range(_RADIX):
            c = cnt[d]
            cnt[d] = acc
            acc += c
        for q in range(m):
            d = (src[q] >> shift) & (_RADIX - 1)
            dst[cnt[d]] = src[q]
            cnt[d] += 1
        flip = not flip
        shift += _RADIX_BITS
    if flip:
        for q in range(m):
            a[q] = tmp[q]


@numba.njit(cache=True, _nrt=False)
def ordered_set_query(S, F, G, family, sigma, counts, means, lead, in_lead, rng):
    """:func:`set_query` with the order of all arms ``G`` (:func:`build_order`, up to
    date): the same minimum and the same law of the pair, without a pass over the arms.

    Zero-cost pairs exist iff the smallest leader mean is at most the largest other
    mean (found from the top of ``G`` past at most ``k`` leaders). Leader ``i`` then has
    ``w_i = #{j not a leader: mu_j >= mu_i}`` of them: the arms from the first place of
    its mean in ``G``, less the leaders there. The pair is the ``u``-th of the
    ``sum w_i`` for one uniform ``u``: its leader by the running sum over the leaders
    in ``G``'s order, its other arm by skipping the leaders in the run. O(k) (a radix
    sort of the leaders' places; the first place of a leader's mean from the bitset of
    run starts kept in ``G``, :func:`run_start`). Otherwise the fronts' minimum of
    :func:`set_query`.
    """
    order, pos, lp, first = G[G_ORD], G[G_POS], G[G_SCR], G[G_FIRST]
    n = means.shape[0]
    nl = lead.shape[0]
    m_t = math.inf
    for q in range(nl):
        m_t = min(m_t, means[lead[q]])
    y = n - 1
    while in_lead[order[y]] != 0:  # (k < n: a non-leader exists)
        y -= 1
    m_o = means[order[y]]
    if m_t > m_o:
        _set_fronts(S, counts, means, lead, in_lead)
        return _pair_minimum(S, F, _SET, family, sigma, counts, means, in_lead, rng)
    for q in range(nl):
        lp[q] = pos[lead[q]]
    _sort_places(lp, first, G[G_POS, n:], nl, n)
    cum = G[G_CUM]
    total = 0
    run = 0  # the first leader (in G's order) of the current run of equal means
    lo = 0  # the first place of its mean
    used = 0  # the leaders with mean <= m_o
    for q in range(nl):
        p = lp[q]
        if means[order[p]] > m_o:
            break
        lo = run_start(G, p)
        if q == 0 or first[q - 1] != lo:
            run = q
        first[q] = lo
        total += (n - lo) - (nl - run)
        cum[q] = total
        used += 1
    u = engine.below(rng, total) if total > 1 else 0
    a, b = 0, used - 1  # the leader: the first q with u < cum[q]
    while a < b:
        mid = (a + b) >> 1
        if cum[mid] <= u:
            a = mid + 1
        else:
            b = mid
    q = a
    lo = first[q]
    run = q
    while run > 0 and first[run - 1] == lo:
        run -= 1
    x = lo + u - (cum[q - 1] if q > 0 else 0)  # the (u - cum[q - 1])-th other arm from lo
    for r in range(run, nl):
        if lp[r] <= x:
            x += 1
        else:
            break
    return 0.0, order[lp[q]], order[x]


@numba.njit(cache=True, _nrt=False)
def _tci_cost(family, sigma, ni, mi, nj, mj):
    """``W_ij + log N_j``, computed as the full pass does."""
    c = transport_cost(family, sigma, ni, mi, nj, mj)
    c += math.log(nj)
    return c


@numba.njit(cache=True, _nrt=False)
def tci_query(S, F, family, sigma, counts, means, lead, in_lead, rng):
    """``j = argmin_{j != i} W_ij + log N_j`` for the leader ``i = lead[0]``, an arm with
    the largest mean (``in_lead`` its indicator): the TCI challenger (Jourdan et al.
    2022), ties uniform over the arms of the minimising classes.

    ``W_ij + log N_j`` is nonincreasing in ``mu_j`` and nondecreasing in ``N_j`` (the
    logarithm of an integer count is computed strictly increasing), so the minimum is on
    the front of the other arms, as for :func:`eb_query`; with ``i`` a best arm the
    zero-cost arms share its mean, so a dominated arm ties a front class only by a
    rounding coincidence. (A leader below other arms would tie every zero-cost arm of
    the smallest count: not handled here.)
    """
    _set_fronts(S, counts, means, lead, in_lead)
    no = S[REG, R_NO]
    on, om, lbs = F[ON], F[OM], F[LB]
    for s in range(no):
        on[s], om[s] = _o_class(S, _SET, means, s)
    a = lead[0]
    ni, mi = float(counts[a]), means[a]
    best = math.inf
    if family == GAUSSIAN:  # computed monotone: every class, one pass
        for s in range(no):
            lbs[s] = _tci_cost(family, sigma, ni, mi, on[s], om[s])
            best = min(best, lbs[s])
    else:
        s0 = 0
        for s in range(no):
            lb = math.log(on[s])
            if mi > om[s]:
                lb += _bernoulli_bound(ni, mi, on[s], om[s])
            lbs[s] = lb
            if lb < lbs[s0]:
                s0 = s
        c0 = _tci_cost(family, sigma, ni, mi, on[s0], om[s0])
        best = c0
        for s in range(no):  # the exact cost where the bound cannot exclude the class
            if s == s0:
                continue
            if lbs[s] <= best + _margin(family, ni, on[s], best):
                lbs[s] = _tci_cost(family, sigma, ni, mi, on[s], om[s])
                best = min(best, lbs[s])
            else:
                lbs[s] = math.inf
        lbs[s0] = c0
    weight = 0
    for s in range(no):
        if lbs[s] == best:
            weight += _o_weight(S, _SET, counts, means, s)
    u = engine.below(rng, weight) if weight > 1 else 0
    for s in range(no):
        if lbs[s] == best:
            wo = _o_weight(S, _SET, counts, means, s)
            if u < wo:
                return _o_member(S, _SET, means, in_lead, s, u)
            u -= wo
    raise RuntimeError("fronts: the TCI challenger was lost")


@numba.njit(cache=True, _nrt=False)
def top_into(S, out):
    """The arms of ``T`` (ascending) into ``out[:k]``."""
    side = S[SIDE]
    j = 0
    for a in range(_n_arms(S)):
        if side[a] == 0:
            out[j] = a
            j += 1


@numba.njit(cache=True, _nrt=False)
def min_count_arm(S):
    """``(count, arm)``: the smallest pull count, and the smallest arm having it."""
    order, bnd = S[ORD], S[BND]
    best = -1
    for x in range(bnd[0], bnd[2]):
        a = order[x]
        if best < 0 or a < best:
            best = a
    return S[BCNT, 0], best


@numba.njit(cache=True, _nrt=False)
def min_count(S):
    """The smallest pull count (O(1))."""
    return S[BCNT, 0]


def applies(problem, family: int) -> bool:
    """Whether the pruned pass is exact for ``problem`` with divergence ``family``: the
    Gaussian divergence, or the Bernoulli one on rewards in ``[0, 1]`` (module docstring)."""
    return family == GAUSSIAN or (problem.reward_low >= 0.0 and problem.reward_high <= 1.0)
