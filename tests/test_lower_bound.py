"""The fixed-confidence lower bound: T*(mu) and w*(mu) (bandit_envs.lower_bound / hardness)."""

from __future__ import annotations

import numpy as np
import pytest

from bandit_envs import hardness
from bandit_envs.divergences import BERNOULLI, GAUSSIAN, transport_cost
from bandit_envs.lower_bound import _solve_max_min, optimal_weights


@pytest.mark.parametrize(
    "means,want",
    [  # Garivier & Kaufmann 2016, Sec. 5: the two experiments' optimal proportions
        ([0.5, 0.45, 0.43, 0.4], [0.417, 0.390, 0.136, 0.057]),
        ([0.3, 0.21, 0.2, 0.19, 0.18], [0.336, 0.251, 0.177, 0.132, 0.104]),
    ],
)
def test_garivier_kaufmann_weights(means: list[float], want: list[float]) -> None:
    w, t_star = hardness.optimal_weights(means, 1)
    assert np.allclose(w, want, atol=5e-4)
    # T*^-1 is the max-min value: every alternative costs the same at w*
    costs = [
        transport_cost(BERNOULLI, 0.5, w[0], means[0], w[a], means[a]) for a in range(1, len(means))
    ]
    assert np.allclose(costs, 1.0 / t_star, rtol=1e-8)


def test_two_gaussian_arms_closed_form() -> None:
    # w* = (1/2, 1/2), T* = 8 sigma^2 / Delta^2
    w, t_star = optimal_weights([1.0, 0.4], 1, "gaussian", sigma=0.5)
    assert np.allclose(w, 0.5)
    assert t_star == pytest.approx(8 * 0.25 / 0.36)


def test_symmetric_gaussian_top_k_closed_form() -> None:
    # two arms at 1, two at 0, k = 2, sigma = 1: w = 1/4, W = 1 / (2 (4 + 4)), T* = 16
    w, t_star = optimal_weights([1.0, 0.0, 1.0, 0.0], 2, "gaussian", sigma=1.0)
    assert np.allclose(w, 0.25, atol=1e-6)
    assert t_star == pytest.approx(16.0, rel=1e-6)


@pytest.mark.parametrize("family,dist", [(BERNOULLI, "bernoulli"), (GAUSSIAN, "gaussian")])
def test_program_solver_matches_the_exact_k1_oracle(family: int, dist: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        means = rng.uniform(0.1, 0.9, size=6)
        w_exact, t_exact = optimal_weights(means, 1, dist, sigma=0.5)
        w_prog, t_prog = _solve_max_min(means, 1, family, 0.5)
        assert t_prog == pytest.approx(t_exact, rel=1e-5)
        assert np.allclose(w_prog, w_exact, atol=1e-4)


def test_top_k_weights_are_a_local_maximum() -> None:
    means = np.array([0.7, 0.62, 0.55, 0.5, 0.4, 0.3])
    w, t_star = optimal_weights(means, 2)
    top, rest = [0, 1], [2, 3, 4, 5]

    def value(v: np.ndarray) -> float:
        return min(
            transport_cost(BERNOULLI, 0.5, v[i], means[i], v[j], means[j])
            for i in top
            for j in rest
        )

    assert value(w) == pytest.approx(1.0 / t_star)
    rng = np.random.default_rng(0)
    for _ in range(200):  # no nearby point of the simplex does better
        v = np.abs(w + rng.normal(0.0, 1e-3, size=w.size))
        v /= v.sum()
        assert value(v) <= value(w) * (1 + 1e-6)


def test_ties_and_bad_input() -> None:
    assert hardness.characteristic_time([0.5, 0.5, 0.2], 1) == np.inf
    with pytest.raises(ValueError, match="'poisson'"):
        hardness.characteristic_time([0.5, 0.2], 1, "poisson")
    with pytest.raises(ValueError, match="must lie in \\[0, 1\\]"):
        hardness.characteristic_time([1.5, 0.2], 1, "bernoulli")
    with pytest.raises(ValueError, match="over the solver's limit"):
        hardness.characteristic_time(np.linspace(0.1, 0.9, 200), 50)
