"""Shared test helpers: exact binomial tails for statistical assertions."""

from __future__ import annotations

import math

import pytest


def binomial_sf(x: int, n: int, p: float) -> float:
    """P(X >= x) for X ~ Binomial(n, p), exactly."""
    if x <= 0:
        return 1.0
    return float(sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(x, n + 1)))


def assert_rate_at_most(failures: int, runs: int, p: float, alpha: float = 1e-3) -> None:
    """Fail if ``failures`` out of ``runs`` is implausible when the true rate is <= ``p``.

    One-sided exact binomial test at level ``alpha``: under rate p the probability of
    seeing at least this many failures must be >= alpha.
    """
    tail = binomial_sf(failures, runs, p)
    assert tail >= alpha, (
        f"{failures}/{runs} failures: P(Bin({runs}, {p}) >= {failures}) = {tail:.2e} < {alpha}"
    )


@pytest.fixture
def rate_at_most():
    """The :func:`assert_rate_at_most` helper as a fixture."""
    return assert_rate_at_most


def pytest_collection_modifyitems(config, items):
    """Tests that start a local Ray instance run on one xdist worker (``--dist loadgroup``
    in ``addopts``), one after another: two Ray instances at once would share the 2 cores
    with the other worker's tests."""
    for item in items:
        if item.get_closest_marker("ray") is not None:
            item.add_marker(pytest.mark.xdist_group("ray"))
