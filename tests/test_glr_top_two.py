"""GLR stopping (agents.glr.stopping) and the Top-Two agents (EB-TC, EB-TCI, T3C, TTTS)."""

from __future__ import annotations

import itertools
import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs
from agents.glr import stopping, top_two
from bandit_envs import divergences as dv

# one compile of the Top-Two kernel (the tests of other GLR agents, parametrized by name,
# join their own kernel's group: tests/_kernel_groups.py)
pytestmark = pytest.mark.kernel_group("t3c")


@pytest.mark.parametrize("family,sigma", [(dv.BERNOULLI, 0.5), (dv.GAUSSIAN, 0.7)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_statistic_is_the_min_over_all_pairs(family: int, sigma: float, k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(20):
        n = 7
        counts = rng.integers(1, 50, size=n)
        means = rng.uniform(0.05, 0.95, size=n)
        top = np.argsort(-means)[:k].astype(np.int64)
        in_top = np.zeros(n, dtype=np.int8)
        in_top[top] = 1
        z, i, j = stopping.statistic(family, sigma, counts, means, top, in_top, rng)
        costs = {
            (a, b): dv.transport_cost(family, sigma, counts[a], means[a], counts[b], means[b])
            for a, b in itertools.product(top, set(range(n)) - set(top))
        }
        assert z == pytest.approx(min(costs.values()), rel=1e-12)
        assert costs[(i, j)] == z


def test_thresholds_by_hand() -> None:
    assert stopping.beta("gk2016", 100, 0.1, 4, 1) == pytest.approx(math.log(2 * 100 * 3 / 0.1))
    assert stopping.beta("gk2016", 100, 0.1, 10, 3) == pytest.approx(math.log(2 * 100 * 21 / 0.1))
    assert stopping.beta("log", 100, 0.05, 4, 1) == pytest.approx(
        math.log((1 + math.log(100)) / 0.05)
    )
    # kk2021: 2 C_G(x) with C_G the minimum over lambda, checked on a grid
    x = 0.5 * math.log(3 / 0.1)
    grid = np.linspace(0.5 + 1e-6, 1 - 1e-6, 200001)
    c_g = min((stopping._g_gauss(lam) + x) / lam for lam in grid)
    want = 2 * c_g + 4 * math.log(4 + math.log(1000 / 2))
    assert stopping.beta("kk2021", 1000, 0.1, 4, 1) == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("name", sorted(stopping.THRESHOLDS))
def test_thresholds_grow_with_t_and_shrink_with_delta(name: str) -> None:
    ts = [2, 10, 100, 10**4, 10**6]
    values = [stopping.beta(name, t, 0.1, 5, 2) for t in ts]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    assert stopping.beta(name, 100, 0.01, 5, 2) > stopping.beta(name, 100, 0.1, 5, 2)


def test_bad_threshold_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="threshold='chernoff'"):
        agents.make("eb_tc", threshold="chernoff")
    with pytest.raises(ValueError, match="delta=1.5"):
        agents.make("t3c", delta=1.5)
    with pytest.raises(ValueError, match="selection='greedy'"):
        agents.make("eb_tc", selection="greedy")
    with pytest.raises(ValueError, match="beta=0"):
        agents.make("eb_tci", beta=0)


def test_ids_probability_is_the_ratio_of_partial_derivatives() -> None:
    # Gaussian: W = D^2 / (2 s^2 (1/Ni + 1/Nj)), dW/dNi ~ 1/Ni^2, so p = Nj^2 / (Ni^2 + Nj^2)
    p = top_two._ids_probability(dv.GAUSSIAN, 0.5, 10.0, 0.8, 30.0, 0.2)
    assert p == pytest.approx(30.0**2 / (10.0**2 + 30.0**2))
    assert top_two._ids_probability(dv.BERNOULLI, 0.5, 5.0, 0.4, 5.0, 0.4) == 0.5


def test_tci_challenger_by_hand() -> None:
    counts = np.array([40, 10, 30, 20])
    means = np.array([0.6, 0.5, 0.55, 0.2])
    rng = np.random.default_rng(0)
    costs = [
        dv.transport_cost(dv.BERNOULLI, 0.5, 40, 0.6, counts[j], means[j]) + math.log(counts[j])
        for j in (1, 2, 3)
    ]
    assert top_two._tci_challenger(dv.BERNOULLI, 0.5, counts, means, 0, rng) == 1 + int(
        np.argmin(costs)
    )


# ----------------------------------------------------- error <= delta (proven threshold)
# gk2016's threshold is delta-correct for any sampling rule (Garivier & Kaufmann 2016,
# Theorem 10; the top-k union bound over k (n - k) pairs). delta = 0.2, 60 runs: the
# exact binomial test (alpha = 1e-3) fails from 23 errors on.
ERROR_DELTA, ERROR_RUNS = 0.2, 60
CASES = [
    ("eb_tc", 1, "bernoulli"),
    ("eb_tci", 1, "bernoulli"),
    ("t3c", 1, "bernoulli"),
    ("ttts", 1, "bernoulli"),
    ("track_and_stop", 1, "bernoulli"),
    ("track_and_stop", 1, "gaussian"),
    ("game_explorer", 1, "bernoulli"),
    ("game_explorer", 1, "gaussian"),
    ("frank_wolfe", 1, "bernoulli"),
    ("frank_wolfe", 1, "gaussian"),
    ("eb_tc", 2, "gaussian"),
    ("t3c", 2, "gaussian"),
]


@pytest.mark.parametrize("name,k,dist", CASES)
def test_error_rate_at_most_delta(name: str, k: int, dist: str, rate_at_most) -> None:
    means = np.array([0.6, 0.5, 0.45, 0.4, 0.3]) if k == 1 else np.array([0.7, 0.6, 0.4, 0.35, 0.3])
    inst = bandit_envs.instances.from_means(
        means, k=k, distribution=dist, sigma=0.5 if dist == "gaussian" else None
    )
    env = gym.make(
        "TopK-Batch-v0",
        instance=inst,
        batch_size=1,
        repeat_limit=1,
        setting="fixed_confidence",
        max_batches=10**7,
        shuffle=True,
    )
    failures = 0
    for s in range(ERROR_RUNS):
        # the cap on TTTS's resampling keeps the test fast; GLR stopping with gk2016 is
        # delta-correct whatever the sampling rule
        extra = {"max_resample": 50} if name == "ttts" else {}
        if name == "track_and_stop":
            extra = {"tracking": "C" if dist == "gaussian" else "D"}
        agent = agents.make(name, delta=ERROR_DELTA, threshold="gk2016", **extra)
        res = agents.run_episode(env, agent, seed=500 + s)
        assert res.terminated and not res.truncated
        failures += res.misidentified
    rate_at_most(failures, ERROR_RUNS, ERROR_DELTA)


def test_k_one_rules_refuse_top_k() -> None:
    env = gym.make("TopK-Batch-v0", n_arms=5, k=2, setting="fixed_confidence", max_batches=100)
    for name in ("eb_tci", "ttts"):
        with pytest.raises(ValueError, match="k=2"):
            agents.run_episode(env, agents.make(name), seed=0)


def test_c_tracking_projection_keeps_the_floor_and_the_sum() -> None:
    from agents.glr.track_and_stop import _project

    w = np.array([0.7, 0.25, 0.05, 0.0])
    out = np.empty(4)
    _project(w, 0.1, out)
    assert out.sum() == pytest.approx(1.0)
    assert out.min() >= 0.1 - 1e-12
    # the arms above the floor keep their differences (a shift by lambda)
    assert out[0] - out[1] == pytest.approx(0.45)


@pytest.mark.kernel_group("track_and_stop")
def test_track_and_stop_samples_near_the_optimal_proportions() -> None:
    """GK2016 Theorem 14 (asymptotic optimality): N_a / t -> w*_a. Here delta = 1e-6 on
    mu = (0.5, 0.45, 0.43, 0.4); the proportions of four long runs pooled lie within 0.05
    of w* (one run alone strays beyond 0.05 for some seeds: 0.06-0.09 on arm 3)."""
    mu = np.array([0.5, 0.45, 0.43, 0.4])
    env = gym.make(
        "TopK-Batch-v0",
        instance=bandit_envs.instances.from_means(mu, k=1),
        batch_size=1,
        repeat_limit=1,
        setting="fixed_confidence",
        max_batches=10**7,
        shuffle=False,
    )
    counts = np.zeros(4)
    for seed in range(1, 5):
        agent = agents.make("track_and_stop", delta=1e-6)
        agents.run_episode(env, agent, seed=seed)
        counts += agent.counts
    w_star, _ = bandit_envs.hardness.optimal_weights(mu, 1)
    assert np.abs(counts / counts.sum() - w_star).max() < 0.05


@pytest.mark.parametrize(
    "dist, divergence, sampler",
    [
        ("bernoulli", "auto", top_two.BETA_SET),
        ("gaussian", "auto", top_two.NORMAL_SET),
        ("bernoulli", "gaussian", top_two.NORMAL_SET),
        ("gaussian", "bernoulli", top_two.FULL),
    ],
)
def test_t3c_draws_its_leader_set_by_the_top_set_sampler(dist, divergence, sampler) -> None:
    """The top-set sampler on Beta posteriors of 0/1 rewards and on the normal posteriors
    of the Gaussian divergence, a value per arm otherwise (Beta posteriors of rewards
    that are not 0/1); TTTS always draws every arm."""
    inst = bandit_envs.instances.from_means(
        [0.7, 0.6, 0.5, 0.4], k=2, distribution=dist, sigma=0.5 if dist == "gaussian" else None
    )
    env = gym.make("TopK-v0", instance=inst, budget=200)
    agent = agents.make("t3c", divergence=divergence)
    agents.run_episode(env, agent, seed=0)
    assert agent.params()[top_two.P_SAMPLER] == sampler
    inst1 = bandit_envs.instances.from_means([0.7, 0.6, 0.5], k=1)
    agent = agents.make("ttts")
    agents.run_episode(gym.make("TopK-v0", instance=inst1, budget=100), agent, seed=0)
    assert agent.params()[top_two.P_SAMPLER] == top_two.FULL


def _t3c_instance(dist: str):
    mu = [0.7, 0.65, 0.6, 0.5, 0.45, 0.3]
    sigma = 0.5 if dist == "gaussian" else None
    return bandit_envs.instances.from_means(mu, k=2, distribution=dist, sigma=sigma)


def _pull_after(dist: str, budget: int, seeds: range, *, fresh: bool = False) -> np.ndarray:
    """The arm T3C pulls at pull ``budget + 1`` of each seeded episode (fixed budget,
    anytime: the first ``budget`` pulls are those of the shorter episode). One env per
    budget and one agent serve every seed (``run_episode`` resets both with the seed);
    ``fresh``: new ones for every episode (the same episodes:
    :func:`test_reused_env_and_agent_play_the_episodes_of_fresh_ones`)."""
    inst = _t3c_instance(dist)

    def make_env(b: int):
        return gym.make("TopK-v0", instance=inst, budget=b, shuffle=False)

    envs, agent = [make_env(b) for b in (budget, budget + 1)], agents.make("t3c")
    arms = np.empty(len(seeds), np.int64)
    for e, seed in enumerate(seeds):
        counts = []
        for env in envs:
            if fresh:
                env, agent = make_env(env.unwrapped.problem.budget), agents.make("t3c")
            agents.run_episode(env, agent, seed=seed)
            counts.append(agent.counts.copy())
        arms[e] = int(np.argmax(counts[1] - counts[0]))
    return arms


@pytest.mark.parametrize("dist", ["bernoulli", "gaussian"])
def test_reused_env_and_agent_play_the_episodes_of_fresh_ones(dist) -> None:
    seeds = range(100)
    np.testing.assert_array_equal(
        _pull_after(dist, 200, seeds), _pull_after(dist, 200, seeds, fresh=True)
    )


@pytest.mark.parametrize("dist", ["bernoulli", "gaussian"])
def test_t3c_plays_its_top_set_sampler_as_a_full_posterior_draw(dist, monkeypatch) -> None:
    """The arm pulled at pull 201 (mean counts from 8 to 56 by then) has the same law with the
    leader set drawn by the sampler and by a value for every arm: two samples of 4,000
    seeded episodes within twice the Bretagnolle-Huber-Carol bound (failure 1e-6). The
    bound (0.19) catches normal posteriors with ``sigma`` for ``sigma / sqrt(N_a)`` (0.27
    measured; a correct sampler 0.02)."""
    seeds = range(4000)
    sampled = _pull_after(dist, 200, seeds)
    monkeypatch.setattr(top_two.T3C, "_sampler", lambda self: top_two.FULL)
    full = _pull_after(dist, 200, seeds)
    outcomes = 6
    got, want = np.bincount(sampled, minlength=outcomes), np.bincount(full, minlength=outcomes)
    l1 = np.abs(got - want).sum() / len(seeds)
    assert l1 <= 2 * math.sqrt(2 * (outcomes * math.log(2) + math.log(1e6)) / len(seeds))
    assert not np.array_equal(sampled, full)  # (two different random streams)
