"""KL-LUCB's bounds kept lazily: epochs of heap keys, best-first walks, classes of arms.

KL-LUCB's rate ``beta(t)`` grows with the round, so every arm's bound changes every
round, and not along lines (the kinetic trees of :mod:`agents.lucb.kinetic` do not
apply: ``UCB_i`` is not affine in any common scale for Bernoulli KL). Exact lazy scheme
instead (epochs): the bound heaps are keyed by the bounds at a level ``beta_hi >=
beta(t)`` fixed for an epoch of rounds (``beta`` of the epoch's last round, ``t + max(1,
t >> 4)``, :func:`agents.lucb.radii.kl_level`; ``fs[F_BETA]``), so a key bounds the
arm's current bound from the optimistic side (``UCB`` grows and ``LCB`` falls with the
level; the bisections of :mod:`bandit_envs.divergences` are monotone in it too). ``h``
and ``l`` are found by a best-first walk of the heap (:func:`top`) that computes the
exact bound at ``beta(t)`` of each arm it pops and stops when the next key cannot beat
the best exact value (ties by tie key): the same ``h``, ``l`` and bounds as recomputing
every bound every round. Pulled arms get new keys at ``beta_hi`` (O(log n)); when
``beta(t)`` passes ``beta_hi`` every key is recomputed and the heaps rebuilt
(:func:`new_epoch`, O(n), about ``16 log(T)`` times in ``T`` rounds).

Cost of a walk: the arms whose key beats the best exact bound. With Gaussian rewards
that is a handful. With Bernoulli rewards many arms share a mean and a count (e.g.
every ``Low`` arm with 1 pull and reward 0), hence a key strictly above their common
exact bound: the heaps therefore hold one arm per (side, count, mean) class, the one
first by tie key, and the rest of the class waits in a pairing heap by tie key
(:func:`join_class`; found by a hash table), so a walk visits classes and an epoch
computes one key per class. A Bernoulli arm whose divergence at the best bound already
exceeds the level is skipped after one divergence, without a bisection
(:func:`_beaten`). Bernoulli bounds are replayed bisections from a Newton estimate
(:func:`bandit_envs.divergences.kl_upper`: the same values, about 2.5x faster), the
walk's started at the arm's key; heap keys (epochs, new classes) are certified outer
bounds from two Newton steps (:func:`~bandit_envs.divergences.kl_upper_outer`, about
1e-8 loose; a new class's key takes one Newton step from the arm's previous key), not
bisections. Most rounds need no bisection at all: a walk whose first class's bound is
surely above the next key stops there, and the stop rule is proved unmet by those
proofs or by one divergence per side at the means' midpoint (:func:`surely_above`,
:func:`surely_open`; the exact bounds are computed when a proof fails). Measured (n =
1000, budget 20n, one core): about 1.2M pulls/s for Bernoulli rewards (without the
classes and the proofs, about 0.08M: 93% of a walk's pops are arms of the best arm's
own class); recomputing all bounds every round would cost n bisections per round
(about 2k pulls/s).

The state ``st`` is the tuple of :mod:`agents.lucb.family` (its layout:
:mod:`agents.lucb.layout`); with classes, its arrays ``kwin`` / ``kexp`` hold the
classes (rows ``C_*``) instead of kinetic trees.
"""

from __future__ import annotations

import numba
import numpy as np

from agents import engine
from agents.lucb import heaps, radii
from agents.lucb.layout import (
    C_CHILD,
    C_CLS,
    C_CODE,
    C_PREV,
    C_ROOT,
    C_SIB,
    F_BETA,
    HL,
    J_OCC,
    J_TAB,
    LU,
    P_FAMILY,
    P_RADIUS,
    P_STOP_EPS,
    RADIUS_KL,
)
from bandit_envs import divergences

__all__ = [
    "KL_MARGIN",
    "KL_STEP",
    "has_classes",
    "join_class",
    "leave_class",
    "new_epoch",
    "surely_above",
    "surely_open",
    "top",
]


# ------------------------------------------------ (mean, count) classes
# With Bernoulli rewards many arms share a mean and a count (every Low arm with one pull
# and reward 0, ...), hence the same KL bounds, and among them the tie key decides. So
# the bound heaps HL / LU hold one arm per class (side, count, mean): the class's root,
# its member that ranks first by tie key; the other members wait in the class's pairing
# heap (by tie key; links in ``kwin[C_CHILD]`` / ``kwin[C_SIB]``). The walk then visits
# classes, not arms, and a class's key is computed once per epoch. Classes are found by
# a hash table (open addressing) in ``kwin`` / ``kexp``; stale classes are dropped by
# copying the live ones to the other table when 3/4 of the slots are used. The pulled
# ``h`` and ``l`` are roots (the walk ranks roots only), and so is the weakest High arm
# that the High/Low repair moves (smallest mean, then the tie order of HL); the strongest
# Low arm it moves ranks by the opposite tie order of LU, so it may sit inside its class's
# heap: it is cut out there.
@numba.njit(cache=True, _nrt=False)
def has_classes(prm):
    """Whether the bound heaps hold classes: KL bounds of the Bernoulli family."""
    return prm[P_RADIUS] == RADIUS_KL and int(prm[P_FAMILY]) == divergences.BERNOULLI


@numba.njit(cache=True, _nrt=False)
def _pair_link(cs, tb, s, a, b):
    """Merge the pairing heaps rooted at ``a`` and ``b`` (tie key ``s * tb``); the root."""
    if s * tb[b] > s * tb[a]:
        a, b = b, a
    c = cs[C_CHILD, a]
    cs[C_SIB, b] = c
    if c >= 0:
        cs[C_PREV, c] = b
    cs[C_CHILD, a] = b
    cs[C_PREV, b] = a
    return a


@numba.njit(cache=True, _nrt=False)
def _pair_pop(cs, tb, s, root, scratch):
    """Merge the children of ``root`` (pairs left to right, then right to left); the root."""
    c = cs[C_CHILD, root]
    cs[C_CHILD, root] = -1
    m = 0
    while c >= 0:
        d = cs[C_SIB, c]
        cs[C_SIB, c] = -1
        cs[C_PREV, c] = -1
        if d < 0:
            scratch[m] = c
            m += 1
            break
        nxt = cs[C_SIB, d]
        cs[C_SIB, d] = -1
        cs[C_PREV, d] = -1
        scratch[m] = _pair_link(cs, tb, s, c, d)
        m += 1
        c = nxt
    if m == 0:
        return -1
    r = scratch[m - 1]
    for j in range(m - 2, -1, -1):
        r = _pair_link(cs, tb, s, scratch[j], r)
    return r


@numba.njit(cache=True, _nrt=False)
def _cls_slot(cs, kexp, t, code, mu):
    """The slot of class ``(code, mu)`` in table ``t``, or the free slot where it goes."""
    mask = cs.shape[1] - 1
    h = (code * 1000003 + int(mu * 1048576.0) * 7919) & mask
    while cs[C_CODE[t], h] >= 0 and not (cs[C_CODE[t], h] == code and kexp[t, h] == mu):
        h = (h + 1) & mask
    return h


@numba.njit(cache=True, _nrt=False)
def _cls_compact(cs, kexp, js, scratch):
    """Copy the non-empty classes to the other table (their members' slots updated)."""
    old = js[J_TAB]
    new = 1 - old
    cs[C_CODE[new], :] = -1
    occ = 0
    for slot in range(cs.shape[1]):
        code = cs[C_CODE[old], slot]
        root = cs[C_ROOT[old], slot]
        if code < 0 or root < 0:
            continue
        h = _cls_slot(cs, kexp, new, code, kexp[old, slot])
        cs[C_CODE[new], h] = code
        cs[C_ROOT[new], h] = root
        kexp[new, h] = kexp[old, slot]
        occ += 1
        scratch[0] = root  # every member: the root's tree
        m = 1
        while m > 0:
            m -= 1
            x = scratch[m]
            cs[C_CLS, x] = h
            for y in (cs[C_CHILD, x], cs[C_SIB, x] if x != root else -1):
                if y >= 0:
                    scratch[m] = y
                    m += 1
    js[J_TAB] = new
    js[J_OCC] = occ


@numba.njit(cache=True, _nrt=False)
def join_class(st, ctx, prm, q, a, sigma):
    """Arm ``a`` (its mean, count and tie key current) joins its class in heap ``q``."""
    heap, pos, key, size, sgn, tb, seen, fs, js, cs, kexp, scratch = (
        st[0],
        st[1],
        st[2],
        st[3],
        st[4],
        st[5],
        st[8],
        st[9],
        st[10],
        st[11],
        st[12],
        st[13],
    )
    if 4 * js[J_OCC] >= 3 * cs.shape[1]:
        _cls_compact(cs, kexp, js, scratch)
    t = js[J_TAB]
    mu = ctx.means[a]
    code = 2 * seen[a] + (1 if q == LU else 0)
    h = _cls_slot(cs, kexp, t, code, mu)
    if cs[C_CODE[t], h] < 0:
        cs[C_CODE[t], h] = code
        cs[C_ROOT[t], h] = -1
        kexp[t, h] = mu
        js[J_OCC] += 1
    cs[C_CLS, a] = h
    cs[C_CHILD, a] = -1
    cs[C_SIB, a] = -1
    cs[C_PREV, a] = -1
    root = cs[C_ROOT[t], h]
    if root < 0:
        # (the arm's last key, of its class before the pull, as the guess)
        key[q, a] = radii.kl_key_from(prm, mu, seen[a], fs[F_BETA], sigma, q == HL, key[q, a], True)
        heaps.insert(heap, pos, key, size, sgn, tb, q, a)
        cs[C_ROOT[t], h] = a
        return
    new = _pair_link(cs, tb, sgn[q], root, a)
    if new == a:  # a ranks first: it takes the root's place in the heap
        key[q, a] = key[q, root]
        heaps.replace(heap, pos, key, size, sgn, tb, q, root, a)
        cs[C_ROOT[t], h] = a


@numba.njit(cache=True, _nrt=False)
def leave_class(st, q, a):
    """Arm ``a`` leaves its class (the root: also heap ``q``, where the next root enters)."""
    heap, pos, key, size, sgn, tb, js, cs, scratch = (
        st[0],
        st[1],
        st[2],
        st[3],
        st[4],
        st[5],
        st[10],
        st[11],
        st[13],
    )
    t = js[J_TAB]
    h = cs[C_CLS, a]
    cs[C_CLS, a] = -1
    root = cs[C_ROOT[t], h]
    if root != a:  # cut a's subtree out, put its children back under the root
        p = cs[C_PREV, a]
        nxt = cs[C_SIB, a]
        if cs[C_CHILD, p] == a:
            cs[C_CHILD, p] = nxt
        else:
            cs[C_SIB, p] = nxt
        if nxt >= 0:
            cs[C_PREV, nxt] = p
        cs[C_SIB, a] = -1
        cs[C_PREV, a] = -1
        sub = _pair_pop(cs, tb, sgn[q], a, scratch)
        if sub >= 0:
            _pair_link(cs, tb, sgn[q], root, sub)  # (the root stays first)
        return
    new = _pair_pop(cs, tb, sgn[q], a, scratch)
    cs[C_ROOT[t], h] = new
    if new < 0:
        heaps.remove(heap, pos, key, size, sgn, tb, q, a)
    else:
        key[q, new] = key[q, a]
        heaps.replace(heap, pos, key, size, sgn, tb, q, a, new)


# ---------------------------------------------------------------- epochs
@numba.njit(cache=True, _nrt=False)
def new_epoch(st, ctx, prm, level):
    """A new KL epoch: every key of the bound heaps at ``level``; the heaps rebuilt (O(n)).

    With classes (:func:`join_class`) the heaps hold one arm per class: a bisection per
    class, not per arm.
    """
    heap, pos, key, size, sgn, tb, seen, fs = st[0], st[1], st[2], st[3], st[4], st[5], st[8], st[9]
    sigma = ctx.fv[engine.SIGMA]
    fs[F_BETA] = level
    for q in (HL, LU):
        for j in range(size[q]):
            a = heap[q, j]
            mu, c = ctx.means[a], seen[a]
            key[q, a] = radii.kl_key_from(prm, mu, c, level, sigma, q == HL, np.nan, True)
        heaps.heapify(heap, pos, key, size, sgn, tb, q)


# ---------------------------------------------------------- best-first walks
@numba.njit(cache=True, _nrt=False)
def _aux_push(aux, na, heap, key, sgn, tb, q, p):
    """Push heap position ``p`` of heap ``q`` on the max-heap ``aux[:na]``; the new size."""
    j = na
    a = heap[q, p]
    while j > 0:
        par = (j - 1) >> 1
        if not heaps.above(key, sgn, tb, q, a, heap[q, aux[par]]):
            break
        aux[j] = aux[par]
        j = par
    aux[j] = p
    return na + 1


@numba.njit(cache=True, _nrt=False)
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
        if c + 1 < na and heaps.above(key, sgn, tb, q, heap[q, aux[c + 1]], heap[q, aux[c]]):
            c += 1
        if not heaps.above(key, sgn, tb, q, heap[q, aux[c]], a):
            break
        aux[j] = aux[c]
        j = c
    aux[j] = p
    return na


#: :func:`_beaten`'s margin: far above the rounding of ``d`` near its root.
KL_MARGIN = 1e-12


@numba.njit(cache=True, _nrt=False)
def _beaten(prm, mu, count, beta, bv, high):
    """Whether the arm's exact key at ``beta`` is surely below ``bv`` (Bernoulli only).

    One divergence instead of a bisection: ``UCB < bv`` when ``T d(mean, bv - m) >
    beta`` (``mean <= bv - m``; ``m`` = :data:`KL_MARGIN`): the bisection keeps ``T
    d(mean, lo) <= beta`` and ``d(mean, .)`` increases on ``[mean, 1]``, by far more than
    its rounding over ``m``; likewise ``LCB > -bv``. ``False`` (compute the bound) else.
    """
    if int(prm[P_FAMILY]) != divergences.BERNOULLI:
        return False
    level = beta / float(count)
    if high:
        x = -bv + KL_MARGIN  # the best LCB so far, plus the margin
        return x <= mu and divergences.kl_bernoulli(mu, x) > level
    x = bv - KL_MARGIN
    return x >= mu and divergences.kl_bernoulli(mu, x) > level


#: :func:`surely_above`'s step past the compared value: more than the bisection's
#: final interval (``2^-50`` of ``[0, 1]``, plus rounding).
KL_STEP = 2.0**-48


@numba.njit(cache=True, _nrt=False)
def surely_above(prm, mu, count, beta, x, high):
    """Whether the arm's exact key at ``beta`` is surely ``> x`` (Bernoulli only).

    ``UCB > x`` (``high``: ``-LCB > x``, i.e. ``LCB < -x``) without the bisection: true
    if ``x`` is below the mean (the index is at least the mean), else if ``T d(mean, z)
    <= beta`` minus twice the divergence's rounding error at ``z = x + 2^-48`` (``z = -x
    - 2^-48``): then the bisection's point above the root (where ``d > level``) lies
    beyond ``z`` (:func:`bandit_envs.divergences._replay_bisection`'s error bound), so
    its result, within ``2^-48`` of it, beyond ``x``. ``False``: not proved.
    """
    level = beta / float(count)
    margin = level * 16.0 * 2.0**-53 + 25.0 * 2.0**-53
    if high:
        y = -x  # LCB < y?
        if y > mu:
            return True
        z = y - KL_STEP
        return z > 0.0 and divergences.kl_bernoulli(mu, z) <= level - margin
    if x < mu:
        return True
    z = x + KL_STEP
    return z < 1.0 and divergences.kl_bernoulli(mu, z) <= level - margin


@numba.njit(cache=True, _nrt=False, inline="always")
def top(st, ctx, prm, q, beta, aux):
    """The top of heap ``q`` (HL or LU) by the exact KL bound at ``beta``; its key; exact?

    A best-first walk of the heap (keys at the epoch's level bound the exact values from
    above): pops arms in key order, computes each one's exact key at ``beta``, and stops
    when the next key (with its tie key) cannot rank above the best exact one. With
    classes (Bernoulli), when the first arm's exact key is surely above every other key
    (:func:`surely_above` at the next key), it is the top without its bisection:
    ``(arm, x, False)``, its key proved ``> x`` (the next key; ``-inf`` if none).
    """
    heap, key, size, sgn, tb, seen = st[0], st[2], st[3], st[4], st[5], st[8]
    sigma = ctx.fv[engine.SIGMA]
    s = sgn[q]
    m = size[q]
    na = _aux_push(aux, 0, heap, key, sgn, tb, q, 0)
    best = -1
    bv = 0.0
    while na > 0:
        p = aux[0]
        a = heap[q, p]
        if best >= 0:
            ka = key[q, a]
            if ka < bv or (ka == bv and not s * tb[a] > s * tb[best]):
                break
        na = _aux_pop(aux, na, heap, key, sgn, tb, q)
        for ch in (2 * p + 1, 2 * p + 2):
            if ch < m:
                na = _aux_push(aux, na, heap, key, sgn, tb, q, ch)
        if best < 0 and has_classes(prm):
            if na == 0:
                return a, -np.inf, False
            nxt = key[q, heap[q, aux[0]]]
            if surely_above(prm, ctx.means[a], seen[a], beta, nxt, q == HL):
                return a, nxt, False
        if best >= 0:
            if ctx.means[a] == ctx.means[best] and seen[a] == seen[best]:
                continue  # the same bound as best, popped later: a worse tie key
            if _beaten(prm, ctx.means[a], seen[a], beta, bv, q == HL):
                continue
        v = radii.kl_key_from(prm, ctx.means[a], seen[a], beta, sigma, q == HL, key[q, a], False)
        if best < 0 or v > bv or (v == bv and s * tb[a] > s * tb[best]):
            best, bv = a, v
    return best, bv, True


@numba.njit(cache=True, _nrt=False)
def surely_open(st, ctx, prm, beta, h, l_):
    """Whether the stop rule is surely unmet: ``UCB_l - LCB_h >= eps`` (plain rule:
    ``LCB_h < UCB_l``), proved by ``UCB_l > x + e/2`` and ``LCB_h < x - e/2`` at the
    means' midpoint ``x`` (``e = max(eps, 0)``; :func:`surely_above`)."""
    seen = st[8]
    e = max(prm[P_STOP_EPS], 0.0)
    x = 0.5 * (ctx.means[h] + ctx.means[l_])
    return surely_above(prm, ctx.means[l_], seen[l_], beta, x + 0.5 * e, False) and (
        surely_above(prm, ctx.means[h], seen[h], beta, -(x - 0.5 * e), True)
    )
