"""Reward sums follow their exact laws; paired mode gives common random numbers.

Bounds: Hoeffding for means of bounded rewards; for variances, the sample variance of
``m`` normal-ish sums has relative standard deviation ``sqrt(2 / (m - 1))``: we allow 6
of them (a wrong law, e.g. ``a * Bernoulli(p)`` instead of ``Binomial(a, p)``, is off by
a factor ``a``).
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs


def sums_of_one_big_batch(env_kwargs: dict, pulls: int, episodes: int) -> np.ndarray:
    env = gym.make("TopK-Batch-v0", batch_size=None, budget=pulls * 2, shuffle=False, **env_kwargs)
    out = np.empty(episodes)
    for seed in range(episodes):
        env.reset(seed=seed)
        obs, *_ = env.step(np.array([pulls, 0] + [0] * (env.unwrapped.problem.n_arms - 2)))
        out[seed] = obs["means"][0] * pulls
    return out


def check_moments(
    sums: np.ndarray, mean: float, var: float, pulls: int, reward_range: float
) -> None:
    m = sums.shape[0]
    total = m * pulls
    # Hoeffding on the average reward over all m * pulls draws, level 1e-6.
    t = reward_range * math.sqrt(math.log(2 / 1e-6) / (2 * total))
    assert abs(sums.mean() / pulls - mean / pulls) <= t
    rel = sums.var(ddof=1) / var
    assert abs(rel - 1) <= 6 * math.sqrt(2 / (m - 1)), rel


def test_bernoulli_sums_are_binomial() -> None:
    pulls, p = 1000, 0.3
    sums = sums_of_one_big_batch({"instance": [p, 0.5, 0.6], "k": 1}, pulls, 400)
    check_moments(sums, pulls * p, pulls * p * (1 - p), pulls, 1.0)
    assert np.allclose(sums, np.round(sums), atol=1e-6)


def test_gaussian_sums_are_normal() -> None:
    pulls, mu, sigma = 500, 0.25, 2.0
    sums = sums_of_one_big_batch(
        {"instance": [mu, 0.5, 0.6], "k": 1, "distribution": "gaussian", "sigma": sigma}, pulls, 400
    )
    m = sums.shape[0]
    z = (sums.mean() - pulls * mu) / math.sqrt(pulls * sigma**2 / m)
    assert abs(z) < 5  # exact normal: P(|Z| > 5) < 6e-7
    rel = sums.var(ddof=1) / (pulls * sigma**2)
    assert abs(rel - 1) <= 6 * math.sqrt(2 / (m - 1))


def test_categorical_sums_are_multinomial() -> None:
    support = np.array([0.0, 0.5, 1.0])
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]])
    inst = bandit_envs.instances.from_categorical(probs, support, k=1)
    pulls = 800
    sums = sums_of_one_big_batch({"instance": inst}, pulls, 400)
    mean = probs[0] @ support
    var = probs[0] @ support**2 - mean**2
    check_moments(sums, pulls * mean, pulls * var, pulls, 1.0)
    assert np.allclose(sums * 2, np.round(sums * 2), atol=1e-6)  # multiples of 1/2


@pytest.mark.parametrize("paired", [False, True])
def test_single_pulls_are_bernoulli(paired: bool) -> None:
    env = gym.make(
        "TopK-v0", n_arms=2, k=1, instance=[0.7, 0.2], shuffle=False, budget=20000, paired=paired
    )
    env.reset(seed=5)
    for t in range(20000):
        obs, *_ = env.step(t % 2)
    t = math.sqrt(math.log(2 / 1e-6) / (2 * 10000))
    assert abs(obs["means"][0] - 0.7) <= t and abs(obs["means"][1] - 0.2) <= t


def test_paired_rewards_do_not_depend_on_batching() -> None:
    kw = {
        "n_arms": 3,
        "k": 1,
        "instance": [0.5, 0.4, 0.3],
        "paired": True,
        "batch_size": None,
        "budget": 60,
    }
    a = gym.make("TopK-Batch-v0", **kw)
    b = gym.make("TopK-Batch-v0", **kw)
    oa, _ = a.reset(seed=11)
    ob, _ = b.reset(seed=11)
    oa, *_ = a.step(np.array([10, 3, 0]))
    oa, *_ = a.step(np.array([5, 0, 4]))
    for _ in range(15):
        ob, *_ = b.step(np.array([1, 0, 1]))  # another agent, another order
    ob, *_ = b.step(np.array([0, 3, 0]))
    # arm 0: 15 pulls in both; arm 1: 3 in both -> identical sums; arm 2: 4 vs 15.
    sa, sb = oa["means"] * oa["counts"], ob["means"] * ob["counts"]
    assert oa["counts"][0] == ob["counts"][0] == 15 and sa[0] == sb[0]
    assert oa["counts"][1] == ob["counts"][1] == 3 and sa[1] == sb[1]


def test_paired_streams_differ_between_seeds_and_match_independent_law() -> None:
    kw = {
        "n_arms": 2,
        "k": 1,
        "instance": [0.5, 0.5],
        "paired": True,
        "batch_size": None,
        "budget": 4000,
        "shuffle": False,
    }
    env = gym.make("TopK-Batch-v0", **kw)
    sums = []
    for seed in range(2):
        env.reset(seed=seed)
        obs, *_ = env.step(np.array([2000, 0]))
        sums.append(obs["means"][0] * 2000)
    assert sums[0] != sums[1]
    t = math.sqrt(math.log(2 / 1e-6) / (2 * 2000))
    assert all(abs(s / 2000 - 0.5) <= t for s in sums)


def test_sparse_path_makes_the_same_draws_as_dense_step() -> None:
    kw = {"n_arms": 6, "k": 2, "batch_size": 5, "repeat_limit": 3, "budget": 60, "answer": "agent"}
    dense = gym.make("TopK-Batch-v0", **kw).unwrapped
    sparse = gym.make("TopK-Batch-v0", **kw).unwrapped
    od, _ = dense.reset(seed=3)
    sparse.reset(seed=3)
    dense.action_space.seed(0)
    while dense.phase == 0:
        action = dense.action_space.sample()
        arms = np.flatnonzero(action)
        od, rd, *_ = dense.step(action)
        os_, rs, *_ = sparse.step_sparse(arms, action[arms])
        assert np.array_equal(od["counts"], os_["counts"]) and np.array_equal(
            od["means"], os_["means"]
        )
        assert rd == rs
    rec = np.array([0, 1])
    action = np.zeros(6, dtype=int)
    action[rec] = 1
    *_, info_d = dense.step(action)
    *_, info_s = sparse.answer_sparse(rec)
    assert info_d["aggregate_regret"] == info_s["aggregate_regret"]


@pytest.mark.parametrize("paired", [False, True])
def test_sparse_path_draws_unsorted_arms_in_index_order(paired: bool) -> None:
    """``step_sparse`` with arms out of order makes the draws of ``step`` (index order)."""
    kw = {
        "n_arms": 6,
        "k": 2,
        "batch_size": 5,
        "repeat_limit": 3,
        "budget": 60,
        "answer": "agent",
        "paired": paired,
    }
    dense = gym.make("TopK-Batch-v0", **kw).unwrapped
    sparse = gym.make("TopK-Batch-v0", **kw).unwrapped
    dense.reset(seed=1)
    sparse.reset(seed=1)
    for arms, reps in [([3, 1], [1, 2]), ([5, 0, 2], [2, 1, 2]), ([4, 1], [3, 1])] * 3:
        action = np.zeros(6, dtype=np.int64)
        action[arms] = reps
        od, *_ = dense.step(action)
        os_, *_ = sparse.step_sparse(np.array(arms), np.array(reps))
        assert np.array_equal(od["counts"], os_["counts"])
        assert np.array_equal(od["means"], os_["means"])


def test_sigma_argument_overrides_the_instances_sigma() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        instance="jiang2017-1-sparse",
        n_arms=4,
        k=1,
        sigma=0.3,
        batch_size=None,
        budget=10**6,
        shuffle=False,
    )
    assert env.unwrapped.problem.sigma == 0.3
    sums = []
    for seed in range(300):
        env.reset(seed=seed)
        obs, *_ = env.step(np.array([0, 0, 0, 100]))
        sums.append(obs["means"][3] * 100)
    rel = np.var(sums, ddof=1) / (100 * 0.3**2)
    assert abs(rel - 1) <= 6 * math.sqrt(2 / 299)


def _splitmix(z: int) -> int:
    """SplitMix64's finaliser on Python ints (the published constants)."""
    mask = (1 << 64) - 1
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _paired_u(key: int, arm: int, j: int) -> float:
    mask = (1 << 64) - 1
    key, arm, j = int(key), int(arm), int(j)
    seed = _splitmix((key + (arm + 1) * 0x9E3779B97F4A7C15) & mask)
    return (_splitmix((seed + (j + 1) * 0x9E3779B97F4A7C15) & mask) >> 11) / 2.0**53


def test_paired_draws_are_the_documented_streams() -> None:
    """Paired rewards are pinned: uniform j of arm a is SplitMix64 of (seed_a + (j+1) golden),
    seed_a = SplitMix64 of (key + (a+1) golden); a batch's sums are the sums of those rewards
    (Bernoulli: u < mean; Gaussian: Box-Muller on uniforms 2j, 2j+1), whatever the batching.
    A change of the scheme changes every paired result already published, so it must fail here."""
    from bandit_envs import kernels

    gen = np.random.default_rng(3)
    n = 40
    means = gen.random(n)
    sigma = 0.7
    for trial in range(30):
        key = int(gen.integers(0, 2**63))
        arms = np.sort(gen.choice(n, size=int(gen.integers(1, n)), replace=False)).astype(np.int64)
        reps = gen.integers(1, 9, size=arms.shape[0]).astype(np.int64)
        used = gen.integers(0, 50, size=n).astype(np.int64)
        for dist in (kernels.BERNOULLI, kernels.GAUSSIAN):
            out = np.empty(arms.shape[0])
            after = used.copy()
            kernels.draw_sums(
                kernels.PAIRED,
                dist,
                np.random.default_rng(0),
                np.zeros(1),
                np.zeros(1, np.int64),
                np.array([key], dtype=np.uint64),
                after,
                means,
                sigma,
                np.zeros((1, 1)),
                np.zeros((1, 1)),
                np.zeros(1),
                arms,
                reps,
                out,
            )
            for a, r, s in zip(arms, reps, out, strict=True):
                want = 0.0
                for t in range(used[a], used[a] + r):
                    if dist == kernels.BERNOULLI:
                        want += 1.0 if _paired_u(key, a, t) < means[a] else 0.0
                    else:
                        u1, u2 = 1.0 - _paired_u(key, a, 2 * t), _paired_u(key, a, 2 * t + 1)
                        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
                        want += means[a] + sigma * z
                assert s == want, (trial, dist, a)
                assert after[a] == used[a] + r
            assert kernels.paired_uniform(np.uint64(key), 5, 7) == _paired_u(key, 5, 7)
