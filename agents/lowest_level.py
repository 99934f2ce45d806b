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

__all__ = ["batch_total", "bitmap_arms", "pick_lowest", "popcount", "select_bit"]


@numba.njit(cache=True, _nrt=False)
def batch_total(ctx, m: int) -> tuple[int, int]:
    """``(total, supply)`` of :func:`agents.engine.schedule`'s batch for a ``BATCH`` request of ``m`` arms.

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
    return total, supply


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
    """One pull each for ``total < nx`` arms of the set ``X`` (bitmap ``xbits``, ``nx`` arms): ``schedule``'s draws.

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
