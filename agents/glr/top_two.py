"""The Top-Two family with GLR stopping, compiled once for EB-TC(I), T3C and TTTS.

Every round (Russo 2016, "Simple Bayesian algorithms for best arm identification",
COLT, Sec. 2; Jourdan, Degenne, Baudry, de Heide, Kaufmann 2022, "Top Two algorithms
revisited", NeurIPS, Algorithm 1):

1. a **leader**: the empirical best arm (EB) or the best arm of a posterior sample (TS);
   for top-k a leader *set*, the empirical top ``k`` or the sampled top ``k``;
2. a **challenger**: the arm ``j`` (for top-k: the pair ``(i, j)``, ``i`` in the leader
   set, ``j`` outside) minimising the transportation cost ``W_ij`` (TC, Shang et al.
   2020; the GLR pair of :mod:`agents.glr.stopping`), or ``W_ij + log N_j`` (TCI, Jourdan et al.
   2022, ``k = 1``), or the best arm of a resampled posterior that differs from the
   leader (TTTS, Russo 2016, ``k = 1``);
3. a **selection**: pull the leader with probability ``beta`` (fixed, default 1/2) or
   with the information-directed probability ``d(mu_i, m) / (d(mu_i, m) + d(mu_j, m))``,
   ``m = (N_i mu_i + N_j mu_j) / (N_i + N_j)``, the ratio of the partial derivatives of
   ``W_ij`` in ``N_i`` and ``N_j`` (IDS: You, Qin, Wang, Yang 2023, "Information-directed
   selection for top-two algorithms", ICML, Sec. 3, which also gives the top-k form of
   the leader/challenger pair used here); realised by a coin (Russo) or by tracking
   (Jourdan et al. 2022, Sec. 2: pull the leader iff the pulls it got as leader are at
   most the sum of its leader probabilities so far);
4. stop by the GLR rule of :mod:`agents.glr.stopping` (statistic over the empirical top ``k``)
   and answer the empirical top ``k``.

Initialisation: every arm once. Forced exploration (optional, ``forced=True``): if an
arm has fewer than ``sqrt(t) - n/2`` pulls, pull the least pulled one (Garivier &
Kaufmann 2016 Sec. 3.1's rule; EB-TC needs some exploration, Jourdan et al. 2022 Sec. 2).
Posteriors (TS): Bernoulli (and rewards in [0, 1]): ``Beta(1 + S_a, 1 + N_a - S_a)``;
Gaussian: ``N(mean_a, sigma^2 / N_a)`` (flat prior).

Batches: one pull per request (a batch of one pull in every (b, r) model), unless the
agent fills batches (``fill_batches``, :func:`_plan`): then each batch is
``min(b, n r, pulls left)`` pulls, the round above repeated on *planned* counts (each
planned pull adds one to its arm's count and keeps its mean: the "kriging believer"
fantasy of Ginsbourger, Le Riche & Carraro 2010, used for batches of knowledge-gradient
pulls in :mod:`agents.bayesian.batch_knowledge_gradient`; a sampled leader set is drawn
from the posterior of the real pulls, as in batched Thompson sampling, Kandasamy et al.
2018), an arm that has ``r`` pulls in the batch replaced by the other arm of its round's
pair, else by RoundRobin's choice (fewest planned pulls; Jun et al. 2016, Algorithm 1);
with no batch size the batch ends before the first round that picks a full arm. The
stop is checked between batches on the real counts and means.

The GLR statistic and the TC challenger are minima over pairs (i in a top set, j
outside); they are computed over the Pareto fronts of (mean, pull count) kept across
pulls by :mod:`agents.glr.fronts` (exact, see there), and by the full pass of
:func:`agents.glr.statistic` only for the Bernoulli divergence on rewards outside
[0, 1]. Ties: tied means at the boundary of the empirical top set give ``Z = 0`` and a
uniformly random ordered pair of the tied arms (the law of a top set re-drawn with
random ties); otherwise the pair is uniform over the minimising pairs (zero-cost pairs
of a sampled leader set: all of them), one draw each.

Cost per pull: EB leader, the update of the pulled arm and a query on the fronts (a
few hundred ns at n = 1000, ``benchmarks/glr_fronts_speed.py``). T3C: also its leader
set and challenger. On 0/1 rewards (Beta posteriors) and with the Gaussian divergence
(normal posteriors) the leader set is drawn by :mod:`agents.engine.posterior_top_set`
with the law of the top ``k`` of a full posterior draw, drawing values for a handful of
arms (the pulled arm's cached tails move in O(levels); the levels are chosen again,
O(n L) for L levels, when the posterior drifts); the challenger pair by
:func:`agents.glr.fronts.ordered_set_query`, over the order of all arms by mean kept
across pulls: O(k) for the zero-cost pairs (a sampled set that is not a top set by
mean), else the fronts of the leader set, O(k log k + D), D distinct pull counts. About
2.1 us per pull at n = 1000, K = 10 and 3.8 us at K = 100 (``benchmarks/agent_speed.py``),
0.85 and 2.1 us of it the set draw (``benchmarks/top_set_draw_speed.py``,
docs/performance.md); about the same on Gaussian rewards. Beta
posteriors of rewards in [0, 1] that are not 0/1 still draw every arm (O(n) per pull),
as does TTTS.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from agents import engine
from agents.engine import frame, posterior_top_set
from agents.engine.beta_math import posterior_into, posterior_of_arms_into
from agents.glr import fronts, stopping
from bandit_envs.divergences import GAUSSIAN, kl, transport_cost

__all__ = ["EBTC", "EBTCI", "T3C", "TTTS", "TopTwo", "run"]

#: ``prm`` layout.
(
    P_FAMILY,
    P_DELTA,
    P_THRESH,
    P_PAIRS,
    P_CG,
    P_BETA,
    P_IDS,
    P_TRACK,
    P_LEADER,
    P_CHALLENGER,
    P_FORCED,
    P_RESAMPLE,
    P_SAMPLER,
    P_FILL,
    P_PRUNED,
) = range(15)
NP = 15
#: leaders; challengers.
EB, TS = 0, 1
TC, TCI, RESAMPLE = 0, 1, 2
#: how a TS leader set is drawn: a value for every arm, or the top-set sampler of
#: :mod:`agents.engine.posterior_top_set` on the Beta posteriors of 0/1 rewards or on the
#: normal posteriors of the Gaussian divergence.
FULL, BETA_SET, NORMAL_SET = 0, 1, 2


@numba.njit(cache=True, _nrt=False)
def _posterior_sample(family, sigma, counts, means, rng, out):
    for a in range(counts.shape[0]):
        c = float(counts[a])
        if family == GAUSSIAN:
            out[a] = means[a] + sigma / math.sqrt(c) * rng.normal(0.0, 1.0)
        else:
            s = means[a] * c
            out[a] = rng.beta(1.0 + s, 1.0 + c - s)


@numba.njit(cache=True, _nrt=False)
def _normal_posterior_into(sigma, counts, means, mean, sd, arms):
    """The flat-prior normal posterior ``N(mean_a, sigma^2 / N_a)`` of the listed
    ``arms``: ``mean`` and ``sd`` overwritten there."""
    for a in arms:
        mean[a] = means[a]
        sd[a] = sigma / math.sqrt(float(counts[a]))


@numba.njit(cache=True)
def _tci_challenger(family, sigma, counts, means, i, rng):
    """``argmin_{j != i} W_ij + log N_j`` (ties at random)."""
    best = np.inf
    arg = -1
    ties = 0
    ni, mi = float(counts[i]), means[i]
    for j in range(counts.shape[0]):
        if j == i:
            continue
        c = transport_cost(family, sigma, ni, mi, float(counts[j]), means[j])
        c += math.log(float(counts[j]))
        if c < best:
            best, arg, ties = c, j, 1
        elif c == best:
            ties += 1
            if rng.random() * ties < 1.0:
                arg = j
    return arg


@numba.njit(cache=True, _nrt=False)
def _ids_probability(family, sigma, ni, mi, nj, mj):
    """Information-directed probability of pulling the leader ``i`` rather than ``j``."""
    m = (ni * mi + nj * mj) / (ni + nj)
    di = kl(family, mi, m, sigma)
    dj = kl(family, mj, m, sigma)
    if di + dj <= 0.0:
        return 0.5
    return di / (di + dj)


# ------------------------------------------------------------------ the algorithm
# One pull's work runs in one call (:func:`_step`) on the episode's state (:func:`_build`,
# a tuple of arrays). :func:`_step` and everything it calls are compiled without the
# runtime's reference counts (``_nrt=False``: nothing below it allocates; scratch room
# lives in the state): with them, each array taken from the state or the context would
# cost an atomic increment and decrement per pull (about 90 calls, 45% of EB-TC's pull
# at n = 1000, K = 10, ``benchmarks/profile_agent.py``). The generator (:func:`run`, the
# Gymnasium path) keeps only a frame (:class:`agents.engine.frame.Frame`) and a few
# scalars live across its yields: a numba generator saves and restores every array it
# still needs at each resume (about 11 ns each; the state holds about 35). The fast path
# (:func:`episode`) needs no generator.
@numba.njit(cache=True)
def _build(ctx, prm):
    """The state after every arm's first pull: the sampler's posteriors and state, the
    order and fronts (:mod:`agents.glr.fronts`), the top and leader sets, the tracking
    sums, the batch plan of :func:`_plan` (arrays of one entry without it), scratch."""
    n, k = ctx.iv[engine.N], ctx.iv[engine.K]
    counts, means = ctx.counts, ctx.means
    leader_rule, challenger = int(prm[P_LEADER]), int(prm[P_CHALLENGER])
    pruned = prm[P_PRUNED] > 0.0
    fill = prm[P_FILL] > 0.0
    sampler = int(prm[P_SAMPLER]) if leader_rule == TS else FULL
    post_a, post_b = np.empty(n), np.empty(n)  # the posteriors of the set sampler
    st = posterior_top_set.new_state(n if sampler != FULL else 1)
    one = np.zeros(1, dtype=np.int64)
    ordered = pruned and leader_rule == TS and challenger == TC  # T3C: the order of all arms
    G = fronts.build_order(means if ordered else means[:1])
    if sampler != FULL:
        posterior_top_set.set_band(st, *posterior_top_set.T3C_BAND)
        if sampler == NORMAL_SET:
            posterior_top_set.set_normal(st)
            _normal_posterior_into(
                ctx.fv[engine.SIGMA], counts, means, post_a, post_b, np.arange(n)
            )
        else:
            posterior_into(1.0, 1.0, counts, means, post_a, post_b)
        posterior_top_set.update(post_a, post_b, k, st, one[:0])
    S, F = fronts.build_top(counts, means, k)
    return (
        post_a,
        post_b,
        st,
        one,
        G,
        S,
        F,
        stopping.new_candidates(n),  # cand
        np.zeros(k, dtype=np.int64),  # top
        np.zeros(n, dtype=np.int8),  # in_top
        np.zeros(k, dtype=np.int64),  # lead
        np.zeros(n, dtype=np.int8),  # in_lead
        np.empty(n),  # theta
        np.zeros(n),  # leads: sum of the leader probabilities of an arm's rounds as leader
        np.zeros(n),  # led_pulls: pulls of an arm in its rounds as leader
        counts.copy() if fill else one,  # plan: the counts with the batch's planned pulls
        np.zeros(n if fill else 1, dtype=np.int64),  # reps: an arm's pulls in the batch
        np.zeros(n if fill else 1, dtype=np.int64),  # the batch's arms ...
        np.zeros(n if fill else 1, dtype=np.int64),  # ... and their pulls
        np.zeros(1, dtype=np.int64),  # the number of arms of the last batch
        np.zeros(n if fill else 1),  # held: the batch's arms' means before it
    )


@numba.njit(cache=True, _nrt=False)
def _fold(W, ctx, prm, counts, a, real):
    """Arm ``a``'s count (``counts[a]``) or mean changed: its place in the fronts, and,
    for a real pull (not a planned one, ``real=False``: only its count moved), its place
    in the order by mean and its posterior in the set sampler's state."""
    post_a, post_b, st, one, G, S = W[:6]
    k = ctx.iv[engine.K]
    means = ctx.means
    leader_rule, challenger = int(prm[P_LEADER]), int(prm[P_CHALLENGER])
    pruned = prm[P_PRUNED] > 0.0
    sampler = int(prm[P_SAMPLER]) if leader_rule == TS else FULL
    if pruned:
        fronts.pulled(S, counts, means, a)
        if real and leader_rule == TS and challenger == TC:
            fronts.order_pulled(G, means, a)
    if real and sampler != FULL:
        one[0] = a
        if sampler == NORMAL_SET:
            _normal_posterior_into(ctx.fv[engine.SIGMA], counts, means, post_a, post_b, one)
        else:
            posterior_of_arms_into(1.0, 1.0, counts, means, post_a, post_b, one)
        posterior_top_set.update(post_a, post_b, k, st, one)


@numba.njit(cache=True, _nrt=False)
def _choose(W, ctx, prm, counts, t, check):
    """``(stop, arm, i, j, p)``: whether the GLR rule stops (checked only if ``check``),
    else the arm to pull after ``t`` pulls with pull counts ``counts``, the leader and
    challenger of the round (``-1, -1``: a forced-exploration pull) and the leader's
    probability (added to the leader's tracking sum); see the module docstring. A sampled
    leader is drawn from the posterior of the real pulls (``ctx.counts``), whatever
    ``counts``."""
    post_a, post_b, st, one, G, S, F, cand, top, in_top, lead, in_lead, theta = W[:13]
    leads, led_pulls = W[13], W[14]
    iv = ctx.iv
    n, k = iv[engine.N], iv[engine.K]
    family = int(prm[P_FAMILY])
    sigma = ctx.fv[engine.SIGMA]
    delta, kind, n_pairs, c_g = prm[P_DELTA], int(prm[P_THRESH]), prm[P_PAIRS], prm[P_CG]
    beta, ids, track = prm[P_BETA], prm[P_IDS] > 0.0, prm[P_TRACK] > 0.0
    leader_rule, challenger, forced = int(prm[P_LEADER]), int(prm[P_CHALLENGER]), prm[P_FORCED] > 0
    max_resample = int(prm[P_RESAMPLE])
    pruned = prm[P_PRUNED] > 0.0
    sampler = int(prm[P_SAMPLER]) if leader_rule == TS else FULL
    ordered = pruned and leader_rule == TS and challenger == TC
    means, rng = ctx.means, ctx.rng
    z, i, j = stopping.empirical_statistic(
        pruned, S, F, family, sigma, counts, means, k, rng, cand, top, in_top
    )
    if check and z > stopping.threshold(kind, t, delta, n_pairs, c_g):
        return True, -1, -1, -1, 0.0
    if forced:
        floor = math.sqrt(t) - 0.5 * n
        if pruned:
            if fronts.min_count(S) < floor:
                _c, m = fronts.min_count_arm(S)
                return False, m, -1, -1, 0.0
        else:
            m = 0
            for a in range(1, n):
                if counts[a] < counts[m]:
                    m = a
            if counts[m] < floor:
                return False, m, -1, -1, 0.0
    if sampler != FULL:
        for a in lead:
            in_lead[a] = 0
        posterior_top_set.sample_top_set(post_a, post_b, k, st, rng, lead)
        for a in lead:
            in_lead[a] = 1
    elif leader_rule == TS:
        _posterior_sample(family, sigma, ctx.counts, means, rng, theta)
        stopping.top_set(theta, k, rng, cand, lead, in_lead)
    if ordered:
        _z, i, j = fronts.ordered_set_query(
            S, F, G, family, sigma, counts, means, lead, in_lead, rng
        )
    elif leader_rule == TS:
        if challenger == RESAMPLE:
            i = lead[0]
            j = -1
            for _ in range(max_resample):
                _posterior_sample(family, sigma, ctx.counts, means, rng, theta)
                best = 0
                for a in range(1, n):
                    if theta[a] > theta[best]:
                        best = a
                if best != i:
                    j = best
                    break
            if j < 0:  # no distinct sample in max_resample draws: the TC challenger
                _z, i, j = stopping.set_statistic(
                    pruned, S, F, family, sigma, counts, means, lead, in_lead, rng
                )
        else:
            _z, i, j = stopping.set_statistic(
                pruned, S, F, family, sigma, counts, means, lead, in_lead, rng
            )
    elif challenger == TCI:  # (k = 1: i is the empirical best, ties at random)
        if pruned:
            j = fronts.tci_query(S, F, family, sigma, counts, means, top, in_top, rng)
        else:
            j = _tci_challenger(family, sigma, counts, means, i, rng)
    if ids:
        p = _ids_probability(family, sigma, float(counts[i]), means[i], float(counts[j]), means[j])
    else:
        p = beta
    if track:
        leads[i] += p
        if led_pulls[i] <= leads[i]:
            led_pulls[i] += 1.0
            return False, i, i, j, p
        return False, j, i, j, p
    if rng.random() < p:
        return False, i, i, j, p
    return False, j, i, j, p


@numba.njit(cache=True, _nrt=False)
def _step(W, ctx, prm, pulled):
    """Fold the pull of ``pulled`` in (``-1``: none yet), then ``(stop, arm)``: whether
    the GLR rule stops, else the arm to pull next (see the module docstring)."""
    if pulled >= 0:
        _fold(W, ctx, prm, ctx.counts, pulled, True)
    stop, arm, _i, _j, _p = _choose(W, ctx, prm, ctx.counts, float(ctx.iv[engine.PULLS]), True)
    return stop, arm


@numba.njit(cache=True, _nrt=False)
def _room_arm(plan, reps, r, rng):
    """The arm with room in the batch (``reps < r``) of fewest planned pulls, ties
    uniformly at random (RoundRobin's rule, Jun et al. 2016 Algorithm 1)."""
    arm = -1
    ties = 0
    for a in range(plan.shape[0]):
        if reps[a] >= r:
            continue
        if arm < 0 or plan[a] < plan[arm]:
            arm, ties = a, 1
        elif plan[a] == plan[arm]:
            ties += 1
            if rng.random() * ties < 1.0:
                arm = a
    return arm


@numba.njit(cache=True, _nrt=False)
def _plan(W, ctx, prm):
    """Fill batches (``P_FILL``): fold the last batch in, then ``(stop, m)``: whether the
    GLR rule stops, else the next batch's ``m`` arms and pulls in ``W[17][:m]`` and
    ``W[18][:m]`` (``m = 0``: one pull of ``W[17][0]``, a request of one arm).

    The batch has ``min(b, n r, pulls left)`` pulls (each bound only where the env sets
    it), chosen by the Top-Two round (:func:`_choose`) repeated on the planned counts;
    with no batch size ``b``, the batch ends before the first round that picks an arm
    with ``r`` pulls in it (that round undone): filling ``n r`` pulls would pull every
    arm ``r`` times, uniform allocation. Each planned pull adds one to its arm's count
    (its mean kept, no reward), which moves the transportation costs of the challenger,
    the forced-exploration floor and the tracking sums as a real pull would; a sampled
    leader set is drawn afresh each round
    from the posterior of the real pulls (batched Thompson sampling: Kandasamy,
    Krishnamurthy, Schneider & Poczos 2018). An arm that already has ``r`` pulls in the
    batch gives its place to the other arm of the round's pair, else to the arm with
    room of fewest planned pulls (:func:`_room_arm`). The GLR rule is checked once per
    batch, on the real counts and means. A batch of one pull is exactly :func:`_step`'s
    pull (the same state and draws)."""
    leads, led_pulls, plan, reps, arms, times, last, held = W[13:21]
    iv = ctx.iv
    counts, means = ctx.counts, ctx.means
    # the batch's arms one at a time, as pulls of one arm: the fronts and the order by
    # mean move one arm whose mean changed at a time (the others at their old means)
    for q in range(last[0]):
        a = arms[q]
        new = means[a]
        means[a] = held[a]
        held[a] = new
    for q in range(last[0]):
        a = arms[q]
        means[a] = held[a]
        plan[a] = counts[a]  # (the batch was the plan: the same counts)
        _fold(W, ctx, prm, counts, a, True)
    t = iv[engine.PULLS]
    stop, arm, i, j, _p = _choose(W, ctx, prm, counts, float(t), True)
    if stop:
        return True, 0
    n, b, r = iv[engine.N], iv[engine.B], iv[engine.R]
    size = n * r if r >= 0 else b
    if b >= 0 and b < size:
        size = b
    left = engine.pulls_left(ctx)
    if left >= 0 and left < size:
        size = left
    if size <= 1:
        arms[0] = arm
        held[arm] = means[arm]
        last[0] = 1
        return False, 0
    track = prm[P_TRACK] > 0.0
    m = 0
    for p in range(size):
        if p > 0:
            _s, arm, i, j, lp = _choose(W, ctx, prm, plan, float(t + p), False)
            if b < 0 and reps[arm] >= r:  # no batch size: the batch ends, the round undone
                if track and i >= 0:
                    leads[i] -= lp
                    if arm == i:
                        led_pulls[i] -= 1.0
                break
        if r >= 0 and reps[arm] >= r:
            chosen = arm
            if i >= 0 and reps[i + j - arm] < r:
                arm = i + j - arm  # the other arm of the pair
            else:
                arm = _room_arm(plan, reps, r, ctx.rng)
            if track and chosen == i:  # the leader's tracked pulls: those it got
                led_pulls[i] -= 1.0
            if track and arm == i:
                led_pulls[i] += 1.0
        if reps[arm] == 0:
            arms[m] = arm
            m += 1
        reps[arm] += 1
        plan[arm] += 1
        _fold(W, ctx, prm, plan, arm, False)
    for q in range(m):
        times[q] = reps[arms[q]]
        reps[arms[q]] = 0
        held[arms[q]] = means[arms[q]]
    last[0] = m
    return False, m


@numba.njit(cache=True)
def _answer(W, ctx, prm):
    """Answer the empirical top ``k`` (the stopping rule's)."""
    S, top = W[5], W[8]
    if prm[P_PRUNED] > 0.0 and ctx.iv[engine.K] > 1:
        fronts.top_into(S, top)
    engine.finish(ctx, top)


@numba.njit(cache=True)
def _start(ctx, prm):
    return frame.Frame(ctx, prm, _build(ctx, prm))


@numba.njit(cache=True)
def _next(fr, pulled):
    """:func:`_step` on the frame's state (one call per pull: each load of an array of
    the frame costs a reference count)."""
    ctx, prm, W = fr.ctx, fr.prm, fr.state
    stop, arm = _step(W, ctx, prm, pulled)
    if stop:
        _answer(W, ctx, prm)
    return stop, arm


@numba.njit(cache=True)
def _next_batch(fr):
    """:func:`_plan` on the frame's state: ``(stop, code)``, the next batch as an arm
    (one pull) or the request code of :func:`agents.engine.request_pull`."""
    ctx, prm, W = fr.ctx, fr.prm, fr.state
    stop, m = _plan(W, ctx, prm)
    if stop:
        _answer(W, ctx, prm)
        return True, 0
    if m == 0:
        return False, W[17][0]
    return False, engine.request_pull(ctx, W[17][:m], W[18][:m])


@numba.njit
def run(ctx, prm):
    """The Top-Two family (see the module docstring); ``prm`` as :class:`TopTwo.params`."""
    yield engine.request_each(ctx, np.arange(ctx.iv[engine.N]), 1)
    fr = _start(ctx, prm)
    if prm[P_FILL] > 0.0:
        while True:
            stop, code = _next_batch(fr)
            if stop:
                return
            yield code
    pulled = -1
    while True:
        stop, pulled = _next(fr, pulled)
        if stop:
            return
        yield pulled


@numba.njit(cache=True)
def episode(ctx, prm, env, counts, sums, emp, cost, max_steps):
    """The fast path: :func:`agents.engine.drive` on :func:`run`, without the generator
    (the same steps and draws; the state is a local variable, not a frame)."""
    iv = ctx.iv
    outcome, reward, scr, step_reward = engine.serve_each_once(
        ctx, env, counts, sums, emp, cost, max_steps
    )
    if outcome == engine.SAMPLING_OVER:
        return engine.SAMPLING_OVER, reward
    W = _build(ctx, prm)
    if prm[P_FILL] > 0.0:
        arms, times = W[17], W[18]
        while True:
            stop, m = _plan(W, ctx, prm)
            if stop:
                _answer(W, ctx, prm)
                iv[engine.FINISHED] = 1
                return engine.AGENT_STOPPED, reward
            if m == 0:
                outcome, reward = engine.serve_arm(
                    ctx, env, counts, sums, emp, arms[0], reward, step_reward, max_steps
                )
            else:
                code = engine.request_pull(ctx, arms[:m], times[:m])
                outcome, reward = engine.serve_request(
                    ctx, code, env, counts, sums, emp, reward, step_reward, max_steps, scr
                )
            if outcome == engine.SAMPLING_OVER:
                return engine.SAMPLING_OVER, reward
    pulled = -1
    while True:
        stop, pulled = _step(W, ctx, prm, pulled)
        if stop:
            _answer(W, ctx, prm)
            iv[engine.FINISHED] = 1
            return engine.AGENT_STOPPED, reward
        outcome, reward = engine.serve_arm(
            ctx, env, counts, sums, emp, pulled, reward, step_reward, max_steps
        )
        if outcome == engine.SAMPLING_OVER:
            return engine.SAMPLING_OVER, reward


class TopTwo(stopping.GLRAgent):
    """Base class of the Top-Two agents (use :class:`~agents.glr.top_two.EBTC`, ...).

    Args (common to the family):
        delta: the confidence parameter of the GLR stopping rule, in (0, 1).
        threshold: ``"log"`` (default, the papers' experiments; no proof),
            ``"gk2016"`` or ``"kk2021"`` (:mod:`agents.glr.stopping`).
        beta: the leader's probability with ``selection="fixed"``, in (0, 1).
        selection: ``"fixed"`` (``beta``) or ``"ids"`` (information-directed).
        tracking: ``True``: realise the leader probability by tracking (Jourdan et al.
            2022); ``False``: by a coin (Russo 2016).
        forced: forced exploration ``sqrt(t) - n/2`` (see the module docstring).
        divergence: ``"auto"`` (the env's reward family: Gaussian for Gaussian rewards,
            Bernoulli otherwise), ``"bernoulli"`` or ``"gaussian"``.
        seed: seed of the agent's generator (ties, coins, posterior samples).

    Settings: fixed confidence (GLR stopping), and fixed budget as an anytime
    algorithm (answer: the empirical top k). Any ``batch_size``/``repeat_limit``: one
    pull per request, or, in a subclass that sets ``fill_batches``, batches of
    ``min(b, n r, pulls left)`` pulls planned by :func:`~agents.glr.top_two._plan` (the
    GLR rule checked between batches).
    """

    kernel = staticmethod(run)
    episode_kernel = staticmethod(episode)
    leader = EB
    challenger = TC
    #: fill every batch of the (b, r) model (:func:`_plan`) instead of one pull a batch.
    fill_batches = False

    def __init__(
        self,
        delta: float = 0.1,
        threshold: str = "log",
        beta: float = 0.5,
        selection: str = "fixed",
        tracking: bool = True,
        forced: bool = False,
        divergence: str = "auto",
        max_resample: int = 1_000,
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(delta, threshold, divergence, seed=seed)
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 < beta < 1.0:
            raise ValueError(f"beta={beta!r} must lie in (0, 1)")
        if selection not in ("fixed", "ids"):
            raise ValueError(f"selection={selection!r} must be 'fixed' or 'ids'")
        for pname, value in (("tracking", tracking), ("forced", forced)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{pname}={value!r} must be True or False")
        if isinstance(max_resample, bool) or not isinstance(max_resample, int) or max_resample < 1:
            raise ValueError(f"max_resample={max_resample!r} must be an integer >= 1")
        self.beta = float(beta)
        self.selection = selection
        self.tracking = bool(tracking)
        self.forced = bool(forced)
        self.max_resample = max_resample

    def sampling_params(self) -> tuple[float, ...]:
        prm = np.zeros(NP)
        prm[P_BETA] = self.beta
        prm[P_IDS] = 1.0 if self.selection == "ids" else 0.0
        prm[P_TRACK] = 1.0 if self.tracking else 0.0
        prm[P_LEADER] = self.leader
        prm[P_CHALLENGER] = self.challenger
        prm[P_FORCED] = 1.0 if self.forced else 0.0
        prm[P_RESAMPLE] = self.max_resample
        prm[P_SAMPLER] = self._sampler()
        prm[P_FILL] = 1.0 if self.fill_batches else 0.0
        return tuple(prm[P_BETA:P_PRUNED])

    def _sampler(self) -> int:
        """How the TS leader set is drawn (T3C; TTTS keeps a value for every arm): the
        top-set sampler on Beta posteriors of 0/1 rewards and on normal posteriors."""
        if self.leader != TS or self.challenger != TC:
            return FULL
        name = self.problem.distribution if self.divergence == "auto" else self.divergence
        if name == "bernoulli" and self.problem.distribution == "bernoulli":
            return BETA_SET
        if name == "gaussian":
            return NORMAL_SET
        return FULL

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(delta={self.delta}, threshold={self.threshold!r}, "
            f"beta={self.beta}, selection={self.selection!r}, tracking={self.tracking})"
        )


class EBTC(TopTwo):
    """EB-TC with GLR stopping, for the best arm and (pair form) for the top ``k``.

    Paper:
        Marc Jourdan, Remy Degenne, Dorian Baudry, Rianne de Heide, Emilie Kaufmann.
        "Top Two algorithms revisited". NeurIPS 2022, Algorithm 1 with the EB leader and
        the TC challenger ``argmin_{j != B} W_{B j}``, ``beta = 1/2``, tracking; GLR
        stopping (their Sec. 2). Information-directed selection of the leader's
        probability (``selection="ids"``): You, Qin, Wang, Yang, "Information-directed
        selection for top-two algorithms", ICML 2023, whose top-k form (leader set = the
        empirical top k, challenger pair = the GLR's minimising pair) is the one used for
        ``k > 1``.

    Defaults: ``beta = 1/2``, tracking, forced exploration on (EB-TC without it can
    starve an arm; Jourdan et al. 2022 Sec. 2 use EB-TCI, :class:`~agents.glr.top_two.EBTCI`,
    to avoid it), threshold ``"log"``. Arguments: :class:`agents.glr.top_two.TopTwo`.
    """

    name = "eb_tc"
    leader = EB
    challenger = TC

    def __init__(self, delta: float = 0.1, forced: bool = True, **kwargs) -> None:
        super().__init__(delta=delta, forced=forced, **kwargs)


class EBTCI(TopTwo):
    """EB-TCI with GLR stopping (best arm only).

    Paper:
        Jourdan, Degenne, Baudry, de Heide, Kaufmann. "Top Two algorithms revisited".
        NeurIPS 2022, Algorithm 1 with the EB leader ``B = argmax mean`` and the TCI
        challenger ``argmin_{j != B} W_{B j} + log N_j``; ``beta = 1/2`` with tracking;
        no forced exploration (the ``log N_j`` penalty explores). ``selection="ids"``:
        You et al. 2023's information-directed ``beta``.

    Published for k = 1 only (the penalty is defined for one leader). Arguments:
    :class:`agents.glr.top_two.TopTwo`.
    """

    name = "eb_tci"
    k_values = frozenset({1})
    leader = EB
    challenger = TCI


class T3C(TopTwo):
    """T3C with GLR stopping.

    Paper:
        Xuedong Shang, Rianne de Heide, Emilie Kaufmann, Pierre Menard, Michal Valko.
        "Fixed-confidence guarantees for Bayesian best-arm identification". AISTATS
        2020, Algorithm 2 (T3C): leader = the best arm of a posterior sample, challenger
        = ``argmin_{j != I} W_{I j}`` on the empirical means, leader with probability
        ``beta = 1/2`` by a coin; Chernoff (GLR) stopping. For ``k > 1`` the leader set is
        the sampled top ``k`` and the challenger pair the GLR's minimising pair against it
        (You et al. 2023's top-k form).

    Defaults: coin selection (``tracking=False``), no forced exploration. Posteriors:
    :mod:`agents.glr.top_two`; on 0/1 rewards and with the Gaussian divergence the
    sampled top set is drawn without a value for every arm (same law; cost:
    :mod:`agents.glr.top_two`). Arguments:
    :class:`agents.glr.top_two.TopTwo`.
    """

    name = "t3c"
    leader = TS
    challenger = TC

    def __init__(self, delta: float = 0.1, tracking: bool = False, **kwargs) -> None:
        super().__init__(delta=delta, tracking=tracking, **kwargs)


class TTTS(TopTwo):
    """Top-two Thompson sampling with Chernoff (GLR) stopping, best arm only.

    Paper:
        Daniel Russo. "Simple Bayesian algorithms for best arm identification". COLT
        2016 (Operations Research 2020), Sec. 3 "Top-two Thompson sampling": leader =
        the best arm of a posterior sample; with probability ``1 - beta`` resample the
        posterior until its best arm differs and pull that one; ``beta = 1/2``. Stopping
        as in Shang et al. (AISTATS 2020, Sec. 2): the GLR rule.

    Departure: resampling is capped at ``max_resample`` draws (default 1,000); if no
    draw differs from the leader, the challenger is T3C's (the transportation-cost
    argmin), so a round never loops forever once the posterior has concentrated. The cap
    matters: on mu = (0.6, 0.5, 0.45, 0.4, 0.3), delta = 0.2, a cap of 100 drew 2,704
    samples on average (10 runs) against 2,274 with 1,000, at a quarter of the CPU time.
    Resampling dominates the cost (about 0.2 ms per pull there).
    Published for k = 1 only. Defaults: coin selection. Arguments:
    :class:`agents.glr.top_two.TopTwo`.
    """

    name = "ttts"
    k_values = frozenset({1})
    leader = TS
    challenger = RESAMPLE

    def __init__(self, delta: float = 0.1, tracking: bool = False, **kwargs) -> None:
        super().__init__(delta=delta, tracking=tracking, **kwargs)
