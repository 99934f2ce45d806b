"""The compiled scheduler: Jun et al.'s RoundRobin, request bookkeeping, and batches recorded."""

from __future__ import annotations

import numba
import numpy as np

from agents.engine.context import (
    ALLOC,
    BATCH,
    BATCH_ARMS,
    BATCH_LEN,
    BATCH_REPS,
    BATCHES,
    BUCKET_LEN,
    BUCKET_LEVEL,
    BUCKETS_READY,
    CAND,
    CAPS,
    DEFER_LEN,
    DUE,
    HEAD,
    LEVEL,
    NEXT_LEN,
    POS_OF,
    PULL,
    PULLS,
    REQ_ARMS,
    REQ_DUE,
    REQ_KIND,
    REQ_LEN,
    REQ_OPEN,
    REQ_REPS,
    WORK,
    B,
    R,
    pulls_left,
)
from agents.engine.selection import (
    below,
    choose_distinct,
)

__all__ = [
    "round_robin_into",
    "round_robin",
    "accept_request",
    "close_request",
    "schedule",
    "record_batch",
    "record_one",
]


# ------------------------------------------------------------------ scheduler
@numba.njit(cache=True, _nrt=False)
def round_robin_into(counts, caps, total, rng, alloc, can, lowest_first):
    """:func:`round_robin` without allocation (``can``: scratch of ``len(counts)`` ints).

    Allocate ``min(total, sum(caps))`` pulls over arms to keep their counts level.

    Jun et al. (2016) Algorithm 1 by water filling: raise every arm to ``min(h, T_l +
    cap_l)`` for the highest level ``h`` that fits, then give the pulls left, one each,
    to arms sitting exactly at level ``h`` (chosen uniformly at random with ``rng``, or
    the lowest positions with ``lowest_first``). Writes ``alloc``
    (``0 <= alloc <= caps``, summing to ``min(total, sum(caps))``).
    """
    m = counts.shape[0]
    supply = 0
    for j in range(m):
        supply += caps[j]
    if total >= supply:
        for j in range(m):
            alloc[j] = caps[j]
        return
    for j in range(m):
        alloc[j] = 0
    if total <= 0:
        return
    lo = counts[0]
    hi = counts[0] + caps[0]
    for j in range(1, m):
        if counts[j] < lo:
            lo = counts[j]
        if counts[j] + caps[j] > hi:
            hi = counts[j] + caps[j]
    # Level lo + 1 takes one pull from each arm at level lo with room: when they are
    # more than ``total``, the level stays lo (the search below would find it).
    low = 0
    for j in range(m):
        if counts[j] == lo and caps[j] > 0:
            low += 1
    if low > total:
        hi = lo + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        filled = 0
        for j in range(m):
            d = mid - counts[j]
            if d > 0:
                filled += d if d < caps[j] else caps[j]
        if filled <= total:
            lo = mid
        else:
            hi = mid
    given = 0
    for j in range(m):
        d = lo - counts[j]
        if d > 0:
            alloc[j] = d if d < caps[j] else caps[j]
            given += alloc[j]
    short = total - given
    if short > 0:
        nc = 0
        for j in range(m):
            if counts[j] + alloc[j] == lo and alloc[j] < caps[j]:
                can[nc] = j
                nc += 1
        if not lowest_first:
            choose_distinct(can, nc, short, rng)
        for j in range(short):
            alloc[can[j]] += 1


@numba.njit(cache=True)
def round_robin(counts, caps, total, rng, alloc, lowest_first=False):
    """Allocate ``min(total, sum(caps))`` pulls over arms to keep their counts level.

    Jun et al. (2016) Algorithm 1 by water filling (:func:`round_robin_into`); writes
    ``alloc``. Ties at the water level go to arms chosen uniformly at random with
    ``rng`` (or to the lowest positions with ``lowest_first``).
    """
    can = np.empty(counts.shape[0], dtype=np.int64)
    round_robin_into(counts, caps, total, rng, alloc, can, lowest_first)


@numba.njit(cache=True, _nrt=False)
def accept_request(ctx, code):
    """Take the request the generator yielded (``PULL`` or ``BATCH``); validate it."""
    iv = ctx.iv
    n = ctx.counts.shape[0]
    m = iv[REQ_LEN]
    if m < 0 or m > n:
        raise RuntimeError("the agent requested more arms than there are")
    keep = 0
    due_total = 0
    for j in range(m):
        a = ctx.sched[REQ_ARMS, j]
        if a < 0 or a >= n:
            raise RuntimeError("the agent requested an arm outside [0, n_arms)")
        if ctx.sched[POS_OF, a] >= 0:
            for i in range(keep):  # undo the marks before raising
                ctx.sched[POS_OF, ctx.sched[REQ_ARMS, i]] = -1
            raise RuntimeError("the agent requested repeated arms")
        if code == PULL and ctx.sched[REQ_REPS, j] <= 0:
            continue
        ctx.sched[REQ_ARMS, keep] = a
        ctx.sched[REQ_REPS, keep] = ctx.sched[REQ_REPS, j]
        ctx.sched[DUE, keep] = ctx.sched[REQ_REPS, j]
        ctx.sched[POS_OF, a] = keep
        due_total += ctx.sched[REQ_REPS, j]
        keep += 1
    iv[REQ_LEN] = keep
    iv[REQ_KIND] = code
    iv[REQ_DUE] = due_total
    iv[BATCH_LEN] = 0
    iv[REQ_OPEN] = 1 if keep > 0 else 0
    iv[BUCKETS_READY] = 0


@numba.njit(cache=True, _nrt=False)
def close_request(ctx):
    """Forget the current request."""
    iv = ctx.iv
    for j in range(iv[REQ_LEN]):
        ctx.sched[POS_OF, ctx.sched[REQ_ARMS, j]] = -1
    iv[REQ_OPEN] = 0
    iv[REQ_LEN] = 0
    iv[BUCKETS_READY] = 0


@numba.njit(cache=True, _nrt=False)
def _level(ctx, pos):
    return ctx.counts[ctx.sched[REQ_ARMS, pos]] + ctx.sched[ALLOC, pos]


@numba.njit(cache=True, _nrt=False)
def _sort_by_level(ctx, m):
    """``cand[:m]`` = request positions sorted by pull count (in-place heap sort)."""
    order = ctx.sched[CAND]
    for j in range(m):
        order[j] = j
    counts, arms = ctx.counts, ctx.sched[REQ_ARMS]
    flat = True
    for j in range(1, m):
        if counts[arms[j]] != counts[arms[0]]:
            flat = False
            break
    if flat:
        return
    # heapify then pop (max-heap on counts)
    for start in range((m - 2) // 2, -1, -1):
        _sift(order, counts, arms, start, m)
    for end in range(m - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        _sift(order, counts, arms, 0, end)


@numba.njit(cache=True, _nrt=False)
def _sift(order, counts, arms, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and counts[arms[order[child + 1]]] > counts[arms[order[child]]]:
            child += 1
        if counts[arms[order[root]]] < counts[arms[order[child]]]:
            order[root], order[child] = order[child], order[root]
            root = child
        else:
            return


@numba.njit(cache=True, _nrt=False)
def _bucket_batch(ctx, room):
    """One RoundRobin batch of at most ``room`` pulls of a ``PULL`` request, by level buckets.

    Jun et al.'s rule, pull by pull: the next pull goes to a uniformly random arm among
    those with the fewest pulls (counting this batch's) that are still owed pulls and
    below the repeat limit in this batch. Arms are kept in buckets by level: ``work``
    holds the current level ``BUCKET_LEVEL``, ``level`` the next one, ``cand`` the
    request's positions sorted by count (activated from ``HEAD`` on as the level rises),
    ``caps`` the arms that reached the repeat limit in the last batch. O(1) per pull plus
    O(m log m) once per request.
    """
    iv = ctx.iv
    m = iv[REQ_LEN]
    r = iv[R]
    sched = ctx.sched
    bucket, nxt, order = sched[WORK], sched[LEVEL], sched[CAND]
    deferred, alloc = sched[CAPS], sched[ALLOC]
    if iv[BUCKETS_READY] == 1:
        # An arm held back by the repeat limit sits at most one level above the
        # current one, unless the level rose past it within the last batch: rebuild then.
        for d in range(iv[DEFER_LEN]):
            pos = deferred[d]
            if ctx.sched[DUE, pos] > 0 and _level(ctx, pos) < iv[BUCKET_LEVEL]:
                iv[BUCKETS_READY] = 0
                break
    if iv[BUCKETS_READY] == 0:
        for j in range(m):
            alloc[j] = 0
        _sort_by_level(ctx, m)
        iv[BUCKET_LEN] = 0
        iv[NEXT_LEN] = 0
        iv[HEAD] = 0
        iv[DEFER_LEN] = 0
        iv[BUCKET_LEVEL] = ctx.counts[ctx.sched[REQ_ARMS, order[0]]] if m > 0 else 0
        iv[BUCKETS_READY] = 1
    nb, nn, head, lvl = iv[BUCKET_LEN], iv[NEXT_LEN], iv[HEAD], iv[BUCKET_LEVEL]
    # arms held back by the repeat limit in the last batch rejoin at their level
    for d in range(iv[DEFER_LEN]):
        pos = deferred[d]
        if ctx.sched[DUE, pos] <= 0:
            continue
        if _level(ctx, pos) == lvl:
            bucket[nb] = pos
            nb += 1
        else:
            nxt[nn] = pos
            nn += 1
    ndef = 0
    out = 0
    given = 0
    while given < room:
        if nb == 0:
            if nn > 0:
                lvl += 1
                for j in range(nn):
                    bucket[j] = nxt[j]
                nb = nn
                nn = 0
            elif head < m:
                lvl = _level(ctx, order[head])
            else:
                break
            while head < m and _level(ctx, order[head]) <= lvl:
                pos = order[head]
                head += 1
                if ctx.sched[DUE, pos] > 0:
                    bucket[nb] = pos
                    nb += 1
            if nb == 0:
                continue
        i = below(ctx.rng, nb) if nb > 1 else 0
        pos = bucket[i]
        nb -= 1
        bucket[i] = bucket[nb]
        if alloc[pos] == 0:
            ctx.sched[BATCH_ARMS, out] = pos  # positions for now; arms below
            out += 1
        alloc[pos] += 1
        given += 1
        if ctx.sched[DUE, pos] - alloc[pos] > 0:
            if r < 0 or alloc[pos] < r:
                nxt[nn] = pos
                nn += 1
            else:
                deferred[ndef] = pos
                ndef += 1
    for j in range(out):
        pos = ctx.sched[BATCH_ARMS, j]
        ctx.sched[BATCH_ARMS, j] = ctx.sched[REQ_ARMS, pos]
        ctx.sched[BATCH_REPS, j] = alloc[pos]
        alloc[pos] = 0
    iv[BUCKET_LEN], iv[NEXT_LEN], iv[HEAD] = nb, nn, head
    iv[BUCKET_LEVEL], iv[DEFER_LEN] = lvl, ndef
    return out


@numba.njit(cache=True, _nrt=False)
def schedule(ctx):
    """The next batch of the open request into ``batch_arms``/``batch_reps``; its length.

    0 when the request is served or nothing more fits (budget spent).
    """
    iv = ctx.iv
    m = iv[REQ_LEN]
    if iv[REQ_OPEN] == 0 or m == 0:
        return 0
    r = iv[R]
    room = iv[B]
    left = pulls_left(ctx)
    if left >= 0 and (room < 0 or left < room):
        room = left
    if room == 0:
        return 0
    if iv[REQ_KIND] == PULL:
        if iv[REQ_DUE] <= 0:
            return 0
        if room < 0 or iv[REQ_DUE] <= room:
            top = 0
            for j in range(m):
                if ctx.sched[DUE, j] > top:
                    top = ctx.sched[DUE, j]
            if r < 0 or top <= r:  # the whole rest of the request fits in this batch
                out = 0
                for j in range(m):
                    if ctx.sched[DUE, j] > 0:
                        ctx.sched[BATCH_ARMS, out] = ctx.sched[REQ_ARMS, j]
                        ctx.sched[BATCH_REPS, out] = ctx.sched[DUE, j]
                        out += 1
                return out
            if room < 0:  # no batch size: each arm up to r this batch
                room = iv[REQ_DUE]
        return _bucket_batch(ctx, room)
    # BATCH: one batch of RoundRobin over the arms, up to r pulls each
    if r >= 0:
        per_arm = r
    elif iv[B] >= 0:
        per_arm = iv[B]
    else:
        per_arm = 1
    if per_arm <= 0:
        return 0
    supply = m * per_arm
    total = supply if room < 0 or supply < room else room
    counts = ctx.sched[LEVEL]
    lo = ctx.counts[ctx.sched[REQ_ARMS, 0]]
    low = 0
    for j in range(m):
        c = ctx.counts[ctx.sched[REQ_ARMS, j]]
        counts[j] = c
        if c < lo:
            lo = c
            low = 1
        elif c == lo:
            low += 1
    alloc = ctx.sched[ALLOC]
    if total < supply and low > total:
        # More arms sit at the lowest level than the batch has pulls: the water level
        # stays there and the pulls go one each to arms of that level chosen at random
        # (what round_robin_into computes, without its passes over all arms).
        can = ctx.sched[CAND]
        nc = 0
        for j in range(m):
            if counts[j] == lo:
                can[nc] = j
                nc += 1
        choose_distinct(can, nc, total, ctx.rng)
        for j in range(total):
            alloc[can[j]] = 1
    else:
        caps = ctx.sched[CAPS]
        for j in range(m):
            caps[j] = per_arm
        round_robin_into(counts[:m], caps[:m], total, ctx.rng, alloc[:m], ctx.sched[CAND], False)
    out = 0
    for j in range(m):
        if alloc[j] > 0:
            ctx.sched[BATCH_ARMS, out] = ctx.sched[REQ_ARMS, j]
            ctx.sched[BATCH_REPS, out] = alloc[j]
            alloc[j] = 0
            out += 1
    return out


@numba.njit(cache=True, _nrt=False)
def record_batch(ctx, arms, reps):
    """Book a batch the environment made (``arms`` pulled ``reps`` times)."""
    iv = ctx.iv
    total = 0
    for j in range(arms.shape[0]):
        total += reps[j]
    iv[PULLS] += total
    iv[BATCHES] += 1
    if iv[REQ_OPEN] == 0:
        return
    if iv[REQ_KIND] == BATCH:
        m = arms.shape[0]
        for j in range(m):  # (the fast path passes sched[BATCH_ARMS] itself)
            ctx.sched[BATCH_ARMS, j] = arms[j]
        iv[BATCH_LEN] = m
        close_request(ctx)
        return
    for j in range(arms.shape[0]):
        p = ctx.sched[POS_OF, arms[j]]
        if p >= 0:
            ctx.sched[DUE, p] -= reps[j]
            iv[REQ_DUE] -= reps[j]
    if iv[REQ_DUE] <= 0:
        close_request(ctx)


@numba.njit(cache=True, _nrt=False)
def record_one(ctx):
    """Book a one-pull batch of a one-pull request."""
    ctx.iv[PULLS] += 1
    ctx.iv[BATCHES] += 1


@numba.njit(cache=True, _nrt=False)
def _save_buckets(iv, ready, nb, nn, head, lvl, ndef):
    """Write :func:`_one_pull_request`'s bucket state to the registers of :func:`_bucket_batch`."""
    if ready:
        iv[BUCKET_LEN], iv[NEXT_LEN], iv[HEAD] = nb, nn, head
        iv[BUCKET_LEVEL], iv[DEFER_LEN] = lvl, ndef
        iv[BUCKETS_READY] = 1
