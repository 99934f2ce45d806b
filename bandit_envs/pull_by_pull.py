"""``TopK-PullByPull-v0``: the (b, r)-batch model with each batch composed one pull at a time."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from typing import Any, SupportsFloat

import numpy as np
from gymnasium import spaces

from bandit_envs.core import ANSWER, SAMPLING, TopKBaseEnv, make_observation_space
from bandit_envs.instances import Instance
from bandit_envs.problem import INVALID_ACTIONS, PROJECT_HINT, build_problem
from bandit_envs.spaces import MaskedDiscrete

__all__ = ["TopKPullByPullEnv"]


class TopKPullByPullEnv(TopKBaseEnv):
    """``TopK-Batch-v0``'s problem, each batch composed pull by pull with exact action masks.

    ## Description
    The (b, r)-batch bandit of Jun et al. (AISTATS 2016), as in ``TopK-Batch-v0``
    (same arguments, same reward laws, same episodes for the same seed and batches),
    with the pull-count vector of a step split into sub-steps: each sub-step adds one
    pull of one arm to the batch being composed, or ends it. The batch is sent (pulled,
    one batch of the underlying model) when it is ended or when it is full: ``b``
    pulls, the pulls the budget has left, or ``r`` pulls of every arm. Every rule of
    the batch (``a_i <= r``, ``sum(a) <= b``, the budget) is then a rule on one
    sub-step, so :meth:`action_masks` states exactly which choices are valid: a masked
    policy (sb3-contrib's ``MaskablePPO``) plays the batch model with no invalid action
    and no projection, which per-dimension masks of ``TopK-Batch-v0``'s
    ``MultiDiscrete`` cannot do (they cannot hold the sum rule).

    ## Action Space
    ``Discrete(n_arms + 1)`` (:class:`~bandit_envs.spaces.MaskedDiscrete`, whose
    ``sample()`` draws a valid choice). While sampling, action ``i < n_arms`` adds one
    pull of arm ``i`` to the batch (valid while arm ``i`` has fewer than ``r`` pulls in
    it); action ``n_arms`` ends the batch: sends it, or, on an empty batch, stops
    sampling (fixed confidence: the agent stops; fixed budget: ends early), like
    ``TopK-Batch-v0``'s all-zero vector. With ``answer="agent"``, the answer step is
    ``k`` sub-steps, each choosing one more arm of the answer (valid: an arm not chosen
    yet; ``n_arms`` is not valid); the ``k``-th ends the episode.

    Every element of ``Discrete(n_arms + 1)`` is a legal action in every phase (Gymnasium's
    convention, which RL libraries rely on; the batched space of a vector env is a plain
    ``MultiDiscrete`` whose samples ignore the masks), by the default
    ``invalid_action="project"``: an invalid choice is replaced (``info["projected"]``),
    while sampling by ``n_arms`` (end the batch), at the answer step by the unchosen arm
    with the highest empirical mean (ties to the lower index). Valid choices are left as
    they are, so a masked policy plays the same in both modes. ``invalid_action="raise"``
    (the strict mode) raises a ``ValueError`` naming the choice and the rule instead.

    ## Action Masks
    :meth:`action_masks` returns ``bool[n_arms + 1]``, exactly the valid actions (the
    form ``MaskablePPO`` reads for a ``Discrete`` space): while sampling, arm ``i`` iff
    it has fewer than ``r`` pulls in the batch (``b`` and the budget are enforced by
    sending the batch once it is full) and always ``n_arms``; at the answer step, the
    arms not chosen yet; after the episode, nothing.

    ## Observation Space
    ``TopK-Batch-v0``'s ``Dict`` (``counts``, ``means``, ``remaining`` and, with
    ``answer="agent"``, ``phase``), plus ``"batch"``: ``Box(0, r, (n_arms,), int64)``,
    the batch being composed (pulls of each arm in it, not yet made) or, at the answer
    step, the arms chosen so far (1) for the answer.

    ## Starting State
    As ``TopK-Batch-v0``, with an empty batch.

    ## Rewards
    ``TopK-Batch-v0``'s reward of a batch on the sub-step that sends it
    (``-cost_per_batch`` in fixed confidence), its terminal reward on the sub-step that
    ends the episode, 0 on the other sub-steps. The return of an episode equals that of
    ``TopK-Batch-v0`` playing the same batches.

    ## Episode End
    As ``TopK-Batch-v0``, on the sub-step that sends the last batch, stops, or chooses
    the ``k``-th arm of the answer. *Truncation*: ``max_batches`` batches in fixed
    confidence, or an outer step cap (which counts sub-steps).

    ## Information
    A sub-step that sends a batch (or stops): ``pulls_made``, the batch sent (all zeros
    for a stop). Terminal step: ``TopK-Batch-v0``'s terminal keys (``recommendation``,
    ``top_k``, ``means``, ``aggregate_regret``, ``misidentified``, ``precision``,
    ``pulls``, ``batches``, ``epsilon_correct`` with ``epsilon``). With
    ``invalid_action="project"``, ``projected`` (``True``) on a sub-step whose action
    was replaced. Other sub-steps return an empty dict.

    ## Arguments
    ``TopK-Batch-v0``'s (:class:`~bandit_envs.top_k_batch.TopKBatchEnv`): ``n_arms``,
    ``k``, ``instance``, ``instance_params``, ``distribution``, ``sigma``, ``setting``,
    ``budget``, ``max_batches``, ``batch_size`` (default 5), ``repeat_limit``,
    ``objective``, ``epsilon``, ``answer``, ``shuffle``, ``cost_per_batch``,
    ``invalid_action`` (``"project"``, the default: the rule above, or ``"raise"``:
    strict), ``paired``, ``render_mode``.

    ## Vector Environments
    ``gym.make_vec("TopK-PullByPull-v0", num_envs=N, ...)`` builds a
    ``SyncVectorEnv``; ``envs.call("action_masks")`` (or
    :func:`bandit_envs.wrappers.vector_action_masks`) gives the masks of every env, and
    stable-baselines3's ``DummyVecEnv`` (``make_vec_env``) gives them to ``MaskablePPO``.
    Its batched action space is a plain ``MultiDiscrete``: its samples are legal actions
    (projected), and valid ones are drawn with the masks.

    ## References
    Jun, Jamieson, Nowak, Zhu. Top arm identification in multi-armed bandits with batch
    arm pulls. AISTATS 2016.

    ## Version History
    * v0: initial release.

    Example:
        >>> import gymnasium as gym, bandit_envs
        >>> env = gym.make("TopK-PullByPull-v0", n_arms=3, k=1, instance=[0.9, 0.5, 0.1],
        ...                batch_size=2, budget=4, answer="agent")
        >>> obs, _ = env.reset(seed=0)
        >>> env.unwrapped.action_masks().tolist()
        [True, True, True, True]
        >>> obs, r, term, trunc, info = env.step(0)  # one pull of arm 0 in the batch
        >>> obs["batch"].tolist(), obs["counts"].tolist(), info
        ([1, 0, 0], [0, 0, 0], {})
        >>> obs, r, term, trunc, info = env.step(0)  # r = b = 2: the batch is full, sent
        >>> obs["counts"].tolist(), info["pulls_made"].tolist()
        ([2, 0, 0], [2, 0, 0])
        >>> for arm in (1, 2):
        ...     obs, r, term, trunc, info = env.step(arm)  # [0, 1, 1]: the budget is spent
        >>> int(obs["phase"]), env.unwrapped.action_masks().tolist()
        (1, [True, True, True, False])
        >>> obs, r, term, trunc, info = env.step(0)  # the answer: arm 0 (k = 1)
        >>> term, info["recommendation"].tolist(), info["pulls"]
        (True, [0], 4)
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
        batch_size: int | None = 5,
        repeat_limit: int | None = None,
        objective: str = "aggregate_regret",
        epsilon: float | None = None,
        answer: str = "empirical",
        shuffle: bool = True,
        cost_per_batch: float = 0.0,
        invalid_action: str = "project",
        paired: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if invalid_action not in INVALID_ACTIONS:
            raise ValueError(
                f"invalid_action={invalid_action!r} must be one of {list(INVALID_ACTIONS)}"
            )
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
            batch_size=batch_size,
            repeat_limit=repeat_limit,
            objective=objective,
            epsilon=epsilon,
            answer=answer,
            cost_per_batch=cost_per_batch,
        )
        problem = dataclasses.replace(problem, action_format="pull")
        super().__init__(problem, inst, shuffle=shuffle, paired=paired, render_mode=render_mode)
        self.invalid_action = invalid_action
        n = problem.n_arms
        # Per-arm cap: r, else (b = None, no r) the whole budget (as TopK-Batch-v0).
        self._r = problem.repeat_limit if problem.repeat_limit is not None else problem.budget
        base = make_observation_space(problem).spaces
        self.observation_space = spaces.Dict(
            {**base, "batch": spaces.Box(0, self._r, shape=(n,), dtype=np.int64)}
        )
        self.action_space = MaskedDiscrete(n + 1)
        self._batch = np.zeros(n, dtype=np.int64)
        self._total = 0
        self._valid = np.zeros(n + 1, dtype=np.int8)
        self.action_space.valid = self._valid

    # ------------------------------------------------------------------ hooks
    def _on_reset(self) -> None:
        self._clear_batch()

    def _on_answer_phase(self) -> None:
        self._clear_batch()

    def _clear_batch(self) -> None:
        self._batch[:] = 0
        self._total = 0

    def _batch_cap(self) -> int:
        """The most pulls the batch being composed may hold: ``min(b, pulls left, n r)``."""
        p = self.problem
        caps = [p.n_arms * self._r]
        if p.batch_size is not None:
            caps.append(p.batch_size)
        if p.budget is not None:
            caps.append(p.budget - self._pulls)
        return min(caps)

    def _update_valid(self) -> None:
        valid = self._valid
        n = self.problem.n_arms
        if self._phase == SAMPLING:
            np.less(self._batch, self._r, out=valid[:n], casting="unsafe")
            valid[n] = 1
        elif self._phase == ANSWER:
            np.equal(self._batch, 0, out=valid[:n], casting="unsafe")
            valid[n] = 0
        else:
            valid[:] = 0

    # ------------------------------------------------------------------ masks
    def action_masks(self) -> np.ndarray:
        """Valid actions now, ``bool[n_arms + 1]`` (what sb3-contrib's ``MaskablePPO`` reads).

        Exactly the actions :meth:`step` accepts in ``invalid_action="raise"``: see the
        class docstring (## Action Masks).
        """
        self._update_valid()
        return self._valid.astype(np.bool_)

    # ------------------------------------------------------------------ step
    def _as_choice(self, action: Any) -> int:
        if isinstance(action, np.ndarray):
            if action.shape not in ((), (1,)):
                raise ValueError(f"action {action!r} must be a single integer in [0, n_arms]")
            action = action.reshape(()).item()
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, numbers.Integral):
            raise ValueError(f"action={action!r} must be an integer in [0, n_arms]")
        a = int(action)
        n = self.problem.n_arms
        if not 0 <= a <= n:
            raise ValueError(
                f"action={a} must lie in [0, {n}]: an arm to add one pull of, or {n} to end "
                "the batch"
            )
        return a

    def _invalid(self, a: int) -> str:
        """Strict mode's message for the invalid choice ``a`` (ends with the hint)."""
        n = self.problem.n_arms
        if self._phase == ANSWER:
            if a == n:
                return (
                    f"action={n} (end the batch) is not valid at the answer step: choose "
                    f"{self.problem.k - int(self._batch.sum())} more arm(s) of the answer "
                    f"{PROJECT_HINT}"
                )
            return f"action={a}: arm {a} is already in the answer {PROJECT_HINT}"
        return (
            f"action={a}: arm {a} already has repeat_limit={self._r} pulls in this batch "
            f"{PROJECT_HINT}"
        )

    def _project(self, a: int) -> int:
        n = self.problem.n_arms
        if self._phase == SAMPLING:
            return n
        free = np.flatnonzero(self._batch == 0)
        return int(free[np.argmax(self._emp[free])])

    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """One sub-step: add a pull to the batch, end it, or choose an arm of the answer."""
        self._check_can_step()
        a = self._as_choice(action)
        self._update_valid()
        projected = False
        if not self._valid[a]:
            if self.invalid_action == "raise":
                raise ValueError(self._invalid(a))
            a, projected = self._project(a), True
        n = self.problem.n_arms
        sent = None
        if self._phase == ANSWER:
            self._batch[a] = 1
            if int(self._batch.sum()) == self.problem.k:
                result = self._answer(np.flatnonzero(self._batch))
            else:
                result = (0.0, False, False, {})
        elif a == n:
            sent = self._batch.copy()
            result = self._send()
        else:
            self._batch[a] += 1
            self._total += 1
            if self._total >= self._batch_cap():
                sent = self._batch.copy()
                result = self._send()
            else:
                result = (0.0, False, False, {})
        obs, reward, terminated, truncated, info = self._step_result(result)
        if sent is not None:
            info["pulls_made"] = sent
        if projected:
            info["projected"] = True
        return obs, reward, terminated, truncated, info

    def _send(self) -> tuple[float, bool, bool, dict[str, Any]]:
        """Pull the batch being composed (one batch; empty: stop sampling)."""
        batch = self._batch
        arms = np.flatnonzero(batch)
        if arms.size == 0:
            return self._stop()
        result = self._sample(arms, batch[arms].copy(), batch.copy())
        self._clear_batch()
        return result

    # ------------------------------------------------------------ observation
    def _observation(self) -> dict[str, Any]:
        obs = super()._observation()
        obs["batch"] = self._batch.copy()
        self._update_valid()
        return obs

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the text table of ``TopK-Batch-v0`` and the batch being composed;
        ``"rgb_array"``: the frame of ``TopK-Batch-v0``."""
        text = super().render()
        if not isinstance(text, str):
            return text
        return f"{text}\nbatch: {self._batch.tolist()}"
