"""Top-k selection, random tie-breaking and the anytime answer rules (compiled)."""

from __future__ import annotations

import numba
import numpy as np

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
    "choose_distinct",
    "argmax_random_ties",
    "snapshot",
    "round_means",
    "top_k_into",
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


@numba.njit(cache=True)
def top_k_into(values, cand, k, rng, out, start):
    """Write the ``k`` candidates ``cand`` with the largest ``values`` to ``out[start:start + k]``.

    Ties at the boundary are broken uniformly at random with ``rng``; ``-inf`` values
    (e.g. never-pulled arms) are chosen only when needed.
    """
    m = cand.shape[0]
    if k <= 0:
        return
    if k >= m:
        for j in range(m):
            out[start + j] = cand[j]
        return
    vals = np.empty(m)
    for j in range(m):
        vals[j] = values[cand[j]]
    thr = np.partition(vals, m - k)[m - k]  # the k-th largest value (a selection, O(m))
    pos = start
    tied = np.empty(m, dtype=np.int64)
    nt = 0
    for j in range(m):
        v = vals[j]
        if v > thr:
            out[pos] = cand[j]
            pos += 1
        elif v == thr:
            tied[nt] = cand[j]
            nt += 1
    need = start + k - pos
    choose_distinct(tied, nt, need, rng)
    for j in range(need):
        out[pos + j] = tied[j]


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
