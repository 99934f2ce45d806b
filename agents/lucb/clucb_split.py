"""lil'CLUCB's symmetric difference ``M (+) M~``, kept split off the bound heaps.

lil'CLUCB (Jiang, Li, Qiao 2017, Algorithm 2; :class:`agents.lucb.lil.LilCLUCB`) pulls
the arm of largest radius in ``M (+) M~``, ``M`` the ``K`` largest empirical means (the
family's ``High``) and ``M~`` the ``K`` largest revised means (``LCB`` in ``M``, ``UCB``
outside). With ``a_1 <= a_2 <= ...`` the LCBs in High and ``b_1 >= b_2 >= ...`` the
UCBs in Low (the orders of heaps HL and LU: bound, then tie key), ``M~`` swaps in
exactly the pairs ``j`` with ``b_j > a_j``, a prefix ``j <= m`` (``b`` decreases, ``a``
increases), so ``M (+) M~`` is the first ``m`` arms of each order, and ``M = M~`` (the
stop rule) exactly when ``m = 0``, i.e. ``LCB_h >= UCB_l``.

The ``2m`` arms are kept split off: the first ``m`` High arms by LCB in heap IH (largest
LCB, ``a_m``, on top) and the others in HL (smallest, ``a_(m+1)``, on top); likewise IL
/ LU for Low; heap PK holds the ``2m`` arms by radius (largest on top, ties to the
smaller tie key). After a pull changes one arm's bounds (:func:`rekey`) and the
High/Low repair moves arms across (:func:`leave`), :func:`settle` restores the split
(swapping the tops while they are out of order) and moves ``m`` by comparing the tops:
a few O(log n) heap operations per round whatever ``m``, instead of a walk of the
``2m`` arms. The heap rows are :mod:`agents.lucb.layout`'s; ``m`` is ``js[J_M]``.
"""

from __future__ import annotations

import numba

from agents.lucb import heaps
from agents.lucb.layout import HL, IH, IL, J_M, LU, PK

__all__ = ["leave", "rekey", "settle"]


@numba.njit(cache=True, _nrt=False)
def leave(heap, pos, key, size, sgn, tb, q, qi, a):
    """Remove arm ``a`` from its side's bound heap ``q`` (or ``qi`` and ``PK``: lil'CLUCB)."""
    if pos[q, a] >= 0:
        heaps.remove(heap, pos, key, size, sgn, tb, q, a)
    else:
        heaps.remove(heap, pos, key, size, sgn, tb, qi, a)
        heaps.remove(heap, pos, key, size, sgn, tb, PK, a)


@numba.njit(cache=True, _nrt=False)
def _trade(heap, pos, key, size, sgn, tb, rad, q, qi, x, y):
    """``x`` (first outside, top of ``q``) and ``y`` (inside) trade places.

    ``y`` takes ``x``'s slot in ``q``; ``x`` takes ``y``'s slots in ``qi`` and ``PK``.
    """
    heaps.replace(heap, pos, key, size, sgn, tb, q, x, y)
    key[qi, x] = -key[q, x]
    heaps.replace(heap, pos, key, size, sgn, tb, qi, y, x)
    key[PK, x] = rad[x]
    heaps.replace(heap, pos, key, size, sgn, tb, PK, y, x)


@numba.njit(cache=True, _nrt=False)
def rekey(heap, pos, key, size, sgn, tb, q, qi, rad, i):
    """Arm ``i`` of ``M (+) M~`` got new bounds (``key[q, i]``), radius and tie key.

    If it now ranks after the first arm ``x`` outside (the top of ``q``), the two trade
    places (``x`` ranks after every other arm inside, ``i`` after ``x``: the split holds);
    else ``i`` is re-sifted in ``qi`` and ``PK``.
    """
    if size[q] > 0 and heaps.above(key, sgn, tb, q, heap[q, 0], i):
        _trade(heap, pos, key, size, sgn, tb, rad, q, qi, heap[q, 0], i)
    else:
        key[qi, i] = -key[q, i]
        heaps.sift(heap, pos, key, size, sgn, tb, qi, pos[qi, i])
        key[PK, i] = rad[i]
        heaps.sift(heap, pos, key, size, sgn, tb, PK, pos[PK, i])


@numba.njit(cache=True, _nrt=False)
def _enter(heap, pos, key, size, sgn, tb, q, qi, rad, a):
    """Move arm ``a`` from heap ``q`` (outside ``M (+) M~``) into ``qi`` and ``PK``."""
    heaps.remove(heap, pos, key, size, sgn, tb, q, a)
    key[qi, a] = -key[q, a]
    heaps.insert(heap, pos, key, size, sgn, tb, qi, a)
    key[PK, a] = rad[a]
    heaps.insert(heap, pos, key, size, sgn, tb, PK, a)


@numba.njit(cache=True, _nrt=False)
def _exit(heap, pos, key, size, sgn, tb, q, qi, a):
    """Move arm ``a`` of ``M (+) M~`` (heaps ``qi`` and ``PK``) out, into heap ``q``."""
    heaps.remove(heap, pos, key, size, sgn, tb, qi, a)
    heaps.remove(heap, pos, key, size, sgn, tb, PK, a)
    heaps.insert(heap, pos, key, size, sgn, tb, q, a)


@numba.njit(cache=True, _nrt=False)
def settle(st):
    """lil'CLUCB: settle ``M (+) M~`` after the round's changes; its ``m`` (0: ``M = M~``).

    Its arm to pull (the largest radius, ties to the smaller tie key) is then
    ``heap[PK, 0]``. ``m = 0`` exactly when ``LCB_h >= UCB_l`` (the plain stop rule).
    """
    heap, pos, key, size, sgn, tb, la, ub, js = (
        st[0],
        st[1],
        st[2],
        st[3],
        st[4],
        st[5],
        st[6],
        st[7],
        st[10],
    )
    m = js[J_M]
    for side in range(2):
        q = HL if side == 0 else LU
        qi = IH if side == 0 else IL
        rad = la if side == 0 else ub
        # the first m arms of the side's order in qi, the others in q
        while (
            size[q] > 0 and size[qi] > 0 and heaps.above(key, sgn, tb, q, heap[q, 0], heap[qi, 0])
        ):
            # swap the tops: y (last inside) takes x's place in q, x (first outside)
            # takes y's place in qi and in PK
            _trade(heap, pos, key, size, sgn, tb, rad, q, qi, heap[q, 0], heap[qi, 0])
        while size[qi] > m:
            _exit(heap, pos, key, size, sgn, tb, q, qi, heap[qi, 0])
        while size[qi] < m:
            _enter(heap, pos, key, size, sgn, tb, q, qi, rad, heap[q, 0])
    cap = min(size[HL] + size[IH], size[LU] + size[IL])
    # pair m + 1 swapped (b_(m+1) > a_(m+1)): grow; pair m not swapped: shrink
    while m < cap and key[LU, heap[LU, 0]] > -key[HL, heap[HL, 0]]:
        _enter(heap, pos, key, size, sgn, tb, HL, IH, la, heap[HL, 0])
        _enter(heap, pos, key, size, sgn, tb, LU, IL, ub, heap[LU, 0])
        m += 1
    while m > 0 and not key[LU, heap[IL, 0]] > -key[HL, heap[IH, 0]]:
        _exit(heap, pos, key, size, sgn, tb, HL, IH, heap[IH, 0])
        _exit(heap, pos, key, size, sgn, tb, LU, IL, heap[IL, 0])
        m -= 1
    js[J_M] = m
    return m
