"""An agent's compiled state (:class:`Ctx`), its registers, and the requests an algorithm yields."""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

__all__ = [
    "N",
    "K",
    "B",
    "R",
    "BUDGET",
    "MAX_BATCHES",
    "SETTING",
    "PULLS",
    "BATCHES",
    "REQ_LEN",
    "REQ_KIND",
    "REQ_OPEN",
    "REQ_DUE",
    "FINISHED",
    "HAS_ANSWER",
    "RULE",
    "BUCKET_LEN",
    "BUCKET_LEVEL",
    "STEPS",
    "NEXT_LEN",
    "HEAD",
    "DEFER_LEN",
    "BUCKETS_READY",
    "BATCH_LEN",
    "NI",
    "DUE",
    "POS_OF",
    "BATCH_ARMS",
    "BATCH_REPS",
    "WORK",
    "CAPS",
    "ALLOC",
    "LEVEL",
    "CAND",
    "REQ_ARMS",
    "REQ_REPS",
    "SCHED_ROWS",
    "SIGMA",
    "NF",
    "ALG_F",
    "FIXED_BUDGET",
    "FIXED_CONFIDENCE",
    "PULL",
    "BATCH",
    "UNDECIDED",
    "ACCEPTED",
    "REJECTED",
    "RULE_EMPIRICAL",
    "RULE_STATUS",
    "RULE_MOST_PULLED",
    "SAMPLING_OVER",
    "AGENT_STOPPED",
    "Ctx",
    "make_ctx",
    "request_pull",
    "request_each",
    "request_two",
    "request_batch",
    "finish_to",
    "finish",
    "pulls_left",
    "batches_left",
    "sampling_spent",
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


@numba.njit(cache=True, _nrt=False)
def sampling_spent(ctx):
    """Whether the pull budget or ``max_batches`` is spent (nothing more is asked for)."""
    iv = ctx.iv
    if iv[BUDGET] >= 0 and iv[PULLS] >= iv[BUDGET]:
        return True
    return iv[MAX_BATCHES] >= 0 and iv[BATCHES] >= iv[MAX_BATCHES]
