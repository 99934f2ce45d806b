"""Indexed binary heaps of arms, the LUCB family's ordered sets (compiled helpers).

The state holds several heaps in the rows of shared arrays: heap ``q`` is
``heap[q, :size[q]]`` (arms, in heap order), ``pos[q, arm]`` the arm's position in it
(``-1``: absent) and ``key[q, arm]`` its key. Every heap is a max-heap of ``(key, sgn[q]
* tb[arm])``: the larger key ranks first, equal keys are ordered by the arm's random tie
key ``tb`` (``sgn[q] = 1``: the larger tie key first; ``-1``: the smaller). Keeping the
positions lets an arm be updated, inserted, removed or replaced in O(log n), which the
family's rounds need: only the pulled arms change.
"""

from __future__ import annotations

import numba

__all__ = ["above", "heapify", "insert", "remove", "replace", "sift"]


@numba.njit(cache=True, _nrt=False)
def above(key, sgn, tb, q, a, b):
    """Whether arm ``a`` ranks above arm ``b`` in heap ``q``: larger key, then larger ``sgn tb``."""
    ka = key[q, a]
    kb = key[q, b]
    return ka > kb or (ka == kb and sgn[q] * tb[a] > sgn[q] * tb[b])


@numba.njit(cache=True, _nrt=False)
def _down(heap, pos, key, size, sgn, tb, q, j):
    """Move the arm at position ``j`` of heap ``q`` down to its place."""
    m = size[q]
    a = heap[q, j]
    while True:
        c = 2 * j + 1
        if c >= m:
            break
        if c + 1 < m and above(key, sgn, tb, q, heap[q, c + 1], heap[q, c]):
            c += 1
        if not above(key, sgn, tb, q, heap[q, c], a):
            break
        heap[q, j] = heap[q, c]
        pos[q, heap[q, j]] = j
        j = c
    heap[q, j] = a
    pos[q, a] = j


@numba.njit(cache=True, _nrt=False)
def sift(heap, pos, key, size, sgn, tb, q, j):
    """Restore heap ``q`` around position ``j`` (up, then down)."""
    a = heap[q, j]
    while j > 0:
        p = (j - 1) >> 1
        if not above(key, sgn, tb, q, a, heap[q, p]):
            break
        heap[q, j] = heap[q, p]
        pos[q, heap[q, j]] = j
        j = p
    heap[q, j] = a
    pos[q, a] = j
    _down(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
def insert(heap, pos, key, size, sgn, tb, q, a):
    """Insert arm ``a`` (keyed) into heap ``q``."""
    j = size[q]
    heap[q, j] = a
    pos[q, a] = j
    size[q] = j + 1
    sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
def remove(heap, pos, key, size, sgn, tb, q, a):
    """Remove arm ``a`` from heap ``q``."""
    j = pos[q, a]
    last = size[q] - 1
    size[q] = last
    pos[q, a] = -1
    if j != last:
        b = heap[q, last]
        heap[q, j] = b
        pos[q, b] = j
        sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
def heapify(heap, pos, key, size, sgn, tb, q):
    """Restore the order of heap ``q`` after many of its keys changed (O(size))."""
    for j in range(size[q] // 2 - 1, -1, -1):
        _down(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
def replace(heap, pos, key, size, sgn, tb, q, old, new):
    """Arm ``new`` (keyed) takes the place of arm ``old`` in heap ``q``."""
    j = pos[q, old]
    pos[q, old] = -1
    heap[q, j] = new
    pos[q, new] = j
    sift(heap, pos, key, size, sgn, tb, q, j)
