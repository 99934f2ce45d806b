"""Top-two Thompson sampling with the posterior stopping rule (``bayes_ttts`` with ``delta``)."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import agents
import bandit_envs  # noqa: F401
from agents.bayesian.top_set_probability import top_set_probability


def _random_posterior(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    pulls = rng.integers(0, 400, n)
    wins = rng.binomial(pulls, rng.uniform(0.3, 0.7, n))
    return 1.0 + wins, 1.0 + pulls - wins


def test_bounds_bracket_monte_carlo_on_random_posteriors() -> None:
    """12 random posteriors and sets: the Clopper-Pearson interval (level 1 - 1e-6 / 12
    each) of 100,000 joint draws meets [lower, upper] (gap <= 1e-4)."""
    rng = np.random.default_rng(7)
    level = 1.0 - 1e-6 / 12
    for _ in range(12):
        n = int(rng.integers(2, 8))
        k = int(rng.integers(1, n))
        alpha, beta = _random_posterior(rng, n)
        members = np.sort(rng.choice(n, size=k, replace=False))
        if rng.random() < 0.5:  # half the time the posterior top k (probability near 1)
            members = np.sort(np.argsort(-(alpha / (alpha + beta)))[:k])
        lower, upper = top_set_probability(alpha, beta, members, tol=1e-4)
        assert 0.0 <= lower <= upper <= 1.0 and upper - lower <= 1e-4
        draws = rng.beta(alpha, beta, size=(100_000, n))
        top = np.sort(np.argpartition(-draws, k - 1, axis=1)[:, :k], axis=1)
        hits = int(np.all(top == members, axis=1).sum())
        ci = stats.binomtest(hits, 100_000).proportion_ci(confidence_level=level)
        assert ci.low <= upper and lower <= ci.high, (lower, upper, hits)


def test_the_sets_probabilities_sum_to_one() -> None:
    """Every 2-subset of 5 arms: the lower bounds sum to <= 1 <= the upper bounds' sum
    (the brackets of the wide posteriors stop at the grid's 65,536 points, gap < 1e-4)."""
    rng = np.random.default_rng(3)
    alpha, beta = _random_posterior(rng, 5)
    alpha[:3], beta[:3] = 3.0, 4.0  # wide posteriors too
    low = high = 0.0
    for members in itertools.combinations(range(5), 2):
        lo, hi = top_set_probability(alpha, beta, list(members), tol=1e-6)
        low, high = low + lo, high + hi
    assert low <= 1.0 <= high and high - low <= 1e-3


def test_bad_input() -> None:
    with pytest.raises(ValueError, match=r"delta=0 must lie in \(0, 1\)"):
        agents.make("bayes_ttts", delta=0)
    with pytest.raises(ValueError, match=r"members=\[1, 1\] must be 1 to n - 1"):
        top_set_probability(np.ones(3), np.ones(3), [1, 1])


def _fc_env(env_id: str, n: int, k: int, b: int | None, r: int | None, max_batches: int):
    kw: dict = {}
    if env_id == "TopK-Batch-v0":
        kw = dict(batch_size=b, repeat_limit=r, answer="agent")
    return gym.make(
        env_id,
        instance="uniform-random",
        n_arms=n,
        k=k,
        setting="fixed_confidence",
        max_batches=max_batches,
        **kw,
    )


@pytest.mark.parametrize(
    ("env_id", "n", "k", "b", "r", "delta"),
    [("TopK-v0", 4, 1, None, None, 0.05), ("TopK-Batch-v0", 5, 2, 4, 2, 0.1)],
)
def test_bayes_error_on_the_prior_family(env_id, n, k, b, r, delta) -> None:
    """Means drawn from the agent's prior (``uniform-random``, Beta(1, 1)), 1,000 seeded
    episodes: P(stop and wrong) <= delta (the Bayes guarantee, optional stopping), so the
    one-sided Clopper-Pearson lower bound (level 1 - 1e-3) of that rate is <= delta.
    The rule spends its error budget: the rate itself is close to delta."""
    env = _fc_env(env_id, n, k, b, r, 5000)
    episodes = 1000
    wrong = 0
    for seed in range(episodes):
        res = agents.run_episode(env, agents.make("bayes_ttts", delta=delta), seed=seed)
        wrong += res.terminated and res.misidentified
    low = stats.beta.ppf(1e-3, wrong, episodes - wrong + 1) if wrong else 0.0
    assert low <= delta, (wrong, low)


@pytest.mark.parametrize(
    ("env_id", "b", "r"),
    [
        ("TopK-v0", None, None),
        ("TopK-Batch-v0", 1, 1),
        ("TopK-Batch-v0", 4, 2),
        ("TopK-Batch-v0", None, 3),
    ],
)
def test_act_observe_equals_the_fast_path(env_id, b, r) -> None:
    env = _fc_env(env_id, 6, 2, b, r, 3000)
    stopped = 0
    for seed in range(6):
        fast_agent = agents.make("bayes_ttts", delta=0.05)
        ref_agent = agents.make("bayes_ttts", delta=0.05)
        fast = agents.run_episode(env, fast_agent, seed=seed)
        ref = agents.run_episode(env, ref_agent, seed=seed, fast=False, max_steps=10**6)
        a, c = fast.as_row(), ref.as_row()
        a.pop("wall_time"), c.pop("wall_time")
        assert a == c
        assert np.array_equal(fast_agent.counts, ref_agent.counts)
        stopped += fast.terminated
    assert stopped >= 5


def test_delta_makes_it_stop_by_itself() -> None:
    problem = _fc_env("TopK-Batch-v0", 5, 2, 1, 1, 100).unwrapped.problem
    assert agents.make("bayes_ttts", delta=0.1).stops_by_itself(problem)
    assert not agents.make("bayes_ttts").stops_by_itself(problem)
    env = gym.make(
        "TopK-Batch-v0",
        instance=[0.9, 0.8, 0.3, 0.2, 0.1],
        k=2,
        setting="fixed_confidence",
        batch_size=1,
        answer="agent",
    )
    res = agents.run_episode(env, agents.make("bayes_ttts", delta=0.01), seed=0)
    assert res.terminated and not res.misidentified
