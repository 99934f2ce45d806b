"""The ``q``-th largest of per-arm values that change one arm at a time (compiled).

Racing-type algorithms compare every arm with an order statistic of all arms' bounds
(BatchRacing's ``max^(k_t + 1) U`` and ``max^(k_t) L``, RoundRobin's stopping rule). When
one pull changes one arm, recomputing the statistic costs O(n); a *tracker* keeps it in
O(log n) per change with two indexed binary heaps: a min-heap of the ``q`` largest
values (its root is the ``q``-th largest) and a max-heap of the others. The values are
exact: :func:`kth` equals ``np.partition(values, m - q)[m - q]`` over the tracked arms.

Several trackers live in three arrays (few arrays: a numba generator saves every live
array at each ``yield``, about 10 ns apiece): ``key`` (float64[T, n], the value of
every arm in tracker ``t``, set by the caller), ``heaps`` (int64[T, 4, n]: the min-heap,
the max-heap, each arm's position in its heap, its side: 0 untracked, 1 min-heap, 2
max-heap) and ``sizes`` (int64[T, 2]). Usage (inside ``@numba.njit`` code)::

    key, heaps, sizes = new(T, n)
    key[t, arms] = values          # tracker t's values
    build(key, heaps, sizes, t, arms, m, q)   # track arms[:m], order q (1 <= q <= m)
    key[t, a] = new_value
    update(key, heaps, sizes, t, a)           # O(log n)
    kth(key, heaps, t)                        # the q-th largest tracked value
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["build", "kth", "new", "update"]

_TOP, _REST, _POS, _SIDE = 0, 1, 2, 3


@numba.njit(cache=True)
def new(trackers, n):
    """``(key, heaps, sizes)`` of ``trackers`` empty trackers over arms ``0..n-1``."""
    return (
        np.zeros((trackers, n)),
        np.zeros((trackers, 4, n), dtype=np.int64),
        np.zeros((trackers, 2), dtype=np.int64),
    )


@numba.njit(cache=True)
def build(key, heaps, sizes, t, arms, m, q):
    """Tracker ``t`` tracks ``arms[:m]`` (keys set), order ``q`` (``1 <= q <= m``)."""
    kt = key[t]
    h = heaps[t]
    h[_SIDE, :] = 0
    vals = np.empty(m)
    for j in range(m):
        vals[j] = -kt[arms[j]]
    order = np.argsort(vals)  # decreasing keys
    if q > m:
        q = m
    # increasing keys form a min-heap, decreasing keys a max-heap
    for j in range(q):
        a = arms[order[q - 1 - j]]
        h[_TOP, j] = a
        h[_POS, a] = j
        h[_SIDE, a] = 1
    for j in range(m - q):
        a = arms[order[q + j]]
        h[_REST, j] = a
        h[_POS, a] = j
        h[_SIDE, a] = 2
    sizes[t, 0] = q
    sizes[t, 1] = m - q


@numba.njit(cache=True)
def kth(key, heaps, t):
    """Tracker ``t``'s ``q``-th largest tracked value."""
    return key[t, heaps[t, _TOP, 0]]


@numba.njit(cache=True, inline="always")
def _sift(heap, size, pos, key, i, sgn):
    """Restore the heap property around ``heap[i]`` (``sgn`` 1: max-heap, -1: min-heap)."""
    a = heap[i]
    v = sgn * key[a]
    moved = False
    while i > 0:  # up
        p = (i - 1) >> 1
        b = heap[p]
        if sgn * key[b] >= v:
            break
        heap[i] = b
        pos[b] = i
        i = p
        moved = True
    if not moved:
        while True:  # down
            c = 2 * i + 1
            if c >= size:
                break
            bc = heap[c]
            vc = sgn * key[bc]
            if c + 1 < size:
                d = heap[c + 1]
                vd = sgn * key[d]
                if vd > vc:
                    c, bc, vc = c + 1, d, vd
            if vc <= v:
                break
            heap[i] = bc
            pos[bc] = i
            i = c
    heap[i] = a
    pos[a] = i


@numba.njit(cache=True)
def update(key, heaps, sizes, t, a):
    """Arm ``a``'s key in tracker ``t`` changed: restore the heaps and the split."""
    kt = key[t]
    h = heaps[t]
    side = h[_SIDE, a]
    top, rest, pos = h[_TOP], h[_REST], h[_POS]
    n_top, n_rest = sizes[t, 0], sizes[t, 1]
    if side == 1:
        _sift(top, n_top, pos, kt, pos[a], -1.0)
    elif side == 2:
        _sift(rest, n_rest, pos, kt, pos[a], 1.0)
    else:
        return
    if n_top > 0 and n_rest > 0:
        x = top[0]
        y = rest[0]
        if kt[x] < kt[y]:
            top[0] = y
            h[_SIDE, y] = 1
            rest[0] = x
            h[_SIDE, x] = 2
            _sift(top, n_top, pos, kt, 0, -1.0)
            _sift(rest, n_rest, pos, kt, 0, 1.0)
