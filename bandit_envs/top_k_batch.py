"""``TopK-Batch-v0``: top-k arm identification in the (b, r)-batch model of Jun et al."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import numpy as np

from bandit_envs.core import ANSWER, SAMPLING, TopKBaseEnv
from bandit_envs.instances import Instance
from bandit_envs.problem import (
    INVALID_ACTIONS,
    PROJECT_HINT,
    build_problem,
    outside_space_message,
)
from bandit_envs.spaces import BatchPulls

__all__ = ["TopKBatchEnv", "project_answer", "project_pulls"]


def project_pulls(action: np.ndarray, repeat_limit: int, cap: int | None) -> np.ndarray:
    """Map an integer vector into ``{a in {0..r}^n : sum(a) <= cap}`` (the project mode).

    The rule, deterministic and documented: clip every entry to ``[0, r]``; if the
    total still exceeds ``cap``, scale the vector by ``cap / total``, round every entry
    down, and hand the pulls lost to rounding, one each, to the arms with the largest
    fractional parts (ties to the lower index). The result sums to exactly ``cap`` and
    never exceeds the clipped entry of any arm.
    """
    a = np.maximum(action, 0)  # np.clip(action, 0, r): ~3x faster on short vectors
    np.minimum(a, repeat_limit, out=a)
    total = int(a.sum())
    if cap is None or total <= cap:
        return a
    scaled = a * (cap / total)
    out = np.floor(scaled).astype(np.int64)
    short = cap - int(out.sum())
    if short > 0:
        order = np.lexsort((np.arange(a.shape[0]), -(scaled - out)))
        out[order[:short]] += 1
    return out


def project_answer(action: np.ndarray, k: int, empirical_means: np.ndarray) -> np.ndarray:
    """The answer step's projection: the ``k`` arms with the largest entries.

    Ties go to the higher empirical mean, then to the lower index.
    """
    n = action.shape[0]
    order = np.lexsort((np.arange(n), -empirical_means, -action))
    return np.sort(order[:k])


class TopKBatchEnv(TopKBaseEnv):
    """Identify the top ``k`` arms when arms are pulled in batches (Jun et al. 2016).

    ## Description
    The (b, r)-batch bandit of Jun, Jamieson, Nowak & Zhu (AISTATS 2016, Sec. 1): each
    step the agent chooses a pull-count vector ``a`` with ``a_i <= r`` pulls of arm ``i``
    and at most ``b`` pulls in all; arm ``i`` then yields ``a_i`` i.i.d. rewards, of
    which the observation reports the running counts and means. ``batch_size=1`` is the
    standard model; ``batch_size=None`` lets one step hold any number of pulls (so a
    whole elimination round is one step). Fixed budget (pulls and/or batches) and fixed
    confidence (the agent stops) are both supported.

    ## Action Space
    :class:`~bandit_envs.spaces.BatchPulls`, a ``MultiDiscrete([r + 1] * n_arms)`` whose
    ``contains`` also checks ``sum(a) <= b`` and whose ``sample`` draws members of that
    set (within the budget left). The all-zero vector means "stop sampling" (in fixed
    budget: end early). With ``answer="agent"``, after sampling ends the next action is
    the answer: ``k`` nonzero entries mark the recommended arms (the sum rule does not
    apply).

    Every element of the ``MultiDiscrete`` is a legal action in every phase (Gymnasium's
    convention, which RL libraries rely on), and nothing else is: a value outside the space
    (a negative count, one above ``r``, a non-integer, a wrong shape) raises a
    ``ValueError`` naming the value and the space in every mode. By the default
    ``invalid_action="project"``, an element of the space that breaks the sum rule,
    a pull vector over ``b`` or over the pulls the budget has left, is mapped into the set
    by :func:`project_pulls` (scale down to ``min(b, pulls left)``
    with largest-remainder rounding), an answer by :func:`project_answer` (its ``k``
    largest entries), and ``info["pulls_made"]`` reports the pulls made. Valid actions
    are left as they are. ``invalid_action="raise"`` (the strict mode, for scripted
    agents: their bugs surface) raises a ``ValueError`` naming the bad value and the
    rule instead.

    ## Action Masks
    :meth:`action_masks` returns the per-dimension masks sb3-contrib's ``MaskablePPO``
    reads for a ``MultiDiscrete``: ``bool[n_arms * (r + 1)]``, entry ``i * (r + 1) + c``
    true iff arm ``i`` may be pulled ``c`` times now, i.e. ``c <= min(r, b, pulls
    left)`` while sampling, ``c`` in ``{0, 1}`` at the answer step (larger entries
    would give the same answer), nothing after the episode ended. Per-dimension masks
    cannot hold the sum rule ``sum(a) <= min(b, pulls left)``: a vector of allowed
    entries may still be over it (it is projected, or raises in ``"raise"`` mode).
    ``TopK-PullByPull-v0`` (:class:`~bandit_envs.pull_by_pull.TopKPullByPullEnv`) is
    this problem with each batch composed pull by pull, whose masks are exact.

    ## Observation Space
    ``Dict`` with ``"counts"`` (``int64``, pulls per arm), ``"means"`` (``float64``,
    empirical means, 0 before the first pull), ``"remaining"`` (fraction of the
    budget left, pulls or batches, whichever is smaller; 1 in fixed confidence without
    ``max_batches``) and, with ``answer="agent"``, ``"phase"`` (``Discrete(2)``: 0 while
    sampling, 1 at the answer step).

    ## Starting State
    All counts and means 0. A random instance draws its means from the episode's
    generator at each reset; with ``shuffle=True`` the arms are permuted.

    ## Rewards
    0 per batch (``-cost_per_batch`` in fixed confidence). The terminal step adds minus
    the aggregate regret of the recommended set (Zhou et al. 2014, eq. 1) or -1 if it is
    not a top-k set (``objective="misidentification"``); under ties in the true means,
    any set with the best total is correct.

    ## Episode End
    *Termination*: the budget (``budget`` pulls or ``max_batches`` batches) is spent
    or the agent stops, in fixed budget; the agent stops, in fixed confidence (with
    ``answer="agent"``: the answer step after that). *Truncation*: ``max_batches`` in
    fixed confidence (no terminal reward; ``info`` scores the empirical answer), or an
    outer step cap.

    ## Information
    Sampling steps: ``pulls_made`` (the vector of pulls made). Terminal step:
    ``recommendation``, ``top_k``, ``means``, ``aggregate_regret``, ``misidentified``,
    ``precision``, ``pulls``, ``batches`` and, with ``epsilon``, ``epsilon_correct``.

    ## Arguments
    | Parameter | Type | Default | Description |
    | --- | --- | --- | --- |
    | ``n_arms``, ``k`` | int | instance's (10, 3) | arms; size of the set, ``1 <= k < n_arms`` |
    | ``instance`` | str, array, Instance | ``"uniform-random"`` | catalog name, means or instance |
    | ``instance_params`` | dict | ``None`` | parameters of a named instance |
    | ``distribution`` | str | instance's | ``"bernoulli"``, ``"gaussian"``, ``"categorical"`` |
    | ``sigma`` | float | instance's | Gaussian reward standard deviation |
    | ``setting`` | str | ``"fixed_budget"`` | or ``"fixed_confidence"`` |
    | ``budget`` | int | ``20 n`` or ``max_batches * b`` | pulls (fixed budget), see below |
    | ``max_batches`` | int | ``None`` | batch budget B (fixed budget) / truncation (fixed conf.) |
    | ``batch_size`` | int or None | 5 | ``b``; ``None``: any number of pulls per step |
    | ``repeat_limit`` | int | ``batch_size`` | ``r``, most pulls of one arm per step |
    | ``objective`` | str | ``"aggregate_regret"`` | or ``"misidentification"`` |
    | ``epsilon`` | float | ``None`` | report ``regret <= epsilon`` in ``info`` |
    | ``answer`` | str | ``"empirical"`` | or ``"agent"`` (an answer step) |
    | ``shuffle`` | bool | ``True`` | permute arms at each reset |
    | ``cost_per_batch`` | float | 0 | reward charged per batch in fixed confidence |
    | ``invalid_action`` | str | ``"project"`` | project any action; ``"raise"``: strict |
    | ``paired`` | bool | ``False`` | common random numbers per (arm, pull index) |
    | ``render_mode`` | str | ``None`` | ``"ansi"`` (text) or ``"rgb_array"`` (image) |

    A fixed budget given with ``max_batches`` must fit in them: ``budget <=
    max_batches * min(b, n r)`` (a batch holds at most ``min(b, n r)`` pulls), else
    ``ValueError``: more would never be spent.

    ## Fast path for scripted agents
    :meth:`step_sparse` and :meth:`answer_sparse` take ``(arms, reps)`` and an arm set
    instead of dense vectors, validate in O(len(arms)), and return observation *views*
    valid until the next step; :meth:`step_one` takes one arm to pull once (sequential
    algorithms). They make exactly the same draws as :meth:`step`.

    ## References
    Jun, Jamieson, Nowak, Zhu. Top arm identification in multi-armed bandits with batch
    arm pulls. AISTATS 2016. Zhou, Chen, Li. Optimal PAC multiple arm identification
    with applications to crowdsourcing. ICML 2014.

    ## Version History
    * v0: initial release.

    Example:
        >>> import gymnasium as gym, bandit_envs, numpy as np
        >>> env = gym.make("TopK-Batch-v0", n_arms=4, k=1, instance=[0.9, 0.5, 0.4, 0.1],
        ...                batch_size=4, repeat_limit=2, max_batches=3, answer="agent")
        >>> obs, _ = env.reset(seed=1)
        >>> for _ in range(3):
        ...     obs, r, term, trunc, info = env.step(np.array([1, 1, 1, 1]))
        >>> int(obs["phase"]), term
        (1, False)
        >>> obs, r, term, trunc, info = env.step(np.eye(4, dtype=int)[int(np.argmax(obs["means"]))])
        >>> term, info["pulls"], info["batches"]
        (True, 12, 3)
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
        super().__init__(problem, inst, shuffle=shuffle, paired=paired, render_mode=render_mode)
        self.invalid_action = invalid_action
        n = problem.n_arms
        # Per-arm cap of the action space: r, else (b = None, no r) the whole budget.
        self._r = problem.repeat_limit if problem.repeat_limit is not None else problem.budget
        self.action_space = BatchPulls(n, problem.batch_size, self._r)
        self._views: dict[str, Any] = {}

    # ------------------------------------------------------------------ hooks
    def _on_reset(self) -> None:
        self.action_space.answer_k = None
        self.action_space.sample_limit = self.pulls_left
        views = {
            "counts": self._counts.view(),
            "means": self._emp.view(),
            "remaining": self._remaining.view(),
        }
        for v in views.values():
            v.flags.writeable = False
        self._views = views

    def _on_answer_phase(self) -> None:
        self.action_space.answer_k = self.problem.k

    # ------------------------------------------------------------ validation
    def _as_counts(self, action: Any) -> np.ndarray:
        a = np.asarray(action)
        n = self.problem.n_arms
        if a.shape != (n,):
            raise ValueError(f"action shape {a.shape} must be ({n},): one pull count per arm")
        kind = a.dtype.kind
        if kind in "iu":
            return a.astype(np.int64, copy=False)
        if kind == "b":
            return a.astype(np.int64)
        if kind == "f":
            if not np.all(np.isfinite(a)):
                bad = int(np.flatnonzero(~np.isfinite(a))[0])
                raise ValueError(f"action[{bad}]={a[bad]} is not a finite pull count")
            frac = a != np.floor(a)
            if np.any(frac):
                bad = int(np.flatnonzero(frac)[0])
                raise ValueError(f"action[{bad}]={a[bad]} is not an integer pull count")
            return a.astype(np.int64)
        raise ValueError(f"action dtype {a.dtype} must be integer")

    def _check_in_space(self, a: np.ndarray) -> None:
        """Every entry in ``0..r``, in every mode (a value outside the space is a bug)."""
        r = self._r
        if a.min() < 0 or a.max() > r:
            bad = int(np.flatnonzero((a < 0) | (a > r))[0])
            raise ValueError(outside_space_message(bad, int(a[bad]), r, a.shape[0]))

    def _check_pulls(self, a: np.ndarray) -> np.ndarray:
        p = self.problem
        left = self.pulls_left
        self._check_in_space(a)
        if self.invalid_action == "project":
            caps = [c for c in (p.batch_size, left) if c is not None]
            return project_pulls(a, self._r, min(caps) if caps else None)
        total = int(a.sum())
        if p.batch_size is not None and total > p.batch_size:
            raise ValueError(
                f"action asks for {total} pulls, over batch_size={p.batch_size} {PROJECT_HINT}"
            )
        if left is not None and total > left:
            raise ValueError(
                f"action asks for {total} pulls but the budget has {left} left {PROJECT_HINT}"
            )
        return a

    # ------------------------------------------------------------------ step
    def step(self, action: Any) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        """Pull by ``action`` (a batch), stop (all zeros), or answer (answer phase)."""
        self._check_can_step()
        a = self._as_counts(action)
        if self._phase == ANSWER:
            self._check_in_space(a)
            if self.invalid_action == "project":
                rec = project_answer(a, self.problem.k, self._emp)
            else:
                rec = self._check_answer(np.flatnonzero(a), a)
            return self._step_result(self._answer(rec))
        a = self._check_pulls(a)
        arms = np.flatnonzero(a)
        if arms.size == 0:
            result = self._stop()
        else:
            result = self._sample(arms, a[arms], a)
        self.action_space.sample_limit = self.pulls_left
        obs, reward, terminated, truncated, info = self._step_result(result)
        info["pulls_made"] = a.copy()
        return obs, reward, terminated, truncated, info

    def _check_answer(self, arms: np.ndarray, a: np.ndarray | None = None) -> np.ndarray:
        """Strict mode's answer rule: ``k`` marked arms (``a``: the dense action, if any)."""
        k = self.problem.k
        if arms.shape[0] != k:
            hint = "" if a is None else f" {PROJECT_HINT}"
            raise ValueError(
                f"the answer must mark exactly k={k} arms with nonzero entries; "
                f"it marks {arms.shape[0]}{hint}"
            )
        return arms

    # -------------------------------------------------------------- fast path
    def step_sparse(
        self, arms: np.ndarray, reps: np.ndarray
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One batch given as distinct ``arms`` pulled ``reps`` times each (empty: stop).

        The same draws and bookkeeping as :meth:`step` with the equivalent dense vector
        (``arms`` in any order: they are drawn in index order, as ``step`` draws them),
        validated in O(len(arms) log len(arms)). The returned observation holds read-only *views* of
        the env's state: valid until the next step, copy them to keep them.
        """
        self._check_can_step()
        if self._phase != SAMPLING:
            raise RuntimeError("step_sparse() is for sampling steps; use answer_sparse() to answer")
        if type(arms) is not np.ndarray or arms.dtype != np.int64:
            arms = np.asarray(arms, dtype=np.int64)
        if type(reps) is not np.ndarray or reps.dtype != np.int64:
            reps = np.asarray(reps, dtype=np.int64)
        p = self.problem
        if arms.shape == (1,) and reps.shape == (1,):
            arm, rep = int(arms[0]), int(reps[0])
            if not 0 <= arm < p.n_arms:
                raise ValueError(f"arms [{arm}] must lie in [0, {p.n_arms})")
            if not 1 <= rep <= self._r:
                raise ValueError(f"reps [{rep}] must lie in [1, repeat_limit={self._r}]")
            if p.batch_size is not None and rep > p.batch_size:
                raise ValueError(f"{rep} pulls exceed batch_size={p.batch_size}")
            left = self.pulls_left
            if left is not None and rep > left:
                raise ValueError(f"{rep} pulls asked but the budget has {left} left")
            reward, terminated, truncated, info = self._sample(arms, reps)
        elif arms.size == 0:
            reward, terminated, truncated, info = self._stop()
        else:
            n = p.n_arms
            if arms.shape != reps.shape or arms.ndim != 1:
                raise ValueError(
                    f"arms {arms.shape} and reps {reps.shape} must be 1-D of one length"
                )
            if arms.min() < 0 or arms.max() >= n:
                raise ValueError(f"arms {arms.tolist()} must lie in [0, {n})")
            if reps.min() < 1 or reps.max() > self._r:
                raise ValueError(f"reps {reps.tolist()} must lie in [1, repeat_limit={self._r}]")
            total = int(reps.sum())
            if p.batch_size is not None and total > p.batch_size:
                raise ValueError(f"{total} pulls exceed batch_size={p.batch_size}")
            left = self.pulls_left
            if left is not None and total > left:
                raise ValueError(f"{total} pulls asked but the budget has {left} left")
            if arms.shape[0] > 1 and not (arms[1:] > arms[:-1]).all():
                # Draw in index order, as step() does with the dense vector.
                order = np.argsort(arms, kind="stable")
                if not (np.diff(arms[order]) > 0).all():
                    raise ValueError(f"arms {arms.tolist()} must be distinct")
                arms, reps = arms[order], reps[order]
            reward, terminated, truncated, info = self._sample(arms, reps)
        self.action_space.sample_limit = self.pulls_left
        self._remaining[0] = self._remaining_fraction()
        return self._views, float(reward), bool(terminated), bool(truncated), info

    def step_one(self, arm: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One batch of one pull of ``arm``: the fast path of sequential agents.

        The same draw and bookkeeping as :meth:`step` with the one-hot vector of ``arm``
        and as ``step_sparse([arm], [1])`` (the same generator stream; in paired mode the
        arm's next reward): one pull fits every batch model (``b >= 1``, ``r >= 1``),
        and while the episode samples the budget has a pull left. Counts, means,
        ``remaining`` and the action space's sampling limit are updated in O(1). Returns
        what :meth:`step_sparse` returns: read-only observation *views* (valid until the
        next step), the reward, ``terminated``, ``truncated`` and ``info``.

        Raises:
            ValueError: ``arm`` is not an integer in ``[0, n_arms)`` (the message names it).
            RuntimeError: outside the sampling phase (use :meth:`answer_sparse` to answer).
        """
        if self._phase != SAMPLING:
            self._check_can_step()
            raise RuntimeError("step_one() is for sampling steps; use answer_sparse() to answer")
        n = self.problem.n_arms
        if type(arm) is not int:
            if isinstance(arm, (bool, np.bool_)) or not isinstance(arm, (int, np.integer)):
                raise ValueError(f"arm={arm!r} must be an integer arm index in [0, {n})")
            arm = int(arm)
        if not 0 <= arm < n:
            raise ValueError(f"arm={arm} must lie in [0, {n})")
        reward, terminated, truncated, info = self._sample_one(arm)
        budget = self.problem.budget
        if budget is not None:
            self.action_space.sample_limit = budget - self._pulls
        self._remaining[0] = self._remaining_fraction()
        return self._views, float(reward), bool(terminated), bool(truncated), info

    def answer_sparse(
        self, recommendation: np.ndarray
    ) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """The answer step given as ``k`` distinct arm indices."""
        self._check_can_step()
        if self._phase != ANSWER:
            raise RuntimeError("answer_sparse() is only valid in the answer phase")
        rec = np.asarray(recommendation, dtype=np.int64)
        n = self.problem.n_arms
        if rec.size and (rec.min() < 0 or rec.max() >= n):
            raise ValueError(f"recommendation {rec.tolist()} must lie in [0, {n})")
        self._check_answer(np.unique(rec))
        if rec.shape[0] != self.problem.k:
            raise ValueError(
                f"recommendation {rec.tolist()} must hold exactly k={self.problem.k} distinct arms"
            )
        reward, terminated, truncated, info = self._answer(rec)
        return self._views, float(reward), bool(terminated), bool(truncated), info

    def action_masks(self) -> np.ndarray:
        """Per-dimension valid counts now, ``bool[n_arms * (r + 1)]`` (sb3-contrib's layout).

        Entry ``i * (r + 1) + c`` says whether arm ``i`` may be pulled ``c`` times
        (:func:`~bandit_envs.spaces.count_masks`): while sampling, ``c <= min(r, b,
        pulls left)``; at the answer step ``c`` in ``{0, 1}``; after the episode ended,
        nothing. Per-dimension masks cannot hold the sum rule: with every entry
        allowed, a vector may still ask for more than ``b`` pulls (or than the budget
        has left), which is projected (or raises in ``invalid_action="raise"``). The
        masks are exactly each arm's possible counts (``c`` is allowed iff some valid
        action pulls arm ``i`` ``c`` times). ``TopK-PullByPull-v0`` composes the batch
        one pull at a time, with masks that do hold every rule.
        """
        if self._phase == SAMPLING:
            p = self.problem
            caps = [c for c in (self._r, p.batch_size, self.pulls_left) if c is not None]
            return self.action_space.masks(min(caps))
        return self.action_space.masks(None, answering=self._phase == ANSWER)

    @property
    def phase(self) -> int:
        """0 while sampling, 1 at the answer step, 2 after the episode ended."""
        return self._phase
