"""Kinetic tournament trees: LUCB1's extreme bounds under a radius that grows every round.

LUCB1's radius grows with the round ``t`` for every arm (the scale ``c`` of
:func:`agents.lucb.radii.scale`), so every bound changes every round; but the bounds are
lines in the scale, ``-LCB_i = -mean_i + c a_i`` and ``UCB_i = mean_i + c b_i`` (``a_i``,
``b_i``: the arm's radius coefficients, functions of its own count). Two tournament
trees over the arms (leaf ``half + i``; tree 0 the ``High`` arms by ``-LCB``, tree 1 the
``Low`` arms by ``UCB``) keep at each node the winner at the current scale (largest
value, ties to the smaller tie key: values are computed by the formula of the literal
rule, so the winner is exact) and the smallest scale at which a certificate in its
subtree may fail (the loser's line overtaking the winner's; computed with a margin for
rounding, so that it errs early). Raising ``c`` replays only the nodes whose
certificates failed (:func:`advance`); a pulled arm's update replays one leaf-to-root
path (:func:`update`, O(log n)). The winners are ``kwin[t, 1]``.

Arrays: ``kwin[t, node]`` the winner (``-1``: none), ``kexp[t, node]`` the failure scale
(``inf``: never); ``stack`` and ``order`` are scratch of ``2 half`` entries.
"""

from __future__ import annotations

import numba

__all__ = ["advance", "update"]


@numba.njit(cache=True, _nrt=False)
def _value(means, la, ub, t, i, c):
    """The value of arm ``i`` in tree ``t`` at scale ``c``: ``-LCB`` (High) or ``UCB`` (Low)."""
    if t == 0:
        return -(means[i] - c * la[i])
    return means[i] + c * ub[i]


@numba.njit(cache=True, _nrt=False)
def _play(kwin, kexp, means, la, ub, tb, t, node, c):
    """Recompute ``node`` of tree ``t`` from its children at scale ``c``."""
    a = kwin[t, 2 * node]
    b = kwin[t, 2 * node + 1]
    e = min(kexp[t, 2 * node], kexp[t, 2 * node + 1])
    if a < 0 or b < 0:
        kwin[t, node] = a if b < 0 else b
        kexp[t, node] = e
        return
    va = _value(means, la, ub, t, a, c)
    vb = _value(means, la, ub, t, b, c)
    if vb > va or (vb == va and tb[b] < tb[a]):
        a, b = b, a
    kwin[t, node] = a
    # line of arm i: s_i + c * slope_i
    if t == 0:
        sa, sb, pa, pb = -means[a], -means[b], la[a], la[b]
    else:
        sa, sb, pa, pb = means[a], means[b], ub[a], ub[b]
    if pb > pa:
        cross = (sa - sb) / (pb - pa)
        err = 1e-14 * (abs(sa) + abs(sb) + abs(cross) * (pa + pb) + 1.0) / (pb - pa)
        cross = cross - err - 1e-12 * abs(cross)
        if cross < e:
            e = cross
    kexp[t, node] = e


@numba.njit(cache=True, _nrt=False)
def update(kwin, kexp, means, la, ub, tb, t, i, member, c, half):
    """Arm ``i`` enters (``member``), leaves or changes in tree ``t``; replay its path."""
    node = half + i
    kwin[t, node] = i if member else -1
    node >>= 1
    while node >= 1:
        _play(kwin, kexp, means, la, ub, tb, t, node, c)
        node >>= 1


@numba.njit(cache=True, _nrt=False)
def advance(kwin, kexp, means, la, ub, tb, t, c, stack, order):
    """Raise tree ``t`` to scale ``c``: replay the nodes whose certificates failed."""
    if kexp[t, 1] > c:
        return
    ns = 1
    stack[0] = 1
    no = 0
    while ns > 0:  # collect the failed nodes, parents before children
        ns -= 1
        node = stack[ns]
        order[no] = node
        no += 1
        for ch in (2 * node, 2 * node + 1):
            if kexp[t, ch] <= c:
                stack[ns] = ch
                ns += 1
    for j in range(no - 1, -1, -1):  # children before parents
        _play(kwin, kexp, means, la, ub, tb, t, order[j], c)
