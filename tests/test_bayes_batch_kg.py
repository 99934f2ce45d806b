"""The knowledge gradient that fills its batches by fantasised pulls (``kg_batch``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import agents
import bandit_envs  # noqa: F401
from agents.bayesian.batch_knowledge_gradient import fill


def _env(b: int | None, r: int | None, budget: int, max_batches: int | None = None) -> gym.Env:
    kw = dict(
        instance="beta-random",
        instance_params={"a": 5.0, "b": 5.0},
        n_arms=10,
        k=3,
        batch_size=b,
        repeat_limit=r,
        budget=budget,
        answer="agent",
    )
    if max_batches is not None:
        kw["max_batches"] = max_batches
    return gym.make("TopK-Batch-v0", **kw)


def _scratch(n: int) -> tuple:
    return (
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty(1 << (2 * n - 1).bit_length(), dtype=np.int64),
        np.ones(n, dtype=np.int64),
    )


def test_one_pull_per_batch_is_the_kg_episode() -> None:
    env = _env(1, 1, 60)
    for seed in range(4):
        batch = agents.make("kg_batch")
        one = agents.make("kg")
        res_b, res_1 = (agents.run_episode(env, a, seed=seed) for a in (batch, one))
        assert res_b.recommendation.tolist() == res_1.recommendation.tolist()
        assert np.array_equal(batch.counts, one.counts)
        assert res_b.reward == res_1.reward


@pytest.mark.parametrize(("b", "r", "budget", "max_batches"), [(10, 5, 80, 8), (7, 2, 45, None)])
def test_batches_are_full_within_r(b: int, r: int, budget: int, max_batches: int | None) -> None:
    env = _env(b, r, budget, max_batches)
    agent = agents.make("kg_batch")
    agent.reset(env.unwrapped.problem, seed=3)
    obs, _ = env.reset(seed=3)
    sizes = []
    while True:
        action = agent.act(obs)
        if action.sum() == 0 or agent.total_pulls >= budget:
            break
        assert action.max() <= r
        sizes.append(int(action.sum()))
        obs, rew, term, trunc, info = env.step(action)
        agent.observe(action, obs, rew, term, trunc, info)
        if term or trunc:
            break
    full = [min(b, budget - b * j) for j in range(len(sizes))]
    assert sizes == full and sum(sizes) == budget


def test_the_fantasy_spreads_a_batch_over_equal_arms() -> None:
    """Ten fresh arms, r = b = 4: each fantasised pull lowers the pulled arm's KG* (its
    variance shrinks, its mean stays), so the batch takes four distinct arms; without
    the fantasy every pull would be a tie among all ten arms (a repeat in 4 draws with
    probability 1 - 10*9*8*7/10^4 = 0.496 each time)."""
    n = 10
    for seed in range(8):
        alpha, beta = np.ones(n), np.ones(n)
        reps = np.zeros(n, dtype=np.int64)
        arms, times = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        m, _ = fill(
            alpha, beta, 3, 4, 100, 4, np.random.default_rng(seed), reps, arms, times, _scratch(n)
        )
        assert m == 4 and times[:m].tolist() == [1, 1, 1, 1]
        assert not reps.any()
        pulled = arms[:m]
        assert np.allclose(alpha[pulled], 1.5) and np.allclose(beta[pulled], 1.5)


def test_r_caps_the_pulls_of_an_arm_in_a_batch() -> None:
    """One arm far more uncertain than the rest takes r pulls, and not more."""
    n = 6
    alpha = np.array([1.0, 60.0, 60.0, 60.0, 40.0, 40.0])
    beta = np.array([1.0, 40.0, 40.0, 40.0, 60.0, 60.0])
    reps = np.zeros(n, dtype=np.int64)
    arms, times = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    m, _ = fill(alpha, beta, 2, 5, 200, 2, np.random.default_rng(0), reps, arms, times, _scratch(n))
    got = dict(zip(arms[:m].tolist(), times[:m].tolist(), strict=True))
    assert got[0] == 2 and max(got.values()) <= 2 and sum(got.values()) == 5


def test_it_beats_one_pull_per_batch_when_batches_bind() -> None:
    """10 arms, k = 3, Beta(5, 5), b = 10, r = 5, 8 batches: ``kg`` makes 8 pulls,
    ``kg_batch`` 80. Sign test over 200 paired episodes (common seeds): among the
    episodes whose regrets differ, ``kg_batch`` has the lower regret more often than
    the upper 1e-6 quantile of Binomial(m, 1/2) (what a policy no better would reach)."""
    env = _env(10, 5, 80, 8)
    wins = losses = 0
    for seed in range(200):
        one = agents.run_episode(env, agents.make("kg"), seed=seed).aggregate_regret
        full = agents.run_episode(env, agents.make("kg_batch"), seed=seed).aggregate_regret
        wins += full < one
        losses += full > one
    m = wins + losses
    assert wins > stats.binom.isf(1e-6, m, 0.5)
