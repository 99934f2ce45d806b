"""Serving requests on the environment's arrays: the fast path's episode loop (:func:`drive`)."""

from __future__ import annotations

import sys

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from agents.engine.context import (
    AGENT_STOPPED,
    ALLOC,
    BATCH,
    BATCH_ARMS,
    BATCH_LEN,
    BATCH_REPS,
    BATCHES,
    BUCKETS_READY,
    CAND,
    CAPS,
    DUE,
    FINISHED,
    FIXED_CONFIDENCE,
    LEVEL,
    PULL,
    PULLS,
    REQ_ARMS,
    REQ_DUE,
    REQ_KIND,
    REQ_LEN,
    REQ_OPEN,
    REQ_REPS,
    SAMPLING_OVER,
    SETTING,
    STEPS,
    WORK,
    B,
    N,
    R,
    pulls_left,
    request_each,
    sampling_spent,
)
from agents.engine.scheduler import (
    _save_buckets,
    _sort_by_level,
    accept_request,
    close_request,
    record_batch,
    record_one,
    schedule,
)
from agents.engine.selection import (
    below,
)
from bandit_envs import kernels as env_kernels

__all__ = [
    "serve_arm",
    "serve_serial_request",
    "step_reward_of",
    "scratch",
    "serve_request",
    "serve_each_once",
    "drive",
    "fast_path",
]


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
        env.kind,
        env.dist,
        env.rng,
        env.buf,
        env.pos,
        env.key,
        env.used,
        env.means,
        env.sigma,
        env.cdf,
        env.probs,
        env.support,
        a,
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
        env.kind,
        env.dist,
        env.rng,
        env.buf,
        env.pos,
        env.key,
        env.used,
        env.means,
        env.sigma,
        env.cdf,
        env.probs,
        env.support,
        arms[:m],
        reps[:m],
        drawn[:m],
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
def serve_each_once(ctx, env, counts, sums, emp, cost_per_batch, max_steps):
    """The opening of a generator-free episode kernel whose ``run`` starts with ``yield
    request_each(ctx, np.arange(n), 1)``: that request served as :func:`drive` serves it.

    Returns ``(outcome, reward, scr, step_reward)``: :data:`SAMPLING_OVER` if sampling
    ended (before or during the request) else ``-1``, the step rewards so far, the
    :func:`scratch` arrays and the step reward of the episode's later steps."""
    n = ctx.iv[N]
    scr = scratch(n)
    step_reward = step_reward_of(ctx, cost_per_batch)
    if sampling_spent(ctx):
        return SAMPLING_OVER, 0.0, scr, step_reward
    code = request_each(ctx, np.arange(n), 1)
    outcome, reward = serve_request(
        ctx, code, env, counts, sums, emp, 0.0, step_reward, max_steps, scr
    )
    return outcome, reward, scr, step_reward


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
