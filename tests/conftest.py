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


@pytest.fixture(autouse=True, scope="session")
def _sb3_log_dir(tmp_path_factory):
    """stable-baselines3's ``learn`` without a logger set creates a directory per call
    in ``$SB3_LOGDIR``, else a new ``SB3-<date>`` one in the system's temporary
    directory: the tests' (and their subprocesses') go to one of pytest's."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture
def rate_at_most():
    """The :func:`assert_rate_at_most` helper as a fixture."""
    return assert_rate_at_most


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "kernel_group(name): the tests play registered agent NAME's compiled kernel and "
        "run in its xdist group (tests/_kernel_groups.py)",
    )


@pytest.hookimpl(tryfirst=True)  # before xdist's, which names the groups from the marks
def pytest_collection_modifyitems(config, items):
    """xdist groups (``--dist loadgroup`` in ``addopts``). Tests that start a local Ray
    instance run on one worker, one after another: two Ray instances at once would share
    the 2 cores with the other worker's tests. A test that plays a registered agent (an
    agent's name, or class, as a parameter, else a ``kernel_group`` mark of its module or
    its own) joins the group of the agent's compiled kernel (:mod:`_kernel_groups`), so
    that the kernel compiles on one worker only. A test with an ``xdist_group`` mark of
    its own keeps it (xdist joins the names of all the marks into one group)."""
    from _kernel_groups import agent_param, kernel_group

    for item in items:
        if item.get_closest_marker("ray") is not None:
            group = "ray"
        elif item.get_closest_marker("xdist_group") is not None:
            continue
        else:
            mark = item.get_closest_marker("kernel_group")
            name = agent_param(item) or (mark.args[0] if mark is not None else None)
            if name is None:
                continue
            group = kernel_group(name)
        item.add_marker(pytest.mark.xdist_group(group))
