"""A Beta prior on Bernoulli arm means, shared by the prior-aware (Bayesian) agents.

The catalog's random families draw every arm's mean i.i.d. from a Beta distribution:
``uniform-random`` is Beta(1, 1), ``beta-random`` is Beta(a, b) (``instance_params``).
With Bernoulli rewards the posterior of arm ``i`` after ``s_i`` successes in ``n_i``
pulls is Beta(a + s_i, b + n_i - s_i) (conjugacy), and the Bayes-optimal answer for
aggregate regret is the ``k`` arms with the largest posterior means (the expected
regret of a set is linear in the means).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from agents.engine.beta_math import (
    beta_between,
    beta_tail,
    log_beta,
    posterior_into,
    posterior_of_arms_into,
)
from bandit_envs.instances import Instance
from bandit_envs.problem import Problem
from bandit_envs.scoring import top_k

__all__ = [
    "beta_between",
    "beta_binomial_pmf",
    "beta_tail",
    "check_bernoulli",
    "check_beta_prior",
    "log_beta",
    "posterior",
    "posterior_into",
    "posterior_of_arms_into",
    "posterior_top_k",
    "prior_of",
]


def check_beta_prior(a: Any, b: Any) -> tuple[float, float]:
    """``(a, b)`` as positive finite floats, else a ``ValueError`` naming the bad one."""
    out = []
    for name, value in (("a", a), ("b", b)):
        real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
        if not real or not (0 < value < math.inf):
            raise ValueError(f"prior {name}={value!r} must be a positive finite number")
        out.append(float(value))
    return out[0], out[1]


def prior_of(instance: Instance) -> tuple[float, float]:
    """The Beta prior ``(a, b)`` a catalog instance draws its means from.

    ``uniform-random``: (1, 1); ``beta-random``: its ``a`` and ``b``. Other instances
    have no known prior: ``ValueError``.
    """
    if instance.name == "uniform-random":
        return 1.0, 1.0
    if instance.name == "beta-random":
        return check_beta_prior(instance.params["a"], instance.params["b"])
    raise ValueError(
        f"instance {instance.name!r} draws no means from a known Beta prior "
        f"(known: 'uniform-random', 'beta-random')"
    )


def check_bernoulli(problem: Problem, agent: str) -> None:
    """Beta-Bernoulli agents play Bernoulli arms only."""
    if problem.distribution != "bernoulli":
        raise ValueError(
            f"agent {agent!r} needs distribution='bernoulli' (a Beta prior), "
            f"not {problem.distribution!r}"
        )


def posterior(
    a: float, b: float, counts: np.ndarray, means: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior Beta parameters ``(alpha, beta)`` per arm from pull counts and means."""
    counts = np.asarray(counts, dtype=np.float64)
    wins = np.rint(np.asarray(means, dtype=np.float64) * counts)
    return a + wins, b + counts - wins


def posterior_top_k(
    a: float, b: float, counts: np.ndarray, means: np.ndarray, k: int, rng: np.random.Generator
) -> np.ndarray:
    """The ``k`` arms with the largest posterior means (ties at random), sorted."""
    alpha, beta = posterior(a, b, counts, means)
    return np.sort(top_k(alpha / (alpha + beta), k, rng))


def beta_binomial_pmf(m: int, alpha: float, beta: float) -> np.ndarray:
    """P(j successes in ``m`` pulls), j = 0..m, for a mean ~ Beta(alpha, beta)."""
    j = np.arange(m + 1)
    log_choose = np.array(
        [math.lgamma(m + 1) - math.lgamma(x + 1) - math.lgamma(m - x + 1) for x in j]
    )
    log_b = np.array([math.lgamma(alpha + x) + math.lgamma(beta + m - x) for x in j])
    log_b -= math.lgamma(alpha + beta + m) - math.lgamma(alpha + beta)
    log_b -= math.lgamma(alpha) + math.lgamma(beta)
    p = np.exp(log_choose + log_b)
    return p / p.sum()
