"""A RoundRobin batch taken from the lowest pull level of a request, in O(b + n/64) (compiled).

Jun et al. (2016), Algorithm 1 (RoundRobin): each pull of a batch goes to a requested arm
with the fewest pulls, ties uniformly at random. When more requested arms sit at the
lowest level than the batch has pulls, :func:`agents.engine.schedule` (a ``BATCH``
request) gives one pull each to ``total`` of them: it lists the arms of that level in
request order and draws a partial Fisher-Yates shuffle of the list
(:func:`agents.engine.choose_distinct`), then returns the chosen arms in request order.
Every such batch costs it passes over the whole request.

An algorithm that requests the same increasing set ``S`` batch after batch (a
round-robin over survivors: BatchRacing, Jun et al. 2016, Alg. 2) can keep the arms of
``S`` at the lowest level as a bitmap ``X`` that only loses arms between batches, and
make the same batch itself (:func:`pick_lowest`): the same draws on a virtual copy of
the list of ``X`` (only the ``total`` entries the shuffle moves are stored), the chosen
ranks sorted by a bitmap and looked up in ``X`` by its words' bit counts. It then asks for exactly
that batch (``yield engine.request_each(ctx, picked, 1)``), which the engine serves in
one batch (:func:`batch_total` sizes it as ``schedule`` would).
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from agents import engine

__all__ = [
    "batch_total",
    "bitmap_arms",
    "level_up",
    "pick_lowest",
    "popcount",
    "select_bit",
    "two_levels",
    "plan_batch",
    "plan_work",
]


@numba.njit(cache=True, _nrt=False)
def batch_total(ctx, m: int) -> tuple[int, int, int]:
    """``(total, supply, per_arm)`` of ``engine.schedule``'s batch for ``BATCH`` over ``m`` arms.

    ``supply = m * per_arm`` (``per_arm``: ``r``, else ``b``, else 1) and ``total`` the
    pulls the batch makes: ``supply`` capped by ``b`` and the pulls the budget has left.
    """
    iv = ctx.iv
    room = iv[engine.B]
    left = engine.pulls_left(ctx)
    if left >= 0 and (room < 0 or left < room):
        room = left
    if iv[engine.R] >= 0:
        per_arm = iv[engine.R]
    elif iv[engine.B] >= 0:
        per_arm = iv[engine.B]
    else:
        per_arm = 1
    supply = m * per_arm
    total = supply if room < 0 or supply < room else room
    return total, supply, per_arm


@intrinsic
def popcount(typingctx, x):
    """The number of set bits of an int64 (``llvm.ctpop``)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        val = context.cast(builder, args[0], signature.args[0], types.int64)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), [ir.IntType(64)]), "llvm.ctpop.i64"
        )
        return builder.call(fn, [val])

    return sig, codegen


@numba.njit(cache=True, _nrt=False, inline="always")
def select_bit(word, q):
    """The place of the ``q``-th (from 0) set bit of ``word`` (it has more than ``q``)."""
    pos = 0
    c = popcount(word & 0xFFFFFFFF)
    if q >= c:
        q -= c
        word >>= 32
        pos += 32
    c = popcount(word & 0xFFFF)
    if q >= c:
        q -= c
        word >>= 16
        pos += 16
    c = popcount(word & 0xFF)
    if q >= c:
        q -= c
        word >>= 8
        pos += 8
    c = popcount(word & 0xF)
    if q >= c:
        q -= c
        word >>= 4
        pos += 4
    c = popcount(word & 0x3)
    if q >= c:
        q -= c
        word >>= 2
        pos += 2
    if q >= (word & 1):
        pos += 1
    return pos


@numba.njit(cache=True, _nrt=False)
def pick_lowest(xbits, nx, total, virt, jpos, rbits, rng, out) -> int:
    """One pull each for ``total < nx`` arms of ``X`` (bitmap ``xbits``): ``schedule``'s draws.

    The same ``rng`` draws as ``choose_distinct`` on the list of ``X`` in increasing
    order; the chosen arms go to ``out[:total]`` in increasing order (the order
    ``schedule`` returns them) and leave ``xbits``. Returns the new ``nx``. Scratch:
    ``virt`` (int64[>= nx], all -1 on entry and on return: the shuffled entries),
    ``jpos`` (int64[>= total]) and ``rbits`` (int64[>= ceil(nx / 64)], zero on entry and
    on return). O(total + n / 64): the chosen ranks are sorted by a bitmap and found in
    ``xbits`` in one pass over its words' bit counts.
    """
    # the partial Fisher-Yates shuffle of engine.choose_distinct, on ranks in X
    for i in range(total):
        size = nx - i
        j = i + engine.below(rng, size) if size > 1 else i
        vi = virt[i]
        if vi < 0:
            vi = i
        vj = virt[j]
        if vj < 0:
            vj = j
        virt[j] = vi  # (position i is never read again)
        jpos[i] = j
        out[i] = vj
    lo = nx
    hi = 0
    for i in range(total):
        virt[jpos[i]] = -1
        r = out[i]
        rbits[r >> 6] |= np.int64(1) << (r & 63)
        if r < lo:
            lo = r
        if r > hi:
            hi = r
    # the chosen ranks in increasing order, and the arms of X at those ranks
    c = 0
    w = 0
    word = xbits[0]
    cum = 0
    pc = popcount(word)
    for rw in range(lo >> 6, (hi >> 6) + 1):
        rword = rbits[rw]
        if rword == 0:
            continue
        rbits[rw] = 0
        while rword != 0:
            r = (rw << 6) + np.int64(trailing_zeros(rword))
            rword &= rword - 1
            while cum + pc <= r:
                cum += pc
                w += 1
                word = xbits[w]
                pc = popcount(word)
            out[c] = (w << 6) + select_bit(word, r - cum)
            c += 1
    for i in range(total):
        a = out[i]
        xbits[a >> 6] &= ~(np.int64(1) << (a & 63))
    return nx - total


@numba.njit(cache=True, _nrt=False)
def bitmap_arms(bits, nw, out) -> int:
    """The arms of the bitmap ``bits[:nw]`` in increasing order into ``out``; their number."""
    c = 0
    for w in range(nw):
        word = bits[w]
        while word != 0:
            out[c] = (w << 6) + np.int64(trailing_zeros(word))
            word &= word - 1
            c += 1
    return c


@numba.njit(cache=True, _nrt=False)
def level_up(
    xbits, sbits, nw, nx, m, total, per_arm, virt, jpos, rbits, cbits, rng, picked, arms, reps
):
    """The batch that ends a sweep of ``X``: ``schedule``'s draws; ``(batch length, extra pulls)``.

    ``S`` (bitmap ``sbits``, ``m`` arms) has ``nx <= total`` arms at its lowest count
    ``c`` (bitmap ``xbits``) and the others at ``c + 1``, and ``total < m * per_arm``.
    When the water level of RoundRobin stops at ``c + 1`` (``schedule``'s
    ``round_robin_into``), every arm of ``X`` gets one pull and the ``total - nx`` left go
    one each to arms at level ``c + 1`` below their cap, drawn by ``choose_distinct`` on
    their list in increasing order: all of ``S`` if ``per_arm >= 2``, else the arms at
    ``c + 1`` before the batch. Writes the batch (increasing arms, pulls) to
    ``arms``/``reps``, the extra arms to ``picked`` (increasing), and ``X``, the arms of
    ``S`` left at ``c + 1``, to ``xbits``. Returns ``(-1, 0)`` (nothing written) when
    the level rises further (then ``total >= m``). ``cbits``: scratch of ``nw`` words.
    """
    ny = m - nx
    cap2 = 2 if per_arm >= 2 else 1
    if nx * cap2 + ny <= total:
        return -1, 0
    short = total - nx
    if per_arm >= 2:
        nc = m
        for w in range(nw):
            cbits[w] = sbits[w]
    else:
        nc = ny
        for w in range(nw):
            cbits[w] = sbits[w] & ~xbits[w]
    if short > 0:
        pick_lowest(cbits, nc, short, virt, jpos, rbits, rng, picked)
    # the batch: X (one pull each) merged with the extra arms (one more each), increasing
    out = 0
    i = 0
    for w in range(nw):
        word = xbits[w]
        while word != 0:
            a = (w << 6) + np.int64(trailing_zeros(word))
            word &= word - 1
            while i < short and picked[i] < a:
                arms[out] = picked[i]
                reps[out] = 1
                out += 1
                i += 1
            arms[out] = a
            reps[out] = 1
            if i < short and picked[i] == a:
                reps[out] = 2
                i += 1
            out += 1
    while i < short:
        arms[out] = picked[i]
        reps[out] = 1
        out += 1
        i += 1
    for w in range(nw):
        xbits[w] = sbits[w]
    for i in range(short):
        a = picked[i]
        xbits[a >> 6] &= ~(np.int64(1) << (a & 63))
    return out, short


@numba.njit(cache=True, _nrt=False)
def two_levels(counts, arms, m, sbits, xbits, nw) -> int:
    """Bitmaps of the places ``0..m-1`` of ``S = arms[:m]`` (``sbits``) and of the places of
    its arms at the lowest count (``xbits``).

    Returns the number of arms at the lowest count, or -1 when the counts of ``S`` span
    more than two levels (then :func:`pick_lowest` and :func:`level_up` do not apply).
    The bits are places in the request ``arms[:m]``: :func:`plan_batch` maps them back.
    """
    for w in range(nw):
        sbits[w] = 0
        xbits[w] = 0
    c = counts[arms[0]]
    for j in range(m):
        if counts[arms[j]] < c:
            c = counts[arms[j]]
    nx = 0
    for j in range(m):
        sbits[j >> 6] |= np.int64(1) << (j & 63)
        d = counts[arms[j]] - c
        if d == 0:
            xbits[j >> 6] |= np.int64(1) << (j & 63)
            nx += 1
        elif d > 1:
            return -1
    return nx


#: rows of the int64 work array of :func:`plan_batch` (``(PLAN_ROWS, n)``; make it with
#: :func:`plan_work`).
P_X, P_SB, P_VIRT, P_JPOS, P_BITS, P_CB, P_PICK, P_RA, P_RR = range(9)
PLAN_ROWS = 9
#: :func:`plan_batch`'s verdicts: ask ``request_pull(work[P_RA, :len], work[P_RR, :len])``,
#: ``request_each(work[P_PICK, :len], 1)``, or the engine's ``request_batch`` over ``S``.
PLAN_PULL, PLAN_EACH, PLAN_ENGINE = 0, 1, 2


@numba.njit(cache=True)
def plan_work(n):
    """The work array of :func:`plan_batch` for ``n`` arms, its scratch rows initialised."""
    work = np.empty((PLAN_ROWS, max(n, 2)), dtype=np.int64)
    work[P_VIRT, :] = -1
    work[P_BITS, :] = 0
    return work


@numba.njit(cache=True, _nrt=False)
def plan_batch(ctx, arms, m, work, nw, nx) -> tuple[int, int, int]:
    """The engine's next RoundRobin batch over ``S = arms[:m]``, drawn here when it can be.

    ``S`` at two levels (:func:`two_levels`'s bitmaps in ``work``, ``nx`` arms at the
    lowest, or ``nx = -1``). A batch that takes arms of the lowest level only
    (:func:`pick_lowest`) or ends a sweep of it (:func:`level_up`) is drawn with the
    engine's draws and written as arms (in request order) to the work rows; the caller
    yields that request, which the engine serves as exactly that batch. Returns
    ``(verdict, length, nx after the batch)``; with :data:`PLAN_ENGINE` nothing is drawn:
    the caller asks ``request_batch`` over ``S`` and calls :func:`two_levels` again.
    """
    if nx < 0:
        return PLAN_ENGINE, 0, nx
    total, supply, per_arm = batch_total(ctx, m)
    if not (0 < total < supply):
        return PLAN_ENGINE, 0, nx
    if nx <= total:
        nb, short = level_up(
            work[P_X],
            work[P_SB],
            nw,
            nx,
            m,
            total,
            per_arm,
            work[P_VIRT],
            work[P_JPOS],
            work[P_BITS],
            work[P_CB],
            ctx.rng,
            work[P_PICK],
            work[P_RA],
            work[P_RR],
        )
        if nb < 0:
            return PLAN_ENGINE, 0, nx
        ra = work[P_RA]
        for i in range(nb):
            ra[i] = arms[ra[i]]
        return PLAN_PULL, nb, m - short
    left = pick_lowest(
        work[P_X], nx, total, work[P_VIRT], work[P_JPOS], work[P_BITS], ctx.rng, work[P_PICK]
    )
    pick = work[P_PICK]
    for i in range(total):
        pick[i] = arms[pick[i]]
    return PLAN_EACH, total, left
