"""Top-two Thompson sampling for top-k identification (Beta-Bernoulli prior)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numba
import numpy as np

from agents import engine
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent, check_probability
from agents.bayesian.beta_prior import (
    check_bernoulli,
    check_beta_prior,
    posterior_into,
    posterior_of_arms_into,
    posterior_top_k,
)
from agents.bayesian.top_set_probability import confident
from agents.engine import frame
from agents.engine.posterior_top_set import new_state, sample_top_set, update

__all__ = ["TopTwoThompson"]

#: ``prm`` layout: the prior, the leader's probability, the resampling cap, the stopping
#: rule's delta (0: none), the spacing of the stopping checks (0: before every batch; else
#: :func:`next_check`), the number ``m`` of knots of a stopping boundary (0: the constant
#: ``delta``), then ``m`` knots ``log(1 + t)`` and ``m`` values ``log delta_t`` (see
#: :func:`boundary_at`).
P_A, P_B, P_BETA, P_RESAMPLES, P_DELTA, P_SPACING, P_KNOTS = range(7)


@numba.njit(cache=True, _nrt=False)
def next_check(t, spacing):
    """The pull count of the stopping check after the one at ``t`` pulls: ``t + max(1,
    t // spacing)`` (every pull at first, then about ``spacing`` checks per doubling)."""
    return t + max(1, t // spacing)


@numba.njit(cache=True, _nrt=False)
def boundary_at(knots, log_delta, t):
    """``delta_t``: ``exp`` of the piecewise-linear interpolation of ``log_delta`` over
    ``knots`` (increasing values of ``log(1 + t)``) at ``log(1 + t)``, constant beyond
    the first and the last knot."""
    x = math.log1p(t)
    m = knots.shape[0]
    if x <= knots[0]:
        return math.exp(log_delta[0])
    for j in range(1, m):
        if x <= knots[j]:
            w = (x - knots[j - 1]) / (knots[j] - knots[j - 1])
            return math.exp(log_delta[j - 1] + w * (log_delta[j] - log_delta[j - 1]))
    return math.exp(log_delta[m - 1])


@numba.njit(cache=True)
def confident_top(alpha, beta, k, delta, member, top):
    """Whether the posterior top k (by posterior mean, the lowest index among equal means)
    is the top-k set with posterior probability at least ``1 - delta``
    (:func:`agents.bayesian.top_set_probability.confident`); ``top`` (int64[k]) receives
    the set, increasing; ``member`` (int8[n], zeros) is scratch, left zeros."""
    order = np.argsort(-(alpha / (alpha + beta)), kind="mergesort")
    top[:] = np.sort(order[:k])
    for i in top:
        member[i] = 1
    out = confident(alpha, beta, member, delta)
    for i in top:
        member[i] = 0
    return out


@numba.njit(cache=True, _nrt=False)
def choose(alpha, beta, k, leader_prob, max_resamples, counts, rng, st, lead, other, mark):
    """One TTTS draw (see :class:`TopTwoThompson`): the arm to pull.

    ``st``: :func:`agents.engine.posterior_top_set.new_state`, up to date with ``Beta(alpha,
    beta)`` (:func:`agents.engine.posterior_top_set.update`); ``lead``, ``other`` (int64[k])
    and ``mark`` (int8[2, n], zeros) are scratch.
    """
    sample_top_set(alpha, beta, k, st, rng, lead)
    for i in lead:
        mark[0, i] = 1
    arm = -1
    for _ in range(max_resamples):
        sample_top_set(alpha, beta, k, st, rng, other)
        shared = 0
        for i in other:
            mark[1, i] = 1
            shared += mark[0, i]
        if shared == k:  # the same set: another sample
            for i in other:
                mark[1, i] = 0
            continue
        # a leader the challenger drops (probability leader_prob), else the reverse, at
        # random (either side has k - shared arms): the j-th such arm in the order the
        # sampler lists them, j uniform
        if rng.random() < leader_prob:
            side, row = lead, 1
        else:
            side, row = other, 0
        pick = engine.integers_below(rng, k - shared)  # (rng.integers' draw)
        for i in side:
            if mark[row, i] == 0:
                if pick == 0:
                    arm = i
                    break
                pick -= 1
        for i in other:
            mark[1, i] = 0
        break
    if arm < 0:  # no other top-k set in max_resamples samples: the least pulled leader
        for i in lead:
            if arm < 0 or counts[i] < counts[arm] or (counts[i] == counts[arm] and i < arm):
                arm = i
    for i in lead:
        mark[0, i] = 0
    return arm


#: ``W[11]``, the registers: the pull count of the next stopping check, the arms of the
#: last batch (in ``W[7][:m]``; -1: none yet).
R_CHECK_AT, R_LAST = 0, 1


@numba.njit(cache=True)
def _build(ctx, prm):
    """The state before the first batch: the posterior, the sampler's state
    (:func:`agents.engine.posterior_top_set.new_state`, up to date), scratch."""
    iv = ctx.iv
    n, k = iv[engine.N], iv[engine.K]
    alpha, beta = np.empty(n), np.empty(n)
    st = new_state(n)
    arms = np.empty(n, dtype=np.int64)
    posterior_into(prm[P_A], prm[P_B], ctx.counts, ctx.means, alpha, beta)
    update(alpha, beta, k, st, arms[:0])
    return (
        alpha,
        beta,
        st,
        np.empty(k, dtype=np.int64),  # 3 lead
        np.empty(k, dtype=np.int64),  # 4 other
        np.zeros((2, n), dtype=np.int8),  # 5 mark
        np.zeros(n, dtype=np.int64),  # 6 reps: the draws of each arm in the batch
        arms,  # 7 the batch's arms
        np.empty(n, dtype=np.int64),  # 8 ... and their pulls
        np.zeros(n, dtype=np.int8),  # 9 member (confident_top's scratch)
        np.empty(k, dtype=np.int64),  # 10 top (the answer)
        np.array([0, -1], dtype=np.int64),  # 11 registers (R_CHECK_AT, R_LAST)
    )


@numba.njit(cache=True, _nrt=False)
def _fold_and_check(W, ctx, prm):
    """Fold the last batch into the posterior (if any); the stopping rule's level if a
    check is due now (see :class:`TopTwoThompson`), else -1."""
    alpha, beta, st, arms, regs = W[0], W[1], W[2], W[7], W[11]
    reps = W[6]
    iv = ctx.iv
    k = iv[engine.K]
    m = regs[R_LAST]
    if m >= 0:  # the last batch was served
        for j in range(m):
            reps[arms[j]] = 0
        posterior_of_arms_into(prm[P_A], prm[P_B], ctx.counts, ctx.means, alpha, beta, arms[:m])
        update(alpha, beta, k, st, arms[:m])
    delta = prm[P_DELTA]
    spacing, m_knots = int(prm[P_SPACING]), int(prm[P_KNOTS])
    stops = (delta > 0.0 or m_knots > 0) and iv[engine.SETTING] == engine.FIXED_CONFIDENCE
    pulled = iv[engine.PULLS]
    if not stops or (spacing > 0 and pulled < regs[R_CHECK_AT]):
        return -1.0
    if spacing > 0:
        regs[R_CHECK_AT] = next_check(pulled, spacing)
    if m_knots > 0:
        knots = prm[P_KNOTS + 1 : P_KNOTS + 1 + m_knots]
        log_delta = prm[P_KNOTS + 1 + m_knots : P_KNOTS + 1 + 2 * m_knots]
        return boundary_at(knots, log_delta, pulled)
    return delta


@numba.njit(cache=True, _nrt=False)
def _batch(W, ctx, prm):
    """The next batch's draws (:func:`choose`, at most ``r`` per arm): an arm, or the
    request code of :func:`agents.engine.request_pull`."""
    alpha, beta, st, lead, other, mark, reps, arms, times = W[:9]
    regs = W[11]
    iv = ctx.iv
    n, k = iv[engine.N], iv[engine.K]
    r = iv[engine.R] if iv[engine.R] >= 0 else iv[engine.BUDGET]  # (-1: no cap)
    size = -1
    for cap in (iv[engine.B], engine.pulls_left(ctx), n * r if r >= 0 else -1):
        if cap >= 0 and (size < 0 or cap < size):
            size = cap
    leader_prob, max_resamples = prm[P_BETA], int(prm[P_RESAMPLES])
    arm = -1
    for _ in range(size):
        arm = choose(
            alpha, beta, k, leader_prob, max_resamples, ctx.counts, ctx.rng, st, lead, other, mark
        )
        if r >= 0 and reps[arm] >= r:  # the arm is full: the first arm with room
            arm = 0
            while reps[arm] >= r:
                arm += 1
        reps[arm] += 1
    if size == 1:
        arms[0] = arm
        regs[R_LAST] = 1
        return arm
    m = 0
    for i in range(n):
        if reps[i] > 0:
            arms[m] = i
            times[m] = reps[i]
            m += 1
    regs[R_LAST] = m
    return engine.request_pull(ctx, arms[:m], times[:m])


@numba.njit(cache=True)
def _confident_stop(W, ctx, level):
    """The stopping check at ``level``: answer the posterior top k and return ``True``
    if it is confident (:func:`confident_top`)."""
    top = W[10]
    if confident_top(W[0], W[1], ctx.iv[engine.K], level, W[9], top):
        engine.finish(ctx, top)
        return True
    return False


@numba.njit(cache=True)
def _start(ctx, prm):
    return frame.Frame(ctx, prm, _build(ctx, prm))


@numba.njit(cache=True)
def _next(fr):
    """Fold the last batch in (if any), then ``(stop, code)``: whether the stopping rule
    ends the episode (the answer is given), else the next batch (an arm, or a request
    code of :func:`agents.engine.request_pull`); see :class:`TopTwoThompson`.

    The per-pull work runs without reference counts (:func:`_fold_and_check`,
    :func:`_batch`), a due stopping check with them (:func:`confident_top` allocates);
    the frame's fields are loaded once per batch."""
    W, ctx, prm = fr.state, fr.ctx, fr.prm
    level = _fold_and_check(W, ctx, prm)
    if level >= 0.0 and _confident_stop(W, ctx, level):
        return True, 0
    return False, _batch(W, ctx, prm)


@numba.njit
def run(ctx, prm):
    """Top-two Thompson sampling in top-k form (``prm``: see :meth:`TopTwoThompson.params`).

    The generator keeps only a frame (:class:`agents.engine.frame.Frame`) across its
    yields; the work is :func:`_next`'s, as in the fast path :func:`episode`."""
    fr = _start(ctx, prm)
    while True:
        stop, code = _next(fr)
        if stop:
            return
        yield code


@numba.njit(cache=True)
def episode(ctx, prm, env, counts, sums, emp, cost, max_steps):
    """The fast path: :func:`agents.engine.drive` on :func:`run` without the generator
    (the same steps and draws; the state is a local variable, not a frame)."""
    iv = ctx.iv
    scr = engine.scratch(counts.shape[0])
    step_reward = engine.step_reward_of(ctx, cost)
    reward = 0.0
    if engine.sampling_spent(ctx):
        return engine.SAMPLING_OVER, reward
    W = _build(ctx, prm)
    while True:  # (as _next, on the local state)
        level = _fold_and_check(W, ctx, prm)
        if level >= 0.0 and _confident_stop(W, ctx, level):
            iv[engine.FINISHED] = 1
            return engine.AGENT_STOPPED, reward
        code = _batch(W, ctx, prm)
        if code >= 0:
            outcome, reward = engine.serve_arm(
                ctx, env, counts, sums, emp, code, reward, step_reward, max_steps
            )
        else:
            outcome, reward = engine.serve_request(
                ctx, code, env, counts, sums, emp, reward, step_reward, max_steps, scr
            )
        if outcome == engine.SAMPLING_OVER:
            return engine.SAMPLING_OVER, reward


class TopTwoThompson(ScriptedAgent):
    """Top-two Thompson sampling (TTTS) extended from the best arm to the top-k set.

    Paper:
        Daniel Russo. "Simple Bayesian algorithms for best-arm identification".
        Operations Research 68(6), 2020 (COLT 2016), Sec. 4.2 (TTTS): sample a mean
        vector from the posterior; its best arm is the leader; resample until another
        arm is best (the challenger); pull the leader with probability ``beta``, the
        challenger otherwise. For top-m sets, the leader/challenger pair becomes a pair
        of sets (as in the top-two algorithms for top-m identification, e.g. Jourdan,
        Degenne, Kaufmann, "Top two algorithms revisited", NeurIPS 2022, Sec. 5).
        Stopping (with ``delta``): Russo measures a sampling rule by the posterior
        probability that the answer is wrong (its decay rate, which TTTS makes
        optimal); the rule here stops once that probability is at most ``delta``, which
        bounds the error averaged over the prior (the Bayesian fixed-confidence
        criterion, as in Azizi, Ross & Zhang, "Guaranteed fixed-confidence best arm
        identification in multi-armed bandits", arXiv:2106.06848, 2021). Batches of
        draws from one posterior: Kirthevasan Kandasamy, Akshay Krishnamurthy, Jeff
        Schneider, Barnabas Poczos, "Parallelised Bayesian optimisation via Thompson
        sampling", AISTATS 2018 (synchronous parallel Thompson sampling).

    Here: a posterior sample gives the leader set ``L`` (its top k); samples are drawn
    until one gives another top-k set ``C`` (at most ``max_resamples``; if none does,
    the posterior is all but certain and the least-pulled arm of ``L`` is pulled, the
    lowest index among equals). With probability ``beta`` the agent pulls an arm of
    ``L \\ C`` (a leader the challenger drops), else an arm of ``C \\ L``, uniformly at
    random. The prior is Beta(a, b) on every
    Bernoulli mean (:func:`agents.bayesian.beta_prior.prior_of` gives the catalog families'),
    and the answer is the posterior top k. In the batch model a batch holds
    ``min(b, budget left, n r)`` such draws (at most ``r`` per arm: a draw of a full
    arm goes to the lowest-index arm with room), from the posterior at the start of the
    batch (the synchronous batch of Kandasamy et al.).

    Stopping rule (``delta`` set, fixed confidence): before each batch, the answer is the
    posterior top k (by posterior mean, the lowest index among equal means), and the
    agent stops with it once the posterior probability that it is the top-k set, ``P(S)
    = integral G dH`` (:mod:`agents.bayesian.top_set_probability`: ``G`` the probability
    that every member exceeds ``x``, ``H`` the law of the others' maximum), is at least
    ``1 - delta`` by a lower bound of the integral (conservative). On the event of
    stopping, the answer is wrong with posterior probability at most ``delta``, so
    ``P(stop and wrong) <= delta`` over the prior: a guarantee averaged over the prior,
    weaker than the per-instance guarantee of the frequentist agents (GLR, LUCB). The
    rule is checked before every batch (one pull per batch: before every pull); a check
    costs a grid of Beta tails of the arms near the boundary, about 15-60 us for 10 arms
    (up to about 1.3 ms when the probability is within the grid's resolution of ``1 -
    delta``). In fixed budget ``delta`` is not used (the budget ends the episode).

    Posterior samples: only the top-k set of a sample matters, and
    :mod:`agents.engine.posterior_top_set` draws that set with its exact law while drawing
    values for a handful of arms near the boundary (cached Beta tails at a few
    thresholds, one uniform per arm near the boundary and geometric jumps over the arms
    far below it). Cost, compiled (:func:`episode`), n = 1,000, budget 20n, one pull per
    batch: about 2.5 us per pull at k = 10 and 5.3 us at k = 100 (docs/performance.md),
    against 160-180 us with full draws of every arm in NumPy.

    Args:
        a: the Beta prior's first parameter (default 1: with ``b = 1``, ``uniform-random``).
        b: the Beta prior's second parameter (default 1).
        beta: probability of pulling the leader side, in (0, 1). Default 1/2 (Russo).
        max_resamples: posterior samples to find a challenger. Default 100.
        delta: the stopping rule's error in fixed confidence, in (0, 1); ``None`` (the
            default): no stopping rule.
        seed: seeds the posterior samples.

    Setting: fixed budget (anytime: the posterior top k when the budget ends); fixed
    confidence with ``delta``; without ``delta`` it has no stopping rule
    (:meth:`stops_by_itself` is ``False``): the env's ``max_batches`` must truncate the
    episode, and :meth:`reset` refuses a fixed-confidence problem without it.
    Bernoulli only.
    """

    name = "bayes_ttts"
    stopping_hint: ClassVar[str] = "give it delta (the posterior stopping rule)"
    kernel = staticmethod(run)
    episode_kernel = staticmethod(episode)
    distributions: ClassVar[frozenset[str] | None] = frozenset({"bernoulli"})
    settings: ClassVar[frozenset[str]] = frozenset({FIXED_BUDGET, FIXED_CONFIDENCE})

    def __init__(
        self,
        a: float = 1.0,
        b: float = 1.0,
        beta: float = 0.5,
        max_resamples: int = 100,
        delta: float | None = None,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed=seed)
        self.a, self.b = check_beta_prior(a, b)
        self.beta = check_probability("beta", beta)
        if (
            isinstance(max_resamples, bool)
            or not isinstance(max_resamples, int)
            or max_resamples < 1
        ):
            raise ValueError(f"max_resamples={max_resamples!r} must be an integer >= 1")
        self.max_resamples = max_resamples
        self.delta = None if delta is None else check_probability("delta", delta)

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        """Start an episode (Bernoulli arms, and a batch size, repeat limit or budget)."""
        check_bernoulli(problem, self.name)
        if problem.batch_size is None and problem.repeat_limit is None and problem.budget is None:
            raise ValueError(
                f"agent {self.name!r} sizes its batches by batch_size, repeat_limit or budget; "
                f"all three are None"
            )
        super().reset(problem, seed=seed)

    def stops_by_itself(self, problem: Any) -> bool:
        """Whether ``delta`` is set (without it, fixed confidence needs ``max_batches``)."""
        return self.delta is not None

    def current_answer(self) -> np.ndarray:
        """The posterior top k (Bayes-optimal for aggregate regret)."""
        return posterior_top_k(self.a, self.b, self.counts, self.means, self.problem.k, self.rng)

    def params(self) -> np.ndarray:
        prm = np.zeros(P_KNOTS + 1)
        prm[P_A], prm[P_B], prm[P_BETA], prm[P_RESAMPLES] = (
            self.a,
            self.b,
            self.beta,
            self.max_resamples,
        )
        prm[P_DELTA] = 0.0 if self.delta is None else self.delta
        return prm

    def __repr__(self) -> str:
        return (
            f"TopTwoThompson(a={self.a}, b={self.b}, beta={self.beta}, "
            f"max_resamples={self.max_resamples}, delta={self.delta}, seed={self.seed})"
        )
