"""The skeleton shared by the LUCB family: LUCB1, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB.

Every member (Kalyanakrishnan et al. 2012; Jamieson & Nowak 2014; Simchowitz et al.
2017; Jiang, Li, Qiao 2017 Alg. 1 and 2):

1. pulls every arm once;
2. splits the arms into ``High`` (the ``k`` largest empirical means) and ``Low``;
3. finds ``h = argmin_{High} LCB`` and ``l = argmax_{Low} UCB``, with
   ``LCB_i = mean_i - scale * a(T_i)`` and ``UCB_i = mean_i + scale * b(T_i)``, where the
   radius coefficients ``a`` and ``b`` depend only on the arm's own pull count ``T_i``
   and ``scale`` is 1 (lil' bounds) or grows with the round (LUCB1);
4. stops and answers ``High`` when ``LCB_h >= UCB_l`` (LUCB1: ``UCB_l - LCB_h <
   epsilon``), else pulls the arms its sampling rule picks (``h`` and ``l``; one of
   them at random; or lil'CLUCB's arm of largest radius in ``M (+) M~``) and goes
   back to 2.

The members differ only in ``a``, ``b``, ``scale``, the stop rule and the sampling
rule: one compiled generator (:func:`run`) plays them all, told which by its parameter
vector ``prm`` (layout: the ``P_*`` indices below; each member's ``params``). Its
module keeps only the agent class.

Incremental state, so that a round costs O(log n) instead of a scan of the arms (all
in preallocated arrays, compiled helpers):

* after a round only the pulled arms' means and counts change, so only their bounds do
  (the radius depends on the arm's own count);
* four indexed binary heaps (arm positions kept, so an arm is updated, inserted or
  removed in O(log n)) hold ``High`` by mean (weakest on top), ``Low`` by mean
  (strongest on top), ``High`` by LCB (smallest on top) and ``Low`` by UCB (largest
  on top); ``ctx.status`` marks ``High`` (:data:`~agents.engine.ACCEPTED`);
* after the pulled arms are updated, ``High``/``Low`` are repaired by swapping the
  weakest ``High`` arm with the strongest ``Low`` arm while they are out of order (at
  most one swap per changed arm);
* LUCB1's radius grows with the round ``t`` for every arm (``scale``). The bound heaps
  are keyed at a reference scale ``c_ref``; at ``c >= c_ref`` an arm's bound moves by
  at most ``(c - c_ref) * coef_max`` (``coef_max`` = the coefficient at the smallest
  count of any arm, the coefficient decreasing in the count), so the exact extreme is
  found by visiting, best first, the heap entries within that slack of the top
  (:func:`_slack_best`); the heaps are re-keyed at the current scale, O(n), when
  one query visits more than ``rebuild_pops`` entries;
* lil'CLUCB's ``M (+) M~`` is read off the two bound heaps in lockstep, best first
  (:func:`_clucb_pick`), O(m log m) for a difference of ``2m`` arms.

Requests: the first round is one request of every arm once; a round of one arm is
``yield arm``; a round of two arms is :func:`~agents.engine.request_two` (one batch
when the batch model allows it), and with ``batch_size=1`` two one-pull steps, fewest
pulls first and ties at random: the schedule RoundRobin makes, without its cost.

Ties (equal means, equal bounds, equal radii) are broken uniformly at random, as
paper-notes require, by a random key per arm (``tb``, i.i.d. uniform, redrawn whenever
the arm's statistics change) that orders otherwise equal entries; the initial ``High``
is the top ``k`` by (mean, key). All randomness comes from ``ctx.rng``, in this order:
the first round's scheduling (engine), one key per arm (arm order) after it, then per
round the sampling rule's coin (lil'RandLUCB: one uniform), the order of a pair at
``batch_size=1`` when both arms have as many pulls (one uniform), and a new key for
each pulled arm (``h`` before ``l``).

Anytime answer (the budget ends before the stop rule): the ``k`` largest empirical
means, ties at random (:data:`~agents.engine.RULE_EMPIRICAL`): ``High`` updated with
the last pulls.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numba
import numpy as np

from agents import confidence, engine
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    ScriptedAgent,
    check_probability,
)

__all__ = ["VARIANTS", "LUCBFamily", "LilFamily", "episode", "run"]

VARIANTS = ("faithful", "heuristic")

#: ``prm`` layout: sampling rule, stop tolerance, radius family, the lil' parameters
#: ``eps``, ``w`` of the LCB and of the UCB, LUCB1's ``delta`` and ``k1``, and the
#: re-keying threshold of a time-varying radius.
P_RULE, P_STOP_EPS, P_RADIUS, P_EPS, P_W_LOW, P_W_UP, P_DELTA, P_K1, P_REBUILD = range(9)
NP = 9
#: sampling rules: pull ``h`` and ``l``; ``h`` with probability ``T_l / (T_h + T_l)``
#: else ``l`` (lil'RandLUCB); the arm of largest radius in ``M (+) M~`` (lil'CLUCB).
RULE_BOTH, RULE_RANDOM, RULE_CLUCB = 0, 1, 2
#: radius families: lil' ``U(T, w)`` (scale 1); LUCB1's ``beta(T, t)`` (scale grows with t).
RADIUS_LIL, RADIUS_LUCB1 = 0, 1
#: ``prm[P_STOP_EPS] < 0``: stop when ``LCB_h >= UCB_l``; else when ``UCB_l - LCB_h < eps``.
STOP_PLAIN = -1.0

#: the heaps: High by mean (weakest on top), Low by mean (strongest), High by LCB
#: (smallest), Low by UCB (largest). Each is a max-heap of (key, sign * tb).
HM, LM, HL, LU = 0, 1, 2, 3
#: registers of the state (``fs`` floats, ``js`` ints).
F_CREF = 0
J_TMIN, J_AT_MIN = 0, 1


# ------------------------------------------------------------- indexed heaps
@numba.njit(cache=True)
def _above(key, sgn, tb, q, a, b):
    """Whether arm ``a`` ranks above arm ``b`` in heap ``q``: larger key, then larger ``sgn tb``."""
    ka = key[q, a]
    kb = key[q, b]
    return ka > kb or (ka == kb and sgn[q] * tb[a] > sgn[q] * tb[b])


@numba.njit(cache=True)
def _down(heap, pos, key, size, sgn, tb, q, j):
    m = size[q]
    a = heap[q, j]
    while True:
        c = 2 * j + 1
        if c >= m:
            break
        if c + 1 < m and _above(key, sgn, tb, q, heap[q, c + 1], heap[q, c]):
            c += 1
        if not _above(key, sgn, tb, q, heap[q, c], a):
            break
        heap[q, j] = heap[q, c]
        pos[q, heap[q, j]] = j
        j = c
    heap[q, j] = a
    pos[q, a] = j


@numba.njit(cache=True)
def _sift(heap, pos, key, size, sgn, tb, q, j):
    """Restore heap ``q`` around position ``j`` (up, then down)."""
    a = heap[q, j]
    while j > 0:
        p = (j - 1) >> 1
        if not _above(key, sgn, tb, q, a, heap[q, p]):
            break
        heap[q, j] = heap[q, p]
        pos[q, heap[q, j]] = j
        j = p
    heap[q, j] = a
    pos[q, a] = j
    _down(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True)
def _insert(heap, pos, key, size, sgn, tb, q, a):
    j = size[q]
    heap[q, j] = a
    pos[q, a] = j
    size[q] = j + 1
    _sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True)
def _remove(heap, pos, key, size, sgn, tb, q, a):
    j = pos[q, a]
    last = size[q] - 1
    size[q] = last
    pos[q, a] = -1
    if j != last:
        b = heap[q, last]
        heap[q, j] = b
        pos[q, b] = j
        _sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True)
def _heapify(heap, pos, key, size, sgn, tb, q):
    for j in range(size[q] // 2 - 1, -1, -1):
        _down(heap, pos, key, size, sgn, tb, q, j)


# ------------------------------------------------------------------ radii
@numba.njit(cache=True)
def _coef(prm, t, low_side, sigma):
    """The radius coefficient ``a(t)`` (``low_side=False``) or ``b(t)`` of ``t`` pulls."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return confidence.lucb_coef(float(t), sigma)
    w = prm[P_W_UP] if low_side else prm[P_W_LOW]
    return confidence.lil_width(float(t), w, prm[P_EPS], sigma)


@numba.njit(cache=True)
def _scale(prm, n, rounds):
    """The radius multiplier at round ``rounds`` (LUCB1: ``sqrt(log(k1 n t^4 / delta))``)."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return math.sqrt(confidence.lucb_rate(float(rounds), n, prm[P_DELTA], prm[P_K1]))
    return 1.0


# ------------------------------------------------------------------ state
@numba.njit(cache=True)
def _set_side(st, ctx, prm, i, high, sigma):
    """Put arm ``i`` into ``High`` (``high``) or ``Low`` with keys at ``c_ref``."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js = st
    mu = ctx.means[i]
    c_ref = fs[F_CREF]
    if high:
        ctx.status[i] = engine.ACCEPTED
        la[i] = _coef(prm, seen[i], False, sigma)
        key[HM, i] = -mu
        key[HL, i] = -(mu - c_ref * la[i])
        _insert(heap, pos, key, size, sgn, tb, HM, i)
        _insert(heap, pos, key, size, sgn, tb, HL, i)
    else:
        ctx.status[i] = engine.UNDECIDED
        ub[i] = _coef(prm, seen[i], True, sigma)
        key[LM, i] = mu
        key[LU, i] = mu + c_ref * ub[i]
        _insert(heap, pos, key, size, sgn, tb, LM, i)
        _insert(heap, pos, key, size, sgn, tb, LU, i)


@numba.njit(cache=True)
def _build(ctx, prm, c_ref):
    """The state after the first round: keys, High = top ``k`` by (mean, key), the heaps.

    Returns ``(heap, pos, key, size, sgn, tb, la, ub, seen, fs, js)``: the four heaps
    (``heap[q]``, ``pos[q, arm]``, ``key[q, arm]``, ``size[q]``, tie sign ``sgn[q]``),
    the tie keys, the coefficients ``a``/``b`` of each arm's side, the counts folded in,
    and the registers (``c_ref``; the smallest count and how many arms have it).
    """
    n = ctx.counts.shape[0]
    k = ctx.answer.shape[0]
    sigma = ctx.fv[engine.SIGMA]
    heap = np.zeros((4, n), dtype=np.int64)
    pos = np.full((4, n), -1, dtype=np.int64)
    key = np.zeros((4, n))
    size = np.zeros(4, dtype=np.int64)
    sgn = np.array([-1.0, 1.0, -1.0, -1.0])
    tb = np.empty(n)
    for i in range(n):
        tb[i] = ctx.rng.random()
    la = np.zeros(n)
    ub = np.zeros(n)
    seen = ctx.counts.copy()
    fs = np.zeros(2)
    fs[F_CREF] = c_ref
    js = np.zeros(2, dtype=np.int64)
    tmin = seen[0]
    for i in range(n):
        if seen[i] < tmin:
            tmin = seen[i]
    at = 0
    for i in range(n):
        if seen[i] == tmin:
            at += 1
    js[J_TMIN], js[J_AT_MIN] = tmin, at
    by_tb = np.argsort(tb)
    vals = np.empty(n)
    for j in range(n):
        vals[j] = ctx.means[by_tb[j]]
    order = by_tb[np.argsort(vals, kind="mergesort")]  # ascending (mean, key)
    st = (heap, pos, key, size, sgn, tb, la, ub, seen, fs, js)
    for j in range(n):
        _set_side(st, ctx, prm, order[j], j >= n - k, sigma)
    return st


@numba.njit(cache=True)
def _count_moved(st, old, new):
    """An arm went from ``old`` to ``new`` pulls: keep the smallest count of any arm."""
    seen, js = st[8], st[10]
    if old != js[J_TMIN]:
        return
    js[J_AT_MIN] -= 1
    if js[J_AT_MIN] > 0:
        return
    tmin = seen[0]
    for i in range(seen.shape[0]):
        if seen[i] < tmin:
            tmin = seen[i]
    at = 0
    for i in range(seen.shape[0]):
        if seen[i] == tmin:
            at += 1
    js[J_TMIN], js[J_AT_MIN] = tmin, at


@numba.njit(cache=True)
def _fold(st, ctx, prm, i):
    """Fold arm ``i``'s new count and mean into the state (new tie key); False if unchanged."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js = st
    c = ctx.counts[i]
    if c == seen[i]:
        return False
    old = seen[i]
    seen[i] = c
    _count_moved(st, old, c)
    sigma = ctx.fv[engine.SIGMA]
    mu = ctx.means[i]
    tb[i] = ctx.rng.random()
    c_ref = fs[F_CREF]
    if ctx.status[i] == engine.ACCEPTED:
        la[i] = _coef(prm, c, False, sigma)
        key[HM, i] = -mu
        key[HL, i] = -(mu - c_ref * la[i])
        _sift(heap, pos, key, size, sgn, tb, HM, pos[HM, i])
        _sift(heap, pos, key, size, sgn, tb, HL, pos[HL, i])
    else:
        ub[i] = _coef(prm, c, True, sigma)
        key[LM, i] = mu
        key[LU, i] = mu + c_ref * ub[i]
        _sift(heap, pos, key, size, sgn, tb, LM, pos[LM, i])
        _sift(heap, pos, key, size, sgn, tb, LU, pos[LU, i])
    return True


@numba.njit(cache=True)
def _repair(st, ctx, prm):
    """Swap the weakest High arm and the strongest Low arm while out of (mean, key) order."""
    heap, pos, key, size, sgn, tb = st[0], st[1], st[2], st[3], st[4], st[5]
    sigma = ctx.fv[engine.SIGMA]
    means = ctx.means
    while True:
        w = heap[HM, 0]
        s = heap[LM, 0]
        if means[w] > means[s] or (means[w] == means[s] and tb[w] >= tb[s]):
            return
        _remove(heap, pos, key, size, sgn, tb, HM, w)
        _remove(heap, pos, key, size, sgn, tb, HL, w)
        _remove(heap, pos, key, size, sgn, tb, LM, s)
        _remove(heap, pos, key, size, sgn, tb, LU, s)
        _set_side(st, ctx, prm, w, False, sigma)
        _set_side(st, ctx, prm, s, True, sigma)


@numba.njit(cache=True)
def _rekey(st, ctx, c):
    """Re-key the bound heaps at scale ``c`` (O(n))."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js = st
    means = ctx.means
    fs[F_CREF] = c
    for j in range(size[HL]):
        i = heap[HL, j]
        key[HL, i] = -(means[i] - c * la[i])
    for j in range(size[LU]):
        i = heap[LU, j]
        key[LU, i] = means[i] + c * ub[i]
    _heapify(heap, pos, key, size, sgn, tb, HL)
    _heapify(heap, pos, key, size, sgn, tb, LU)


# ---------------------------------------------------------- best-first walks
@numba.njit(cache=True)
def _aux_push(aux, na, heap, key, sgn, tb, q, p):
    """Push heap position ``p`` of heap ``q`` on the max-heap ``aux[:na]``; the new size."""
    j = na
    a = heap[q, p]
    while j > 0:
        par = (j - 1) >> 1
        if not _above(key, sgn, tb, q, a, heap[q, aux[par]]):
            break
        aux[j] = aux[par]
        j = par
    aux[j] = p
    return na + 1


@numba.njit(cache=True)
def _aux_pop(aux, na, heap, key, sgn, tb, q):
    """Remove the top of ``aux[:na]`` (the caller read it); the new size."""
    na -= 1
    if na == 0:
        return 0
    p = aux[na]
    a = heap[q, p]
    j = 0
    while True:
        c = 2 * j + 1
        if c >= na:
            break
        if c + 1 < na and _above(key, sgn, tb, q, heap[q, aux[c + 1]], heap[q, aux[c]]):
            c += 1
        if not _above(key, sgn, tb, q, heap[q, aux[c]], a):
            break
        aux[j] = aux[c]
        j = c
    aux[j] = p
    return na


@numba.njit(cache=True)
def _slack_best(st, means, q, c, dlt, cmax, aux):
    """Exact ``(arm, value, visited)`` of the best entry of bound heap ``q`` at scale ``c``.

    Entries are keyed at ``c_ref = c - dlt``; an entry's value at ``c`` is at most its
    key plus ``dlt * cmax``, and so is every entry below it, so entries are visited in
    key order until that bound falls below the best value found (value: ``-LCB`` for
    ``HL``, ``UCB`` for ``LU``; ties to the smaller tie key).
    """
    heap, key, size, sgn, tb, la, ub = st[0], st[2], st[3], st[4], st[5], st[6], st[7]
    best = -1
    best_v = -np.inf
    visited = 0
    m = size[q]
    na = _aux_push(aux, 0, heap, key, sgn, tb, q, 0)
    while na > 0:
        p = aux[0]
        a = heap[q, p]
        bound = key[q, a] + dlt * cmax
        if bound + 1e-9 * (1.0 + abs(bound)) < best_v:
            break
        na = _aux_pop(aux, na, heap, key, sgn, tb, q)
        visited += 1
        if q == HL:
            v = -(means[a] - c * la[a])
        else:
            v = means[a] + c * ub[a]
        if v > best_v or (v == best_v and tb[a] < tb[best]):
            best, best_v = a, v
        for ch in (2 * p + 1, 2 * p + 2):
            if ch < m:
                na = _aux_push(aux, na, heap, key, sgn, tb, q, ch)
    return best, best_v, visited


@numba.njit(cache=True)
def _clucb_pick(st, aux_h, aux_l):
    """lil'CLUCB's arm: the largest radius in ``M (+) M~`` (ties: smaller tie key).

    With ``a_1 <= a_2 <= ...`` the LCBs in ``High`` and ``b_1 >= b_2 >= ...`` the UCBs in
    ``Low`` (the bound heaps' orders), ``M~`` swaps in exactly the pairs ``j`` with
    ``b_j > a_j`` (a prefix); the heaps are walked best first, in lockstep.
    """
    heap, key, size, sgn, tb, la, ub = st[0], st[2], st[3], st[4], st[5], st[6], st[7]
    nh = _aux_push(aux_h, 0, heap, key, sgn, tb, HL, 0)
    nl = _aux_push(aux_l, 0, heap, key, sgn, tb, LU, 0)
    best = -1
    best_rad = -1.0
    mh, ml = size[HL], size[LU]
    while nh > 0 and nl > 0:
        ph, pl = aux_h[0], aux_l[0]
        a, b = heap[HL, ph], heap[LU, pl]
        if not key[LU, b] > -key[HL, a]:  # UCB_j <= LCB_j: no more swapped pairs
            break
        nh = _aux_pop(aux_h, nh, heap, key, sgn, tb, HL)
        nl = _aux_pop(aux_l, nl, heap, key, sgn, tb, LU)
        for ch in (2 * ph + 1, 2 * ph + 2):
            if ch < mh:
                nh = _aux_push(aux_h, nh, heap, key, sgn, tb, HL, ch)
        for ch in (2 * pl + 1, 2 * pl + 2):
            if ch < ml:
                nl = _aux_push(aux_l, nl, heap, key, sgn, tb, LU, ch)
        if la[a] > best_rad or (la[a] == best_rad and tb[a] < tb[best]):
            best, best_rad = a, la[a]
        if ub[b] > best_rad or (ub[b] == best_rad and tb[b] < tb[best]):
            best, best_rad = b, ub[b]
    return best


@numba.njit(cache=True)
def _extremes(st, ctx, prm, rounds, aux):
    """``(h, LCB_h, l, UCB_l)`` at round ``rounds`` (re-keys the bound heaps when needed)."""
    heap, key, fs, js = st[0], st[2], st[9], st[10]
    n = ctx.counts.shape[0]
    c = _scale(prm, n, rounds)
    dlt = c - fs[F_CREF]
    if dlt == 0.0:
        h, l_ = heap[HL, 0], heap[LU, 0]
        return h, -key[HL, h], l_, key[LU, l_]
    # the coefficient decreases with the count: the largest is at the smallest count
    cmax = _coef(prm, js[J_TMIN], False, ctx.fv[engine.SIGMA])
    cmax_up = _coef(prm, js[J_TMIN], True, ctx.fv[engine.SIGMA])
    if cmax_up > cmax:
        cmax = cmax_up
    h, v_h, vis_h = _slack_best(st, ctx.means, HL, c, dlt, cmax, aux)
    l_, v_l, vis_l = _slack_best(st, ctx.means, LU, c, dlt, cmax, aux)
    if max(vis_h, vis_l) > prm[P_REBUILD]:
        _rekey(st, ctx, c)
    return h, -v_h, l_, v_l


# -------------------------------------------------------------- the algorithm
@numba.njit
def run(ctx, prm):
    """The LUCB family (the compiled algorithm; ``prm`` as a member's ``params``)."""
    iv = ctx.iv
    n = iv[engine.N]
    counts, rng = ctx.counts, ctx.rng
    rule = int(prm[P_RULE])
    stop_eps = prm[P_STOP_EPS]
    serial = iv[engine.B] == 1
    yield engine.request_each(ctx, np.arange(n), 1)
    rounds = 1
    st = _build(ctx, prm, _scale(prm, n, rounds))
    aux = np.empty(n + 2, dtype=np.int64)
    aux_l = np.empty(n + 2, dtype=np.int64)
    high = np.empty(iv[engine.K], dtype=np.int64)
    while True:
        h, lcb_h, l_, ucb_l = _extremes(st, ctx, prm, rounds, aux)
        if (lcb_h >= ucb_l) if stop_eps < 0.0 else (ucb_l - lcb_h < stop_eps):
            j = 0
            for i in range(n):
                if ctx.status[i] == engine.ACCEPTED:
                    high[j] = i
                    j += 1
            engine.finish(ctx, high)
            return
        if rule == RULE_BOTH:
            if not serial:
                yield engine.request_two(ctx, h, l_)
            else:
                # RoundRobin's order: fewest pulls first, ties at random
                tie = counts[l_] == counts[h]
                first = l_ if counts[l_] < counts[h] or (tie and engine.below(rng, 2) == 1) else h
                yield first
                yield l_ if first == h else h
            changed = _fold(st, ctx, prm, h)
            changed = _fold(st, ctx, prm, l_) or changed
        else:
            if rule == RULE_RANDOM:
                th, tl = counts[h], counts[l_]
                arm = h if rng.random() * (th + tl) < tl else l_
            else:
                arm = _clucb_pick(st, aux, aux_l)
            yield arm
            changed = _fold(st, ctx, prm, arm)
        if changed:
            _repair(st, ctx, prm)
        rounds += 1


@numba.njit(cache=True)
def episode(ctx, prm, env, counts, sums, emp, cost, max_steps):
    """The fast path: :func:`agents.engine.drive` on :func:`run`."""
    return engine.drive(run(ctx, prm), ctx, env, counts, sums, emp, cost, max_steps)


# ------------------------------------------------------------------ classes
class LUCBFamily(ScriptedAgent):
    """Base of the LUCB-style agents (see the module docstring); not registered itself.

    Subclasses set :attr:`rule` (``RULE_*``) and implement :meth:`params` (the ``prm``
    vector, layout ``P_*``). Works in fixed confidence (stops by its rule) and in fixed
    budget (anytime: the ``k`` largest empirical means, i.e. ``High`` updated with the
    last pulls).
    """

    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    episode_kernel = staticmethod(episode)
    answer_rule = engine.RULE_EMPIRICAL
    #: the sampling rule (``RULE_BOTH``, ``RULE_RANDOM`` or ``RULE_CLUCB``).
    rule: ClassVar[int] = RULE_BOTH
    #: re-key the bound heaps when one query of a time-varying radius visits more entries.
    rebuild_pops: ClassVar[int] = 12

    @property
    def high(self) -> np.ndarray:
        """``High`` as of the last round (read-only; empty before the first round ends)."""
        return np.flatnonzero(self.ctx.status == engine.ACCEPTED)

    def _prm(self, **values: float) -> np.ndarray:
        """A ``prm`` vector: the rule, ``rebuild_pops``, the plain stop rule, and ``values``."""
        prm = np.zeros(NP)
        prm[P_RULE] = self.rule
        prm[P_STOP_EPS] = STOP_PLAIN
        prm[P_REBUILD] = self.rebuild_pops
        names = {"stop_eps": P_STOP_EPS, "radius": P_RADIUS, "eps": P_EPS, "w_low": P_W_LOW,
                 "w_up": P_W_UP, "delta": P_DELTA, "k1": P_K1}
        for name, value in values.items():
            prm[names[name]] = value
        return prm


class LilFamily(LUCBFamily):
    """LUCB-style agents on the lil' radius ``U(t, w)`` of Jiang et al. (2017) Sec. 5.

    ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t log(log((1 + eps) t + 2) / w))``
    (:func:`agents.confidence.lil_bound`; ``sigma`` is the problem's sub-Gaussian scale).

    Parameters (Jiang et al. Sec. 5; paper-notes):

    * ``variant="faithful"``: ``eps`` (default 0.01) and the lil' ``delta`` are chosen so
      that the algorithm's proven error bound (:attr:`guarantee`, see
      :func:`agents.confidence.lil_faithful_delta`) equals the target ``delta`` (the
      paper's ``nu``). Jiang et al. do not state the ``eps`` they used; 0.01 is the
      value of Jamieson et al. (2014)'s experiments and nearly minimises the radius at
      the paper's sizes (``eps`` in 0.005..0.02 changes ``U^2`` by under 2% at N = 1000).
    * ``variant="heuristic"``: ``eps = 0`` and lil' ``delta = nu`` (no guarantee).

    Subclasses set :attr:`guarantee` and implement :meth:`_widths` (the ``w`` of the
    LCB and of the UCB as functions of ``n``, ``k`` and the lil' ``delta``).
    """

    #: which proven error bound the faithful variant inverts (confidence.LIL_GUARANTEES).
    guarantee = "theorem_3_1"

    def __init__(
        self,
        delta: float = 0.01,
        variant: str = "faithful",
        eps: float | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        check_probability("delta", delta)  # the target error probability nu
        if variant not in VARIANTS:
            raise ValueError(f"variant={variant!r} must be one of {list(VARIANTS)}")
        if eps is not None:
            if not isinstance(eps, (int, float)) or math.isnan(eps):
                raise ValueError(f"eps={eps!r} must be a number")
            if variant == "faithful" and not 0.0 < eps < 1.0:
                raise ValueError(f"eps={eps} must lie in (0, 1) for variant='faithful' (Lemma 2.1)")
            if variant == "heuristic" and not 0.0 <= eps < 1.0:
                raise ValueError(f"eps={eps} must lie in [0, 1) for variant='heuristic'")
        self.delta = float(delta)
        self.variant = variant
        self.eps = eps

    def lil_params(self, n_arms: int) -> tuple[float, float]:
        """``(eps, lil delta)`` this agent uses on ``n_arms`` arms."""
        if self.variant == "heuristic":
            return (0.0 if self.eps is None else float(self.eps)), self.delta
        eps = 0.01 if self.eps is None else float(self.eps)
        return eps, confidence.lil_faithful_delta(self.delta, eps, self.guarantee, n_arms)

    def _widths(self, n: int, k: int, lil_delta: float) -> tuple[float, float]:
        """``(w of the LCB radius, w of the UCB radius)``."""
        raise NotImplementedError

    def params(self) -> np.ndarray:
        """``prm``: the rule, the lil' ``eps`` and the ``w`` of each side (Lemma 2.1 checked)."""
        p = self.problem
        eps, lil_delta = self.lil_params(p.n_arms)
        w_low, w_up = self._widths(p.n_arms, p.k, lil_delta)
        if self.variant == "faithful":
            limit = math.log1p(eps) / math.e
            for w in (w_low, w_up):
                if not w < limit:
                    raise ValueError(
                        f"faithful {self.name}: w={w:.3g} must be < log(1+eps)/e={limit:.3g} "
                        f"(Lemma 2.1); lower delta or raise eps"
                    )
        return self._prm(radius=RADIUS_LIL, eps=eps, w_low=w_low, w_up=w_up)
