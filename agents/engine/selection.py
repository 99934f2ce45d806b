"""Top-k selection, random tie-breaking and the anytime answer rules (compiled)."""

from __future__ import annotations

import numba
import numpy as np
from numba.np.random.random_methods import buffered_bounded_lemire_uint32  # (a numba internal)

from agents.engine.context import (
    ACCEPTED,
    HAS_ANSWER,
    RULE,
    RULE_MOST_PULLED,
    RULE_STATUS,
    UNDECIDED,
)

__all__ = [
    "below",
    "integers_below",
    "choose_distinct",
    "argmax_random_ties",
    "snapshot",
    "round_means",
    "top_k_into",
    "top_k_into_scratch",
    "kth_smallest",
    "sort_by_keys",
    "merge_by_keys",
    "current_answer",
]


# ------------------------------------------------------------ top-k and answers
@numba.njit(cache=True, _nrt=False)
def below(rng, m):
    """A uniform integer in ``[0, m)`` (``m >= 1``): ``floor(m u)`` for one uniform ``u``.

    (Not ``rng.integers``, which allocates; the bias of ``floor(m u)`` is below
    ``m / 2^53``.)
    """
    i = int(rng.random() * m)
    return i if i < m else m - 1


@numba.njit(cache=True, _nrt=False)
def integers_below(rng, m):
    """``rng.integers(0, m)`` for ``1 <= m < 2^32``, the same draws, without allocating.

    (Numba's scalar ``rng.integers`` fills an array of one entry; NumPy and numba draw it
    by Lemire's rejection on 32-bit outputs, no output for ``m = 1``.)
    """
    if m < 1 or m > 0xFFFFFFFF:
        raise ValueError("integers_below: m must lie in [1, 2^32)")
    if m == 1:
        return 0
    return np.int64(buffered_bounded_lemire_uint32(rng.bit_generator, np.uint64(m - 1)))


@numba.njit(cache=True, _nrt=False)
def choose_distinct(pool, size, count, rng):
    """Move ``count`` uniformly random entries of ``pool[:size]`` to its front (partial shuffle)."""
    for i in range(count):
        j = i + below(rng, size - i) if size - i > 1 else i
        pool[i], pool[j] = pool[j], pool[i]


@numba.njit(cache=True)
def argmax_random_ties(values, rng):
    """The index of the largest of ``values``, ties uniformly at random.

    One pass; each tie met draws one ``rng.random()`` and keeps the new index with
    probability 1/(number of ties so far) (reservoir sampling), so the result is uniform
    over the maximisers and the draws depend only on ``values``.
    """
    best = -np.inf
    arg = 0
    ties = 0
    for a in range(values.shape[0]):
        v = values[a]
        if v > best:
            best, arg, ties = v, a, 1
        elif v == best:
            ties += 1
            if rng.random() * ties < 1.0:
                arg = a
    return arg


@numba.njit(cache=True, _nrt=False)
def snapshot(ctx, arms, counts0, sums0):
    """Record the pull counts and reward sums of ``arms`` before a round (for round means)."""
    for j in range(arms.shape[0]):
        a = arms[j]
        counts0[a] = ctx.counts[a]
        sums0[a] = ctx.means[a] * ctx.counts[a]


@numba.njit(cache=True, _nrt=False)
def round_means(ctx, arms, counts0, sums0, values):
    """``values[a]`` = mean of arm ``a``'s rewards since :func:`snapshot` (each was pulled)."""
    for j in range(arms.shape[0]):
        a = arms[j]
        c = ctx.counts[a]
        values[a] = (ctx.means[a] * c - sums0[a]) / (c - counts0[a])


@numba.njit(cache=True, _nrt=False)
def kth_smallest(values, idx, m, r):
    """The ``r``-th smallest (0-based) of ``values[idx[:m]]``, i.e.
    ``np.partition(values[idx[:m]], r)[r]``, by quickselect on the indices in place
    (``idx[:m]`` is permuted): Hoare partitions around the median of three, so runs of
    equal values split evenly; no random numbers, no allocation."""
    lo, hi = 0, m - 1
    while lo < hi:
        a, b, c = values[idx[lo]], values[idx[(lo + hi) >> 1]], values[idx[hi]]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while values[idx[i]] < pivot:
                i += 1
            while values[idx[j]] > pivot:
                j -= 1
            if i <= j:
                idx[i], idx[j] = idx[j], idx[i]
                i += 1
                j -= 1
        if r <= j:
            hi = j
        elif r >= i:
            lo = i
        else:
            return pivot
    return values[idx[r]]


@numba.njit(cache=True, _nrt=False)
def top_k_into_scratch(values, cand, k, rng, out, start, scratch):
    """:func:`top_k_into` with scratch room (``scratch``: at least ``len(cand)`` ints,
    overwritten) instead of allocations, for code compiled without the runtime's
    reference counts (``_nrt=False``); the same result and draws."""
    m = cand.shape[0]
    if k <= 0:
        return
    if k >= m:
        for j in range(m):
            out[start + j] = cand[j]
        return
    for j in range(m):
        scratch[j] = cand[j]
    thr = kth_smallest(values, scratch, m, m - k)  # the k-th largest value (O(m))
    pos = start
    nt = 0
    for j in range(m):  # (scratch now holds the tied candidates, in the order of cand)
        v = values[cand[j]]
        if v > thr:
            out[pos] = cand[j]
            pos += 1
        elif v == thr:
            scratch[nt] = cand[j]
            nt += 1
    need = start + k - pos
    choose_distinct(scratch, nt, need, rng)
    for j in range(need):
        out[pos + j] = scratch[j]


@numba.njit(cache=True)
def top_k_into(values, cand, k, rng, out, start):
    """Write the ``k`` candidates ``cand`` with the largest ``values`` to ``out[start:start + k]``.

    Ties at the boundary are broken uniformly at random with ``rng``; ``-inf`` values
    (e.g. never-pulled arms) are chosen only when needed.
    """
    top_k_into_scratch(values, cand, k, rng, out, start, np.empty(cand.shape[0], dtype=np.int64))


@numba.njit(cache=True, _nrt=False, inline="always")
def _key_less(keys_a, keys_b, a, b):
    """Index ``a`` before index ``b`` in the order by (``keys_a``, ``keys_b``, index)."""
    return keys_a[a] < keys_a[b] or (
        keys_a[a] == keys_a[b] and (keys_b[a] < keys_b[b] or (keys_b[a] == keys_b[b] and a < b))
    )


@numba.njit(cache=True, _nrt=False, inline="always")
def _sift_down(keys_a, keys_b, arr, lo, root, end):
    """Move ``arr[lo + root]`` down the max-heap ``arr[lo:lo + end]``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and _key_less(keys_a, keys_b, arr[lo + child], arr[lo + child + 1]):
            child += 1
        if not _key_less(keys_a, keys_b, arr[lo + root], arr[lo + child]):
            return
        arr[lo + root], arr[lo + child] = arr[lo + child], arr[lo + root]
        root = child


@numba.njit(cache=True, _nrt=False)
def sort_by_keys(keys_a, keys_b, arr, lo, hi):
    """Sort the indices ``arr[lo:hi]`` by (``keys_a``, ``keys_b``, index) in place
    (heapsort: no scratch room, no allocation)."""
    m = hi - lo
    for start in range(m // 2 - 1, -1, -1):
        _sift_down(keys_a, keys_b, arr, lo, start, m)
    for end in range(m - 1, 0, -1):
        arr[lo], arr[lo + end] = arr[lo + end], arr[lo]
        _sift_down(keys_a, keys_b, arr, lo, 0, end)


@numba.njit(cache=True, _nrt=False)
def merge_by_keys(keys_a, keys_b, x, nx, y, ny, out):
    """``out[:nx + ny]``: the indices ``x[:nx]`` and ``y[:ny]``, each sorted by
    (``keys_a``, ``keys_b``, index), merged in that order."""
    i = j = 0
    for p in range(nx + ny):
        if j >= ny or (i < nx and _key_less(keys_a, keys_b, x[i], y[j])):
            out[p] = x[i]
            i += 1
        else:
            out[p] = y[j]
            j += 1


@numba.njit(cache=True)
def _pulled_values(ctx):
    n = ctx.counts.shape[0]
    values = np.empty(n)
    for i in range(n):
        values[i] = ctx.means[i] if ctx.counts[i] > 0 else -np.inf
    return values


@numba.njit(cache=True)
def current_answer(ctx):
    """The answer now: the algorithm's own if it finished, else its anytime rule (sorted).

    Rules: :data:`RULE_EMPIRICAL`, the ``k`` highest empirical means (never-pulled arms
    last); :data:`RULE_STATUS`, the arms marked :data:`ACCEPTED` then the highest
    empirical means among the :data:`UNDECIDED` ones; :data:`RULE_MOST_PULLED`, the
    ``k`` most pulled arms. Ties at random with ``ctx.rng``.
    """
    k = ctx.answer.shape[0]
    out = np.empty(k, dtype=np.int64)
    if ctx.iv[HAS_ANSWER] == 1:
        out[:] = ctx.answer
        out.sort()
        return out
    n = ctx.counts.shape[0]
    rule = ctx.iv[RULE]
    if rule == RULE_MOST_PULLED:
        values = ctx.counts.astype(np.float64)
        top_k_into(values, np.arange(n), k, ctx.rng, out, 0)
    elif rule == RULE_STATUS:
        acc = 0
        for i in range(n):
            if ctx.status[i] == ACCEPTED and acc < k:
                out[acc] = i
                acc += 1
        if acc < k:
            und = np.flatnonzero(ctx.status == UNDECIDED)
            top_k_into(_pulled_values(ctx), und, k - acc, ctx.rng, out, acc)
    else:
        top_k_into(_pulled_values(ctx), np.arange(n), k, ctx.rng, out, 0)
    out.sort()
    return out
