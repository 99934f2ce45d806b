"""The batch kernels' shortcuts compute what the plain computations do, value for value.

* :func:`agents.engine.serving._bitmap_sort_batch` (the fast path's arm-order sort of a batch)
  equals a sort;
* a ``BATCH`` request whose lowest level holds more arms than the batch has pulls is
  scheduled (:func:`agents.engine.schedule`) as :func:`agents.engine.round_robin_into`
  schedules it, with the same draws;
* BatchRacing (Jun et al. 2016, Alg. 2) with b > 1, which keeps the order statistics
  of two pull levels (agents.engine.level_bounds), decides after every batch exactly what the
  paper's recomputation over all of ``S`` decides (accept ``L_i > max^(k_t + 1) U``,
  reject ``U_i < max^(k_t) L``, eq. (2) bounds).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401  (registers the envs)
from agents import engine
from agents.engine import serving
from agents.engine.confidence import jun_width


def test_bitmap_sort_equals_a_sort() -> None:
    rng = np.random.default_rng(0)
    for _ in range(150):
        n = int(rng.integers(2, 3000))
        m = int(rng.integers(1, min(n, 200) + 1))
        arms = rng.choice(n, m, replace=False).astype(np.int64)
        reps = rng.integers(1, 9, m).astype(np.int64)
        bits = np.zeros((n + 63) >> 6, dtype=np.uint64)
        rep_of = np.empty(n, dtype=np.int64)
        out_arms = np.empty(n, dtype=np.int64)
        out_reps = np.empty(n, dtype=np.int64)
        done = serving._bitmap_sort_batch(arms, reps, m, out_arms, out_reps, bits, rep_of)
        span_words = (arms.max() >> 6) - (arms.min() >> 6)
        assert done == (span_words <= 8 * m)
        if done:
            order = np.argsort(arms)
            assert np.array_equal(out_arms[:m], arms[order])
            assert np.array_equal(out_reps[:m], reps[order])
        assert not bits.any()  # left clean for the next batch


@pytest.mark.parametrize(("b", "r"), [(8, 8), (64, 64), (16, 2), (5, 1)])
def test_level_batch_is_round_robin(b: int, r: int) -> None:
    env = gym.make(
        "TopK-Batch-v0",
        instance="zhou2014-two-level",
        n_arms=300,
        k=5,
        budget=10**6,
        batch_size=b,
        repeat_limit=r,
        answer="agent",
    )
    env.reset(seed=0)
    problem = env.unwrapped.problem
    rng = np.random.default_rng(1)
    for trial in range(40):
        ctx = engine.make_ctx(problem, np.random.default_rng(trial), engine.RULE_EMPIRICAL)
        ctx.counts[:] = rng.integers(3, 5, 300)  # two levels: often more than b arms at the lowest
        arms = np.sort(rng.choice(300, int(rng.integers(1, 301)), replace=False)).astype(np.int64)
        engine.request_batch(ctx, arms)
        engine.accept_request(ctx, engine.BATCH)
        want_rng = np.random.default_rng(trial)
        m = engine.schedule(ctx)
        caps = np.full(arms.size, r, dtype=np.int64)
        want = np.zeros(arms.size, dtype=np.int64)
        can = np.empty(arms.size, dtype=np.int64)
        engine.round_robin_into(
            ctx.counts[arms], caps, min(b, int(caps.sum())), want_rng, want, can, False
        )
        got = np.zeros(300, dtype=np.int64)
        got[ctx.sched[engine.BATCH_ARMS, :m]] = ctx.sched[engine.BATCH_REPS, :m]
        assert np.array_equal(got[arms], want)
        assert np.array_equal(ctx.sched[engine.BATCH_ARMS, :m], arms[want > 0])  # request order
        assert ctx.rng.random() == want_rng.random()  # the same draws


def _decide_over_s(s, acc, counts, means, k, omega, sigma):
    """Alg. 2's decisions over all of ``S`` (the paper's recomputation, np.partition)."""
    width = np.array([jun_width(float(c), omega, sigma) for c in counts[s]])
    lo, hi = means[s] - width, means[s] + width
    kt, m = k - len(acc), len(s)
    u_thr = np.partition(hi, m - kt - 1)[m - kt - 1]
    l_thr = np.partition(lo, m - kt)[m - kt]
    accept = [a for a, x in zip(s, lo, strict=True) if x > u_thr]
    keep = [a for a, x, y in zip(s, lo, hi, strict=True) if not x > u_thr and not y < l_thr]
    acc = acc + accept
    if len(acc) < k and len(keep) == k - len(acc):
        acc, keep = acc + keep, []
    return keep, acc


@pytest.mark.parametrize(("b", "r"), [(40, 40), (30, 5), (None, 6), (3, 3), (4, 1), (7, 2)])
def test_batch_racing_decides_as_the_recomputation_over_s(b, r) -> None:
    # The episode cut after t batches (max_batches=t) holds the decisions made on the
    # statistics of batches 1..t-1 and the counts and means after batch t.
    means = [0.95, 0.9, 0.55, 0.4, 0.3, 0.3, 0.2, 0.1, 0.05, 0.0]
    n, k, delta = len(means), 2, 0.5
    omega = math.sqrt(delta / (6 * n))
    for seed in range(2):
        s, acc = list(range(n)), []
        t, last = 1, None
        while True:
            env = gym.make(
                "TopK-Batch-v0",
                instance=means,
                k=k,
                setting="fixed_confidence",
                batch_size=b,
                repeat_limit=r,
                answer="agent",
                max_batches=t,
            )
            agent = agents.make("batch_racing", delta=delta)
            res = agents.run_episode(env, agent, seed=seed)
            if last is not None and s:  # the decisions on the statistics after batch t - 1
                s, acc = _decide_over_s(s, acc, last[0], last[1], k, omega, 0.5)
            status = agent.ctx.status
            assert sorted(np.flatnonzero(status == engine.ACCEPTED).tolist()) == sorted(acc)
            if len(acc) < k:
                assert np.flatnonzero(status == engine.UNDECIDED).tolist() == sorted(s)
            if res.terminated:
                break
            last = (agent.counts.copy(), agent.means.copy())
            t += 1
        assert len(acc) == k and t > 20
