"""The rules of an episode, validated once and shared by envs, vector envs and agents.

:class:`Problem` is everything an agent may know at reset (the arm means excluded):
agents receive ``env.unwrapped.problem``. :func:`build_problem` turns the keyword
arguments of ``gym.make`` into a :class:`Problem` and an
:class:`~bandit_envs.instances.Instance`, raising a ``ValueError`` that names the bad
value and the rule it breaks.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandit_envs import instances as _instances
from bandit_envs.instances import Arms, Instance

__all__ = [
    "ANSWERS",
    "DEFAULT_BUDGET_PER_ARM",
    "DEFAULT_K",
    "DEFAULT_N_ARMS",
    "INVALID_ACTIONS",
    "OBJECTIVES",
    "PROJECT_HINT",
    "outside_space_message",
    "SETTINGS",
    "Problem",
    "build_problem",
    "check_spendable_budget",
    "k_range_message",
]

SETTINGS = ("fixed_budget", "fixed_confidence")
OBJECTIVES = ("aggregate_regret", "misidentification")
ANSWERS = ("empirical", "agent")
INVALID_ACTIONS = ("raise", "project")
#: The end of a strict-mode (``invalid_action="raise"``) error for an element of the action
#: space that breaks a rule (a batch over ``b``, ``r`` or the budget left; an answer of the
#: wrong size): the argument under which every element of the action space is legal.
PROJECT_HINT = (
    '(pass invalid_action="project" to map any action into the valid set, as RL libraries need)'
)


def outside_space_message(index: int, value: int, repeat_limit: int, n_arms: int) -> str:
    """The error for a pull count outside ``MultiDiscrete([r + 1] * n)``, in every mode:
    projection maps elements of the action space only, never values outside it."""
    return (
        f"action[{index}]={value} is outside the action space "
        f"MultiDiscrete([{repeat_limit + 1}] * {n_arms}): every entry must be in "
        f"0..{repeat_limit} (repeat_limit={repeat_limit})"
    )


DEFAULT_N_ARMS = 10
DEFAULT_K = 3
DEFAULT_BUDGET_PER_ARM = 20
DEFAULT_INSTANCE = "uniform-random"


@dataclass(frozen=True)
class Problem:
    """The rules of one environment's episodes (what an agent is told at reset).

    Attributes:
        n_arms: number of arms ``n``.
        k: size of the set to identify.
        setting: ``"fixed_budget"`` or ``"fixed_confidence"``.
        budget: total pulls allowed (fixed budget), else ``None``.
        max_batches: most sampling steps allowed (fixed budget), or the truncation
            point (fixed confidence); ``None`` for no limit.
        batch_size: ``b``, most pulls per step; ``None`` for no limit.
        repeat_limit: ``r``, most pulls of one arm per step; ``None`` for no limit.
        objective: ``"aggregate_regret"`` or ``"misidentification"``.
        epsilon: regret tolerance reported in ``info["epsilon_correct"]``, or ``None``.
        answer: ``"empirical"`` or ``"agent"`` (an answer step ends the episode).
        cost_per_batch: reward charged per sampling step in fixed confidence.
        distribution: reward family of the arms.
        sigma: sub-Gaussian scale of one reward (1/2 for rewards in [0, 1]); the scale
            confidence bounds use.
        reward_low: lowest possible reward (``-inf`` for Gaussian).
        reward_high: highest possible reward (``inf`` for Gaussian).
        action_format: what a sampling action is: ``"pulls"``, a pull-count vector
            (``TopK-Batch-v0``; all zeros = stop), ``"arm"``, one arm index
            (``TopK-v0``; ``n_arms`` = stop in fixed confidence), or ``"pull"``, one
            pull added to the batch being composed (``TopK-PullByPull-v0``; ``n_arms``
            = end the batch). Agents that build dense actions (``agents.PolicyAgent``)
            read it to act in the env's own format.
    """

    n_arms: int
    k: int
    setting: str = "fixed_budget"
    budget: int | None = None
    max_batches: int | None = None
    batch_size: int | None = 1
    repeat_limit: int | None = 1
    objective: str = "aggregate_regret"
    epsilon: float | None = None
    answer: str = "empirical"
    cost_per_batch: float = 0.0
    distribution: str = "bernoulli"
    sigma: float = 0.5
    reward_low: float = 0.0
    reward_high: float = 1.0
    action_format: str = "pulls"

    @property
    def fixed_budget(self) -> bool:
        """Whether the setting is fixed budget."""
        return self.setting == "fixed_budget"

    @property
    def max_pulls_per_step(self) -> int | None:
        """The most pulls one sampling step can hold (``None``: unbounded)."""
        caps = [c for c in (self.batch_size, self.budget) if c is not None]
        if self.repeat_limit is not None:
            caps.append(self.n_arms * self.repeat_limit)
        return min(caps) if caps else None


def k_range_message(k: int, n_arms: int) -> str:
    """The message of a ``k`` outside ``1 <= k < n_arms`` (single and vector envs alike)."""
    return f"k={k} must be smaller than n_arms={n_arms} (1 <= k < n_arms)"


def _int_arg(name: str, value: Any, low: int, allow_none: bool = True) -> int | None:
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{name}=None is not allowed: give an integer >= {low}")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}={value!r} must be an integer")
    if value < low:
        raise ValueError(f"{name}={value} must be >= {low}")
    return int(value)


def _choice(name: str, value: Any, options: Sequence[str]) -> str:
    if value not in options:
        raise ValueError(f"{name}={value!r} must be one of {list(options)}")
    return str(value)


def _resolve_instance(
    instance: Any,
    n_arms: int | None,
    k: int | None,
    instance_params: Mapping[str, Any] | None,
    distribution: str | None,
    sigma: float | None,
) -> Instance:
    params = dict(instance_params or {})
    if instance is None:
        instance = DEFAULT_INSTANCE
        n_arms = DEFAULT_N_ARMS if n_arms is None else n_arms
        k = DEFAULT_K if k is None else k
    if isinstance(instance, str):
        return _instances.make(instance, n_arms=n_arms, k=k, **params)
    if params:
        raise ValueError(
            f"instance_params={params!r} only apply to a named instance, "
            f"not to {type(instance).__name__}"
        )
    if isinstance(instance, Instance):
        for name, value, have in (("n_arms", n_arms, instance.n_arms), ("k", k, instance.k)):
            if value is not None and value != have:
                raise ValueError(f"{name}={value} disagrees with the instance's {name}={have}")
        return instance
    means = np.asarray(instance, dtype=np.float64)
    if means.ndim != 1:
        raise ValueError(f"instance means must be a 1-D array, got shape {means.shape}")
    if n_arms is not None and n_arms != means.shape[0]:
        raise ValueError(f"n_arms={n_arms} disagrees with len(instance)={means.shape[0]}")
    if k is not None and k >= means.shape[0]:
        raise ValueError(k_range_message(k, means.shape[0]))
    dist = "bernoulli" if distribution is None else distribution
    return _instances.from_means(
        means, k=DEFAULT_K if k is None else k, distribution=dist, sigma=sigma
    )


def episode_arms(instance: Instance, problem: Problem, rng: np.random.Generator | None) -> Arms:
    """The arms of one episode: the instance's draw, in the problem's reward family."""
    arms = instance.arms(rng)
    if arms.distribution == problem.distribution and (
        arms.distribution != "gaussian" or arms.sigma == problem.sigma
    ):
        return arms
    sigma = problem.sigma if problem.distribution == "gaussian" else None
    return Arms(means=arms.means, distribution=problem.distribution, sigma=sigma)


def check_spendable_budget(
    budget: int, max_batches: int, batch_size: int | None, repeat_limit: int | None, n: int
) -> None:
    """Raise ``ValueError`` if ``budget`` pulls cannot fit in ``max_batches`` batches.

    A batch holds at most ``min(b, n r)`` pulls (no limit if both are ``None``); a
    fixed budget above ``max_batches`` times that could never be spent, and agents that
    plan with the budget would plan for pulls that never come.
    """
    caps = [c for c in (batch_size, None if repeat_limit is None else n * repeat_limit) if c]
    if not caps:
        return  # no per-batch limit: one batch can hold the whole budget
    per_batch = min(caps)
    if budget > max_batches * per_batch:
        raise ValueError(
            f"budget={budget} cannot be spent within max_batches={max_batches} batches of at "
            f"most {per_batch} pulls (batch_size={batch_size}, repeat_limit={repeat_limit}, "
            f"n_arms={n}): at most {max_batches * per_batch} pulls fit; lower the budget "
            f"or raise max_batches (without a budget, budget = max_batches * batch_size)"
        )


def build_problem(
    *,
    n_arms: int | None,
    k: int | None,
    instance: Any,
    instance_params: Mapping[str, Any] | None,
    distribution: str | None,
    sigma: float | None,
    setting: str,
    budget: int | None,
    max_batches: int | None,
    batch_size: int | None,
    repeat_limit: int | None,
    objective: str,
    epsilon: float | None,
    answer: str,
    cost_per_batch: float,
) -> tuple[Problem, Instance]:
    """Validate ``gym.make`` keyword arguments into a :class:`Problem` and its instance."""
    setting = _choice("setting", setting, SETTINGS)
    objective = _choice("objective", objective, OBJECTIVES)
    answer = _choice("answer", answer, ANSWERS)
    n_arms = _int_arg("n_arms", n_arms, 2)
    k = _int_arg("k", k, 1)
    if n_arms is not None and k is not None and k >= n_arms:
        raise ValueError(k_range_message(k, n_arms))
    if distribution is not None:
        _choice("distribution", distribution, _instances.DISTRIBUTIONS)
    if sigma is not None and not (
        isinstance(sigma, numbers.Real) and sigma > 0 and math.isfinite(sigma)
    ):
        raise ValueError(f"sigma={sigma!r} must be a positive finite number")
    inst = _resolve_instance(instance, n_arms, k, instance_params, distribution, sigma)
    n, kk = inst.n_arms, inst.k
    if not 1 <= kk < n:
        raise ValueError(k_range_message(kk, n))

    dist = inst.distribution if distribution is None else distribution
    if dist == "categorical" and inst.distribution != "categorical":
        raise ValueError(
            f"distribution='categorical' needs an instance with a support and per-arm "
            f"probabilities; {inst.name!r} is {inst.distribution}"
        )
    if dist == "gaussian":
        sig = sigma if sigma is not None else inst.sigma
        if sig is None:
            raise ValueError("distribution='gaussian' needs sigma (the reward standard deviation)")
        sub_sigma, low, high = float(sig), -math.inf, math.inf
    elif dist == "bernoulli":
        if sigma is not None:
            raise ValueError(f"sigma={sigma} applies only to distribution='gaussian'")
        if not inst.is_random:
            means = inst.means()
            bad = means[(means < 0) | (means > 1)]
            if bad.size:
                raise ValueError(f"Bernoulli means must lie in [0, 1]; got {bad[:5].tolist()}")
        sub_sigma, low, high = 0.5, 0.0, 1.0
    else:
        if inst.is_random:
            raise ValueError(f"categorical instance {inst.name!r} must have fixed arms")
        support = inst.arms().support
        low, high = float(np.min(support)), float(np.max(support))
        sub_sigma = (high - low) / 2

    batch_size = _int_arg("batch_size", batch_size, 1)
    repeat_limit = _int_arg("repeat_limit", repeat_limit, 1)
    if batch_size is not None:
        if repeat_limit is None:
            repeat_limit = batch_size
        elif repeat_limit > batch_size:
            raise ValueError(
                f"repeat_limit={repeat_limit} must not exceed batch_size={batch_size} (r <= b)"
            )
    budget = _int_arg("budget", budget, 1)
    max_batches = _int_arg("max_batches", max_batches, 1)
    if setting == "fixed_budget":
        if budget is not None and max_batches is not None:
            check_spendable_budget(budget, max_batches, batch_size, repeat_limit, n)
        if budget is None:
            if max_batches is None:
                budget = DEFAULT_BUDGET_PER_ARM * n
            elif batch_size is None:
                raise ValueError(
                    "max_batches without a budget needs a batch_size "
                    "(budget = max_batches * batch_size)"
                )
            else:
                budget = max_batches * batch_size
        if budget < n:
            raise ValueError(
                f"budget={budget} is smaller than n_arms={n}: a fixed-budget episode must "
                f"allow at least one pull per arm"
            )
    elif budget is not None:
        raise ValueError(
            f"budget={budget} applies to setting='fixed_budget'; in fixed confidence the "
            f"agent stops, and max_batches truncates"
        )
    if setting == "fixed_confidence" and batch_size is None and repeat_limit is None:
        raise ValueError(
            "setting='fixed_confidence' with batch_size=None needs a repeat_limit "
            "(the action space must be bounded)"
        )
    if epsilon is not None and not (isinstance(epsilon, numbers.Real) and epsilon >= 0):
        raise ValueError(f"epsilon={epsilon!r} must be a number >= 0")
    if not (
        isinstance(cost_per_batch, numbers.Real)
        and math.isfinite(cost_per_batch)
        and cost_per_batch >= 0
    ):
        raise ValueError(f"cost_per_batch={cost_per_batch!r} must be a finite number >= 0")
    if cost_per_batch and setting != "fixed_confidence":
        raise ValueError(
            f"cost_per_batch={cost_per_batch} applies only to setting='fixed_confidence'"
        )

    problem = Problem(
        n_arms=n,
        k=kk,
        setting=setting,
        budget=budget,
        max_batches=max_batches,
        batch_size=batch_size,
        repeat_limit=repeat_limit,
        objective=objective,
        epsilon=None if epsilon is None else float(epsilon),
        answer=answer,
        cost_per_batch=float(cost_per_batch),
        distribution=dist,
        sigma=sub_sigma,
        reward_low=low,
        reward_high=high,
    )
    return problem, inst
