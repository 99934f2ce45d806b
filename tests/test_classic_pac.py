"""Median Elimination and Exponential-Gap Elimination against their papers.

* round sample sizes: the pulls after each round (``max_batches`` = rounds, one batch per
  round with ``batch_size=None``) equal the papers' formulas, recomputed here;
* independent implementations (``env.step`` pull vectors, round means from the
  observations) play the same episodes on Gaussian arms with paired rewards (no ties):
  same answer, same pulls;
* the (epsilon, delta)-PAC error rate, by an exact binomial test; obvious instances;
* bad parameters and unsupported problems.

Only the compiled fast path runs here (its cache loads in well under a second); the
generic files (``test_fast_path.py``, ``test_one_pull.py``, ``test_agents_common.py``)
check it against the Gymnasium step path.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs


def _me_sizes(n: int, epsilon: float, delta: float, scale: float = 1.0) -> list[tuple[int, int]]:
    """EMM06 Alg. 2: ``(|S_l|, t_l)`` per round, ``t_l = ceil(1/(eps_l/2)^2 log(3/delta_l))``."""
    eps_l, delta_l, m, out = epsilon / 4, delta / 2, n, []
    while m > 1:
        out.append((m, math.ceil(scale * (4 / (eps_l * eps_l)) * math.log(3 / delta_l))))
        m = (m + 1) // 2
        eps_l, delta_l = 0.75 * eps_l, delta_l / 2
    return out


def _ege_size(r: int, delta: float) -> tuple[float, float, int]:
    """KKS13 Alg. 2, round ``r``: ``(eps_r, delta_r, t_r)``.

    ``eps_r = 2^-r / 4``, ``delta_r = delta / (50 r^3)``, ``t_r = ceil(2/eps_r^2 log(2/delta_r))``.
    """
    eps_r, delta_r = 2.0**-r / 4, delta / (50 * r**3)
    return eps_r, delta_r, math.ceil((2 / (eps_r * eps_r)) * math.log(2 / delta_r))


def _env(
    means,
    *,
    max_batches: int = 100,
    distribution: str = "bernoulli",
    sigma=None,
    paired: bool = False,
    batch_size: int | None = None,
) -> gym.Env:
    inst = bandit_envs.instances.from_means(
        np.asarray(means, dtype=float), k=1, distribution=distribution, sigma=sigma
    )
    return gym.make(
        "TopK-Batch-v0", instance=inst, setting="fixed_confidence", batch_size=batch_size,
        repeat_limit=None if batch_size is not None else 10**9, max_batches=max_batches,
        answer="agent", shuffle=False, paired=paired,
    )  # fmt: skip


def _counts_after(env_kwargs: dict, name: str, params: dict, batches: int, seed: int = 0):
    env = _env(**env_kwargs, max_batches=batches)
    res = agents.run_episode(env, agents.make(name, **params), seed=seed)
    return env.unwrapped._counts.tolist(), res


# ------------------------------------------------------------------ round sizes
@pytest.mark.parametrize(("distribution", "sigma"), [("bernoulli", None), ("gaussian", 1.0)])
def test_median_elimination_round_sizes(distribution: str, sigma: float | None) -> None:
    """n = 5 arms: rounds of 5, 3 and 2 arms; Gaussian sigma = 1 multiplies them by 4."""
    means = [0.9, 0.7, 0.5, 0.3, 0.1]
    kw = {"means": means, "distribution": distribution, "sigma": sigma}
    params = {"epsilon": 0.9, "delta": 0.5}
    sizes = _me_sizes(5, 0.9, 0.5, scale=1.0 if sigma is None else (2 * sigma) ** 2)
    assert [m for m, _ in sizes] == [5, 3, 2]
    total = 0
    for rnd, (m, t) in enumerate(sizes, start=1):
        counts, res = _counts_after(kw, "median_elimination", params, rnd)
        total += m * t
        assert sum(counts) == res.pulls == total, rnd
        assert sorted(set(counts), reverse=True)[0] == sum(tt for _, tt in sizes[:rnd])
        assert (res.truncated, res.batches) == (True, rnd)
    counts, res = _counts_after(kw, "median_elimination", params, 100)
    assert res.terminated and res.batches == 3 and res.pulls == total
    assert res.recommendation.tolist() == [0]  # gaps of 0.2, t >= 1700: obvious
    # the survivors of each round got every later round's pulls (round-wise halving)
    t1, t2, t3 = (t for _, t in sizes)
    assert sorted(counts) == [t1, t1, t1 + t2, t1 + t2 + t3, t1 + t2 + t3]


def test_exp_gap_round_sizes() -> None:
    """n = 3, delta = 0.5: round 1 samples t_1, then ME(eps_1/2, delta_1) runs 2 rounds
    (3 arms, then 2) and the two far arms (0.3, 0.1 < 0.9 - eps_1) go: 3 batches."""
    means, delta = [0.9, 0.3, 0.1], 0.5
    eps_1, delta_1, t_1 = _ege_size(1, delta)
    assert (eps_1, t_1) == (0.125, math.ceil(128 * math.log(200)))
    me = _me_sizes(3, eps_1 / 2, delta_1)
    assert [m for m, _ in me] == [3, 2]
    kw = {"means": means}
    counts, res = _counts_after(kw, "exp_gap", {"delta": delta}, 1)
    assert counts == [t_1] * 3
    counts, res = _counts_after(kw, "exp_gap", {"delta": delta}, 2)
    assert counts == [t_1 + me[0][1]] * 3
    counts, res = _counts_after(kw, "exp_gap", {"delta": delta}, 3)
    assert sum(counts) == 3 * (t_1 + me[0][1]) + 2 * me[1][1]
    counts, res = _counts_after(kw, "exp_gap", {"delta": delta}, 100)
    assert res.terminated and res.batches == 3 and res.recommendation.tolist() == [0]
    assert res.pulls == 3 * (t_1 + me[0][1]) + 2 * me[1][1]


# ----------------------------------------------- independent implementations
def _pull(env: gym.Env, n: int, arms: list[int], t: int) -> dict:
    v = np.zeros(n, dtype=np.int64)
    v[arms] = t
    obs, *_ = env.step(v)
    return obs


def _round_means(env: gym.Env, n: int, arms: list[int], t: int, obs: dict) -> tuple[dict, dict]:
    before = {a: obs["means"][a] * obs["counts"][a] for a in arms}
    obs = _pull(env, n, arms, t)
    return obs, {a: (obs["means"][a] * obs["counts"][a] - before[a]) / t for a in arms}


def _ref_me(env, n, arms, epsilon, delta, obs):
    """EMM06 Alg. 2 on ``arms``; ties have probability 0 (Gaussian rewards)."""
    alive, eps_l, delta_l = list(arms), epsilon / 4, delta / 2
    while len(alive) > 1:
        t = math.ceil((4 / (eps_l * eps_l)) * math.log(3 / delta_l))
        obs, p = _round_means(env, n, alive, t, obs)
        alive = sorted(sorted(alive, key=lambda a: -p[a])[: (len(alive) + 1) // 2])
        eps_l, delta_l = 0.75 * eps_l, delta_l / 2
    return alive[0], obs


def _ref_ege(env, n, delta, obs):
    """KKS13 Alg. 2 with Alg. 3 (ME) as subroutine."""
    alive, r = list(range(n)), 1
    while len(alive) > 1:
        eps_r, delta_r, t = _ege_size(r, delta)
        obs, p = _round_means(env, n, alive, t, obs)
        best, obs = _ref_me(env, n, alive, eps_r / 2, delta_r, obs)
        alive = [a for a in alive if not p[a] < p[best] - eps_r]
        r += 1
    return alive[0], obs


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["median_elimination", "exp_gap"])
def test_matches_an_independent_implementation(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    if name == "median_elimination":
        n, params = 7, {"epsilon": 0.8, "delta": 0.3}
        means = rng.uniform(0.3, 0.7, size=n)  # close arms: the answer varies with the seed
    else:
        n, params = 3, {"delta": 0.5}
        means = np.array([0.6, 0.5, 0.45]) + rng.uniform(0, 0.01, size=n)  # two EGE rounds or more
    env = _env(means, distribution="gaussian", sigma=0.5, paired=True)
    res = agents.run_episode(env, agents.make(name, **params), seed=seed)
    obs, _ = env.reset(seed=seed)
    if name == "median_elimination":
        answer, obs = _ref_me(env, n, range(n), params["epsilon"], params["delta"], obs)
    else:
        answer, obs = _ref_ege(env, n, params["delta"], obs)
    assert res.terminated
    assert res.recommendation.tolist() == [answer]
    assert res.pulls == int(obs["counts"].sum())


# ------------------------------------------------------------------ guarantees
def test_median_elimination_is_epsilon_delta_pac(rate_at_most) -> None:
    """P(mu_answer < mu_1 - epsilon) <= delta, on 300 seeded runs (exact binomial test).

    n = 8, epsilon = 0.2: arms 0.6, 0.45, 0.42 are epsilon-good, the five at 0.3 are not.
    """
    means = [0.6, 0.45, 0.42, 0.3, 0.3, 0.3, 0.3, 0.3]
    env = _env(means)
    eps, delta, runs = 0.2, 0.2, 1000
    failures = 0
    for seed in range(runs):
        agent = agents.make("median_elimination", epsilon=eps, delta=delta)
        res = agents.run_episode(env, agent, seed=seed)
        assert res.terminated
        failures += means[res.recommendation[0]] < means[0] - eps
    rate_at_most(failures, runs, delta)


def test_exp_gap_is_delta_pac(rate_at_most) -> None:
    """P(answer is not the best arm) <= delta, on 200 seeded runs (exact binomial test).

    Gaps 0.05 and 0.1: the elimination reaches eps_r < 0.05 (r >= 3) before it can drop
    arm 1, so every episode runs the later, larger rounds.
    """
    env = _env([0.6, 0.55, 0.5, 0.3])
    delta, runs = 0.2, 200
    failures = 0
    for seed in range(runs):
        res = agents.run_episode(env, agents.make("exp_gap", delta=delta), seed=seed)
        assert res.terminated
        failures += res.misidentified
    rate_at_most(failures, runs, delta)


@pytest.mark.parametrize("name", ["median_elimination", "exp_gap"])
def test_obvious_instance_is_answered(name: str) -> None:
    """One arm at 0.9, three at 0.1: every seed answers the best arm (shuffled positions)."""
    inst = bandit_envs.instances.from_means(np.array([0.9, 0.1, 0.1, 0.1]), k=1)
    env = gym.make(
        "TopK-Batch-v0",
        instance=inst,
        setting="fixed_confidence",
        batch_size=None,
        repeat_limit=10**9,
        max_batches=100,
        answer="agent",
        shuffle=True,
    )
    params = {"epsilon": 0.5, "delta": 0.1} if name == "median_elimination" else {"delta": 0.1}
    for seed in range(20):
        res = agents.run_episode(env, agents.make(name, **params), seed=seed)
        assert res.terminated and not res.misidentified, seed


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("epsilon", [0, -0.1, float("nan"), float("inf"), True, "0.1", None])
def test_bad_epsilon(epsilon) -> None:
    with pytest.raises(ValueError, match=r"epsilon=.* must be a positive finite number"):
        agents.make("median_elimination", epsilon=epsilon)


@pytest.mark.parametrize("name", ["median_elimination", "exp_gap"])
@pytest.mark.parametrize("delta", [0, 1, 1.5, -0.1, float("nan"), False, "0.1"])
def test_bad_delta(name: str, delta) -> None:
    with pytest.raises(ValueError, match=r"delta=.* must lie in \(0, 1\)"):
        agents.make(name, delta=delta)


@pytest.mark.parametrize("name", ["median_elimination", "exp_gap"])
def test_refuses_fixed_budget_and_k_above_one(name: str) -> None:
    fb = gym.make("TopK-Batch-v0", n_arms=6, k=1, budget=100, answer="agent")
    with pytest.raises(ValueError, match="cannot play setting='fixed_budget'"):
        agents.run_episode(fb, agents.make(name), seed=0)
    fc = gym.make(
        "TopK-Batch-v0", n_arms=6, k=2, setting="fixed_confidence", max_batches=10, answer="agent"
    )
    with pytest.raises(ValueError, match="k=2"):
        agents.run_episode(fc, agents.make(name), seed=0)


def test_tiny_epsilon_caps_the_round() -> None:
    """``epsilon`` so small that ``t_1`` overflows: capped, the episode truncates cleanly."""
    from agents.pac.median_elimination import MAX_ROUND_PULLS, round_pulls

    assert round_pulls(4.0, 1e-300, 6.0, 1.0) == MAX_ROUND_PULLS
    env = _env([0.6, 0.4], max_batches=3, batch_size=4)
    res = agents.run_episode(env, agents.make("median_elimination", epsilon=1e-300), seed=0)
    assert res.truncated and res.pulls == 12
