"""BatchRacing: Racing for top-k arms in the (b, r)-batch model (Jun et al. 2016, Alg. 2)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent, check_probability
from agents.engine import level_bounds as lb
from agents.engine import lowest_level
from agents.engine import order_stats as ost
from agents.engine.confidence import jun_width

__all__ = ["BatchRacing"]


# ------------------------------------------------------------ shared helpers
@numba.njit(cache=True)
def width_table(table, need, omega, sigma):
    """``table[t] = jun_width(t, omega, sigma)``, grown by doubling to cover ``t <= need``."""
    if need < table.shape[0]:
        return table
    size = max(1024, 2 * need + 2)
    out = np.empty(size)
    for t in range(size):
        out[t] = jun_width(float(t), omega, sigma)
    return out


@numba.njit(cache=True)
def refill_lowest(counts, arms, m, bucket):
    """The arms of ``arms[:m]`` with the fewest pulls into ``bucket``; their number."""
    level = counts[arms[0]]
    for j in range(1, m):
        if counts[arms[j]] < level:
            level = counts[arms[j]]
    nb = 0
    for j in range(m):
        if counts[arms[j]] == level:
            bucket[nb] = arms[j]
            nb += 1
    return nb


@numba.njit(cache=True)
def take_random(bucket, nb, rng):
    """Remove a uniformly random arm from ``bucket[:nb]`` and return it."""
    i = engine.below(rng, nb) if nb > 1 else 0
    a = bucket[i]
    bucket[i] = bucket[nb - 1]
    return a


@numba.njit(cache=True)
def bounds_of(counts, means, arms, m, table, omega, sigma, lo, hi):
    """``lo[a], hi[a] = mean -/+ D(T_a, omega)`` for ``a`` in ``arms[:m]``; the (grown) table."""
    top = 0
    for j in range(m):
        if counts[arms[j]] > top:
            top = counts[arms[j]]
    table = width_table(table, top, omega, sigma)
    for j in range(m):
        a = arms[j]
        w = table[counts[a]]
        lo[a] = means[a] - w
        hi[a] = means[a] + w
    return table


class Out(NamedTuple):
    """The two arrays of a ``Ctx`` that :func:`agents.engine.finish` writes.

    A generator whose hot loop holds only a few of ``ctx``'s arrays (not ``ctx``
    itself: numba saves every live array at each ``yield``, and ``ctx`` has about 18)
    finishes with ``engine.finish(Out(answer, iv), arms)``.
    """

    answer: np.ndarray
    iv: np.ndarray


# ------------------------------------------------------------- the algorithm
@numba.njit(cache=True)
def _decide(status, s, m, u_thr, l_thr, means, counts, table, acc, na):
    """Accept ``L_i > u_thr``, reject ``U_i < l_thr`` in ``s[:m]``; compact ``s``; ``(m, na)``.

    ``L_i, U_i = mean_i -/+ table[T_i]`` (the values the trackers hold).
    """
    keep = 0
    for j in range(m):
        a = s[j]
        w = table[counts[a]]
        if means[a] - w > u_thr:
            status[a] = engine.ACCEPTED
            acc[na] = a
            na += 1
        elif means[a] + w < l_thr:
            status[a] = engine.REJECTED
        else:
            s[keep] = a
            keep += 1
    return keep, na


@numba.njit(cache=True)
def _settled(status, s, m, k, acc, na):
    """Whether the answer is settled (``|A| = k`` or ``|S| = k - |A|``; accepts ``S`` then)."""
    if na == k:
        return True
    if m == k - na:
        for j in range(m):
            status[s[j]] = engine.ACCEPTED
            acc[na + j] = s[j]
        return True
    return False


#: trackers of the b = 1 path: U (order k_t + 1) and L (order k_t) over S; their keys
#: are the bounds of every path.
_U, _L = 0, 1
#: rows of the generator's int64 work array: S, A, the lowest-level bucket, and the
#: arms of S with the largest L and the smallest U (``work[_EXT, :2]``).
_S, _A, _BUCKET, _EXT = 0, 1, 2, 3


@numba.njit(cache=True)
def _extreme(values, s, m, sgn):
    """The arm of ``s[:m]`` with the largest ``sgn * values``."""
    best = s[0]
    for j in range(1, m):
        if sgn * values[s[j]] > sgn * values[best]:
            best = s[j]
    return best


@numba.njit(cache=True)
def _track_all(heaps, sizes, s, m, kt, key, ext):
    """Build the trackers of the b = 1 path over ``S = s[:m]`` (bounds in ``key``)."""
    ost.build(key, heaps, sizes, _U, s, m, kt + 1)
    ost.build(key, heaps, sizes, _L, s, m, kt)
    ext[0] = _extreme(key[_L], s, m, 1.0)
    ext[1] = _extreme(key[_U], s, m, -1.0)


@numba.njit(cache=True)
def _pulled(key, heaps, sizes, s, m, ext, a, mean, w):
    """Arm ``a``'s bounds after a pull; whether some arm of ``S`` is now decided.

    ``ext`` holds the arms with the largest ``L`` and the smallest ``U`` of ``S``,
    kept lazily (a rescan only when that arm's own bound moved the wrong way:
    O(1) amortised).
    """
    lo = key[_L]
    hi = key[_U]
    lo[a] = mean - w
    hi[a] = mean + w
    ost.update(key, heaps, sizes, _U, a)
    ost.update(key, heaps, sizes, _L, a)
    if lo[a] > lo[ext[0]]:
        ext[0] = a
    elif ext[0] == a:
        ext[0] = _extreme(lo, s, m, 1.0)
    if hi[a] < hi[ext[1]]:
        ext[1] = a
    elif ext[1] == a:
        ext[1] = _extreme(hi, s, m, -1.0)
    return lo[ext[0]] > ost.kth(key, heaps, _U) or hi[ext[1]] < ost.kth(key, heaps, _L)


@numba.njit(cache=True, _nrt=False)
def _y_gained(means, picked, t, yt, nyt, kt, ymin):
    """Arms ``picked[:t]`` joined ``Y`` (their new means): ``(nyt, ymin)``."""
    for i in range(t):
        a = picked[i]
        nyt = lb.offer(means, yt, nyt, kt + 1, a)
        if ymin < 0 or means[a] < means[ymin]:
            ymin = a
    return nyt, ymin


@numba.njit(cache=True, _nrt=False)
def _after_level_up(counts, means, c, arms, nb, yt, nyt, cut, ymin_v, kt, xt, xv, tmp):
    """The levels after ``lowest_level.level_up``'s batch ``arms[:nb]``: ``(nxt, nyt, xmin_v,
    xpad, ymin)``.

    The new ``X`` (count ``c + 1``) is the old ``Y`` less the extra arms and the old
    ``X``'s arms left at ``c + 1``; its list is built from the old ``Y``'s list and those
    arms, kept down to ``cut`` (the old list's last mean when it did not hold all of
    ``Y``: below it, unlisted arms of ``Y`` may lie), so the list is the top of the new
    ``X`` and ``xpad`` bounds the rest, as :func:`agents.engine.level_bounds.maybe_decided`
    needs; ``xmin_v`` is a lower bound (the old ``Y``'s smallest mean before the batch,
    and the old ``X``'s new means). The new ``Y`` (count ``c + 2``) is the batch's
    extra arms. O(b + k_t) (no pass over ``S``).
    """
    nx = 0
    ny = 0
    xmin_v = ymin_v
    for j in range(nyt):
        a = yt[j]
        if counts[a] == c + 1:
            tmp[nx] = a
            nx += 1
    top = tmp.shape[0]
    for j in range(nb):
        a = arms[j]
        if counts[a] == c + 1:
            tmp[nx] = a
            nx += 1
            if means[a] < xmin_v:
                xmin_v = means[a]
        else:
            ny += 1
            tmp[top - ny] = a
    nxt = lb.top_into(means, tmp, nx, 2 * (kt + 1), xt)
    xpad = cut
    if nx > nxt and means[xt[nxt - 1]] > xpad:
        xpad = means[xt[nxt - 1]]
    while nxt > 0 and means[xt[nxt - 1]] < cut:
        nxt -= 1
    for j in range(nxt):
        xv[j] = means[xt[j]]
    nyt = lb.top_into(means, tmp[top - ny :], ny, kt + 1, yt)
    ymin = -1
    for j in range(top - ny, top):
        if ymin < 0 or means[tmp[j]] < means[ymin]:
            ymin = tmp[j]
    return nxt, nyt, xmin_v, xpad, ymin


#: rows of the batch path's work array (after S and A): the lowest level X (a bitmap),
#: the lists of largest means of X and of the next level Y, the shuffle's scratch (its
#: moved entries, their places, a bitmap of ranks), the batch's arms, scratch.
_X, _XT, _YT, _VIRT, _JPOS, _BITS, _PICK, _TMP = range(2, 10)
#: ... and the bitmap of S, a scratch bitmap, and a batch's arms and pulls.
_SB, _CB, _RA, _RR = range(10, 14)


@numba.njit
def run(ctx, prm):
    """BatchRacing (the compiled algorithm; ``prm = [delta]``).

    Few arrays stay live across ``yield`` (each costs about 10 ns per resume): ``work``
    (int64[rows, n]) holds S, A and each path's state; with ``b = 1`` the bounds are the
    trackers' keys (``key[_L]``, ``key[_U]``).
    """
    n = ctx.iv[engine.N]
    k = ctx.iv[engine.K]
    sigma = ctx.fv[engine.SIGMA]
    omega = math.sqrt(prm[0] / (6.0 * n))
    table = width_table(np.empty(0), 0, omega, sigma)
    batches = ctx.iv[engine.B] != 1
    work = np.empty((14 if batches else 4, max(n, 2)), dtype=np.int64)
    work[_S, :n] = np.arange(n)  # the surviving arms S are work[_S, :m]
    m = n
    na = 0  # A is work[_A, :na], in acceptance order
    if batches:
        # One RoundRobin batch over S per round. S sits at two pull levels
        # (agents.engine.level_bounds). A batch that takes some arms of the lowest level X (more
        # of them than the batch has pulls) is drawn here as the engine would
        # (agents.engine.lowest_level.pick_lowest); X's list is left as it was (a one-sided
        # test, refreshed when it cannot rule decisions out) and Y's list takes the
        # batch's arms. Any other batch (the one that ends a sweep of X, or gives every
        # arm pulls) is the engine's BATCH over S, and the levels are rebuilt (O(|S|),
        # once per sweep).
        s = work[_S]
        nw = (n + 63) >> 6
        xv = np.empty(max(n, 2))  # the values of X's list when it was built
        c, nx, nxt, nyt, xmin_v, xpad, ymin = lb.levels(
            ctx.counts,
            ctx.means,
            s,
            m,
            k,
            work[_X],
            work[_SB],
            nw,
            work[_XT],
            xv,
            work[_YT],
            work[_TMP],
        )
        work[_VIRT, :] = -1
        work[_BITS, :] = 0
        decided = False
        started = False  # (the paper's first round pulls before any decision)
        u_thr = l_thr = 0.0
        while True:
            s = work[_S]
            if decided:
                m, na = _decide(
                    ctx.status, s, m, u_thr, l_thr, ctx.means, ctx.counts, table, work[_A], na
                )
            if started and _settled(ctx.status, s, m, k, work[_A], na):
                engine.finish(ctx, work[_A, :k])
                return
            started = True
            kt = k - na
            if decided:
                c, nx, nxt, nyt, xmin_v, xpad, ymin = lb.levels(
                    ctx.counts,
                    ctx.means,
                    s,
                    m,
                    kt,
                    work[_X],
                    work[_SB],
                    nw,
                    work[_XT],
                    xv,
                    work[_YT],
                    work[_TMP],
                )
            fresh = True
            total, supply, per_arm = lowest_level.batch_total(ctx, m)
            nb = -1
            if 0 < total < supply and nx <= total:
                nb, short = lowest_level.level_up(
                    work[_X],
                    work[_SB],
                    nw,
                    nx,
                    m,
                    total,
                    per_arm,
                    work[_VIRT],
                    work[_JPOS],
                    work[_BITS],
                    work[_CB],
                    ctx.rng,
                    work[_PICK],
                    work[_RA],
                    work[_RR],
                )
            if nb >= 0:
                # the batch that ends the sweep of X: the levels move up one pull
                cut = ctx.means[work[_YT, nyt - 1]] if nyt > 0 and m - nx > nyt else -np.inf
                ymin_v = ctx.means[ymin] if ymin >= 0 else np.inf
                yield engine.request_pull(ctx, work[_RA, :nb], work[_RR, :nb])
                nxt, nyt, xmin_v, xpad, ymin = _after_level_up(
                    ctx.counts,
                    ctx.means,
                    c,
                    work[_RA],
                    nb,
                    work[_YT],
                    nyt,
                    cut,
                    ymin_v,
                    kt,
                    work[_XT],
                    xv,
                    work[_TMP],
                )
                c += 1
                nx = m - short
                fresh = False
            elif 0 < total < supply and nx > total:
                nx = lowest_level.pick_lowest(
                    work[_X], nx, total, work[_VIRT], work[_JPOS], work[_BITS], ctx.rng, work[_PICK]
                )
                yield engine.request_each(ctx, work[_PICK, :total], 1)
                nyt, ymin = _y_gained(ctx.means, work[_PICK], total, work[_YT], nyt, kt, ymin)
                fresh = False
            else:
                yield engine.request_batch(ctx, work[_S, :m])
                c, nx, nxt, nyt, xmin_v, xpad, ymin = lb.levels(
                    ctx.counts,
                    ctx.means,
                    s,
                    m,
                    kt,
                    work[_X],
                    work[_SB],
                    nw,
                    work[_XT],
                    xv,
                    work[_YT],
                    work[_TMP],
                )
            if c + 1 >= table.shape[0]:
                table = width_table(table, c + 1, omega, sigma)
            wx = table[c]
            wy = table[c + 1]
            decided = lb.maybe_decided(
                ctx.means,
                ctx.counts,
                c,
                work[_XT],
                xv,
                nxt,
                nx,
                xmin_v,
                xpad,
                work[_YT],
                nyt,
                ymin,
                wx,
                wy,
                kt,
            )
            if decided:
                if not fresh:
                    nxt, xmin_v, xpad = lb.refresh_x(
                        ctx.means, work[_X], nw, kt, work[_XT], xv, work[_TMP]
                    )
                decided, u_thr, l_thr = lb.check(
                    ctx.means, work[_XT], nxt, work[_YT], nyt, xmin_v, ymin, wx, wy, kt
                )
    key, heaps, sizes = ost.new(2, n)
    # b = 1: one pull per batch; keep the order statistics up to date arm by arm. The
    # loop holds a few of ctx's arrays, not ctx (cheaper resumes).
    counts, means, status, rng = ctx.counts, ctx.means, ctx.status, ctx.rng
    out = Out(ctx.answer, ctx.iv)
    while True:
        s = work[_S]
        table = bounds_of(counts, means, s, m, table, omega, sigma, key[_L], key[_U])
        _track_all(heaps, sizes, s, m, k - na, key, work[_EXT])
        nb = 0
        while True:
            if nb == 0:
                nb = refill_lowest(counts, work[_S], m, work[_BUCKET])
            a = take_random(work[_BUCKET], nb, rng)
            nb -= 1
            yield a
            c = counts[a]
            if c >= table.shape[0]:
                table = width_table(table, c, omega, sigma)
            if _pulled(key, heaps, sizes, work[_S], m, work[_EXT], a, means[a], table[c]):
                break
        u_thr = ost.kth(key, heaps, _U)
        l_thr = ost.kth(key, heaps, _L)
        s = work[_S]
        m, na = _decide(status, s, m, u_thr, l_thr, means, counts, table, work[_A], na)
        if _settled(status, s, m, k, work[_A], na):
            engine.finish(out, work[_A, :k])
            return


class BatchRacing(ScriptedAgent):
    """Racing with batch pulls: sample the survivors evenly, accept/reject by confidence bounds.

    Paper:
        Kwang-Sung Jun, Kevin Jamieson, Robert Nowak, Xiaojin Zhu. "Top arm
        identification in multi-armed bandits with batch arm pulls". AISTATS 2016
        (JMLR W&CP 51), Algorithm 2 (BatchRacing), confidence bounds eq. (2), batch
        complexity Theorem 1 / eq. (7). With b = r = 1 it is the Racing algorithm
        (Maron & Moore 1994; Heidrich-Meisner & Igel 2009).

    The algorithm keeps the surviving arms ``S`` (initially all), the accepted ``A`` and
    the rejected ``R``. Every round it makes ONE batch of RoundRobin (Alg. 1) over ``S``
    (``yield Batch(S)``; the base class runs RoundRobin), then with
    ``k_t = k - |A|`` it accepts every ``i in S`` with
    ``L_i > max^(k_t + 1)_{j in S} U_j`` and rejects every ``i in S`` with
    ``U_i < max^(k_t)_{j in S} L_j`` (both from the same round's statistics) and
    removes them from ``S``. ``L_i, U_i = mean_i -/+ D(T_i, omega)`` with
    ``D(t, omega) = sqrt(4 log(log2(2t) / omega) / t)`` and ``omega = sqrt(delta / (6n))``
    (eq. 2, :func:`agents.engine.confidence.jun_deviation`).

    Args:
        delta: target failure probability, in (0, 1). Paper's experiments: 0.1.
        seed: seed of the tie-breaking generator.

    Settings: fixed confidence (the algorithm's own stopping rule; the episode's
    ``max_batches`` may truncate it) and fixed budget (anytime: when the budget ends
    the answer is :meth:`current_answer`).

    Departures from the paper, and why:

    * Stopping: the paper loops ``while S is not empty`` and outputs ``A``. We stop as
      soon as ``|A| = k``, or when the undecided arms number exactly ``k - |A|`` (they
      are all top-k: accept them); the literal loop would spend one more batch to
      accept them formally. The returned set is the same.
    * Sub-Gaussian rewards: eq. (2) is written for rewards in [0, 1] (sigma = 1/2);
      the width is scaled by ``2 sigma`` with ``sigma = problem.sigma`` (Lemma 1 holds
      for any sigma-sub-Gaussian reward), so Bernoulli rewards use eq. (2) exactly.
    * RoundRobin line 5 reads ``a_l <= r``; the scheduler uses ``a_l < r`` (the
      paper's evident intent: at most r pulls of an arm per batch).
    * Ties in RoundRobin and in :meth:`current_answer` are broken uniformly at random
      (the paper: "arbitrarily").
    * Speed only: the widths ``D(t, omega)`` depend on ``t`` alone, so they are read
      from a table of :func:`~agents.engine.confidence.jun_width` values that grows by
      doubling; the numbers are identical to calling the function. With
      ``batch_size=1`` a RoundRobin batch over ``S`` is one pull of an arm of ``S``
      with the fewest pulls (uniformly at random), which the kernel picks itself from a
      bucket of the lowest level (the same law as :func:`agents.engine.round_robin`,
      O(1) amortised), and only the pulled arm's bounds change: the four order
      statistics the rules need (``max^(k_t + 1) U``, ``max^(k_t) L``, ``max L``,
      ``min U`` over ``S``) are kept in O(log n) per pull
      (:mod:`agents.engine.order_stats`); when one shows that an arm is accepted or
      rejected, the round's decisions are made over all of ``S`` as above. Larger
      batches use that RoundRobin over ``S`` keeps its counts within one of each
      other: ``S`` is the arms at the lowest count ``c`` (``X``) and at ``c + 1``
      (``Y``), and within a level the bounds are in the order of the means. The
      kernel draws a batch that takes only arms of ``X``, and the batch that ends a
      sweep of ``X``, itself, with the scheduler's draws
      (:func:`agents.engine.lowest_level.pick_lowest`, :func:`agents.engine.lowest_level.level_up`:
      O(b + n/64) instead of passes over ``S``) and asks for exactly that batch; the
      four order statistics come from the few largest means of each level and their
      smallest (:mod:`agents.engine.level_bounds`, O(k_t) per batch): a one-sided test on
      ``X``'s list as it was built, and, when it cannot rule a decision out, the exact
      values from a fresh list, which are the values the paper's recomputation over
      ``S`` gives. Other batches (every arm pulled: ``batch_size=None``, or few
      survivors) are the engine's ``Batch(S)``, after which the levels are rebuilt.
    """

    name = "batch_racing"
    settings = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})
    kernel = staticmethod(run)
    answer_rule = engine.RULE_STATUS

    def __init__(self, delta: float = 0.1, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.delta = check_probability("delta", delta)

    def params(self) -> np.ndarray:
        """``prm = [delta]``."""
        return np.array([self.delta])

    @property
    def surviving(self) -> np.ndarray:
        """The undecided arms ``S`` (increasing)."""
        return self.undecided
