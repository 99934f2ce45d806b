"""``TopK-v0``: top-k arm identification, one pull per step."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any, SupportsFloat

import numpy as np
from gymnasium import spaces

from bandit_envs.core import SAMPLING, TopKBaseEnv
from bandit_envs.instances import Instance
from bandit_envs.problem import build_problem

__all__ = ["TopKEnv"]


class TopKEnv(TopKBaseEnv):
    """Identify the ``k`` arms with the largest means, pulling one arm per step.

    ## Description
    A stochastic ``n_arms``-armed bandit whose episode is pure exploration: the agent
    pulls arms, then the ``k`` arms with the highest empirical means are recommended
    and scored against the true means (Zhou et al. 2014; Bubeck et al. 2013). The
    standard model of the papers; ``TopK-Batch-v0`` is its (b, r)-batch generalisation.

    ## Action Space
    ``Discrete(n_arms + 1)``: the arm to pull, or ``n_arms`` to stop sampling (in fixed
    budget the rest of the budget is then left unspent, as an all-zeros action of
    ``TopK-Batch-v0``). Every element is a legal action whenever the episode runs, in
    both settings (the budget always has a pull left while it runs: the step that spends
    it ends the episode; there is no answer step, the answer is the empirical one), so
    the env needs no ``invalid_action`` argument. Stepping after the end raises
    ``RuntimeError`` until :meth:`reset`.

    ## Action Masks
    :meth:`action_masks` returns ``bool[action_space.n]``, the valid actions now (the
    form sb3-contrib's ``MaskablePPO`` reads for a ``Discrete`` space): every arm and,
    in fixed confidence, the stop action while the episode runs; nothing after it ended.

    ## Observation Space
    ``Dict`` with
    - ``"counts"``: ``Box(0, max_pulls, (n_arms,), int64)``, pulls of each arm so far;
    - ``"means"``: ``Box(low, high, (n_arms,), float64)``, empirical mean of each arm
      (0 before its first pull); ``[0, 1]`` for Bernoulli, the support's range for
      categorical, ``(-inf, inf)`` for Gaussian rewards;
    - ``"remaining"``: ``Box(0, 1, (1,), float64)``, the fraction of the budget left
      (pulls in fixed budget, batches when ``max_batches`` is set; 1 otherwise).

    ## Starting State
    All counts and means 0. At each reset a random instance draws its means from the
    episode's generator, and with ``shuffle=True`` the arms are permuted.

    ## Rewards
    0 per step (``-cost_per_batch`` per pull in fixed confidence). The terminal step adds
    minus the aggregate regret of the recommended set (``objective="aggregate_regret"``,
    Zhou et al. eq. 1) or -1 if the set is not a top-k set (``"misidentification"``).
    Ties in the true means: every set attaining the best total counts as correct.

    ## Episode End
    *Termination*: the budget is spent (fixed budget), or the agent stops (either
    setting). *Truncation*: ``max_batches`` pulls in fixed confidence (no terminal
    reward; ``info`` still scores the empirical answer), or an outer step cap.

    ## Information
    Terminal ``info``: ``recommendation`` (sorted arm indices), ``top_k`` (one true
    top-k set), ``means`` (true means in this episode's arm order), ``aggregate_regret``,
    ``misidentified``, ``precision``, ``pulls``, ``batches`` and, with ``epsilon``,
    ``epsilon_correct``. Other steps return an empty dict.

    ## Arguments
    | Parameter | Type | Default | Description |
    | --- | --- | --- | --- |
    | ``n_arms`` | int | instance's (10) | number of arms |
    | ``k`` | int | instance's (3) | size of the set to identify, ``1 <= k < n_arms`` |
    | ``instance`` | str, array, Instance | ``"uniform-random"`` | catalog name, means or instance |
    | ``instance_params`` | dict | ``None`` | parameters of a named instance |
    | ``distribution`` | str | instance's | ``"bernoulli"``, ``"gaussian"``, ``"categorical"`` |
    | ``sigma`` | float | instance's | Gaussian reward standard deviation |
    | ``setting`` | str | ``"fixed_budget"`` | or ``"fixed_confidence"`` |
    | ``budget`` | int | ``20 * n_arms`` | total pulls (fixed budget) |
    | ``max_batches`` | int | ``None`` | pull cap (fixed budget) / truncation (fixed confidence) |
    | ``objective`` | str | ``"aggregate_regret"`` | or ``"misidentification"`` |
    | ``epsilon`` | float | ``None`` | report ``regret <= epsilon`` in ``info`` |
    | ``shuffle`` | bool | ``True`` | permute arms at each reset |
    | ``cost_per_batch`` | float | 0 | reward charged per pull in fixed confidence |
    | ``paired`` | bool | ``False`` | common random numbers per (arm, pull index) |
    | ``render_mode`` | str | ``None`` | ``"ansi"`` (text) or ``"rgb_array"`` (image) |

    ## Version History
    * v0: initial release; the stop action ``n_arms`` is available in fixed budget too
      (it was fixed confidence only before version 0.2.0 of the package).

    Example:
        >>> import gymnasium as gym, bandit_envs
        >>> env = gym.make("TopK-v0", n_arms=5, k=2, instance=[0.9, 0.8, 0.5, 0.4, 0.1], budget=20)
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs)
        ['counts', 'means', 'remaining']
        >>> env.action_space
        Discrete(6)
        >>> for t in range(20):
        ...     obs, reward, terminated, truncated, info = env.step(t % 5)
        >>> terminated, int(obs["counts"].sum()), sorted(info)[:3]
        (True, 20, ['aggregate_regret', 'batches', 'means'])
    """

    def __init__(
        self,
        n_arms: int | None = None,
        k: int | None = None,
        *,
        instance: str | np.ndarray | list[float] | Instance | None = None,
        instance_params: Mapping[str, Any] | None = None,
        distribution: str | None = None,
        sigma: float | None = None,
        setting: str = "fixed_budget",
        budget: int | None = None,
        max_batches: int | None = None,
        objective: str = "aggregate_regret",
        epsilon: float | None = None,
        shuffle: bool = True,
        cost_per_batch: float = 0.0,
        paired: bool = False,
        render_mode: str | None = None,
    ) -> None:
        problem, inst = build_problem(
            n_arms=n_arms,
            k=k,
            instance=instance,
            instance_params=instance_params,
            distribution=distribution,
            sigma=sigma,
            setting=setting,
            budget=budget,
            max_batches=max_batches,
            batch_size=1,
            repeat_limit=1,
            objective=objective,
            epsilon=epsilon,
            answer="empirical",
            cost_per_batch=cost_per_batch,
        )
        problem = dataclasses.replace(problem, action_format="arm")
        super().__init__(problem, inst, shuffle=shuffle, paired=paired, render_mode=render_mode)
        n = problem.n_arms
        self._stop_action = n
        self.action_space = spaces.Discrete(n + 1)

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """Pull arm ``action`` once, or stop sampling (action ``n_arms``)."""
        self._check_can_step()
        if isinstance(action, np.ndarray):
            if action.shape not in ((), (1,)):
                raise ValueError(f"action {action!r} must be a single arm index")
            action = action.reshape(()).item()
        if isinstance(action, bool) or not isinstance(action, numbers.Integral):
            raise ValueError(f"action={action!r} must be an integer arm index")
        a = int(action)
        if a == self._stop_action:
            return self._step_result(self._stop())
        if not 0 <= a < self.problem.n_arms:
            raise ValueError(f"action={a} is not an arm: it must lie in [0, {self.action_space.n})")
        assert self._phase == SAMPLING
        return self._step_result(self._sample_one(a))

    def action_masks(self) -> np.ndarray:
        """Valid actions now, ``bool[action_space.n]`` (what sb3-contrib's ``MaskablePPO`` reads).

        While sampling every arm is valid (the budget has a pull left, or the episode
        would have ended), and so is the stop action; after the
        episode ended (or before the first reset) nothing is.
        """
        return np.full(self.action_space.n, self._phase == SAMPLING, dtype=np.bool_)
