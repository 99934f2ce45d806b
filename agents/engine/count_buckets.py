"""Arms bucketed by pull count, each bucket split into the top-``k`` set and the rest (compiled).

Several confidence-bound algorithms give every arm a radius that depends on the round
and on the arm's own pull count only (CLUCB-PAC's ``rad_t(i)``, LUCB1's ``beta(T_i, t)``
in AT-LUCB). Arms with the same count then share a radius, so within a count bucket the
order of the bounds is the order of the means, whatever the round: an extreme bound
over a set of arms is an extreme over the buckets' extreme means, O(D) for D distinct
counts (a few tens in practice, against n arms), and no sqrt per arm. One pull moves
one arm to the next bucket (O(log D) plus the shift of the arms between its old and new
place).

Layout (two arrays, few live arrays across a generator's ``yield``): ``S`` (int64, rows
below) keeps the arms in bucket order (``S[ORD]``), each arm's place (``S[WHR]``) and
side (``S[SIDE]``: 0 in the top-``k`` set by (mean, key), 1 not), the part boundaries
(``S[BND]``: bucket ``d``'s top part is ``[bnd[2d], bnd[2d+1])``, its other part
``[bnd[2d+1], bnd[2d+2])``, each ascending by (mean, key)), each bucket's pull count
(``S[BCNT]``, ascending), two per-bucket counters an algorithm may use (``S[QS]``: a
prefix of the top part; ``S[PS]``: a suffix of the other part; :func:`move` keeps
them, see there) and registers (``S[REG]``); ``F`` (float64) keeps the arms' tie keys
(``F[TB]``) and a per-bucket scratch row (``F[RAD]``).

Ties: every arm has a tie key, i.i.d. uniform from ``ctx.rng`` (drawn in arm order by
:func:`build`, redrawn for an arm whenever it is pulled, :func:`pulled`), that orders
equal means (and the callers' equal bounds): among tied arms the order is a uniformly
random permutation.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["build", "find_bucket", "move", "precedes", "pulled", "repair_top"]

#: rows of ``S``: arms in bucket order, place, side, part boundaries, bucket counts,
#: the two per-bucket counters, registers.
ORD, WHR, SIDE, BND, BCNT, QS, PS, REG = range(8)
#: ``S[REG]``: the number of buckets, and the totals of ``S[QS]`` and ``S[PS]``.
R_D, R_JM, R_JN = 0, 1, 2
#: rows of ``F``: the tie keys, a per-bucket scratch row.
TB, RAD = 0, 1


@numba.njit(cache=True, _nrt=False)
def precedes(means, tb, a, b):
    """Whether arm ``a`` precedes arm ``b`` in (mean, tie key) order."""
    ma = means[a]
    mb = means[b]
    return ma < mb or (ma == mb and tb[a] < tb[b])


@numba.njit(cache=True, _nrt=False)
def move(S, tb, means, a, d2, side2):
    """Move arm ``a`` to bucket ``d2``, side ``side2``, at its (mean, key) place.

    Only ``a``'s own place may be stale (its mean changed). The counters: ``q[d]``
    counts a prefix of bucket ``d``'s top part, ``p[d]`` a suffix of its other part; the
    moved arm leaves them if it was inside, and joins them when it lands strictly inside
    the counted region (the caller re-settles them; CLUCB-PAC's ``M (+) M~``).
    """
    order, where, side, bnd, q, p, reg = S[ORD], S[WHR], S[SIDE], S[BND], S[QS], S[PS], S[REG]
    x = where[a]
    s1 = side[a]
    # the part of a: the bucket whose part range holds x (binary search on part starts)
    lo, hi = 0, 2 * reg[R_D]
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if bnd[mid] <= x:
            lo = mid
        else:
            hi = mid
    p1 = lo
    while bnd[p1 + 1] <= x:  # skip empty parts
        p1 += 1
    d1 = p1 >> 1
    if s1 == 0:
        if x - bnd[p1] < q[d1]:
            q[d1] -= 1
            reg[R_JM] -= 1
    elif bnd[p1 + 1] - 1 - x < p[d1]:
        p[d1] -= 1
        reg[R_JN] -= 1
    p2 = 2 * d2 + side2
    if p2 > p1:
        lo, hi = bnd[p2], bnd[p2 + 1]
        while lo < hi:  # first element above a
            mid = (lo + hi) >> 1
            if precedes(means, tb, a, order[mid]):
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
            if precedes(means, tb, a, order[mid]):
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
        while y + 1 < end and precedes(means, tb, order[y + 1], a):
            b = order[y + 1]
            order[y] = b
            where[b] = y
            y += 1
        while y - 1 >= start and precedes(means, tb, a, order[y - 1]):
            b = order[y - 1]
            order[y] = b
            where[b] = y
            y -= 1
    order[y] = a
    where[a] = y
    side[a] = side2
    if side2 == 0:
        if y - bnd[p2] < q[d2]:
            q[d2] += 1
            reg[R_JM] += 1
    elif bnd[p2 + 1] - 1 - y < p[d2]:
        p[d2] += 1
        reg[R_JN] += 1


@numba.njit(cache=True, _nrt=False)
def add_bucket(S, i, count):
    """A new empty bucket at index ``i`` (pull count ``count``)."""
    bnd, bc, q, p, reg = S[BND], S[BCNT], S[QS], S[PS], S[REG]
    nd = reg[R_D]
    for d in range(nd, i, -1):
        bc[d] = bc[d - 1]
        q[d] = q[d - 1]
        p[d] = p[d - 1]
    for j in range(2 * nd, 2 * i - 1, -1):
        bnd[j + 2] = bnd[j]
    bnd[2 * i + 1] = bnd[2 * i]
    bc[i] = count
    q[i] = 0
    p[i] = 0
    reg[R_D] = nd + 1


@numba.njit(cache=True, _nrt=False)
def drop_bucket(S, i):
    """Remove the empty bucket ``i``."""
    bnd, bc, q, p, reg = S[BND], S[BCNT], S[QS], S[PS], S[REG]
    nd = reg[R_D]
    for d in range(i, nd - 1):
        bc[d] = bc[d + 1]
        q[d] = q[d + 1]
        p[d] = p[d + 1]
    for j in range(2 * i, 2 * nd - 1):
        bnd[j] = bnd[j + 2]
    reg[R_D] = nd - 1


@numba.njit(cache=True, _nrt=False)
def find_bucket(S, count):
    """The index of the bucket of ``count`` pulls (``-1``: none)."""
    bc = S[BCNT]
    lo, hi = 0, S[REG, R_D]
    while lo < hi:
        mid = (lo + hi) >> 1
        if bc[mid] < count:
            lo = mid + 1
        else:
            hi = mid
    if lo < S[REG, R_D] and bc[lo] == count:
        return lo
    return -1


@numba.njit(cache=True, _nrt=False)
def pulled(S, F, ctx, a):
    """Arm ``a`` was pulled once (``ctx`` holds its new count and mean): new key, next bucket.

    Its side is kept: call :func:`repair_top` after the pulls of a round. Arms pulled
    in the same round must be folded in one at a time or lie on different sides (a
    stale arm must not sit in the part another arm is inserted into): AT-LUCB's ``h*``
    is in the top set, its ``l*`` is not.
    """
    means, counts = ctx.means, ctx.counts
    c = counts[a]
    d = find_bucket(S, c - 1)
    F[TB, a] = ctx.rng.random()
    if d + 1 >= S[REG, R_D] or S[BCNT, d + 1] != c:
        add_bucket(S, d + 1, c)
    move(S, F[TB], means, a, d + 1, S[SIDE, a])
    if S[BND, 2 * d] == S[BND, 2 * d + 2]:
        drop_bucket(S, d)


@numba.njit(cache=True, _nrt=False)
def repair_top(S, F, means):
    """Restore the top set (the ``k`` largest (mean, key)): swap its weakest and the
    strongest other arm while they are out of order (O(D) per pass, one swap per changed arm).
    """
    tb = F[TB]
    order, bnd = S[ORD], S[BND]
    while True:
        nd = S[REG, R_D]
        w = -1
        s = -1
        dw = 0
        ds = 0
        for d in range(nd):
            if bnd[2 * d + 1] > bnd[2 * d]:
                a = order[bnd[2 * d]]
                if w < 0 or precedes(means, tb, a, w):
                    w, dw = a, d
            if bnd[2 * d + 2] > bnd[2 * d + 1]:
                a = order[bnd[2 * d + 2] - 1]
                if s < 0 or precedes(means, tb, s, a):
                    s, ds = a, d
        if w < 0 or s < 0 or not precedes(means, tb, w, s):
            return
        move(S, tb, means, w, dw, 1)
        move(S, tb, means, s, ds, 0)


@numba.njit(cache=True)
def build(ctx, k):
    """``(S, F)`` for the arms' counts and means in ``ctx``: tie keys (drawn in arm order), the
    top ``k`` by (mean, key), the buckets; the counters zero. O(n log n), once per episode.
    """
    n = ctx.counts.shape[0]
    S = np.zeros((8, 2 * n + 4), dtype=np.int64)  # n + 1 buckets while an arm moves
    F = np.zeros((2, n + 1))
    tb = F[TB]
    for i in range(n):
        tb[i] = ctx.rng.random()
    means = ctx.means
    rank = np.argsort(tb[:n])
    vals = np.empty(n)
    for j in range(n):
        vals[j] = means[rank[j]]
    rank = rank[np.argsort(vals, kind="mergesort")]  # ascending (mean, key)
    side = S[SIDE]
    for j in range(n):
        a = rank[j]
        side[a] = 0 if j >= n - k else 1
    # bucket order: (count, side, mean, key), by stable sorts of the (mean, key) order
    keys = np.empty(n, dtype=np.int64)
    for j in range(n):
        keys[j] = side[rank[j]]
    rank = rank[np.argsort(keys, kind="mergesort")]
    for j in range(n):
        keys[j] = ctx.counts[rank[j]]
    rank = rank[np.argsort(keys, kind="mergesort")]
    order, where, bnd, bc = S[ORD], S[WHR], S[BND], S[BCNT]
    nd = 0
    for j in range(n):
        a = rank[j]
        order[j] = a
        where[a] = j
        c = ctx.counts[a]
        if nd == 0 or bc[nd - 1] != c:
            bc[nd] = c
            bnd[2 * nd] = j
            bnd[2 * nd + 1] = j
            nd += 1
        if side[a] == 0:
            bnd[2 * nd - 1] = j + 1
    bnd[2 * nd] = n
    S[REG, R_D] = nd
    return S, F


@numba.njit(cache=True, _nrt=False)
def top_set(S, n, out):
    """The top-``k`` side (``S[SIDE] == 0``), ascending, into ``out``."""
    side = S[SIDE]
    j = 0
    for i in range(n):
        if side[i] == 0:
            out[j] = i
            j += 1
