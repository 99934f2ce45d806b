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
the sampling rule: one compiled generator (:func:`run`) plays them all, told which by
its parameter vector ``prm`` (layout: the ``P_*`` indices of :mod:`agents.lucb.layout`;
each member's ``params``). Each member's module keeps only its agent class.

Incremental state, so that a round costs O(log n) instead of a scan of the arms (all
in preallocated arrays, compiled helpers; this module builds it, folds the pulls in and
repairs it):

* after a round only the pulled arms' means and counts change, so only their bounds do
  (the radius depends on the arm's own count; :mod:`agents.lucb.radii`);
* four indexed binary heaps (:mod:`agents.lucb.heaps`) hold ``High`` by mean (weakest
  on top), ``Low`` by mean (strongest on top), and, for the lil' radii (scale 1),
  ``High`` by LCB (smallest on top) and ``Low`` by UCB (largest on top);
  ``ctx.status`` marks ``High`` (:data:`~agents.engine.ACCEPTED`);
* after the pulled arms are updated, ``High``/``Low`` are repaired by swapping the
  weakest ``High`` arm with the strongest ``Low`` arm while they are out of order (at
  most one swap per changed arm);
* LUCB1's bounds, whose radius grows with the round for every arm, are kept in two
  kinetic tournament trees instead of the bound heaps (:mod:`agents.lucb.kinetic`):
  raising the scale replays only the nodes whose certificates failed, an update
  replays one leaf-to-root path (O(log n));
* lil'CLUCB's ``M (+) M~`` is kept split off the bound heaps, in two heaps of its own
  and a heap of its arms by radius (:mod:`agents.lucb.clucb_split`): a few O(log n)
  heap operations per round whatever its size;
* KL-LUCB's bounds, which change every round and not along lines, are kept lazily: heap
  keys at a level fixed for an epoch of rounds, best-first walks that find ``h`` and
  ``l`` exactly, and, for Bernoulli rewards, one heap entry per class of arms of equal
  mean and count, with proofs that spare most bisections (:mod:`agents.lucb.kl_bounds`).

Requests: the first round is one request of every arm once; a round of one arm is
``yield arm``; a round of two arms is :func:`~agents.engine.request_two` (one batch
when the batch model allows it), and with ``batch_size=1`` two one-pull steps, fewest
pulls first and ties at random: the schedule RoundRobin makes, without its cost.

Two drivers play these rounds, both through :func:`_round` (the one implementation of
a round: fold, repair, decide, pick the arms): the generator :func:`run` (the
Gymnasium path's agent, and :func:`agents.engine.drive`'s), which keeps its state in a
:class:`~agents.engine.frame.Frame`, and the fast path's :func:`episode`, a plain loop
that makes the same requests and serves them as ``drive`` would
(:func:`agents.engine.serve_request`, :func:`~agents.engine.serve_arm`), with the state
in local variables and the rounds in a function compiled without reference counting
(:func:`_rounds`). Loading a frame's fields, or running a round in a function with
reference counting, costs a reference count per array of the state (about 25) every
round: the plain loop plays KL-LUCB about 10% faster and LUCB1 about 20% faster, with
the same episodes (``tests/test_fast_path.py``). The round's big steps (:func:`_fold`,
:func:`_repair`, :func:`_decide`, :func:`_extremes`, :func:`agents.lucb.kl_bounds.top`)
are inlined into it (``inline="always"``): a compiled call passes the state tuple,
``ctx`` and ``prm`` as about 190 machine words of arguments, and these five calls per
round cost KL-LUCB 15-25% of its speed.

Ties (equal means, equal bounds, equal radii) are broken uniformly at random (the
papers do not say; an index rule would favour low-index arms), by a random key per arm
(``tb``, i.i.d. uniform, redrawn whenever the arm's statistics change) that orders
otherwise equal entries; the initial ``High`` is the top ``k`` by (mean, key). All
randomness comes from ``ctx.rng``, in this order: the first round's scheduling
(engine), one key per arm (arm order) after it, then per round the sampling rule's coin
(lil'RandLUCB: one uniform), the order of a pair at ``batch_size=1`` when both arms
have as many pulls (one uniform), and a new key for each pulled arm (``h`` before
``l``).

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
from agents.lucb import clucb_split, heaps, kinetic, kl_bounds, radii
from agents.lucb.layout import (
    F_BETA,
    F_C,
    HL,
    HM,
    IH,
    IL,
    J_HALF,
    LM,
    LU,
    NP,
    P_ALPHA,
    P_DELTA,
    P_EPS,
    P_FAMILY,
    P_FIRST_ROUND,
    P_K1,
    P_RADIUS,
    P_RATE,
    P_RULE,
    P_STOP_EPS,
    P_W_LOW,
    P_W_UP,
    PK,
    RADIUS_KL,
    RADIUS_LIL,
    RADIUS_LUCB1,
    RULE_BOTH,
    RULE_CLUCB,
    RULE_RANDOM,
    STOP_PLAIN,
)

__all__ = ["VARIANTS", "LUCBFamily", "LilFamily", "episode", "run"]

VARIANTS = ("faithful", "heuristic")


# ------------------------------------------------------------------ state
@numba.njit(cache=True, _nrt=False)
def _set_side(st, ctx, prm, i, high, sigma):
    """Put arm ``i`` into ``High`` (``high``) or ``Low`` with its keys."""
    heap, pos, key, size, sgn, tb, la, ub, seen, fs, js, kwin, kexp = st[:13]
    mu = ctx.means[i]
    trees = prm[P_RADIUS] == RADIUS_LUCB1
    c = fs[F_C]
    half = js[J_HALF]
    if high:
        ctx.status[i] = engine.ACCEPTED
        la[i] = radii.coef_memo(prm, seen[i], False, sigma, kexp)
        key[HM, i] = -mu
        heaps.insert(heap, pos, key, size, sgn, tb, HM, i)
        if trees:
            kinetic.update(kwin, kexp, ctx.means, la, ub, tb, 0, i, True, c, half)
        elif kl_bounds.has_classes(prm):
            kl_bounds.join_class(st, ctx, prm, HL, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[HL, i] = radii.kl_key(prm, mu, seen[i], fs[F_BETA], sigma, True)
            else:
                key[HL, i] = -(mu - la[i])
            heaps.insert(heap, pos, key, size, sgn, tb, HL, i)
    else:
        ctx.status[i] = engine.UNDECIDED
        ub[i] = radii.coef_memo(prm, seen[i], True, sigma, kexp)
        key[LM, i] = mu
        heaps.insert(heap, pos, key, size, sgn, tb, LM, i)
        if trees:
            kinetic.update(kwin, kexp, ctx.means, la, ub, tb, 1, i, True, c, half)
        elif kl_bounds.has_classes(prm):
            kl_bounds.join_class(st, ctx, prm, LU, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[LU, i] = radii.kl_key(prm, mu, seen[i], fs[F_BETA], sigma, False)
            else:
                key[LU, i] = mu + ub[i]
            heaps.insert(heap, pos, key, size, sgn, tb, LU, i)


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
        fs[F_BETA] = radii.kl_level(prm, n, 1)
    js = np.zeros(4, dtype=np.int64)
    half = 1
    while half < n:
        half *= 2
    js[J_HALF] = half
    kwin = np.full((8 if kl_bounds.has_classes(prm) else 2, 2 * half), -1, dtype=np.int64)
    if kl_bounds.has_classes(prm):
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
    trees = prm[P_RADIUS] == RADIUS_LUCB1
    if ctx.status[i] == engine.ACCEPTED:
        la[i] = radii.coef_memo(prm, c, False, sigma, kexp)
        key[HM, i] = -mu
        heaps.sift(heap, pos, key, size, sgn, tb, HM, pos[HM, i])
        if trees:
            kinetic.update(kwin, kexp, ctx.means, la, ub, tb, 0, i, True, fs[F_C], js[J_HALF])
        elif kl_bounds.has_classes(prm):
            kl_bounds.leave_class(st, HL, i)
            kl_bounds.join_class(st, ctx, prm, HL, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[HL, i] = radii.kl_key(prm, mu, c, fs[F_BETA], sigma, True)
            else:
                key[HL, i] = -(mu - la[i])
            if pos[HL, i] >= 0:
                heaps.sift(heap, pos, key, size, sgn, tb, HL, pos[HL, i])
            else:  # (lil'CLUCB: in M (+) M~)
                clucb_split.rekey(heap, pos, key, size, sgn, tb, HL, IH, la, i)
    else:
        ub[i] = radii.coef_memo(prm, c, True, sigma, kexp)
        key[LM, i] = mu
        heaps.sift(heap, pos, key, size, sgn, tb, LM, pos[LM, i])
        if trees:
            kinetic.update(kwin, kexp, ctx.means, la, ub, tb, 1, i, True, fs[F_C], js[J_HALF])
        elif kl_bounds.has_classes(prm):
            kl_bounds.leave_class(st, LU, i)
            kl_bounds.join_class(st, ctx, prm, LU, i, sigma)
        else:
            if prm[P_RADIUS] == RADIUS_KL:
                key[LU, i] = radii.kl_key(prm, mu, c, fs[F_BETA], sigma, False)
            else:
                key[LU, i] = mu + ub[i]
            if pos[LU, i] >= 0:
                heaps.sift(heap, pos, key, size, sgn, tb, LU, pos[LU, i])
            else:  # (lil'CLUCB: in M (+) M~)
                clucb_split.rekey(heap, pos, key, size, sgn, tb, LU, IL, ub, i)
    return True


@numba.njit(cache=True, _nrt=False, inline="always")
def _repair(st, ctx, prm):
    """Swap the weakest High arm and the strongest Low arm while out of (mean, key) order."""
    heap, pos, key, size, sgn, tb = st[0], st[1], st[2], st[3], st[4], st[5]
    fs, js, kwin, kexp, la, ub = st[9], st[10], st[11], st[12], st[6], st[7]
    sigma = ctx.fv[engine.SIGMA]
    means = ctx.means
    trees = prm[P_RADIUS] == RADIUS_LUCB1
    while True:
        w = heap[HM, 0]
        s = heap[LM, 0]
        if means[w] > means[s] or (means[w] == means[s] and tb[w] >= tb[s]):
            return
        heaps.remove(heap, pos, key, size, sgn, tb, HM, w)
        heaps.remove(heap, pos, key, size, sgn, tb, LM, s)
        if trees:
            kinetic.update(kwin, kexp, means, la, ub, tb, 0, w, False, fs[F_C], js[J_HALF])
            kinetic.update(kwin, kexp, means, la, ub, tb, 1, s, False, fs[F_C], js[J_HALF])
        elif kl_bounds.has_classes(prm):
            kl_bounds.leave_class(st, HL, w)
            kl_bounds.leave_class(st, LU, s)
        else:
            clucb_split.leave(heap, pos, key, size, sgn, tb, HL, IH, w)
            clucb_split.leave(heap, pos, key, size, sgn, tb, LU, IL, s)
        _set_side(st, ctx, prm, w, False, sigma)
        _set_side(st, ctx, prm, s, True, sigma)


@numba.njit(cache=True, _nrt=False, inline="always")
def _extremes(st, ctx, prm, rounds):
    """``(h, LCB_h, l, UCB_l)`` at round ``rounds`` (raises the kinetic trees' scale).

    KL-LUCB on Bernoulli rewards returns ``(h, -inf, l, inf)`` when it proved the stop
    rule unmet without the two bounds (by the walks' proofs, else
    :func:`agents.lucb.kl_bounds.surely_open`); the bounds serve only the stop rule.
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
        beta = radii.kl_beta(prm, n, rounds)
        if beta > fs[F_BETA]:
            kl_bounds.new_epoch(st, ctx, prm, radii.kl_level(prm, n, rounds))
        h, neg_lcb, exact_h = kl_bounds.top(st, ctx, prm, HL, beta, stack)
        l_, ucb, exact_l = kl_bounds.top(st, ctx, prm, LU, beta, stack)
        if not (exact_h and exact_l):
            # LCB_h < -neg_lcb and UCB_l > ucb are proved (or exact: <=, >=)
            e = max(prm[P_STOP_EPS], 0.0)
            if not exact_h and not exact_l and ucb + neg_lcb >= e:
                return h, -np.inf, l_, np.inf  # UCB_l - LCB_h > ucb + neg_lcb >= e
            if kl_bounds.surely_open(st, ctx, prm, beta, h, l_):
                return h, -np.inf, l_, np.inf
            sigma = ctx.fv[engine.SIGMA]
            seen = st[8]
            if not exact_h:
                neg_lcb = radii.kl_key_from(
                    prm, ctx.means[h], seen[h], beta, sigma, True, key[HL, h], False
                )
            if not exact_l:
                ucb = radii.kl_key_from(
                    prm, ctx.means[l_], seen[l_], beta, sigma, False, key[LU, l_], False
                )
        return h, -neg_lcb, l_, ucb
    if prm[P_RADIUS] != RADIUS_LUCB1:
        h, l_ = heap[HL, 0], heap[LU, 0]
        return h, -key[HL, h], l_, key[LU, l_]
    c = radii.scale(prm, ctx.counts.shape[0], rounds)
    fs[F_C] = c
    means, tb = ctx.means, st[5]
    kinetic.advance(kwin, kexp, means, la, ub, tb, 0, c, stack, order)
    kinetic.advance(kwin, kexp, means, la, ub, tb, 1, c, stack, order)
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
    return frame.Frame(ctx, prm, _build(ctx, prm, radii.scale(prm, n, 1)))


@numba.njit(cache=True, _nrt=False, inline="always")
def _decide(st, ctx, prm, rounds):
    """``(stop, h, l)`` at round ``rounds``: whether the stop rule holds, and the pair."""
    if int(prm[P_RULE]) == RULE_CLUCB:  # (plain stop rule: M = M~)
        return clucb_split.settle(st) == 0, 0, 0
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
    outcome, reward, scr, step_reward = engine.serve_each_once(
        ctx, env, counts, sums, emp, cost, max_steps
    )
    if outcome == engine.SAMPLING_OVER:
        return engine.SAMPLING_OVER, reward
    st = _build(ctx, prm, radii.scale(prm, iv[engine.N], 1))
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
                ctx,
                engine.request_two(ctx, h, l_),
                env,
                counts,
                sums,
                emp,
                reward,
                step_reward,
                max_steps,
                scr,
            )
        else:
            outcome, reward = engine.serve_arm(
                ctx, env, counts, sums, emp, arm, reward, step_reward, max_steps
            )
            if outcome != engine.SAMPLING_OVER and pair:
                outcome, reward = engine.serve_arm(
                    ctx,
                    env,
                    counts,
                    sums,
                    emp,
                    l_ if arm == h else h,
                    reward,
                    step_reward,
                    max_steps,
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
