"""Learning with a known prior: posterior features, the posterior reward, posterior answers.

A family whose means are drawn from a Beta prior (``beta-random``, ``uniform-random``)
lets a learned policy use what the Bayesian yardsticks use: the ``post_*`` features of
:class:`~bandit_envs.wrappers.FlatObservation`, the training reward
:class:`~agents.learned.vec_env.VecPosteriorReward` and the answer
``PolicyAgent(answer="posterior")``.
"""

from __future__ import annotations

import itertools
import json
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.learned.vec_env import (
    VecPosteriorReward,
    expected_value_gain,
    make_training_env,
    top_k_posterior_value,
)
from bandit_envs.sb3 import make_sb3_vec_env
from bandit_envs.wrappers import FlatObservation, transform_from_config

PRIOR = (5.0, 5.0)
FAMILY = dict(instance="beta-random", instance_params={"a": 5.0, "b": 5.0}, n_arms=5, k=2)


def _obs(counts, means):
    return {
        "counts": np.array(counts, dtype=np.int64),
        "means": np.array(means, dtype=np.float64),
        "remaining": np.float64(0.5),
    }


# ------------------------------------------------------------------ features
def test_posterior_features_by_hand() -> None:
    t = FlatObservation(4, 20, features=["post_gap", "post_std"], prior=(1.0, 3.0), k=2)
    # successes / pulls: 3/4, 0/0, 1/2, 5/10 -> posterior means 4/8, 1/4, 2/6, 6/14
    out = t(_obs([4, 0, 2, 10], [0.75, 0.0, 0.5, 0.5]))
    m = np.array([4 / 8, 1 / 4, 2 / 6, 6 / 14])
    scale = 1 / math.sqrt(3 / (16 * 5))  # 1 / sd of Beta(1, 3)
    # top 2 = arms 0 and 3; c_(2) = 6/14, c_(3) = 2/6
    gap = np.array([m[0] - 2 / 6, m[1] - 6 / 14, m[2] - 6 / 14, m[3] - 2 / 6])
    std = np.sqrt(m * (1 - m) / (np.array([4, 0, 2, 10]) + 4 + 1))
    np.testing.assert_allclose(out[:4], gap * scale, rtol=1e-6)
    np.testing.assert_allclose(out[4:8], std * scale, rtol=1e-6)
    assert out[8] == np.float32(0.5)
    assert t.observation_space.contains(out)


def test_posterior_features_batched_and_ties() -> None:
    t = FlatObservation(3, 10, features=["post_gap"], prior=PRIOR, k=1)
    # all arms equal: every gap is 0 (tied arms are on both sides at once)
    assert np.all(t(_obs([2, 2, 2], [0.5, 0.5, 0.5]))[:3] == 0)
    one = _obs([1, 3, 0], [1.0, 1 / 3, 0.0])
    two = _obs([4, 0, 2], [0.25, 0.0, 1.0])
    stacked = {key: np.stack([one[key], two[key]]) for key in ("counts", "means", "remaining")}
    np.testing.assert_array_equal(t(stacked), np.stack([t(one), t(two)]))


def test_posterior_config_round_trip_and_old_configs() -> None:
    t = FlatObservation(5, 50, features=["post_gap", "post_std", "log_count"], prior=PRIOR, k=2)
    back = transform_from_config(json.loads(json.dumps(t.config())))
    assert back == t and back.prior == PRIOR and back.k == 2
    plain = FlatObservation(5, 50)
    assert "prior" not in plain.config() and "k" not in plain.config()
    assert transform_from_config(plain.config()) == plain


def test_from_env_takes_k_and_refuses_non_bernoulli() -> None:
    env = gym.make("TopK-v0", budget=30, **FAMILY)
    t = FlatObservation.from_env(env, features=["post_gap"], prior=PRIOR)
    assert t.k == 2
    gauss = gym.make("TopK-v0", n_arms=5, k=2, budget=30, distribution="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="Beta prior on Bernoulli means"):
        FlatObservation.from_env(gauss, features=["post_gap"], prior=PRIOR)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"features": ["post_gap"]}, "need prior"),
        ({"k": 2}, "only used with prior"),
        ({"prior": (0.0, 1.0), "k": 2}, "two positive finite numbers"),
        ({"prior": (1.0,), "k": 2}, "two positive finite numbers"),
        ({"prior": PRIOR}, "k=None must be an integer"),
        ({"prior": PRIOR, "k": 4}, r"k=4 must be an integer in \[1, n_arms - 1\]"),
    ],
)
def test_posterior_feature_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        FlatObservation(4, 10, **kwargs)


# ------------------------------------------------------------------ the reward
def _brute_force_gain(counts, means, pulls, prior, k):
    """E[Phi after - Phi before] by enumerating every joint outcome with scipy's pmf."""
    from scipy.stats import betabinom

    a, b = prior
    wins = np.rint(np.asarray(means) * counts)
    alpha, beta = a + wins, b + counts - wins
    post = alpha / (alpha + beta)
    before = np.sort(post)[-k:].mean()
    arms = [i for i in range(len(counts)) if pulls[i]]
    total = 0.0
    for outcome in itertools.product(*[range(pulls[i] + 1) for i in arms]):
        p, new = 1.0, post.copy()
        for i, j in zip(arms, outcome, strict=True):
            p *= betabinom.pmf(j, pulls[i], alpha[i], beta[i])
            new[i] = (alpha[i] + j) / (alpha[i] + beta[i] + pulls[i])
        total += p * np.sort(new)[-k:].mean()
    return total - before


def test_expected_gain_of_one_pull_is_the_knowledge_gradient() -> None:
    # prior (1, 1), nothing pulled: arm 0 wins w.p. 1/2 -> 2/3, else 1/3; k = 1:
    # E[max] = (2/3 + 1/2) / 2, a gain of 1/12
    gain = expected_value_gain(np.zeros(3), np.zeros(3), np.array([1, 0, 0]), (1.0, 1.0), 1)
    assert gain == pytest.approx(1 / 12, abs=1e-12)
    # an arm far below the top k can never enter it: no gain
    counts, means = np.array([50, 50, 2]), np.array([0.9, 0.8, 0.0])
    assert expected_value_gain(counts, means, np.array([0, 0, 1]), PRIOR, 2) == pytest.approx(
        0.0, abs=1e-15
    )


@pytest.mark.parametrize("seed", range(4))
def test_expected_gain_of_a_batch_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 8, size=6)
    means = np.where(counts > 0, rng.integers(0, 9, size=6) / np.maximum(counts, 1), 0.0)
    means = np.minimum(means, 1.0)
    pulls = rng.integers(0, 3, size=6)
    got = expected_value_gain(counts, means, pulls, PRIOR, 2)
    want = _brute_force_gain(counts.astype(float), means, pulls, PRIOR, 2)
    assert got == pytest.approx(want, abs=1e-12)


def test_expected_gain_refuses_too_many_outcomes() -> None:
    pulls = np.ones(13, dtype=np.int64)  # 2^13 joint outcomes
    with pytest.raises(ValueError, match="8192 joint outcomes .* over MAX_OUTCOMES=4096"):
        expected_value_gain(np.zeros(13), np.zeros(13), pulls, PRIOR, 2)


def test_posterior_reward_is_the_expected_gain_of_each_step() -> None:
    """The wrapper pays each env the expected gain of the pulls it made, ends included."""
    kwargs = dict(FAMILY, budget=12, shuffle=True, batch_size=3, repeat_limit=2)
    kwargs["invalid_action"] = "project"
    inner = make_sb3_vec_env("TopK-Batch-v0", 3, seed=3, **kwargs)
    venv = VecPosteriorReward(inner, PRIOR, 2)
    obs = venv.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(10):
        before = {key: np.array(obs[key]) for key in ("counts", "means")}
        obs, rewards, dones, infos = venv.step(rng.integers(0, 3, size=(3, 5)))
        for i in range(3):
            final = infos[i]["terminal_observation"] if dones[i] else {"counts": obs["counts"][i]}
            pulls = np.asarray(final["counts"]) - before["counts"][i]
            want = expected_value_gain(before["counts"][i], before["means"][i], pulls, PRIOR, 2)
            assert rewards[i] == np.float32(want)
            assert 0 <= pulls.sum() <= 3
        ends += int(dones.sum())
    assert ends >= 3  # every env finished an episode (12 pulls, at most 3 per step)


def test_posterior_reward_through_make_training_env() -> None:
    kwargs = dict(FAMILY, budget=6)
    probe = gym.make("TopK-v0", **kwargs)
    transform = FlatObservation.from_env(probe, features=["post_gap"], prior=PRIOR)
    venv, _, _ = make_training_env(
        "TopK-v0",
        2,
        seed=0,
        env_kwargs=kwargs,
        transform=transform,
        reward="posterior",
        reward_scale=10.0,
    )
    venv.reset()
    _, rewards, _, _ = venv.step(np.array([0, 1]))
    # first pull of an arm at the prior Beta(5, 5), k = 2 of 5 arms all at 0.5:
    # a success lifts it to 6/11 (into the top 2), a failure leaves the top at 0.5
    want = 10 * 0.5 * (6 / 11 - 0.5) / 2
    np.testing.assert_allclose(rewards, [want, want], rtol=1e-6)


def test_posterior_value() -> None:
    counts = np.array([[4, 0, 2, 10], [0, 0, 0, 0]])
    means = np.array([[0.75, 0.0, 0.5, 0.5], [0.0, 0.0, 0.0, 0.0]])
    phi = top_k_posterior_value(counts, means, (1.0, 3.0), 2)
    np.testing.assert_allclose(phi, [(4 / 8 + 6 / 14) / 2, 0.25])


def test_posterior_reward_needs_a_prior_and_a_budget() -> None:
    kwargs = dict(FAMILY, budget=12)
    with pytest.raises(ValueError, match="needs a transform built with prior"):
        make_training_env("TopK-v0", 2, env_kwargs=kwargs, reward="posterior")
    with pytest.raises(ValueError, match="reward='bayes' must be 'env' or 'posterior'"):
        make_training_env("TopK-v0", 2, env_kwargs=kwargs, reward="bayes")


# ------------------------------------------------------------------ the answer
def test_posterior_answer_differs_from_the_empirical_one() -> None:
    """Arm 0: 1 of 1 (empirical 1.0, posterior 6/11); arm 1: 14 of 20 (0.7, 19/30)."""
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=3,
        k=1,
        budget=21,
        batch_size=1,
        answer="agent",
        **{"instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0}},
    )
    problem = env.unwrapped.problem
    obs = {
        "counts": np.array([1, 20, 0]),
        "means": np.array([1.0, 0.7, 0.0]),
        "remaining": np.float64(0.0),
        "phase": np.int64(1),
    }
    pulls = lambda o: np.array([1, 0, 0])  # noqa: E731
    post = agents.PolicyAgent(pulls, answer="posterior", prior=PRIOR)
    emp = agents.PolicyAgent(pulls, answer="empirical")
    for agent in (post, emp):
        agent.reset(problem, seed=0)
    assert post.act(obs).tolist() == [0, 1, 0]
    assert emp.act(obs).tolist() == [1, 0, 0]
    assert post.projections == 0


def test_posterior_answer_bad_arguments() -> None:
    with pytest.raises(ValueError, match="answer='posterior' needs prior"):
        agents.PolicyAgent(lambda o: 0, answer="posterior")
    with pytest.raises(ValueError, match="prior is used only by answer='posterior'"):
        agents.PolicyAgent(lambda o: 0, answer="empirical", prior=PRIOR)
    with pytest.raises(ValueError, match="prior a=-1"):
        agents.PolicyAgent(lambda o: 0, answer="posterior", prior=(-1, 2))
    gauss = gym.make("TopK-Batch-v0", n_arms=3, k=1, budget=6, distribution="gaussian", sigma=1.0)
    agent = agents.PolicyAgent(lambda o: 0, answer="posterior", prior=PRIOR)
    with pytest.raises(ValueError, match="needs distribution='bernoulli'"):
        agent.reset(gauss.unwrapped.problem, seed=0)
