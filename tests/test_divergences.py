"""KL divergences, KL confidence indices and the GLR transport cost (bandit_envs.divergences)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from bandit_envs import divergences as dv


def test_bernoulli_kl_by_hand() -> None:
    want = 0.5 * math.log(0.5 / 0.3) + 0.5 * math.log(0.5 / 0.7)
    assert dv.kl(dv.BERNOULLI, 0.5, 0.3, 0.0) == pytest.approx(want, rel=1e-12)
    assert dv.kl(dv.BERNOULLI, 0.4, 0.4, 0.0) == 0.0
    assert np.isfinite(dv.kl_bernoulli(0.0, 1.0))  # clamped, finite


def test_gaussian_kl_by_hand() -> None:
    assert dv.kl(dv.GAUSSIAN, 1.0, 0.0, 0.5) == pytest.approx(2.0)


@pytest.mark.parametrize("family,sigma", [(dv.BERNOULLI, 0.0), (dv.GAUSSIAN, 0.5)])
@pytest.mark.parametrize("p", [0.0, 0.05, 0.5, 0.93, 1.0])
@pytest.mark.parametrize("level", [1e-3, 0.1, 2.0])
def test_kl_indices_solve_their_equation(family: int, sigma: float, p: float, level: float) -> None:
    up = dv.kl_upper(family, p, level, sigma)
    lo = dv.kl_lower(family, p, level, sigma)
    assert lo <= p <= up
    # inside the level set, and the set ends there (to the bisection's 2^-50 resolution)
    assert dv.kl(family, p, up, sigma) <= level * (1 + 1e-9)
    assert dv.kl(family, p, lo, sigma) <= level * (1 + 1e-9)
    if family == dv.GAUSSIAN or up < 1.0:
        assert dv.kl(family, p, up + 1e-12, sigma) > level or up + 1e-12 > 1.0
    if family == dv.GAUSSIAN or lo > 0.0:
        assert dv.kl(family, p, lo - 1e-12, sigma) > level or lo - 1e-12 < 0.0


def test_transport_cost_is_the_infimum_over_a_grid() -> None:
    for family, sigma in ((dv.BERNOULLI, 0.0), (dv.GAUSSIAN, 0.3)):
        n_i, mu_i, n_j, mu_j = 12.0, 0.7, 30.0, 0.45
        grid = np.linspace(mu_j, mu_i, 20001)
        brute = min(
            n_i * dv.kl(family, mu_i, x, sigma) + n_j * dv.kl(family, mu_j, x, sigma) for x in grid
        )
        cost = dv.transport_cost(family, sigma, n_i, mu_i, n_j, mu_j)
        assert cost == pytest.approx(brute, rel=1e-6)
        assert dv.transport_cost(family, sigma, n_j, mu_j, n_i, mu_i) == 0.0  # j is worse already


def test_family_code_rejects_unknown_distributions() -> None:
    assert dv.family_code("categorical") == dv.BERNOULLI
    with pytest.raises(ValueError, match="'poisson'"):
        dv.family_code("poisson")


@numba.njit
def _mismatches(ps: np.ndarray, levels: np.ndarray, guesses: np.ndarray) -> np.ndarray:
    """Per (p, level): whether the Bernoulli index differs from the reference bisection's
    (``kl_upper``/``kl_lower``; the ``_from`` variants from ``guesses``), and whether the
    outer bounds fail to bound it (``kl_upper_outer < up`` or ``kl_lower_outer > lo``)."""
    bad = np.zeros(3, dtype=np.int64)
    for i in range(ps.shape[0]):
        p, level, g = ps[i], levels[i], guesses[i]
        up = 1.0 if dv.kl_bernoulli(p, 1.0) <= level else dv._bisect_upper(p, level)
        lo = 0.0 if dv.kl_bernoulli(p, 0.0) <= level else dv._bisect_lower(p, level)
        bern = dv.BERNOULLI
        if dv.kl_upper(bern, p, level, 0.0) != up or dv.kl_lower(bern, p, level, 0.0) != lo:
            bad[0] += 1
        if dv.kl_upper_from(p, level, g) != up or dv.kl_lower_from(p, level, g) != lo:
            bad[1] += 1
        if dv.kl_upper_outer(p, level) < up or dv.kl_lower_outer(p, level) > lo:
            bad[2] += 1
        if dv.kl_upper_outer(p, level, g) < up or dv.kl_lower_outer(p, level, g) > lo:
            bad[2] += 1
    return bad


def test_kl_indices_are_the_reference_bisection_bit_for_bit() -> None:
    """The Newton-started replay returns the 50-step bisection's value exactly.

    Means of every kind the agents meet (uniform, proportions ``S/T``, within ``1e-16`` of
    0 and 1, exactly 0 and 1) and levels from ``1e-10`` to 50 (``beta / T``); the
    ``_from`` variants from any guess in [0, 1]; the outer bounds (with and without a
    guess) bound the index.
    """
    rng = np.random.default_rng(20261125)
    m = 100_000
    ps = np.concatenate(
        [
            rng.random(m),
            rng.integers(0, 60, m) / rng.integers(1, 61, m),
            10.0 ** -rng.uniform(0, 16, m),
            1.0 - 10.0 ** -rng.uniform(0, 16, m),
            np.zeros(100),
            np.ones(100),
        ]
    )
    ps = np.minimum(ps, 1.0)
    levels = 10.0 ** rng.uniform(-10, 1.7, ps.shape[0])
    guesses = rng.random(ps.shape[0])
    assert list(_mismatches(ps, levels, guesses)) == [0, 0, 0]
