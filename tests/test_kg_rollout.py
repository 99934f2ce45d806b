"""The rollout of KG* (agents.bayesian.kg_rollout) against exact Q-values on tiny families."""

from __future__ import annotations

import functools
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.bayesian.exact import BetaBernoulliDP
from agents.bayesian.kg_rollout import (
    KGRollout,
    rollout_candidates,
    rollout_choice,
    rollout_q_values,
)
from agents.bayesian.knowledge_gradient import kg_choice, kg_values


def kg_q_by_recursion(a, b, k, successes, failures, pulls):
    """``Q(s, i)`` under a KG* continuation, by the plain recursion (ties averaged)."""

    @functools.cache
    def value(state, left):
        al = np.array([a + s for s, _ in state])
        be = np.array([b + f for _, f in state])
        if left == 0:
            return float(np.sort(al / (al + be))[-k:].sum())
        v = kg_values(al, be, k, left)
        tied = np.flatnonzero(v >= v.max() - 1e-12)
        return float(np.mean([q(state, i, left) for i in tied]))

    def q(state, i, left):
        s, f = state[i]
        p = (a + s) / (a + b + s + f)
        win = state[:i] + ((s + 1, f),) + state[i + 1 :]
        loss = state[:i] + ((s, f + 1),) + state[i + 1 :]
        return p * value(win, left - 1) + (1 - p) * value(loss, left - 1)

    state = tuple(zip(successes, failures, strict=True))
    return np.array([q(state, i, pulls) for i in range(len(state))])


# (n, k, budget, a, b, successes, failures): states of distinct arms, several pulls left
STATES = [
    (3, 1, 10, 1.0, 1.0, [2, 1, 0], [0, 1, 0]),
    (3, 2, 12, 5.0, 5.0, [3, 1, 1], [0, 2, 1]),
]


@pytest.mark.parametrize("n, k, budget, a, b, s, f", STATES)
def test_policy_q_values_is_the_plain_recursion(n, k, budget, a, b, s, f) -> None:
    """BetaBernoulliDP.policy_q_values("kg") is the recursion written plainly; with
    "optimal" it is the optimal Q-values."""
    dp = BetaBernoulliDP(n, k, budget, a, b)
    pulls = budget - sum(s) - sum(f)
    exact = dp.policy_q_values("kg", s, f)
    assert exact == pytest.approx(kg_q_by_recursion(a, b, k, s, f, pulls), abs=1e-12)
    assert dp.policy_q_values("optimal", s, f) == pytest.approx(dp.q_values(s, f), abs=1e-12)
    with pytest.raises(ValueError, match="no pull is left"):
        dp.policy_q_values("kg", [budget, 0, 0], [0, 0, 0])


def bernstein(var: np.ndarray, sims: int, spread: float, delta: float) -> np.ndarray:
    """Two-sided empirical Bernstein half-width (Maurer & Pontil 2009, Thm. 4) for means of
    ``sims`` i.i.d. values in an interval of length ``spread``, each side at ``delta / 2``."""
    log = math.log(4.0 / delta)
    unbiased = var * sims / (sims - 1)
    return np.sqrt(2.0 * unbiased * log / sims) + 7.0 * spread * log / (3.0 * (sims - 1))


@pytest.mark.parametrize("n, k, budget, a, b, s, f", STATES)
def test_simulated_q_values_agree_with_the_exact_kg_continuation(n, k, budget, a, b, s, f):
    """Each arm's estimate of Q (terminal value in [0, k]) and of its difference to arm 0's
    (in [-k, k]) lies within the empirical Bernstein bound of the exact value (union over
    the 2n estimates at total level 1e-6)."""
    sims = 20_000
    alpha = a + np.array(s, dtype=float)
    beta = b + np.array(f, dtype=float)
    pulls = budget - sum(s) - sum(f)
    exact = BetaBernoulliDP(n, k, budget, a, b).policy_q_values("kg", s, f)
    q, q_sq, d, d_sq = rollout_q_values(alpha, beta, k, pulls, sims, np.random.default_rng(7))
    delta = 1e-6 / (2 * n)
    assert np.all(np.abs(q - exact) <= bernstein(q_sq - q**2, sims, k, delta))
    diff = exact - exact[0]
    assert np.all(np.abs(d - diff) <= bernstein(d_sq - d**2, sims, 2 * k, delta))
    # common random numbers: the differences vary less than the values
    assert np.all((d_sq - d**2)[1:] < (q_sq - q**2)[1:])


def test_a_large_threshold_keeps_kg_s_arm() -> None:
    """With ``z`` far above any ratio of a mean difference to its standard error, the
    rollout pulls KG*'s arm (its first draw is KG*'s tie-break, so the same seed gives
    the same arm); with ``z = 0`` it leaves KG*'s arm at some of these states."""
    rng = np.random.default_rng(5)
    left = 0
    for _ in range(12):
        counts = rng.integers(0, 5, 4)
        wins = rng.binomial(counts, 0.5)
        alpha, beta = 1.0 + wins, 1.0 + counts - wins
        kg = kg_choice(alpha, beta, 1, 8, np.random.default_rng(0))
        got = rollout_choice(alpha, beta, 1, 8, np.random.default_rng(0), sims=4, top=None, z=1e9)
        assert got == kg
        plain = rollout_choice(alpha, beta, 1, 8, np.random.default_rng(0), sims=4, top=None)
        left += plain != kg
    assert left > 0


def test_candidates_are_the_top_m_by_kg_value() -> None:
    rng = np.random.default_rng(11)
    for _ in range(40):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(1, n + 1))
        counts = rng.integers(0, 6, n)
        wins = rng.binomial(counts, 0.5)
        alpha, beta = 1.0 + wins, 1.0 + counts - wins
        pulls = int(rng.integers(1, 40))
        values = kg_values(alpha, beta, k, pulls)
        assert rollout_candidates(alpha, beta, k, pulls, None).tolist() == list(range(n))
        for top in range(1, n + 1):
            got = rollout_candidates(alpha, beta, k, pulls, top)
            cut = np.sort(values)[-top] - 1e-12
            assert got.tolist() == np.flatnonzero(values >= cut).tolist()
            assert got.size >= top
            assert kg_choice(alpha, beta, k, pulls, np.random.default_rng(0)) in got


def test_no_simulation_where_the_rollout_is_kg() -> None:
    """One pull left, or one distinct candidate posterior: KG*'s arm, with its tie-break
    (the same generator draws)."""
    alpha, beta = np.array([3.0, 2.0, 2.0, 1.0]), np.array([1.0, 2.0, 2.0, 3.0])
    for seed in range(5):
        kg = kg_choice(alpha, beta, 2, 1, np.random.default_rng(seed))
        assert rollout_choice(alpha, beta, 2, 1, np.random.default_rng(seed), top=None) == kg
    same = np.full(5, 2.0)
    for seed in range(5):
        kg = kg_choice(same, same, 2, 30, np.random.default_rng(seed))
        assert rollout_choice(same, same, 2, 30, np.random.default_rng(seed), top=None) == kg


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sims": 0}, "sims=0"),
        ({"sims": 2.0}, "sims=2.0"),
        ({"sims": True}, "sims=True"),
        ({"top": 0}, "top=0"),
        ({"top": 1.5}, "top=1.5"),
        ({"z": -1.0}, "z=-1.0"),
        ({"z": math.inf}, "z=inf"),
        ({"z": "1"}, "z='1'"),
        ({"a": 0.0}, "prior a=0.0"),
        ({"b": math.nan}, "prior b=nan"),
    ],
)
def test_bad_parameters_raise(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        KGRollout(**kwargs)


def test_bad_problems_and_states_raise() -> None:
    env = gym.make("TopK-Batch-v0", n_arms=4, k=2, budget=None, setting="fixed_confidence")
    with pytest.raises(ValueError):
        KGRollout().reset(env.unwrapped.problem)
    gauss = gym.make("TopK-Batch-v0", n_arms=4, k=2, budget=20, distribution="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="bernoulli"):
        KGRollout().reset(gauss.unwrapped.problem)
    ones = np.ones(3)
    with pytest.raises(ValueError, match="k=4"):
        rollout_choice(ones, ones, 4, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="pulls=0"):
        rollout_q_values(ones, ones, 1, 0, 10, np.random.default_rng(0))
    with pytest.raises(ValueError, match="positive"):
        rollout_candidates(-ones, ones, 1, 5, 2)


def test_plays_an_episode_by_its_import_path() -> None:
    """The agent plays a tiny episode to the budget and answers with the posterior top k;
    the same seeds replay the same episode."""
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=4,
        k=2,
        budget=16,
        batch_size=1,
        repeat_limit=1,
        instance="beta-random",
        instance_params={"a": 5.0, "b": 5.0},
        answer="agent",
        paired=True,
    )
    agent = agents.make("agents.bayesian.kg_rollout:KGRollout", a=5.0, b=5.0, sims=8, top=None)
    first = agents.run_episode(env, agent, seed=4)
    assert first.pulls == 16 and len(first.recommendation) == 2
    assert agent.counts.sum() == 16
    again = agents.run_episode(env, agent, seed=4)
    assert np.array_equal(first.recommendation, again.recommendation)
    assert first.aggregate_regret == again.aggregate_regret
