"""Successive Rejects and Sequential Halving against independent implementations.

Paired rewards are a function of (episode key, arm, j-th pull of the arm), so a
reference written with plain ``env.step`` pull vectors sees the same rewards as the agent
whatever the order of its pulls: answers and pull totals must agree exactly.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs


def _env(means: np.ndarray, budget: int) -> gym.Env:
    inst = bandit_envs.instances.from_means(means, k=1)
    return gym.make(
        "TopK-Batch-v0", instance=inst, budget=budget, batch_size=None, repeat_limit=None,
        paired=True, answer="agent", shuffle=False,
    )  # fmt: skip


def _reference(env: gym.Env, seed: int, schedule) -> tuple[int, int]:
    """Play ``schedule(obs) -> (pull vector or None, answer)`` until it answers."""
    obs, _ = env.reset(seed=seed)
    n = obs["counts"].size
    while True:
        pulls, answer = schedule(obs)
        if pulls is None:
            total = int(obs["counts"].sum())
            env.step(np.eye(n, dtype=np.int64)[answer])  # the answer step (a one-hot set)
            return answer, total
        obs, *_ = env.step(pulls)


def _sr_schedule(n: int, budget: int):
    logbar = 0.5 + sum(1.0 / i for i in range(2, n + 1))
    nk = [0] + [math.ceil((budget - n) / (logbar * (n + 1 - k))) for k in range(1, n)]
    state = {"phase": 1, "alive": list(range(n))}

    def step(obs):
        alive = state["alive"]
        if len(alive) == 1:
            return None, alive[0]
        k = state["phase"]
        if obs["counts"][alive[0]] < nk[k]:
            v = np.zeros(n, dtype=np.int64)
            v[alive] = nk[k] - nk[k - 1]
            return v, None
        worst = min(alive, key=lambda a: obs["means"][a])
        alive.remove(worst)
        state["phase"] += 1
        return step(obs)

    return step


def _sh_schedule(n: int, budget: int):
    rounds = math.ceil(math.log2(n))
    state = {"alive": list(range(n)), "start": None, "r": 0}

    def step(obs):
        alive = state["alive"]
        if len(alive) == 1 or state["r"] == rounds:
            return None, alive[0]
        t_r = budget // (len(alive) * rounds)
        if state["start"] is None:
            state["start"] = (obs["counts"].copy(), obs["means"] * obs["counts"])
            v = np.zeros(n, dtype=np.int64)
            v[alive] = t_r
            return v, None
        c0, s0 = state["start"]
        c = obs["counts"]
        rmean = {a: (obs["means"][a] * c[a] - s0[a]) / (c[a] - c0[a]) for a in alive}
        keep = sorted(alive, key=lambda a: -rmean[a])[: (len(alive) + 1) // 2]
        state.update(alive=sorted(keep), start=None, r=state["r"] + 1)
        return step(obs)

    return step


@pytest.mark.parametrize("seed", range(5))
def test_successive_rejects_matches_the_paper(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, budget = 7, 700
    means = rng.uniform(0.2, 0.8, size=n)  # continuous: no ties of empirical means
    env = _env(means, budget)
    res = agents.run_episode(env, agents.make("successive_rejects"), seed=seed)
    answer, total = _reference(env, seed, _sr_schedule(n, budget))
    assert res.recommendation.tolist() == [answer]
    assert res.pulls == total


@pytest.mark.parametrize("seed", range(5))
def test_sequential_halving_matches_the_paper(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n, budget = 11, 1000
    means = rng.uniform(0.2, 0.8, size=n)
    env = _env(means, budget)
    res = agents.run_episode(env, agents.make("sequential_halving"), seed=seed)
    answer, total = _reference(env, seed, _sh_schedule(n, budget))
    assert res.recommendation.tolist() == [answer]
    assert res.pulls == total


def test_sequential_halving_error_bound() -> None:
    """Karnin et al. Theorem 4.1: P(error) <= 3 log2(n) exp(-T / (8 log2(n) H2)).

    With n = 4, mu = (0.9, 0.3, 0.3, 0.3), T = 2000: H2 = max_i i / Delta_i^2 = 4 / 0.36,
    the bound is 6 exp(-2000 / (16 * 11.1)) = 6.7e-5, so 200 runs must all succeed unless
    the bound fails (P(any error) <= 200 * 6.7e-5 = 0.013).
    """
    env = _env(np.array([0.9, 0.3, 0.3, 0.3]), 2000)
    errors = sum(
        agents.run_episode(env, agents.make("sequential_halving"), seed=s).misidentified
        for s in range(200)
    )
    assert errors == 0


def test_k_one_only_and_fixed_budget_only() -> None:
    env = gym.make("TopK-Batch-v0", n_arms=6, k=2, budget=100)
    for name in ("successive_rejects", "sequential_halving"):
        with pytest.raises(ValueError, match="k=2"):
            agents.run_episode(env, agents.make(name), seed=0)
    assert "fixed_confidence" not in agents.agent_class("sequential_halving").settings
