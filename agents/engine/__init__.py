"""The compiled engine of the scripted agents: one implementation, two ways to play it.

Every algorithm of :mod:`agents` is a numba *generator* ``run(ctx, prm)`` (one per
module, next to its agent class): it reads the statistics in ``ctx``, yields pull
requests, and finally writes its answer with :func:`finish`. ``ctx`` (:class:`Ctx`)
holds the agent's arrays: pull counts and empirical means, the request buffer, the
scheduler's state, a per-arm ``status`` (for anytime answers), the answer, the
integer/float registers ``iv``/``fv`` and the agent's generator ``rng``. ``prm`` is the
agent's float64 parameter vector.

Requests (the values a generator yields):

* ``arm >= 0``: pull ``arm`` once, as one batch of one pull (fits every batch model);
* :data:`PULL` (from :func:`request_pull` / :func:`request_each`): pull
  the requested arms the requested numbers of times, spread over batches by RoundRobin;
* :data:`BATCH` (from :func:`request_batch`): exactly one RoundRobin batch over
  the requested arms.

The same generator is played in two ways, which make the same requests, the same
batches and the same draws (``tests/test_fast_path.py`` checks every agent bit for
bit):

* the reference (Gymnasium) path: :class:`agents.base.ScriptedAgent` resumes the
  generator from Python, asks :func:`schedule` for each batch and records it with
  :func:`record_batch` after the environment stepped;
* the fast path: :func:`drive`, compiled, iterates the generator, schedules batches
  with the same functions, and draws rewards with the environment's own kernels
  (:mod:`bandit_envs.kernels`) on the environment's arrays, until the episode's
  sampling ends; :func:`agents.run_episode` then lets the environment finish the
  episode (answer step, scores, terminal ``info``) in Python. A ``PULL`` request that
  is exactly one batch (distinct arms, each within ``r``, all within ``b`` and the
  budget: :func:`_whole_batch`) is served as that batch without the scheduler's
  bookkeeping: the batch ``schedule`` would make of it, drawn in arm order with
  independent rewards. :func:`serve_request` and :func:`serve_arm` serve one yielded
  request each; loops that play an algorithm without its generator (the LUCB family's
  fast path) call them as ``drive`` does.

Batches follow Jun et al. (2016) Algorithm 1 (RoundRobin; its ``a_l <= r`` read as
``a_l < r``, paper-notes): each pull goes to the requested arm with the fewest pulls
(counting the batch's own), ties uniformly at random; :func:`round_robin` computes the
allocation by water filling, and one-pull batches take the arms of the lowest level in
random order from a bucket (the same law, O(1) amortised per pull).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from bandit_envs import kernels as env_kernels

__all__ = [
    "BATCH",
    "Ctx",
    "PULL",
    "RULE_EMPIRICAL",
    "RULE_MOST_PULLED",
    "RULE_STATUS",
    "current_answer",
    "drive",
    "fast_path",
    "below",
    "choose_distinct",
    "finish",
    "finish_to",
    "make_ctx",
    "request_batch",
    "request_each",
    "request_pull",
    "round_robin",
    "round_robin_into",
    "top_k_into",
]

# ---------------------------------------------------------------- registers
#: ``iv`` indices: the problem (read-only for algorithms) ...
N, K, B, R, BUDGET, MAX_BATCHES, SETTING = 0, 1, 2, 3, 4, 5, 6
#: ... and the bookkeeping (pulls and batches made, request and answer state).
PULLS, BATCHES, REQ_LEN, REQ_KIND, REQ_OPEN, REQ_DUE = 7, 8, 9, 10, 11, 12
FINISHED, HAS_ANSWER, RULE, BUCKET_LEN, BUCKET_LEVEL, STEPS = 13, 14, 15, 16, 17, 18
#: ... and the state of the level buckets of a ``PULL`` request (:func:`_bucket_batch`).
NEXT_LEN, HEAD, DEFER_LEN, BUCKETS_READY = 19, 20, 21, 22
#: ... and the number of arms of the batch that served the last ``BATCH`` request (0:
#: none yet), whose arms :func:`record_batch` leaves in ``sched[BATCH_ARMS, :BATCH_LEN]``
#: for the algorithm to read when it resumes (only those arms' statistics changed).
BATCH_LEN = 23
NI = 24
#: rows of ``Ctx.sched`` (one array, not nine: a generator that keeps ``ctx`` live
#: across a ``yield`` pays for every array of it at each resume): pulls still owed per
#: request position, the position of an arm in the request (-1: none), the batch made,
#: scratch, and the request itself (its arms and the pulls asked of each).
DUE, POS_OF, BATCH_ARMS, BATCH_REPS, WORK, CAPS, ALLOC, LEVEL, CAND, REQ_ARMS, REQ_REPS = range(11)
SCHED_ROWS = 11
#: ``fv`` indices: the sub-Gaussian scale of one reward.
SIGMA = 0
NF = 4
#: ``fv[ALG_F:NF]``: the algorithm's own registers (the engine never reads or writes
#: them), for state its agent reads back, e.g. for an anytime answer (AT-LUCB).
ALG_F = 1
#: ``iv[SETTING]`` values.
FIXED_BUDGET, FIXED_CONFIDENCE = 0, 1
#: request codes (``arm >= 0`` is one pull of that arm).
PULL, BATCH = -1, -2
#: ``status`` values, read by the anytime answer rule :data:`RULE_STATUS`.
UNDECIDED, ACCEPTED, REJECTED = 0, 1, 2
#: anytime answer rules (:func:`current_answer`).
RULE_EMPIRICAL, RULE_STATUS, RULE_MOST_PULLED = 0, 1, 2
#: :func:`drive` outcomes.
SAMPLING_OVER, AGENT_STOPPED = 0, 1


class Ctx(NamedTuple):
    """An agent's compiled state for one episode (see the module docstring)."""

    counts: np.ndarray  # int64[n], pulls per arm
    means: np.ndarray  # float64[n], empirical means (0 before the first pull)
    status: np.ndarray  # int8[n], UNDECIDED / ACCEPTED / REJECTED
    answer: np.ndarray  # int64[k]
    sched: np.ndarray  # int64[SCHED_ROWS, n], the scheduler's per-arm state (rows below)
    iv: np.ndarray  # int64[NI] registers
    fv: np.ndarray  # float64[NF] registers
    rng: np.random.Generator


def _new_sched(n: int) -> np.ndarray:
    sched = np.zeros((SCHED_ROWS, n), dtype=np.int64)
    sched[POS_OF] = -1
    return sched


def make_ctx(problem, rng: np.random.Generator, rule: int) -> Ctx:
    """A fresh :class:`Ctx` for an episode of ``problem`` (a ``bandit_envs`` ``Problem``)."""
    n, k = problem.n_arms, problem.k
    iv = np.zeros(NI, dtype=np.int64)
    iv[N], iv[K] = n, k
    iv[B] = -1 if problem.batch_size is None else problem.batch_size
    iv[R] = -1 if problem.repeat_limit is None else problem.repeat_limit
    iv[BUDGET] = -1 if problem.budget is None else problem.budget
    iv[MAX_BATCHES] = -1 if problem.max_batches is None else problem.max_batches
    iv[SETTING] = FIXED_BUDGET if problem.setting == "fixed_budget" else FIXED_CONFIDENCE
    iv[RULE] = rule
    fv = np.zeros(NF)
    fv[SIGMA] = problem.sigma
    return Ctx(
        counts=np.zeros(n, dtype=np.int64),
        means=np.zeros(n),
        status=np.zeros(n, dtype=np.int8),
        answer=np.zeros(k, dtype=np.int64),
        sched=_new_sched(n),
        iv=iv,
        fv=fv,
        rng=rng,
    )


# ------------------------------------------------------- algorithm helpers
@numba.njit(cache=True, _nrt=False)
def request_pull(ctx, arms, reps):
    """Ask for ``reps[j]`` more pulls of ``arms[j]``: ``yield request_pull(ctx, arms, reps)``."""
    m = arms.shape[0]
    for j in range(m):
        ctx.sched[REQ_ARMS, j] = arms[j]
        ctx.sched[REQ_REPS, j] = reps[j]
    ctx.iv[REQ_LEN] = m
    return PULL


@numba.njit(cache=True, _nrt=False)
def request_each(ctx, arms, times):
    """Ask for ``times`` more pulls of every arm of ``arms``."""
    m = arms.shape[0]
    for j in range(m):
        ctx.sched[REQ_ARMS, j] = arms[j]
        ctx.sched[REQ_REPS, j] = times
    ctx.iv[REQ_LEN] = m
    return PULL


@numba.njit(cache=True, _nrt=False)
def request_two(ctx, a, b):
    """Ask for one more pull of arms ``a`` and ``b`` (distinct): the LUCB round."""
    ctx.sched[REQ_ARMS, 0] = a
    ctx.sched[REQ_ARMS, 1] = b
    ctx.sched[REQ_REPS, 0] = 1
    ctx.sched[REQ_REPS, 1] = 1
    ctx.iv[REQ_LEN] = 2
    return PULL


@numba.njit(cache=True, _nrt=False)
def request_batch(ctx, arms):
    """Ask for exactly one RoundRobin batch over ``arms``."""
    m = arms.shape[0]
    for j in range(m):
        ctx.sched[REQ_ARMS, j] = arms[j]
        ctx.sched[REQ_REPS, j] = 0
    ctx.iv[REQ_LEN] = m
    return BATCH


@numba.njit(cache=True, _nrt=False)
def finish_to(answer, iv, arms):
    """:func:`finish` given only ``ctx.answer`` and ``ctx.iv``.

    For generators that keep few arrays live across their yields: numba saves every
    array a generator still needs after a ``yield`` at each resume (about 12 ns each),
    so a hot loop that does not touch ``ctx`` after it is cheaper.
    """
    k = answer.shape[0]
    if arms.shape[0] != k:
        raise RuntimeError("the algorithm answered a set whose size is not k")
    for j in range(k):
        answer[j] = arms[j]
    iv[HAS_ANSWER] = 1


@numba.njit(cache=True, _nrt=False)
def finish(ctx, arms):
    """Record the algorithm's answer (``k`` distinct arms); then ``return`` from ``run``."""
    finish_to(ctx.answer, ctx.iv, arms)


@numba.njit(cache=True, _nrt=False)
def pulls_left(ctx):
    """Pulls the budget has left (``-1``: no pull budget)."""
    b = ctx.iv[BUDGET]
    return -1 if b < 0 else b - ctx.iv[PULLS]


@numba.njit(cache=True, _nrt=False)
def batches_left(ctx):
    """Batches left before ``max_batches`` (``-1``: no limit)."""
    m = ctx.iv[MAX_BATCHES]
    return -1 if m < 0 else m - ctx.iv[BATCHES]


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
def sampling_spent(ctx):
    """Whether the pull budget or ``max_batches`` is spent (nothing more is asked for)."""
    iv = ctx.iv
    if iv[BUDGET] >= 0 and iv[PULLS] >= iv[BUDGET]:
        return True
    return iv[MAX_BATCHES] >= 0 and iv[BATCHES] >= iv[MAX_BATCHES]


# ------------------------------------------------------------ the fast path
@numba.njit(cache=True, _nrt=False)
def _insertion_sort_batch(arms, reps, m, out_arms, out_reps):
    """A short batch (``m <= 16``) in arm-index order (the environment draws in that order)."""
    for j in range(m):
        out_arms[j] = arms[j]
        out_reps[j] = reps[j]
    for j in range(1, m):
        a, r = out_arms[j], out_reps[j]
        i = j - 1
        while i >= 0 and out_arms[i] > a:
            out_arms[i + 1] = out_arms[i]
            out_reps[i + 1] = out_reps[i]
            i -= 1
        out_arms[i + 1] = a
        out_reps[i + 1] = r


@numba.njit(cache=True, _nrt=False)
def _bitmap_sort_batch(arms, reps, m, out_arms, out_reps, bits, rep_of):
    """A batch of distinct arms in arm-index order, by a bitmap of the arms.

    Mark each arm's bit in ``bits`` (``uint64[ceil(n / 64)]``, all zero on entry and on
    return) and its repeats in ``rep_of`` (``int64[n]`` scratch), then read the set
    bits word by word from the lowest arm's word to the highest's: O(m + span / 64) for
    arms spanning ``span`` indices, against O(m log m) data-dependent branches for
    :func:`_heap_sort_batch`. The output is the same (the sorted order of distinct keys
    is unique). Returns ``False`` (nothing written) when the span is too wide for it to pay.
    """
    lo = arms[0]
    hi = arms[0]
    for j in range(1, m):
        a = arms[j]
        if a < lo:
            lo = a
        elif a > hi:
            hi = a
    w_lo = lo >> 6
    w_hi = hi >> 6
    if w_hi - w_lo > 8 * m:
        return False
    one = np.uint64(1)
    for j in range(m):
        a = arms[j]
        bits[a >> 6] |= one << np.uint64(a & 63)
        rep_of[a] = reps[j]
    i = 0
    for w in range(w_lo, w_hi + 1):
        x = bits[w]
        if x == 0:
            continue
        bits[w] = 0
        base = w << 6
        while x != 0:
            a = base + np.int64(trailing_zeros(x))
            out_arms[i] = a
            out_reps[i] = rep_of[a]
            i += 1
            x &= x - one
    return True


@numba.njit(cache=True, _nrt=False)
def _heap_sort_batch(arms, reps, m, out_arms, out_reps):
    """A long batch in arm-index order (in-place heap sort, no allocation)."""
    for j in range(m):
        out_arms[j] = arms[j]
        out_reps[j] = reps[j]
    for start in range((m - 2) // 2, -1, -1):
        _sift_pairs(out_arms, out_reps, start, m)
    for end in range(m - 1, 0, -1):
        out_arms[0], out_arms[end] = out_arms[end], out_arms[0]
        out_reps[0], out_reps[end] = out_reps[end], out_reps[0]
        _sift_pairs(out_arms, out_reps, 0, end)


@numba.njit(cache=True, _nrt=False)
def _sift_pairs(keys, vals, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and keys[child + 1] > keys[child]:
            child += 1
        if keys[root] < keys[child]:
            keys[root], keys[child] = keys[child], keys[root]
            vals[root], vals[child] = vals[child], vals[root]
            root = child
        else:
            return


@numba.njit(cache=True, _nrt=False)
def _sort_batch(arms, reps, m, out_arms, out_reps, bits, rep_of):
    """A batch of distinct arms in arm-index order (the environment draws in that order):
    insertion sort up to 16 arms, else the bitmap sort (the heap sort if it declines)."""
    if m <= 16:
        _insertion_sort_batch(arms, reps, m, out_arms, out_reps)
    elif not _bitmap_sort_batch(arms, reps, m, out_arms, out_reps, bits, rep_of):
        _heap_sort_batch(arms, reps, m, out_arms, out_reps)


@numba.njit(cache=True, _nrt=False)
def _env_pull(env, counts, sums, emp, a):
    """Draw one pull of arm ``a`` from the environment's stream and book it."""
    x = env_kernels.draw_one(
        env.kind, env.dist, env.rng, env.buf, env.pos, env.key, env.used,
        env.means, env.sigma, env.cdf, env.probs, env.support, a,
    )
    c = counts[a] + 1
    counts[a] = c
    s = sums[a] + x
    sums[a] = s
    emp[a] = s / c


@numba.njit(cache=True, _nrt=False)
def _env_batch(env, counts, sums, emp, arms, reps, m, drawn):
    """Draw and book one batch on the environment's arrays (``TopKBaseEnv._sample``)."""
    if m == 1 and reps[0] == 1:
        _env_pull(env, counts, sums, emp, arms[0])
        return
    env_kernels.draw_sums(
        env.kind, env.dist, env.rng, env.buf, env.pos, env.key, env.used,
        env.means, env.sigma, env.cdf, env.probs, env.support, arms[:m], reps[:m], drawn[:m],
    )
    env_kernels.apply_pulls(arms[:m], reps[:m], drawn[:m], counts, sums, emp)


@numba.njit(cache=True, _nrt=False)
def _one_pull_request(ctx, env, counts, sums, emp, reward, step_reward, max_steps):
    """Serve the just-accepted ``PULL`` request at ``batch_size = 1``: fused, pull by pull.

    Exactly the loop of :func:`drive` over :func:`schedule` (which at one pull per
    batch is :func:`_bucket_batch` with ``room = 1``, or the request's last pull),
    :func:`_env_batch` (one pull: ``draw_one``) and :func:`record_batch`: the same arms
    in the same order, the same ``ctx.rng`` draws (``below`` when the lowest level holds
    more than one arm), the same reward draws, registers and scheduler state, with the
    bucket state in local variables instead of ``iv`` and no per-pull sorting, dispatch
    or request scan. One pull per batch holds no arm twice, so the repeat limit never
    binds: an arm pulled and still owed goes one level up (``repeat_limit = 1`` routes it
    through ``deferred``, which puts it there at the next batch, as this loop keeps it).
    Returns ``(outcome, reward)``: :data:`SAMPLING_OVER` if the budget or
    ``max_batches`` ended sampling, else ``-1`` (the request is served and closed).
    """
    iv = ctx.iv
    sched = ctx.sched
    rng = ctx.rng
    m = iv[REQ_LEN]
    r = iv[R]
    due, arms, alloc = sched[DUE], sched[REQ_ARMS], sched[ALLOC]
    bucket, nxt, order, deferred = sched[WORK], sched[LEVEL], sched[CAND], sched[CAPS]
    ready = False
    last = False  # the request's last pull was made
    nb = nn = head = lvl = ndef = 0
    while True:
        # schedule(ctx): room = min(1, pulls left)
        if iv[REQ_DUE] <= 0 or pulls_left(ctx) == 0:
            break
        if iv[REQ_DUE] == 1:  # the whole rest of the request fits in this batch
            pos = 0
            while due[pos] <= 0:
                pos += 1
        else:  # _bucket_batch(ctx, 1)
            if ready:
                for d in range(ndef):
                    p = deferred[d]
                    if due[p] > 0 and counts[arms[p]] + alloc[p] < lvl:
                        ready = False
                        break
            if not ready:
                for j in range(m):
                    alloc[j] = 0
                _sort_by_level(ctx, m)
                nb = nn = head = ndef = 0
                lvl = counts[arms[order[0]]]
                ready = True
            for d in range(ndef):
                p = deferred[d]
                if due[p] <= 0:
                    continue
                if counts[arms[p]] + alloc[p] == lvl:
                    bucket[nb] = p
                    nb += 1
                else:
                    nxt[nn] = p
                    nn += 1
            ndef = 0
            pos = -1
            while True:
                if nb == 0:
                    if nn > 0:
                        lvl += 1
                        for j in range(nn):
                            bucket[j] = nxt[j]
                        nb = nn
                        nn = 0
                    elif head < m:
                        lvl = counts[arms[order[head]]] + alloc[order[head]]
                    else:
                        break
                    while head < m and counts[arms[order[head]]] + alloc[order[head]] <= lvl:
                        p = order[head]
                        head += 1
                        if due[p] > 0:
                            bucket[nb] = p
                            nb += 1
                    if nb == 0:
                        continue
                i = below(rng, nb) if nb > 1 else 0
                pos = bucket[i]
                nb -= 1
                bucket[i] = bucket[nb]
                break
            if pos < 0:
                break
            if due[pos] > 1:
                if r < 0 or r > 1:
                    nxt[nn] = pos
                    nn += 1
                else:
                    deferred[ndef] = pos
                    ndef += 1
        a = arms[pos]
        sched[BATCH_ARMS, 0] = a
        sched[BATCH_REPS, 0] = 1
        _env_pull(env, counts, sums, emp, a)  # _env_batch of one pull
        # record_batch
        iv[PULLS] += 1
        iv[BATCHES] += 1
        due[pos] -= 1
        iv[REQ_DUE] -= 1
        if iv[REQ_DUE] <= 0:
            last = True
            break
        if sampling_spent(ctx):
            _save_buckets(iv, ready, nb, nn, head, lvl, ndef)
            return SAMPLING_OVER, reward
        reward += step_reward
        iv[STEPS] += 1
        if max_steps >= 0 and iv[STEPS] >= max_steps:
            raise RuntimeError("the episode did not end within max_steps")
    _save_buckets(iv, ready, nb, nn, head, lvl, ndef)
    close_request(ctx)
    if last:  # the last pull's step, booked like the others
        if sampling_spent(ctx):
            return SAMPLING_OVER, reward
        reward += step_reward
        iv[STEPS] += 1
        if max_steps >= 0 and iv[STEPS] >= max_steps:
            raise RuntimeError("the episode did not end within max_steps")
    return -1, reward


@numba.njit(cache=True, _nrt=False)
def _whole_batch(ctx):
    """``(pulls, increasing)`` of the yielded ``PULL`` request if it is one batch, else ``(0, _)``.

    The request (``sched[REQ_ARMS/REQ_REPS, :REQ_LEN]``) qualifies when its arms lie in
    ``[0, n)``, every arm is asked at least one pull and at most ``r``, and the pulls fit
    in one batch (``b`` and the budget's pulls left); ``increasing``: its arms are
    strictly increasing (so distinct, and in the order the environment draws
    independent rewards in). A qualifying request of distinct arms is one that
    :func:`accept_request` keeps whole and :func:`schedule` returns as one batch (its
    "whole rest fits" case), so :func:`serve_request` serves it directly
    (:func:`_book_whole_batch`) when its arms increase or are distinct
    (:func:`_distinct`): paired rewards are drawn in any order, independent ones after
    the sort into arm order that the general path makes; any other request (or an
    invalid one, whose error :func:`accept_request` raises) takes the general path.
    O(m), no writes (it stops at the first arm that disqualifies the request).
    """
    iv = ctx.iv
    m = iv[REQ_LEN]
    n = ctx.counts.shape[0]
    if m <= 0 or m > n:
        return 0, False
    arms, reps = ctx.sched[REQ_ARMS], ctx.sched[REQ_REPS]
    r = iv[R]
    room = iv[B]
    left = pulls_left(ctx)
    if left >= 0 and (room < 0 or left < room):
        room = left
    total = 0
    prev = -1
    increasing = True
    for j in range(m):
        a = arms[j]
        p = reps[j]
        if a < 0 or a >= n or p <= 0 or (r >= 0 and p > r):
            return 0, False
        if a <= prev:
            increasing = False
        prev = a
        total += p
        if room >= 0 and total > room:
            return 0, False
    return total, increasing


@numba.njit(cache=True, _nrt=False)
def _distinct(arms, m, bits):
    """Whether the arms ``arms[:m]`` (in ``[0, n)``) are distinct; O(m).

    ``bits``: ``uint64[ceil(n / 64)]`` scratch, all zero on entry and on return.
    """
    one = np.uint64(1)
    j = 0
    while j < m:
        a = arms[j]
        bit = one << np.uint64(a & 63)
        if bits[a >> 6] & bit:
            break
        bits[a >> 6] |= bit
        j += 1
    for i in range(j):
        bits[arms[i] >> 6] = 0
    return j == m


@numba.njit(cache=True, _nrt=False)
def _book_whole_batch(ctx, total):
    """Book a :func:`_whole_batch` request served as one batch: the registers as
    :func:`accept_request`, :func:`schedule` and :func:`record_batch` (which closes the
    request) leave them (the ``sched`` rows are scratch between requests)."""
    iv = ctx.iv
    iv[PULLS] += total
    iv[BATCHES] += 1
    iv[REQ_KIND] = PULL
    iv[REQ_DUE] = 0
    iv[BATCH_LEN] = 0
    iv[REQ_OPEN] = 0
    iv[REQ_LEN] = 0
    iv[BUCKETS_READY] = 0


@numba.njit(cache=True, _nrt=False)
def serve_arm(ctx, env, counts, sums, emp, arm, reward, step_reward, max_steps):
    """Serve a generator's ``yield arm`` (one pull of ``arm``, one batch) as :func:`drive`
    does: ``(outcome, reward)`` as :func:`_end_step`."""
    if arm >= counts.shape[0]:
        raise RuntimeError("the agent requested an arm outside [0, n_arms)")
    _env_pull(env, counts, sums, emp, arm)
    record_one(ctx)
    return _end_step(ctx, reward, step_reward, max_steps)


@numba.njit(cache=True, _nrt=False)
def serve_serial_request(ctx, code, env, counts, sums, emp, reward, step_reward, max_steps):
    """Serve a yielded ``PULL`` request at ``batch_size = 1`` as :func:`drive` does
    (:func:`accept_request`, then :func:`_one_pull_request`): ``(outcome, reward)``."""
    accept_request(ctx, code)
    if ctx.iv[REQ_OPEN] == 1:
        return _one_pull_request(ctx, env, counts, sums, emp, reward, step_reward, max_steps)
    return -1, reward


@numba.njit(cache=True, _nrt=False)
def step_reward_of(ctx, cost_per_batch):
    """The step reward of a sampling step that does not end sampling (:func:`drive`)."""
    return -cost_per_batch if ctx.iv[SETTING] == FIXED_CONFIDENCE else 0.0


@numba.njit(cache=True, _nrt=False)
def _end_step(ctx, reward, step_reward, max_steps):
    """After a batch of :func:`drive`: ``(SAMPLING_OVER, reward)`` if it ended sampling (its
    step reward is the environment's to compute), else ``(-1, reward + step_reward)``,
    counting the step (``RuntimeError`` at ``max_steps``)."""
    if sampling_spent(ctx):
        return SAMPLING_OVER, reward
    reward += step_reward
    ctx.iv[STEPS] += 1
    if max_steps >= 0 and ctx.iv[STEPS] >= max_steps:
        raise RuntimeError("the episode did not end within max_steps")
    return -1, reward


@numba.njit(cache=True, _nrt=False)
def _save_buckets(iv, ready, nb, nn, head, lvl, ndef):
    """Write :func:`_one_pull_request`'s bucket state to the registers of :func:`_bucket_batch`."""
    if ready:
        iv[BUCKET_LEN], iv[NEXT_LEN], iv[HEAD] = nb, nn, head
        iv[BUCKET_LEVEL], iv[DEFER_LEN] = lvl, ndef
        iv[BUCKETS_READY] = 1


@numba.njit(cache=True)
def scratch(n):
    """The scratch arrays :func:`serve_request` needs on ``n`` arms (one set per episode)."""
    return (
        np.empty(n, dtype=np.int64),  # a batch in arm order: arms
        np.empty(n, dtype=np.int64),  # ... and their pulls
        np.empty(n),  # the drawn reward sums
        np.zeros((n + 63) >> 6, dtype=np.uint64),  # _bitmap_sort_batch's and _distinct's bits
        np.empty(n, dtype=np.int64),  # _bitmap_sort_batch's pulls by arm
    )


@numba.njit(cache=True, _nrt=False)
def serve_request(ctx, code, env, counts, sums, emp, reward, step_reward, max_steps, scr):
    """Serve a yielded request (``PULL`` or ``BATCH``) batch by batch as :func:`drive`
    does; ``scr``: :func:`scratch`. Returns ``(outcome, reward)``: :data:`SAMPLING_OVER`
    if a batch ended sampling, else ``-1``, and the step rewards summed in."""
    iv = ctx.iv
    sorted_arms, sorted_reps, drawn, bits, rep_of = scr
    batch_arms, batch_reps = ctx.sched[BATCH_ARMS], ctx.sched[BATCH_REPS]
    req_arms, req_reps = ctx.sched[REQ_ARMS], ctx.sched[REQ_REPS]
    if code != PULL and code != BATCH:
        raise RuntimeError("the agent yielded an unknown request code")
    if code == PULL and iv[B] != 1:
        total, increasing = _whole_batch(ctx)
        m = iv[REQ_LEN]
        if total > 0 and (increasing or _distinct(req_arms, m, bits)):
            # exactly one batch: no scheduler copies or state
            if increasing or env.kind == env_kernels.PAIRED:
                # (paired rewards are drawn in any order: the same sums)
                _env_batch(env, counts, sums, emp, req_arms, req_reps, m, drawn)
            else:
                # independent rewards in arm order, as the general path sorts the batch
                _sort_batch(req_arms, req_reps, m, sorted_arms, sorted_reps, bits, rep_of)
                _env_batch(env, counts, sums, emp, sorted_arms, sorted_reps, m, drawn)
            _book_whole_batch(ctx, total)
            return _end_step(ctx, reward, step_reward, max_steps)
    if code == PULL and iv[B] == 1:
        return serve_serial_request(
            ctx, code, env, counts, sums, emp, reward, step_reward, max_steps
        )
    accept_request(ctx, code)
    while iv[REQ_OPEN] == 1:
        m = schedule(ctx)
        if m == 0:
            close_request(ctx)
            break
        if env.kind == env_kernels.PAIRED:
            # paired draws depend on (arm, pull index) only: any order gives the same sums
            _env_batch(env, counts, sums, emp, batch_arms, batch_reps, m, drawn)
        else:
            _sort_batch(batch_arms, batch_reps, m, sorted_arms, sorted_reps, bits, rep_of)
            _env_batch(env, counts, sums, emp, sorted_arms, sorted_reps, m, drawn)
        record_batch(ctx, batch_arms[:m], batch_reps[:m])
        outcome, reward = _end_step(ctx, reward, step_reward, max_steps)
        if outcome == SAMPLING_OVER:
            return SAMPLING_OVER, reward
    return -1, reward


@numba.njit(cache=True)
def drive(gen, ctx, env, counts, sums, emp, cost_per_batch, max_steps):
    """Play ``gen`` (an algorithm's generator on ``ctx``) until sampling ends.

    ``env`` is the episode's :class:`~bandit_envs.kernels.RewardState`; ``counts``,
    ``sums``, ``emp`` the environment's arrays (updated in place, as its ``step``
    would). ``ctx.counts``/``ctx.means`` must be the environment's ``counts``/``emp``.
    Returns ``(outcome, reward)``: :data:`SAMPLING_OVER` when the budget or
    ``max_batches`` ended sampling (the last batch's step reward is the
    environment's to compute), :data:`AGENT_STOPPED` when the algorithm returned; and
    the sum of the step rewards of the other sampling steps.
    """
    iv = ctx.iv
    scr = scratch(counts.shape[0])
    step_reward = step_reward_of(ctx, cost_per_batch)
    reward = 0.0
    if sampling_spent(ctx):
        return SAMPLING_OVER, reward
    for code in gen:
        if code >= 0:
            outcome, reward = serve_arm(
                ctx, env, counts, sums, emp, code, reward, step_reward, max_steps
            )
        else:
            outcome, reward = serve_request(
                ctx, code, env, counts, sums, emp, reward, step_reward, max_steps, scr
            )
        if outcome == SAMPLING_OVER:
            return SAMPLING_OVER, reward
    iv[FINISHED] = 1
    return AGENT_STOPPED, reward


#: :func:`fast_path` loops already built, by algorithm.
_FAST_PATHS: dict = {}
_FAST_PATH_SOURCE = '''\
def {name}(ctx, prm, env, counts, sums, emp, cost, max_steps):
    """The fast path of ``{run}``: :func:`agents.engine.drive` on its generator."""
    return drive(run(ctx, prm), ctx, env, counts, sums, emp, cost, max_steps)
'''


def fast_path(run):
    """The compiled episode loop of algorithm ``run``: :func:`drive` on ``run(ctx, prm)``.

    ``run`` is a numba generator ``run(ctx, prm)`` defined at the top level of a module.
    The loop is a two-line function ``(ctx, prm, env, counts, sums, emp, cost,
    max_steps) -> drive(run(ctx, prm), ...)``, compiled as if written in ``run``'s module
    (its source file and module name), because numba caches on disk only functions it
    can tie to a source file, and keys them by that file: a loop built by a closure in
    this module would be compiled again in every process. :class:`agents.base.ScriptedAgent`
    calls this for every subclass that sets ``kernel`` and no ``episode_kernel``; the
    loop compiles on the first fast-path episode and loads from the cache afterwards.
    Without a source file (an interactive session) the loop is compiled but not cached.
    """
    loop = _FAST_PATHS.get(run)
    if loop is not None:
        return loop
    py_func = getattr(run, "py_func", None)
    if py_func is None:
        raise TypeError(f"kernel {run!r} must be a numba-compiled generator (@numba.njit)")
    module = sys.modules.get(py_func.__module__)
    source_file = getattr(module, "__file__", None)
    name = f"_fast_path_{py_func.__name__}"
    namespace = {"__name__": py_func.__module__, "run": run, "drive": drive}
    code = compile(
        _FAST_PATH_SOURCE.format(name=name, run=py_func.__qualname__),
        source_file or f"<fast path of {py_func.__qualname__}>",
        "exec",
    )
    exec(code, namespace)
    function = namespace[name]
    function.__qualname__ = name
    loop = _FAST_PATHS[run] = numba.njit(cache=source_file is not None)(function)
    return loop
