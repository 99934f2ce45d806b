"""The LUCB family's shared skeleton: LUCB1, lil'LUCB, LUCB++, lil'RandLUCB, lil'CLUCB, KL-LUCB.

Every member (Kalyanakrishnan et al. 2012; Jamieson & Nowak 2014; Simchowitz et al.
2017; Jiang, Li, Qiao 2017 Alg. 1 and 2; Kaufmann & Kalyanakrishnan 2013, KL-LUCB):

1. pulls every arm once;
2. splits the arms into ``High`` (the ``k`` largest empirical means) and ``Low``;
3. finds ``h = argmin_{High} LCB`` and ``l = argmax_{Low} UCB``, with
   ``LCB_i = mean_i - scale * a(T_i)`` and ``UCB_i = mean_i + scale * b(T_i)``, where the
   radius coefficients ``a`` and ``b`` depend only on the arm's own pull count ``T_i``
   and ``scale`` is 1 (lil' bounds) or grows with the round (LUCB1); KL-LUCB's bounds
   are KL (Chernoff) bounds instead, ``UCB_i = max {q : T_i d(mean_i, q) <= beta(t)}``
   and ``LCB_i = min {q : ...}`` (:func:`bandit_envs.divergences.kl_upper` /
   :func:`~bandit_envs.divergences.kl_lower`), functions of the mean, the count and the
   round;
4. stops and answers ``High`` when ``LCB_h >= UCB_l`` (LUCB1: ``UCB_l - LCB_h <
   epsilon``), else pulls the arms its sampling rule picks (``h`` and ``l``; one of
   them at random; or lil'CLUCB's arm of largest radius in ``M (+) M~``) and goes
   back to 2. KL-LUCB checks the stop rule from its second round on: its Algorithm 2
   (Kaufmann & Kalyanakrishnan 2013, p. 232) starts with ``B(1) = inf``, so the first
   round is always played (``prm[P_FIRST_ROUND]``); the others check it after the
   initial pulls already.

The members differ only in ``a``, ``b``, ``scale`` (or the KL bounds), the stop rule and
the sampling rule: one compiled generator (:func:`run`) plays them all, told which by its parameter
vector ``prm`` (layout: the ``P_*`` indices below; each member's ``params``). Its
module keeps only the agent class.

Incremental state, so that a round costs O(log n) instead of a scan of the arms (all
in preallocated arrays, compiled helpers):

* after a round only the pulled arms' means and counts change, so only their bounds do
  (the radius depends on the arm's own count);
* four indexed binary heaps (arm positions kept, so an arm is updated, inserted or
  removed in O(log n)) hold ``High`` by mean (weakest on top), ``Low`` by mean
  (strongest on top), and, for the lil' radii (scale 1), ``High`` by LCB (smallest
  on top) and ``Low`` by UCB (largest on top); ``ctx.status`` marks ``High``
  (:data:`~agents.engine.ACCEPTED`);
* after the pulled arms are updated, ``High``/``Low`` are repaired by swapping the
  weakest ``High`` arm with the strongest ``Low`` arm while they are out of order (at
  most one swap per changed arm);
* LUCB1's radius grows with the round ``t`` for every arm (``scale``): its bounds are
  lines in the scale, ``-LCB_i = -mean_i + scale a(T_i)`` and ``UCB_i = mean_i + scale
  b(T_i)``, kept in two kinetic tournament trees (winner at the current scale per node,
  and the scale at which a certificate in the subtree may fail; :func:`_kplay`):
  raising the scale replays only the nodes whose certificates failed, an update
  replays one leaf-to-root path (O(log n));
* lil'CLUCB's ``M (+) M~`` (``2m`` arms: the first ``m`` of High by LCB and of Low
  by UCB) is kept split off the bound heaps, in two heaps of its own and a heap of its
  arms by radius (:func:`_clucb_settle`): the split and ``m`` are settled by comparing
  heap tops, a few O(log n) heap operations per round whatever ``m``.
* KL-LUCB's rate ``beta(t)`` grows with the round, so every arm's bound changes every
  round, and not along lines (the kinetic trees do not apply: ``UCB_i`` is not affine
  in any common scale for Bernoulli KL). Exact lazy scheme instead (epochs): the bound
  heaps are keyed by the bounds at a level ``beta_hi >= beta(t)`` fixed for an epoch of
  rounds (``beta`` of the epoch's last round, ``t + max(1, t >> 4)``; ``fs[F_BETA]``),
  so a key bounds the arm's current bound from the optimistic side (``UCB`` grows and
  ``LCB`` falls with the level; the bisections of :mod:`bandit_envs.divergences` are
  monotone in it too). ``h`` and ``l`` are found by a best-first walk of the heap
  (:func:`_kl_best`) that computes the exact bound at ``beta(t)`` of each arm it pops
  and stops when the next key cannot beat the best exact value (ties by tie key): the
  same ``h``, ``l`` and bounds as recomputing every bound every round. Pulled arms
  get new keys at ``beta_hi`` (O(log n)); when ``beta(t)`` passes ``beta_hi`` every
  key is recomputed and the heaps rebuilt (O(n), about ``16 log(T)`` times in ``T``
  rounds). Cost of a walk: the arms whose key beats the best exact bound. With
  Gaussian rewards that is a handful. With Bernoulli rewards many arms share a mean and a
  count (e.g. every ``Low`` arm with 1 pull and reward 0), hence a key strictly above
  their common exact bound: the heaps therefore hold one arm per (side, count, mean)
  class, the one first by tie key, and the rest of the class waits in a pairing heap by
  tie key (:func:`_cls_join`; found by a hash table), so a walk visits classes and an
  epoch computes one key per class. A Bernoulli arm whose divergence at the best bound
  already exceeds the level is skipped after one divergence, without a bisection
  (:func:`_kl_beaten`). Bernoulli bounds are replayed bisections from a Newton estimate
  (:func:`bandit_envs.divergences.kl_upper`: the same values, about 2.5x faster), the
  walk's started at the arm's key; heap keys (epochs, new classes) are certified outer
  bounds from two Newton steps (:func:`~bandit_envs.divergences.kl_upper_outer`, about
  1e-8 loose; a new class's key takes one Newton step from the arm's previous key), not
  bisections. Most rounds need no bisection at all: a walk whose first class's bound is
  surely above the next key stops there, and the stop rule is proved unmet by those
  proofs or by one divergence per side at the means' midpoint (:func:`_kl_surely_above`,
  :func:`_kl_open`; the exact bounds are computed when a proof fails). Measured (n =
  1000, budget 20n, one core): about 1.2M pulls/s for Bernoulli rewards (without the
  classes and the proofs, about 0.08M: 93% of a walk's pops are arms of the best arm's
  own class); recomputing all bounds every round would cost n bisections per round
  (about 2k pulls/s).

Requests: the first round is one request of every arm once; a round of one arm is
``yield arm``; a round of two arms is :func:`~agents.engine.request_two` (one batch
when the batch model allows it), and with ``batch_size=1`` two one-pull steps, fewest
pulls first and ties at random: the schedule RoundRobin makes, without its cost.

Two drivers play these rounds, both through :func:`_round` (the one implementation of
a round: fold, repair, decide, pick the arms): the generator :func:`run` (the
Gymnasium path's agent, and :func:`agents.engine.drive`'s), which keeps its state in a
:class:`~agents.engine.frame.Frame`, and the fast path's :func:`episode`, a plain loop that
makes the same requests and serves them as ``drive`` would
(:func:`agents.engine.serve_request`, :func:`~agents.engine.serve_arm`), with the state
in local variables and the rounds in a function compiled without reference counting
(:func:`_rounds`). Loading a frame's fields, or running a round in a function with
reference counting, costs a reference count per array of the state (about 25) every
round: the plain loop plays KL-LUCB about 10% faster and LUCB1 about 20% faster, with
the same episodes (``tests/test_fast_path.py``). The round's big steps (:func:`_fold`,
:func:`_repair`, :func:`_decide`, :func:`_extremes`, :func:`_kl_best`) are inlined into
it (``inline="always"``): a compiled call passes the state tuple, ``ctx`` and ``prm``
as about 190 machine words of arguments, and these five calls per round cost KL-LUCB
15-25% of its speed.

Ties (equal means, equal bounds, equal radii) are broken uniformly at random (the
papers do not say; an index rule would favour low-index arms), by a random key per arm (``tb``, i.i.d. uniform, redrawn whenever
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

from agents import engine
from agents.base import (
    FIXED_BUDGET,
    FIXED_CONFIDENCE,
    ScriptedAgent,
    check_probability,
)
from agents.engine import confidence, frame
from bandit_envs import divergences

__all__ = ["VARIANTS", "LUCBFamily", "LilFamily", "episode", "run"]

VARIANTS = ("faithful", "heuristic")

#: ``prm`` layout: sampling rule, stop tolerance, radius family, the lil' parameters
#: ``eps``, ``w`` of the LCB and of the UCB, LUCB1's (and KL-LUCB's) ``delta`` and
#: ``k1``, KL-LUCB's divergence family (``bandit_envs.divergences`` code), ``alpha`` and
#: rate kind (``agents.engine.confidence.KL_RATE_*``), and whether the stop rule waits for the
#: first round (1: Kaufmann & Kalyanakrishnan 2013 Algorithm 2's ``B(1) = inf``; 0: the
#: rule is checked from the initial pulls on).
P_RULE, P_STOP_EPS, P_RADIUS, P_EPS, P_W_LOW, P_W_UP, P_DELTA, P_K1 = range(8)
P_FAMILY, P_ALPHA, P_RATE, P_FIRST_ROUND = 8, 9, 10, 11
NP = 12
#: sampling rules: pull ``h`` and ``l``; ``h`` with probability ``T_l / (T_h + T_l)``
#: else ``l`` (lil'RandLUCB); the arm of largest radius in ``M (+) M~`` (lil'CLUCB).
RULE_BOTH, RULE_RANDOM, RULE_CLUCB = 0, 1, 2
#: radius families: lil' ``U(T, w)`` (scale 1); LUCB1's ``beta(T, t)`` (scale grows with
#: t); KL bounds at KL-LUCB's rate ``beta(t)``.
RADIUS_LIL, RADIUS_LUCB1, RADIUS_KL = 0, 1, 2
#: KL-LUCB's epochs: the keys' level is ``beta`` of round ``t + max(1, t >> KL_EPOCH_SHIFT)``.
KL_EPOCH_SHIFT = 4
#: ``prm[P_STOP_EPS] < 0``: stop when ``LCB_h >= UCB_l``; else when ``UCB_l - LCB_h < eps``.
STOP_PLAIN = -1.0

#: the heaps: High by mean (weakest on top), Low by mean (strongest), High by LCB
#: (smallest), Low by UCB (largest). Each is a max-heap of (key, sign * tb).
HM, LM, HL, LU = 0, 1, 2, 3
#: lil'CLUCB's extra heaps (:func:`_clucb_settle`): the High arms of ``M (+) M~`` by LCB
#: (largest on top), its Low arms by UCB (smallest on top), and all its arms by radius
#: (largest on top, ties to the smaller tie key); HL and LU then hold only the arms
#: outside ``M (+) M~``.
IH, IL, PK = 4, 5, 6
#: registers of the state: ``fs[F_C]`` the kinetic trees' scale, ``fs[F_BETA]`` the level
#: of KL-LUCB's heap keys, ``js[J_HALF]`` the trees' leaf offset, ``js[J_M]`` lil'CLUCB's
#: ``m`` (``M (+) M~`` has ``2m`` arms).
F_C, F_BETA = 0, 1
J_HALF, J_M = 0, 1
#: KL-LUCB's classes (:func:`_cls_join`): ``js[J_OCC]`` the used slots of the current
#: table, ``js[J_TAB]`` which of the two tables is current.
J_OCC, J_TAB = 2, 3
#: rows of ``kwin`` when it holds KL-LUCB's classes: per arm its class's slot and its
#: pairing-heap links (first child, next sibling, and the node pointing at it); per slot
#: of table 0 / 1 the class code ``2 count + side`` (-1: free) and the class's root arm
#: (-1: empty). ``kexp[t, slot]``: the class's mean.
C_CLS, C_CHILD, C_SIB, C_PREV = 0, 1, 2, 7
C_CODE = (3, 5)
C_ROOT = (4, 6)


# ------------------------------------------------------------- indexed heaps
@numba.njit(cache=True, _nrt=False)
def _above(key, sgn, tb, q, a, b):
    """Whether arm ``a`` ranks above arm ``b`` in heap ``q``: larger key, then larger ``sgn tb``."""
    ka = key[q, a]
    kb = key[q, b]
    return ka > kb or (ka == kb and sgn[q] * tb[a] > sgn[q] * tb[b])


@numba.njit(cache=True, _nrt=False)
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


@numba.njit(cache=True, _nrt=False)
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


@numba.njit(cache=True, _nrt=False)
def _insert(heap, pos, key, size, sgn, tb, q, a):
    j = size[q]
    heap[q, j] = a
    pos[q, a] = j
    size[q] = j + 1
    _sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
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


@numba.njit(cache=True, _nrt=False)
def _heapify(heap, pos, key, size, sgn, tb, q):
    for j in range(size[q] // 2 - 1, -1, -1):
        _down(heap, pos, key, size, sgn, tb, q, j)


# ------------------------------------------------------------------ radii
@numba.njit(cache=True, _nrt=False)
def _coef(prm, t, low_side, sigma):
    """The radius coefficient ``a(t)`` (``low_side=False``) or ``b(t)`` of ``t`` pulls."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return confidence.lucb_coef(float(t), sigma)
    if prm[P_RADIUS] == RADIUS_KL:
        return 0.0  # (no radius: KL bounds are not mean +- radius)
    w = prm[P_W_UP] if low_side else prm[P_W_LOW]
    return confidence.lil_width(float(t), w, prm[P_EPS], sigma)


@numba.njit(cache=True, _nrt=False)
def _coef_memo(prm, t, low_side, sigma, memo):
    """:func:`_coef`, remembered per count for the lil' radius (the same value).

    ``memo`` (the kinetic trees' ``kexp``, unused by the lil' radius): row 1 the UCB
    side, row 0 the LCB side, ``inf`` until computed, counts below its length.
    """
    if prm[P_RADIUS] != RADIUS_LIL or t >= memo.shape[1]:
        return _coef(prm, t, low_side, sigma)
    row = 1 if low_side else 0
    v = memo[row, t]
    if v == np.inf:
        v = _coef(prm, t, low_side, sigma)
        memo[row, t] = v
    return v


@numba.njit(cache=True, _nrt=False)
def _scale(prm, n, rounds):
    """The radius multiplier at round ``rounds`` (LUCB1: ``sqrt(log(k1 n t^4 / delta))``)."""
    if prm[P_RADIUS] == RADIUS_LUCB1:
        return math.sqrt(confidence.lucb_rate(float(rounds), n, prm[P_DELTA], prm[P_K1]))
    return 1.0


@numba.njit(cache=True, _nrt=False)
def _kl_beta(prm, n, rounds):
    """KL-LUCB's exploration rate ``beta(t, delta)`` at round ``rounds``."""
    return confidence.kl_rate(
        float(rounds), n, prm[P_DELTA], prm[P_K1], prm[P_ALPHA], int(prm[P_RATE])
    )


@numba.njit(cache=True, _nrt=False)
def _kl_key(prm, mu, count, beta, sigma, high):
    """KL bound at level ``beta / count``: ``-LCB`` (``high``, the HL key) or ``UCB``."""
    fam = int(prm[P_FAMILY])
    level = beta / float(count)
    if high:
        return -divergences.kl_lower(fam, mu, level, sigma)
    return divergences.kl_upper(fam, mu, level, sigma)


@numba.njit(cache=True, _nrt=False)
def _kl_key_from(prm, mu, count, beta, sigma, high, guess, outer):
    """:func:`_kl_key` from a ``guess`` of it (a nearby key, or nan), for Bernoulli rewards.

    ``outer=False``: the same value; ``outer=True``: a heap key, a bound at least as
    optimistic, about ``1e-8`` beyond and cheaper (no bisection; see
    :func:`bandit_envs.divergences.kl_upper_outer`).
    """
    if int(prm[P_FAMILY]) != divergences.BERNOULLI:
        return _kl_key(prm, mu, count, beta, sigma, high)
    level = beta / float(count)
    if high:
        if outer:
            return -divergences.kl_lower_outer(mu, level, -guess)
        return -divergences.kl_lower_from(mu, level, -guess)
    if outer:
        return divergences.kl_upper_outer(mu, level, guess)
    return divergences.kl_upper_from(mu, level, guess)


@numba.njit(cache=True, _nrt=False)
def _kl_level(prm, n, rounds):
    """The keys' level for the epoch starting at round ``rounds`` (``>= beta(rounds)``)."""
    last = rounds + max(1, rounds >> KL_EPOCH_SHIFT)
    return max(_kl_beta(prm, n, last), _kl_beta(prm, n, rounds))


# -------------------------------------------------- kinetic tournament (LUCB1)
# The bounds of a time-varying radius are lines in the scale ``c``: ``-LCB_i = -mean_i +
# c a_i`` and ``UCB_i = mean_i + c b_i``. A tournament tree over the arms (leaf ``P + i``)
# keeps at each node the winner at the current scale (largest value, ties to the smaller
# tie key: values are computed by the formula of the literal rule, so the winner is
# exact) and the smallest scale at which a certificate in its subtree may fail (the
# loser's line overtaking the winner's; computed with a margin for rounding, so that it
# errs early). Raising ``c`` re-plays only the nodes whose certificates failed.
@numba.njit(cache=True, _nrt=False)
def _kval(means, la, ub, t, i, c):
    """The value of arm ``i`` in tree ``t`` at scale ``c``: ``-LCB`` (High) or ``UCB`` (Low)."""
    if t == 0:
        return -(means[i] - c * la[i])
    return means[i] + c * ub[i]


@numba.njit(cache=True, _nrt=False)
def _kplay(kwin, kexp, means, la, ub, tb, t, node, c):
    """Recompute ``node`` of tree ``t`` from its children at scale ``c``."""
    a = kwin[t, 2 * node]
    b = kwin[t, 2 * node + 1]
    e = min(kexp[t, 2 * node], kexp[t, 2 * node + 1])
    if a < 0 or b < 0:
        kwin[t, node] = a if b < 0 else b
        kexp[t, node] = e
        return
    va = _kval(means, la, ub, t, a, c)
    vb = _kval(means, la, ub, t, b, c)
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
def _kset(kwin, kexp, means, la, ub, tb, t, i, member, c, half):
    """Arm ``i`` enters (``member``), leaves or changes in tree ``t``; replay its path."""
    node = half + i
    kwin[t, node] = i if member else -1
    node >>= 1
    while node >= 1:
        _kplay(kwin, kexp, means, la, ub, tb, t, node, c)
        node >>= 1


@numba.njit(cache=True, _nrt=False)
def _kadvance(kwin, kexp, means, la, ub, tb, t, c, stack, order):
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
        _kplay(kwin, kexp, means, la, ub, tb, t, order[j], c)


# ------------------------------------------------------------------ state
@numba.njit(cache=True, _nrt=False)
def _set_side(st, ctx, prm, i, high, sigma):
    """Put arm ``i`` into ``High`` (``high``) or ``Low`` with its keys."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js, kwin, kexp = st[:13]
    mu = ctx.means[i]
    kinetic = prm[P_RADIUS] == RADIUS_LUCB1
    c = fs[F_C]
    half = js[J_HALF]
    if high:
        ctx.status[i] = engine.ACCEPTED
        la[i] = _coef_memo(prm, seen[i], False, sigma, kexp)
        key[HM, i] = -mu
        _insert(heap, pos, key, size, sgn, tb, HM, i)
        if kinetic:
            _kset(kwin, kexp, ctx.means, la, ub, tb, 0, i, True, c, half)
        elif _classes(prm):
            _cls_join(st, ctx, prm, HL, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[HL, i] = _kl_key(prm, mu, seen[i], fs[F_BETA], sigma, True)
            else:
                key[HL, i] = -(mu - la[i])
            _insert(heap, pos, key, size, sgn, tb, HL, i)
    else:
        ctx.status[i] = engine.UNDECIDED
        ub[i] = _coef_memo(prm, seen[i], True, sigma, kexp)
        key[LM, i] = mu
        _insert(heap, pos, key, size, sgn, tb, LM, i)
        if kinetic:
            _kset(kwin, kexp, ctx.means, la, ub, tb, 1, i, True, c, half)
        elif _classes(prm):
            _cls_join(st, ctx, prm, LU, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[LU, i] = _kl_key(prm, mu, seen[i], fs[F_BETA], sigma, False)
            else:
                key[LU, i] = mu + ub[i]
            _insert(heap, pos, key, size, sgn, tb, LU, i)


@numba.njit(cache=True)
def _build(ctx, prm, c):
    """The state after the first round: keys, High = top ``k`` by (mean, key), the heaps.

    Returns ``(heap, pos, key, size, sgn, tb, la, ub, seen, fs, js, kwin, kexp, stack,
    order)``: the four heaps (``heap[q]``, ``pos[q, arm]``, ``key[q, arm]``,
    ``size[q]``, tie sign ``sgn[q]``), the tie keys, the coefficients ``a``/``b`` of
    each arm's side, the counts folded in, the registers (the scale; the trees' leaf
    offset), and the two kinetic trees of a time-varying radius (winners, failure
    scales, scratch).
    """
    n = ctx.counts.shape[0]
    k = ctx.answer.shape[0]
    sigma = ctx.fv[engine.SIGMA]
    rows = 7 if prm[P_RULE] == RULE_CLUCB else 4
    heap = np.zeros((rows, n), dtype=np.int64)
    pos = np.full((rows, n), -1, dtype=np.int64)
    key = np.zeros((rows, n))
    size = np.zeros(rows, dtype=np.int64)
    sgn = np.array([-1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0])
    tb = np.empty(n)
    for i in range(n):
        tb[i] = ctx.rng.random()
    la = np.zeros(n)
    ub = np.zeros(n)
    seen = ctx.counts.copy()
    fs = np.zeros(2)
    fs[F_C] = c
    if prm[P_RADIUS] == RADIUS_KL:
        fs[F_BETA] = _kl_level(prm, n, 1)
    js = np.zeros(4, dtype=np.int64)
    half = 1
    while half < n:
        half *= 2
    js[J_HALF] = half
    kwin = np.full((8 if _classes(prm) else 2, 2 * half), -1, dtype=np.int64)
    if _classes(prm):
        key[HL, :] = np.nan  # (no earlier key to start a new class's key from)
        key[LU, :] = np.nan
    kexp = np.full((2, 2 * half), np.inf)
    stack = np.empty(2 * half, dtype=np.int64)
    order = np.empty(2 * half, dtype=np.int64)
    by_tb = np.argsort(tb)
    vals = np.empty(n)
    for j in range(n):
        vals[j] = ctx.means[by_tb[j]]
    rank = by_tb[np.argsort(vals, kind="mergesort")]  # ascending (mean, key)
    st = (heap, pos, key, size, sgn, tb, la, ub, seen, fs, js, kwin, kexp, stack, order)
    for j in range(n):
        _set_side(st, ctx, prm, rank[j], j >= n - k, sigma)
    return st


@numba.njit(cache=True, _nrt=False, inline="always")
def _fold(st, ctx, prm, i):
    """Fold arm ``i``'s new count and mean into the state (new tie key); False if unchanged."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js, kwin, kexp = st[:13]
    c = ctx.counts[i]
    if c == seen[i]:
        return False
    seen[i] = c
    sigma = ctx.fv[engine.SIGMA]
    mu = ctx.means[i]
    tb[i] = ctx.rng.random()
    kinetic = prm[P_RADIUS] == RADIUS_LUCB1
    if ctx.status[i] == engine.ACCEPTED:
        la[i] = _coef_memo(prm, c, False, sigma, kexp)
        key[HM, i] = -mu
        _sift(heap, pos, key, size, sgn, tb, HM, pos[HM, i])
        if kinetic:
            _kset(kwin, kexp, ctx.means, la, ub, tb, 0, i, True, fs[F_C], js[J_HALF])
        elif _classes(prm):
            _cls_leave(st, HL, i)
            _cls_join(st, ctx, prm, HL, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[HL, i] = _kl_key(prm, mu, c, fs[F_BETA], sigma, True)
            else:
                key[HL, i] = -(mu - la[i])
            if pos[HL, i] >= 0:
                _sift(heap, pos, key, size, sgn, tb, HL, pos[HL, i])
            else:  # (lil'CLUCB: in M (+) M~)
                _clucb_rekey(heap, pos, key, size, sgn, tb, HL, IH, la, i)
    else:
        ub[i] = _coef_memo(prm, c, True, sigma, kexp)
        key[LM, i] = mu
        _sift(heap, pos, key, size, sgn, tb, LM, pos[LM, i])
        if kinetic:
            _kset(kwin, kexp, ctx.means, la, ub, tb, 1, i, True, fs[F_C], js[J_HALF])
        elif _classes(prm):
            _cls_leave(st, LU, i)
            _cls_join(st, ctx, prm, LU, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[LU, i] = _kl_key(prm, mu, c, fs[F_BETA], sigma, False)
            else:
                key[LU, i] = mu + ub[i]
            if pos[LU, i] >= 0:
                _sift(heap, pos, key, size, sgn, tb, LU, pos[LU, i])
            else:  # (lil'CLUCB: in M (+) M~)
                _clucb_rekey(heap, pos, key, size, sgn, tb, LU, IL, ub, i)
    return True


@numba.njit(cache=True, _nrt=False, inline="always")
def _repair(st, ctx, prm):
    """Swap the weakest High arm and the strongest Low arm while out of (mean, key) order."""
    heap, pos, key, size, sgn, tb = st[0], st[1], st[2], st[3], st[4], st[5]
    fs, js, kwin, kexp, la, ub = st[9], st[10], st[11], st[12], st[6], st[7]
    sigma = ctx.fv[engine.SIGMA]
    means = ctx.means
    kinetic = prm[P_RADIUS] == RADIUS_LUCB1
    while True:
        w = heap[HM, 0]
        s = heap[LM, 0]
        if means[w] > means[s] or (means[w] == means[s] and tb[w] >= tb[s]):
            return
        _remove(heap, pos, key, size, sgn, tb, HM, w)
        _remove(heap, pos, key, size, sgn, tb, LM, s)
        if kinetic:
            _kset(kwin, kexp, means, la, ub, tb, 0, w, False, fs[F_C], js[J_HALF])
            _kset(kwin, kexp, means, la, ub, tb, 1, s, False, fs[F_C], js[J_HALF])
        elif _classes(prm):
            _cls_leave(st, HL, w)
            _cls_leave(st, LU, s)
        else:
            _leave(heap, pos, key, size, sgn, tb, HL, IH, w)
            _leave(heap, pos, key, size, sgn, tb, LU, IL, s)
        _set_side(st, ctx, prm, w, False, sigma)
        _set_side(st, ctx, prm, s, True, sigma)


# ------------------------------------------------ KL-LUCB's (mean, count) classes
# With Bernoulli rewards many arms share a mean and a count (every Low arm with one pull
# and reward 0, ...), hence the same KL bounds, and among them the tie key decides. So
# the bound heaps HL / LU hold one arm per class (side, count, mean): the class's root,
# its member that ranks first by tie key; the other members wait in the class's pairing
# heap (by tie key; links in ``kwin[C_CHILD]`` / ``kwin[C_SIB]``). The walk then visits
# classes, not arms, and a class's key is computed once per epoch. Classes are found by
# a hash table (open addressing) in ``kwin`` / ``kexp``; stale classes are dropped by
# copying the live ones to the other table when 3/4 of the slots are used. The pulled
# ``h`` and ``l`` are roots (the walk ranks roots only), and so is ``_repair``'s weakest
# High arm (smallest mean, then the tie order of HL); its strongest Low arm ranks by the
# opposite tie order of LU, so it may sit inside its class's heap: it is cut out there.
@numba.njit(cache=True, _nrt=False)
def _classes(prm):
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
def _cls_join(st, ctx, prm, q, a, sigma):
    """Arm ``a`` (its mean, count and tie key current) joins its class in heap ``q``."""
    heap, pos, key, size, sgn, tb, seen, fs, js, cs, kexp, scratch = (
        st[0], st[1], st[2], st[3], st[4], st[5], st[8], st[9], st[10], st[11], st[12], st[13]
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
        key[q, a] = _kl_key_from(prm, mu, seen[a], fs[F_BETA], sigma, q == HL, key[q, a], True)
        _insert(heap, pos, key, size, sgn, tb, q, a)
        cs[C_ROOT[t], h] = a
        return
    new = _pair_link(cs, tb, sgn[q], root, a)
    if new == a:  # a ranks first: it takes the root's place in the heap
        key[q, a] = key[q, root]
        _put(heap, pos, key, size, sgn, tb, q, root, a)
        cs[C_ROOT[t], h] = a


@numba.njit(cache=True, _nrt=False)
def _cls_leave(st, q, a):
    """Arm ``a`` leaves its class (the root: also heap ``q``, where the next root enters)."""
    heap, pos, key, size, sgn, tb, js, cs, scratch = (
        st[0], st[1], st[2], st[3], st[4], st[5], st[10], st[11], st[13]
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
        _remove(heap, pos, key, size, sgn, tb, q, a)
    else:
        key[q, new] = key[q, a]
        _put(heap, pos, key, size, sgn, tb, q, a, new)


# ---------------------------------------------------------- best-first walks
@numba.njit(cache=True, _nrt=False)
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
        if c + 1 < na and _above(key, sgn, tb, q, heap[q, aux[c + 1]], heap[q, aux[c]]):
            c += 1
        if not _above(key, sgn, tb, q, heap[q, aux[c]], a):
            break
        aux[j] = aux[c]
        j = c
    aux[j] = p
    return na


# ------------------------------------------------------- lil'CLUCB's M (+) M~
# With a_1 <= a_2 <= ... the LCBs in High and b_1 >= b_2 >= ... the UCBs in Low (the
# orders of heaps HL and LU: bound, then tie key), M~ swaps in exactly the pairs j with
# b_j > a_j, a prefix j <= m (b decreases, a increases), so M (+) M~ is the first m arms
# of each order. It is kept split off: the first m High arms by LCB in heap IH (largest
# LCB, a_m, on top) and the others in HL (smallest, a_(m+1), on top); likewise IL / LU
# for Low; heap PK holds the 2m arms by radius. After a pull changes one arm's bounds
# (and the High/Low repair moves arms across), :func:`_clucb_settle` restores the split
# (swapping the tops while they are out of order) and moves m by comparing the tops:
# a few O(log n) heap operations per round instead of a walk of the 2m arms.
@numba.njit(cache=True, _nrt=False)
def _leave(heap, pos, key, size, sgn, tb, q, qi, a):
    """Remove arm ``a`` from its side's bound heap ``q`` (or ``qi`` and ``PK``: lil'CLUCB)."""
    if pos[q, a] >= 0:
        _remove(heap, pos, key, size, sgn, tb, q, a)
    else:
        _remove(heap, pos, key, size, sgn, tb, qi, a)
        _remove(heap, pos, key, size, sgn, tb, PK, a)


@numba.njit(cache=True, _nrt=False)
def _put(heap, pos, key, size, sgn, tb, q, old, new):
    """Arm ``new`` (keyed) takes the place of arm ``old`` in heap ``q``."""
    j = pos[q, old]
    pos[q, old] = -1
    heap[q, j] = new
    pos[q, new] = j
    _sift(heap, pos, key, size, sgn, tb, q, j)


@numba.njit(cache=True, _nrt=False)
def _clucb_trade(heap, pos, key, size, sgn, tb, rad, q, qi, x, y):
    """``x`` (first outside, top of ``q``) and ``y`` (inside) trade places.

    ``y`` takes ``x``'s slot in ``q``; ``x`` takes ``y``'s slots in ``qi`` and ``PK``.
    """
    _put(heap, pos, key, size, sgn, tb, q, x, y)
    key[qi, x] = -key[q, x]
    _put(heap, pos, key, size, sgn, tb, qi, y, x)
    key[PK, x] = rad[x]
    _put(heap, pos, key, size, sgn, tb, PK, y, x)

@numba.njit(cache=True, _nrt=False)
def _clucb_rekey(heap, pos, key, size, sgn, tb, q, qi, rad, i):
    """Arm ``i`` of ``M (+) M~`` got new bounds (``key[q, i]``), radius and tie key.

    If it now ranks after the first arm ``x`` outside (the top of ``q``), the two trade
    places (``x`` ranks after every other arm inside, ``i`` after ``x``: the split holds);
    else ``i`` is re-sifted in ``qi`` and ``PK``.
    """
    if size[q] > 0 and _above(key, sgn, tb, q, heap[q, 0], i):
        _clucb_trade(heap, pos, key, size, sgn, tb, rad, q, qi, heap[q, 0], i)
    else:
        key[qi, i] = -key[q, i]
        _sift(heap, pos, key, size, sgn, tb, qi, pos[qi, i])
        key[PK, i] = rad[i]
        _sift(heap, pos, key, size, sgn, tb, PK, pos[PK, i])


@numba.njit(cache=True, _nrt=False)
def _clucb_in(heap, pos, key, size, sgn, tb, q, qi, rad, a):
    """Move arm ``a`` from heap ``q`` (outside ``M (+) M~``) into ``qi`` and ``PK``."""
    _remove(heap, pos, key, size, sgn, tb, q, a)
    key[qi, a] = -key[q, a]
    _insert(heap, pos, key, size, sgn, tb, qi, a)
    key[PK, a] = rad[a]
    _insert(heap, pos, key, size, sgn, tb, PK, a)


@numba.njit(cache=True, _nrt=False)
def _clucb_out(heap, pos, key, size, sgn, tb, q, qi, a):
    """Move arm ``a`` of ``M (+) M~`` (heaps ``qi`` and ``PK``) out, into heap ``q``."""
    _remove(heap, pos, key, size, sgn, tb, qi, a)
    _remove(heap, pos, key, size, sgn, tb, PK, a)
    _insert(heap, pos, key, size, sgn, tb, q, a)


@numba.njit(cache=True, _nrt=False)
def _clucb_settle(st):
    """lil'CLUCB: settle ``M (+) M~`` after the round's changes; its ``m`` (0: ``M = M~``).

    Its arm to pull (the largest radius, ties to the smaller tie key) is then
    ``heap[PK, 0]``. ``m = 0`` exactly when ``LCB_h >= UCB_l`` (the plain stop rule).
    """
    heap, pos, key, size, sgn, tb, la, ub, js = (
        st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[10]
    )
    m = js[J_M]
    for side in range(2):
        q = HL if side == 0 else LU
        qi = IH if side == 0 else IL
        rad = la if side == 0 else ub
        # the first m arms of the side's order in qi, the others in q
        while size[q] > 0 and size[qi] > 0 and _above(key, sgn, tb, q, heap[q, 0], heap[qi, 0]):
            # swap the tops: y (last inside) takes x's place in q, x (first outside)
            # takes y's place in qi and in PK
            _clucb_trade(heap, pos, key, size, sgn, tb, rad, q, qi, heap[q, 0], heap[qi, 0])
        while size[qi] > m:
            _clucb_out(heap, pos, key, size, sgn, tb, q, qi, heap[qi, 0])
        while size[qi] < m:
            _clucb_in(heap, pos, key, size, sgn, tb, q, qi, rad, heap[q, 0])
    cap = min(size[HL] + size[IH], size[LU] + size[IL])
    # pair m + 1 swapped (b_(m+1) > a_(m+1)): grow; pair m not swapped: shrink
    while m < cap and key[LU, heap[LU, 0]] > -key[HL, heap[HL, 0]]:
        _clucb_in(heap, pos, key, size, sgn, tb, HL, IH, la, heap[HL, 0])
        _clucb_in(heap, pos, key, size, sgn, tb, LU, IL, ub, heap[LU, 0])
        m += 1
    while m > 0 and not key[LU, heap[IL, 0]] > -key[HL, heap[IH, 0]]:
        _clucb_out(heap, pos, key, size, sgn, tb, HL, IH, heap[IH, 0])
        _clucb_out(heap, pos, key, size, sgn, tb, LU, IL, heap[IL, 0])
        m -= 1
    js[J_M] = m
    return m


@numba.njit(cache=True, _nrt=False)
def _kl_epoch(st, ctx, prm, level):
    """A new KL epoch: every key of the bound heaps at ``level``; the heaps rebuilt (O(n)).

    With classes (:func:`_cls_join`) the heaps hold one arm per class: a bisection per
    class, not per arm.
    """
    heap, pos, key, size, sgn, tb, seen, fs = st[0], st[1], st[2], st[3], st[4], st[5], st[8], st[9]
    sigma = ctx.fv[engine.SIGMA]
    fs[F_BETA] = level
    for q in (HL, LU):
        for j in range(size[q]):
            a = heap[q, j]
            mu, c = ctx.means[a], seen[a]
            key[q, a] = _kl_key_from(prm, mu, c, level, sigma, q == HL, np.nan, True)
        _heapify(heap, pos, key, size, sgn, tb, q)


#: :func:`_kl_beaten`'s margin: far above the rounding of ``d`` near its root.
KL_MARGIN = 1e-12


@numba.njit(cache=True, _nrt=False)
def _kl_beaten(prm, mu, count, beta, bv, high):
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


#: :func:`_kl_surely_above`'s step past the compared value: more than the bisection's
#: final interval (``2^-50`` of ``[0, 1]``, plus rounding).
KL_STEP = 2.0**-48


@numba.njit(cache=True, _nrt=False)
def _kl_surely_above(prm, mu, count, beta, x, high):
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
def _kl_best(st, ctx, prm, q, beta, aux):
    """The top of heap ``q`` (HL or LU) by the exact KL bound at ``beta``; its key; exact?

    A best-first walk of the heap (keys at the epoch's level bound the exact values from
    above): pops arms in key order, computes each one's exact key at ``beta``, and stops
    when the next key (with its tie key) cannot rank above the best exact one. With
    classes (Bernoulli), when the first arm's exact key is surely above every other key
    (:func:`_kl_surely_above` at the next key), it is the top without its bisection:
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
        if best < 0 and _classes(prm):
            if na == 0:
                return a, -np.inf, False
            nxt = key[q, heap[q, aux[0]]]
            if _kl_surely_above(prm, ctx.means[a], seen[a], beta, nxt, q == HL):
                return a, nxt, False
        if best >= 0:
            if ctx.means[a] == ctx.means[best] and seen[a] == seen[best]:
                continue  # the same bound as best, popped later: a worse tie key
            if _kl_beaten(prm, ctx.means[a], seen[a], beta, bv, q == HL):
                continue
        v = _kl_key_from(prm, ctx.means[a], seen[a], beta, sigma, q == HL, key[q, a], False)
        if best < 0 or v > bv or (v == bv and s * tb[a] > s * tb[best]):
            best, bv = a, v
    return best, bv, True


@numba.njit(cache=True, _nrt=False)
def _kl_open(st, ctx, prm, beta, h, l_):
    """Whether the stop rule is surely unmet: ``UCB_l - LCB_h >= eps`` (plain rule:
    ``LCB_h < UCB_l``), proved by ``UCB_l > x + e/2`` and ``LCB_h < x - e/2`` at the
    means' midpoint ``x`` (``e = max(eps, 0)``; :func:`_kl_surely_above`)."""
    seen = st[8]
    e = max(prm[P_STOP_EPS], 0.0)
    x = 0.5 * (ctx.means[h] + ctx.means[l_])
    return _kl_surely_above(prm, ctx.means[l_], seen[l_], beta, x + 0.5 * e, False) and (
        _kl_surely_above(prm, ctx.means[h], seen[h], beta, -(x - 0.5 * e), True)
    )


@numba.njit(cache=True, _nrt=False, inline="always")
def _extremes(st, ctx, prm, rounds):
    """``(h, LCB_h, l, UCB_l)`` at round ``rounds`` (raises the kinetic trees' scale).

    KL-LUCB on Bernoulli rewards returns ``(h, -inf, l, inf)`` when it proved the stop
    rule unmet without the two bounds (by the walks' proofs, else :func:`_kl_open`);
    the bounds serve only the stop rule.
    """
    heap, key, la, ub, fs, kwin, kexp, stack, order = (
        st[0],
        st[2],
        st[6],
        st[7],
        st[9],
        st[11],
        st[12],
        st[13],
        st[14],
    )
    if prm[P_RADIUS] == RADIUS_KL:
        n = ctx.counts.shape[0]
        beta = _kl_beta(prm, n, rounds)
        if beta > fs[F_BETA]:
            _kl_epoch(st, ctx, prm, _kl_level(prm, n, rounds))
        h, neg_lcb, exact_h = _kl_best(st, ctx, prm, HL, beta, stack)
        l_, ucb, exact_l = _kl_best(st, ctx, prm, LU, beta, stack)
        if not (exact_h and exact_l):
            # LCB_h < -neg_lcb and UCB_l > ucb are proved (or exact: <=, >=)
            e = max(prm[P_STOP_EPS], 0.0)
            if not exact_h and not exact_l and ucb + neg_lcb >= e:
                return h, -np.inf, l_, np.inf  # UCB_l - LCB_h > ucb + neg_lcb >= e
            if _kl_open(st, ctx, prm, beta, h, l_):
                return h, -np.inf, l_, np.inf
            sigma = ctx.fv[engine.SIGMA]
            seen = st[8]
            if not exact_h:
                neg_lcb = _kl_key_from(
                    prm, ctx.means[h], seen[h], beta, sigma, True, key[HL, h], False
                )
            if not exact_l:
                ucb = _kl_key_from(
                    prm, ctx.means[l_], seen[l_], beta, sigma, False, key[LU, l_], False
                )
        return h, -neg_lcb, l_, ucb
    if prm[P_RADIUS] != RADIUS_LUCB1:
        h, l_ = heap[HL, 0], heap[LU, 0]
        return h, -key[HL, h], l_, key[LU, l_]
    c = _scale(prm, ctx.counts.shape[0], rounds)
    fs[F_C] = c
    means, tb = ctx.means, st[5]
    _kadvance(kwin, kexp, means, la, ub, tb, 0, c, stack, order)
    _kadvance(kwin, kexp, means, la, ub, tb, 1, c, stack, order)
    h, l_ = kwin[0, 1], kwin[1, 1]
    return h, means[h] - c * la[h], l_, means[l_] + c * ub[l_]


# -------------------------------------------------------------- the algorithm
# In the generator (the Gymnasium path) the round's work runs in one call per round
# (:func:`_next`) on a frame (:class:`agents.engine.frame.Frame`) that holds ``ctx``, ``prm``
# and the state: ``run``'s loop keeps only the frame and a few scalars live across its
# yields, instead of saving and restoring 28 arrays at every resume. The fast path
# (:func:`episode`) needs no frame: its state is a local variable.
@numba.njit(cache=True)
def _start(ctx, prm):
    """The frame after the first round (:func:`_build`)."""
    n = ctx.counts.shape[0]
    return frame.Frame(ctx, prm, _build(ctx, prm, _scale(prm, n, 1)))


@numba.njit(cache=True, _nrt=False, inline="always")
def _decide(st, ctx, prm, rounds):
    """``(stop, h, l)`` at round ``rounds``: whether the stop rule holds, and the pair."""
    if int(prm[P_RULE]) == RULE_CLUCB:  # (plain stop rule: M = M~)
        return _clucb_settle(st) == 0, 0, 0
    h, lcb_h, l_, ucb_l = _extremes(st, ctx, prm, rounds)
    eps = prm[P_STOP_EPS]
    return ((lcb_h >= ucb_l) if eps < 0.0 else (ucb_l - lcb_h < eps)), h, l_


@numba.njit(cache=True)
def _next(fr, a, b, rounds):
    """:func:`_round` on the frame's state (one call per round: loading the frame's
    fields costs a reference count per array)."""
    ctx = fr.ctx
    stop, h, l_, arm = _round(fr.state, ctx, fr.prm, a, b, rounds)
    if stop:
        _answer(ctx)
    return stop, h, l_, arm


@numba.njit(cache=True, _nrt=False)
def _round(st, ctx, prm, a, b, rounds):
    """Fold the pulled arms ``a`` and ``b`` (``-1``: none; round ``rounds - 1``) in, then
    decide round ``rounds``: ``(stop, h, l, arm)``, ``arm`` the one to pull first (with
    ``batch_size=1``: RoundRobin's order, fewest pulls first, ties at random) or alone;
    on ``stop`` the caller answers (:func:`_answer`).
    """
    if a >= 0:
        changed = _fold(st, ctx, prm, a)
        if b >= 0:
            changed = _fold(st, ctx, prm, b) or changed
        if changed:
            _repair(st, ctx, prm)
    stop, h, l_ = _decide(st, ctx, prm, rounds)
    if stop and (rounds > 1 or prm[P_FIRST_ROUND] == 0.0):
        return True, h, l_, -1
    rule = int(prm[P_RULE])
    counts, rng = ctx.counts, ctx.rng
    if rule == RULE_BOTH:
        if ctx.iv[engine.B] != 1:
            return False, h, l_, -1
        tie = counts[l_] == counts[h]
        first = l_ if counts[l_] < counts[h] or (tie and engine.below(rng, 2) == 1) else h
        return False, h, l_, first
    if rule == RULE_RANDOM:
        th, tl = counts[h], counts[l_]
        return False, h, l_, (h if rng.random() * (th + tl) < tl else l_)
    return False, h, l_, st[0][PK, 0]


@numba.njit(cache=True)
def _answer(ctx):
    """Answer ``High``."""
    high = np.empty(ctx.answer.shape[0], dtype=np.int64)
    j = 0
    for i in range(ctx.status.shape[0]):
        if ctx.status[i] == engine.ACCEPTED:
            high[j] = i
            j += 1
    engine.finish(ctx, high)


@numba.njit(cache=True)
def _request_pair(fr, h, l_):
    """The request of one more pull of ``h`` and ``l`` (one batch when the model allows)."""
    return engine.request_two(fr.ctx, h, l_)


@numba.njit
def run(ctx, prm):
    """The LUCB family (the compiled algorithm; ``prm`` as a member's ``params``)."""
    n = ctx.iv[engine.N]
    pair = int(prm[P_RULE]) == RULE_BOTH
    serial = ctx.iv[engine.B] == 1
    yield engine.request_each(ctx, np.arange(n), 1)
    fr = _start(ctx, prm)
    rounds = 1
    a = b = -1
    while True:
        stop, h, l_, arm = _next(fr, a, b, rounds)
        if stop:
            return
        if pair:
            if not serial:
                yield _request_pair(fr, h, l_)
            else:
                yield arm
                yield l_ if arm == h else h
            a, b = h, l_
        else:
            yield arm
            a, b = arm, -1
        rounds += 1


@numba.njit(cache=True)
def episode(ctx, prm, env, counts, sums, emp, cost, max_steps):
    """The fast path: :func:`agents.engine.drive` on :func:`run`, without the generator.

    The same steps, requests and draws as ``drive(run(ctx, prm), ...)``: the first
    round's request and every round's request or arms are served by
    :func:`agents.engine.serve_request` / :func:`~agents.engine.serve_arm`, as ``drive``
    serves what :func:`run` yields. The state is a local variable here, not a frame
    (a frame's field loads cost a reference count per array every round, about 10% of
    a round). Mirrors :func:`run` line for line; the rounds themselves are
    :func:`_round`'s, the one implementation of the algorithms.
    """
    iv = ctx.iv
    n = ctx.iv[engine.N]
    scr = engine.scratch(n)
    step_reward = engine.step_reward_of(ctx, cost)
    reward = 0.0
    if engine.sampling_spent(ctx):
        return engine.SAMPLING_OVER, reward
    code = engine.request_each(ctx, np.arange(n), 1)
    outcome, reward = engine.serve_request(
        ctx, code, env, counts, sums, emp, reward, step_reward, max_steps, scr
    )
    if outcome == engine.SAMPLING_OVER:
        return engine.SAMPLING_OVER, reward
    st = _build(ctx, prm, _scale(prm, n, 1))
    outcome, reward = _rounds(
        st, ctx, prm, env, counts, sums, emp, reward, step_reward, max_steps, scr
    )
    if outcome == engine.AGENT_STOPPED:
        _answer(ctx)
        iv[engine.FINISHED] = 1
    return outcome, reward


@numba.njit(cache=True, _nrt=False)
def _rounds(st, ctx, prm, env, counts, sums, emp, reward, step_reward, max_steps, scr):
    """The rounds of :func:`episode` until the stop rule holds (``AGENT_STOPPED``; the
    caller answers) or sampling ends (``SAMPLING_OVER``): ``(outcome, reward)``."""
    pair = int(prm[P_RULE]) == RULE_BOTH
    serial = ctx.iv[engine.B] == 1
    rounds = 1
    a = b = -1
    while True:
        stop, h, l_, arm = _round(st, ctx, prm, a, b, rounds)
        if stop:
            return engine.AGENT_STOPPED, reward
        if pair and not serial:
            outcome, reward = engine.serve_request(
                ctx, engine.request_two(ctx, h, l_), env, counts, sums, emp, reward,
                step_reward, max_steps, scr,
            )
        else:
            outcome, reward = engine.serve_arm(
                ctx, env, counts, sums, emp, arm, reward, step_reward, max_steps
            )
            if outcome != engine.SAMPLING_OVER and pair:
                outcome, reward = engine.serve_arm(
                    ctx, env, counts, sums, emp, l_ if arm == h else h, reward,
                    step_reward, max_steps,
                )
        if outcome == engine.SAMPLING_OVER:
            return engine.SAMPLING_OVER, reward
        if pair:
            a, b = h, l_
        else:
            a, b = arm, -1
        rounds += 1


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

    @property
    def high(self) -> np.ndarray:
        """``High`` as of the last round (read-only; empty before the first round ends)."""
        return np.flatnonzero(self.ctx.status == engine.ACCEPTED)

    def _prm(self, **values: float) -> np.ndarray:
        """A ``prm`` vector: the rule, the plain stop rule, and ``values``."""
        prm = np.zeros(NP)
        prm[P_RULE] = self.rule
        prm[P_STOP_EPS] = STOP_PLAIN
        names = {
            "stop_eps": P_STOP_EPS,
            "radius": P_RADIUS,
            "eps": P_EPS,
            "w_low": P_W_LOW,
            "w_up": P_W_UP,
            "delta": P_DELTA,
            "k1": P_K1,
            "family": P_FAMILY,
            "alpha": P_ALPHA,
            "rate": P_RATE,
            "first_round": P_FIRST_ROUND,
        }
        for name, value in values.items():
            prm[names[name]] = value
        return prm


class LilFamily(LUCBFamily):
    """LUCB-style agents on the lil' radius ``U(t, w)`` of Jiang et al. (2017) Sec. 5.

    ``U(t, w) = (1 + sqrt(eps)) sqrt(2 sigma^2 (1 + eps) / t log(log((1 + eps) t + 2) / w))``
    (:func:`agents.engine.confidence.lil_bound`; ``sigma`` is the problem's sub-Gaussian scale).

    Parameters (Jiang et al. Sec. 5.1):

    * ``variant="faithful"``: ``eps`` (default 0.01) and the lil' ``delta`` are chosen so
      that the algorithm's proven error bound (:attr:`guarantee`, see
      :func:`agents.engine.confidence.lil_faithful_delta`) equals the target ``delta`` (the
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
