"""Frank-Wolfe Sampling (agents.glr.frank_wolfe): gradients, the matrix game, proportions, input.

The error rate (GLR stopping with the proven gk2016 threshold) is tested with the other
GLR agents in tests/test_glr_top_two.py (``test_error_rate_at_most_delta``).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy.optimize import linprog

import agents
import bandit_envs
from agents.glr import frank_wolfe as fw
from bandit_envs import divergences as dv


def _f(family: int, sigma: float, means: np.ndarray, x: np.ndarray, best: int) -> np.ndarray:
    n = means.shape[0]
    gi, gb, f = np.empty(n), np.empty(n), np.empty(n)
    fw.pair_gradients(family, sigma, means, x, best, gi, gb, f)
    return gi, gb, f


@pytest.mark.parametrize("family,sigma", [(dv.BERNOULLI, 0.5), (dv.GAUSSIAN, 0.7)])
def test_pair_gradients_match_finite_differences(family: int, sigma: float) -> None:
    means = np.array([0.3, 0.7, 0.55, 0.1])
    x = np.array([0.1, 0.4, 0.3, 0.2])
    best, h = 1, 1e-6
    gi, gb, f = _f(family, sigma, means, x, best)
    assert f[best] == np.inf
    for b in (0, 2, 3):
        # f_b is the transport cost with the weights x (the GLR pair term)
        want = dv.transport_cost(family, sigma, x[best], means[best], x[b], means[b])
        assert f[b] == pytest.approx(want, rel=1e-12)
        # homogeneous of degree 1: f_b(x) = <x, grad f_b(x)>
        assert f[b] == pytest.approx(x[best] * gi[b] + x[b] * gb[b], rel=1e-12)
        for a in range(4):
            up, dn = x.copy(), x.copy()
            up[a] += h
            dn[a] -= h
            f_up = _f(family, sigma, means, up, best)[2][b]
            f_dn = _f(family, sigma, means, dn, best)[2][b]
            num = (f_up - f_dn) / (2 * h)
            grad = gi[b] if a == best else gb[b] if a == b else 0.0
            assert num == pytest.approx(grad, rel=1e-6, abs=1e-9)


def _game(a: np.ndarray) -> tuple[np.ndarray, float]:
    m, n = a.shape
    tab = np.empty((n + 1, 2 * n + 1))
    basis = np.empty(n, dtype=np.int64)
    z = np.empty(n)
    v = fw.solve_game(a, m, n, tab, basis, z)
    return z, v


def _linprog_value(a: np.ndarray) -> float:
    """max_{z in simplex} min_j (a z)_j by scipy: variables (z, v), maximise v."""
    m, n = a.shape
    c = np.zeros(n + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-a, np.ones((m, 1))])  # v - (a z)_j <= 0
    a_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    bounds = [(0, None)] * n + [(None, None)]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=[1.0], bounds=bounds)
    assert res.status == 0
    return -res.fun


def test_matrix_game_solver_matches_linprog() -> None:
    rng = np.random.default_rng(3)
    for trial in range(120):
        n = int(rng.integers(2, 9))
        m = int(rng.integers(1, n + 1))
        a = rng.normal(size=(m, n))
        if trial % 3 == 0:  # degenerate games: repeated entries, rows and columns
            a = np.round(a, 0)
        if trial % 5 == 0:
            a[:, 0] = a[:, -1]
        z, v = _game(a)
        want = _linprog_value(a)
        assert v == pytest.approx(want, abs=1e-9)
        assert z.min() >= 0 and z.sum() == pytest.approx(1.0)
        assert (a @ z).min() == pytest.approx(want, abs=1e-9)  # z attains the value


def test_fw_games_of_the_agent_match_linprog() -> None:
    """The games FWS builds (rows: active f_b, payoff <e_a - x, h_b>), several active."""
    means = np.array([0.6, 0.5, 0.5, 0.45, 0.3])
    n = 5
    ws = np.zeros((fw.WS_ROWS, n))
    gbuf = np.zeros((4, 4))  # room for one active f_b: larger games allocate their own
    ws[fw.X, :n] = [0.3, 0.2, 0.2, 0.2, 0.1]  # f_1 = f_2: a two-element subdifferential
    active, basis = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    rng = np.random.default_rng(0)
    t = 10.0**6 + 7  # floor(t / 5) is no perfect square: no forced exploration
    m = fw.fw_direction(dv.BERNOULLI, 0.5, means, t, 0, ws, gbuf, active, basis, rng)
    assert m == 2 and set(active[:2]) == {1, 2}
    x = ws[fw.X, :n]
    gi, gb, f = _f(dv.BERNOULLI, 0.5, means, x, 0)
    a = np.zeros((2, n))
    for j, b in enumerate((1, 2)):
        h = np.zeros(n)
        h[0], h[b] = gi[b], gb[b]
        a[j] = h - h @ x
    z = ws[fw.Z, :n]
    assert (a @ z).min() == pytest.approx(_linprog_value(a), abs=1e-12)
    z_small_buffer = z.copy()
    big = np.zeros((10, 10))  # the same game in a buffer with room for it
    assert fw.fw_direction(dv.BERNOULLI, 0.5, means, t, 0, ws, big, active, basis, rng) == 2
    assert np.allclose(ws[fw.Z, :n], z_small_buffer, atol=1e-12)
    # one active f_b: the vertex of the largest gradient coordinate
    ws[fw.X, :n] = [0.3, 0.25, 0.2, 0.15, 0.1]
    assert fw.fw_direction(dv.BERNOULLI, 0.5, means, t, 0, ws, gbuf, active, basis, rng) == 1
    gi, gb, f = _f(dv.BERNOULLI, 0.5, means, ws[fw.X, :n], 0)
    b = int(np.argmin(f))
    want = 0 if gi[b] > gb[b] else b
    assert np.array_equal(ws[fw.Z, :n], np.eye(n)[want])
    # forced exploration: floor(t / K) a perfect square
    assert (
        fw.fw_direction(dv.BERNOULLI, 0.5, means, 5.0 * 49 + 3, 0, ws, gbuf, active, basis, rng)
        == 0
    )
    assert np.allclose(ws[fw.Z, :n], 0.2)


def _env(mu, setting="fixed_confidence", **kw):
    return gym.make(
        "TopK-Batch-v0",
        instance=bandit_envs.instances.from_means(np.asarray(mu), k=1),
        batch_size=1,
        repeat_limit=1,
        setting=setting,
        shuffle=False,
        **kw,
    )


# Tolerances from observed convergence (seeds 0-7, both trackings, 2e5 pulls on GK2016's
# mu1): max_a |N_a / t - w*(mu_hat)| <= 0.011 against the oracle at the final estimates
# (what FW converges to; its step is O(1/t) and r_t = t^-0.9 / K), so 0.03 is ~3x the
# worst; max_a |N_a / t - w*(mu)| <= 0.05 against the true weights, larger because
# w* moves fast with the means (the two worst arms get 1e4-3e4 pulls: standard errors
# 0.003-0.005 of their means), 0.023 at most on seeds 0-1 used here.
TOL_ESTIMATED, TOL_TRUE = 0.03, 0.05


@pytest.mark.parametrize("tracking", ["ratio", "cumulative"])
def test_proportions_approach_the_optimal_weights(tracking: str) -> None:
    mu = np.array([0.5, 0.45, 0.43, 0.4])  # garivier2016-mu1
    env = _env(mu, setting="fixed_budget", budget=200_000)
    w_star, _ = bandit_envs.hardness.optimal_weights(mu, 1)
    for seed in range(2):
        # delta = 1e-300: the GLR rule cannot stop within the budget
        agent = agents.make("frank_wolfe", delta=1e-300, tracking=tracking)
        agents.run_episode(env, agent, seed=seed)
        assert agent.counts.sum() == 200_000
        prop = agent.counts / agent.counts.sum()
        w_hat, _ = bandit_envs.hardness.optimal_weights(agent.means, 1)
        assert np.abs(prop - w_hat).max() < TOL_ESTIMATED, (seed, prop, w_hat)
        assert np.abs(prop - w_star).max() < TOL_TRUE, (seed, prop, w_star)


def test_stops_and_is_deterministic_per_seed() -> None:
    env = _env([0.5, 0.45, 0.43, 0.4])
    runs = []
    for _ in range(2):
        agent = agents.make("frank_wolfe", delta=0.1)
        res = agents.run_episode(env, agent, seed=11)
        assert res.terminated and not res.truncated
        runs.append(agent.counts.copy())
    assert np.array_equal(runs[0], runs[1])


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="tracking='D'"):
        agents.make("frank_wolfe", tracking="D")
    with pytest.raises(ValueError, match="divergence='poisson'"):
        agents.make("frank_wolfe", divergence="poisson")
    with pytest.raises(ValueError, match="delta=0"):
        agents.make("frank_wolfe", delta=0)
    with pytest.raises(ValueError, match="threshold='chernoff'"):
        agents.make("frank_wolfe", threshold="chernoff")
    env = gym.make("TopK-Batch-v0", n_arms=5, k=2, setting="fixed_confidence", max_batches=100)
    with pytest.raises(ValueError, match="k=2"):
        agents.run_episode(env, agents.make("frank_wolfe"), seed=0)
