"""The base class both environments share: episode state, budget bookkeeping,
termination, scoring and the observation.

Leaves (:mod:`bandit_envs.top_k`, :mod:`bandit_envs.top_k_batch`) only parse their
actions and call :meth:`TopKBaseEnv._sample` / :meth:`TopKBaseEnv._stop` /
:meth:`TopKBaseEnv._answer`.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bandit_envs.instances import Instance
from bandit_envs.problem import Problem, episode_arms
from bandit_envs.rendering import render_rgb
from bandit_envs.sampling import IndependentRewards, PairedRewards, RewardSource
from bandit_envs.scoring import score, top_k, true_top_k

__all__ = ["ANSWER", "DONE", "SAMPLING", "TopKBaseEnv", "make_observation_space"]

SAMPLING, ANSWER, DONE = 0, 1, 2
_INT_MAX = np.iinfo(np.int64).max


def make_observation_space(problem: Problem) -> spaces.Dict:
    """The observation space of one environment (see the env docstrings)."""
    n = problem.n_arms
    if problem.budget is not None:
        max_count = problem.budget
    elif problem.max_batches is not None and problem.max_pulls_per_step is not None:
        max_count = problem.max_batches * problem.max_pulls_per_step
    else:
        max_count = _INT_MAX
    obs = {
        "counts": spaces.Box(0, max_count, shape=(n,), dtype=np.int64),
        "means": spaces.Box(problem.reward_low, problem.reward_high, shape=(n,), dtype=np.float64),
        "remaining": spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float64),
    }
    if problem.answer == "agent":
        obs["phase"] = spaces.Discrete(2)
    return spaces.Dict(obs)


class TopKBaseEnv(gym.Env[dict[str, Any], Any]):
    """Shared mechanics of ``TopK-v0`` and ``TopK-Batch-v0`` (not registered itself)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        problem: Problem,
        instance: Instance,
        *,
        shuffle: bool = True,
        paired: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode={render_mode!r} must be None or one of "
                f"{self.metadata['render_modes']}"
            )
        for name, flag in (("shuffle", shuffle), ("paired", paired)):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name}={flag!r} must be a bool")
        self.problem = problem
        self.instance = instance
        self.shuffle = bool(shuffle)
        self.paired = bool(paired)
        self.render_mode = render_mode
        self.observation_space = make_observation_space(problem)
        self._phase = DONE
        self._needs_reset = True
        n = problem.n_arms
        self._counts = np.zeros(n, dtype=np.int64)
        self._sums = np.zeros(n, dtype=np.float64)
        self._emp = np.zeros(n, dtype=np.float64)
        self._means = np.zeros(n, dtype=np.float64)
        self._remaining = np.ones(1, dtype=np.float64)
        self._pulls = 0
        self._batches = 0
        self._rewards: RewardSource | None = None

    # ------------------------------------------------------------------ reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode: draw the instance's means, shuffle the arms, zero the counts."""
        super().reset(seed=seed)
        rng = self.np_random
        arms = episode_arms(self.instance, self.problem, rng)
        if self.shuffle:
            arms = arms._permuted_trusted(rng.permutation(self.problem.n_arms))
        self._arms = arms
        self._means = np.asarray(arms.means, dtype=np.float64)
        if self.paired:
            self._rewards = PairedRewards(arms, int(rng.integers(2**63)))
        else:
            self._rewards = IndependentRewards(arms, rng)
        self._counts = np.zeros(self.problem.n_arms, dtype=np.int64)
        self._sums = np.zeros(self.problem.n_arms, dtype=np.float64)
        self._emp = np.zeros(self.problem.n_arms, dtype=np.float64)
        self._remaining = np.ones(1, dtype=np.float64)
        self._pulls = 0
        self._batches = 0
        self._phase = SAMPLING
        self._needs_reset = False
        self._on_reset()
        return self._observation(), {}

    def _on_reset(self) -> None:
        """Hook for leaves (e.g. the action space's sampling limits)."""

    # ----------------------------------------------------------- bookkeeping
    @property
    def true_means(self) -> np.ndarray:
        """The episode's true arm means (a copy; for scoring and analysis, not for agents)."""
        return self._means.copy()

    @property
    def pulls_left(self) -> int | None:
        """Pulls the budget has left (``None`` in fixed confidence)."""
        b = self.problem.budget
        return None if b is None else b - self._pulls

    def _check_can_step(self) -> None:
        if self._needs_reset:
            raise RuntimeError(
                "step() called before reset() or after the episode ended; call reset() first"
            )

    def _sample(
        self, arms: np.ndarray, reps: np.ndarray, dense: np.ndarray | None = None
    ) -> tuple[float, bool, bool, dict[str, Any]]:
        """Pull ``arms[j]`` ``reps[j]`` times (validated, distinct, reps >= 1): one batch.

        ``dense``, if given, is the same batch as a full pull-count vector; when many
        arms are pulled, whole-array updates are cheaper than fancy indexing.
        """
        if arms.shape[0] == 1 and reps[0] == 1:
            return self._sample_one(int(arms[0]))
        sums = self._rewards.sums(arms, reps)
        if dense is not None and 8 * arms.shape[0] >= dense.shape[0]:
            self._counts += dense
            if arms.shape[0] == dense.shape[0]:
                self._sums += sums
            else:
                full = np.zeros(dense.shape[0])
                full[arms] = sums
                self._sums += full
            np.divide(self._sums, self._counts, out=self._emp, where=self._counts > 0)
        else:
            counts = self._counts[arms] + reps
            self._counts[arms] = counts
            total = self._sums[arms] + sums
            self._sums[arms] = total
            self._emp[arms] = total / counts
        self._pulls += int(reps.sum())
        self._batches += 1
        return self._after_batch()

    def _sample_one(self, arm: int) -> tuple[float, bool, bool, dict[str, Any]]:
        """Pull one arm once: one batch (``TopK-v0``'s step, ``TopKBatchEnv.step_one``)."""
        x = self._rewards.one(arm)
        c = self._counts.item(arm) + 1
        self._counts[arm] = c
        s = self._sums.item(arm) + x
        self._sums[arm] = s
        self._emp[arm] = s / c
        self._pulls += 1
        self._batches += 1
        return self._after_batch()

    def _after_batch(self) -> tuple[float, bool, bool, dict[str, Any]]:
        p = self.problem
        if p.setting == "fixed_budget":
            over = self._pulls >= p.budget or (
                p.max_batches is not None and self._batches >= p.max_batches
            )
            if over:
                return self._end_sampling(0.0)
            return 0.0, False, False, {}
        reward = -p.cost_per_batch
        if p.max_batches is not None and self._batches >= p.max_batches:
            info = self._finish(self._empirical_answer())
            return reward, False, True, info
        return reward, False, False, {}

    def _stop(self) -> tuple[float, bool, bool, dict[str, Any]]:
        """The agent ends sampling (an all-zero batch, or ``TopK-v0``'s stop action)."""
        return self._end_sampling(0.0)

    def _end_sampling(self, reward: float) -> tuple[float, bool, bool, dict[str, Any]]:
        if self.problem.answer == "agent":
            self._phase = ANSWER
            self._on_answer_phase()
            return reward, False, False, {}
        info = self._finish(self._empirical_answer())
        return reward + self._terminal_reward(info), True, False, info

    def _on_answer_phase(self) -> None:
        """Hook for leaves."""

    def _answer(self, recommendation: np.ndarray) -> tuple[float, bool, bool, dict[str, Any]]:
        """The answer step: score ``recommendation`` (k distinct arms) and terminate."""
        info = self._finish(np.sort(recommendation))
        return self._terminal_reward(info), True, False, info

    def _empirical_answer(self) -> np.ndarray:
        values = np.where(self._counts > 0, self._emp, -np.inf)
        return top_k(values, self.problem.k, self.np_random)

    def _terminal_reward(self, info: dict[str, Any]) -> float:
        if self.problem.objective == "aggregate_regret":
            return -info["aggregate_regret"]
        return -1.0 if info["misidentified"] else 0.0

    def _finish(self, recommendation: np.ndarray) -> dict[str, Any]:
        p = self.problem
        self._phase = DONE
        self._needs_reset = True
        result = score(self._means, recommendation, p.k)
        info: dict[str, Any] = {
            "recommendation": np.asarray(recommendation, dtype=np.int64),
            "top_k": true_top_k(self._means, p.k),
            "means": self._means.copy(),
            "aggregate_regret": result.aggregate_regret,
            "misidentified": result.misidentified,
            "precision": result.precision,
            "pulls": self._pulls,
            "batches": self._batches,
        }
        if p.epsilon is not None:
            info["epsilon_correct"] = result.aggregate_regret <= p.epsilon
        return info

    # ------------------------------------------------------------ observation
    def _remaining_fraction(self) -> float:
        p = self.problem
        frac = 1.0
        if p.budget is not None:
            frac = (p.budget - self._pulls) / p.budget
        if p.max_batches is not None:
            frac = min(frac, (p.max_batches - self._batches) / p.max_batches)
        return frac

    def _observation(self) -> dict[str, Any]:
        self._remaining[0] = self._remaining_fraction()
        obs: dict[str, Any] = {
            "counts": self._counts.copy(),
            "means": self._emp.copy(),
            "remaining": self._remaining.copy(),
        }
        if self.problem.answer == "agent":
            obs["phase"] = np.int64(self._phase == ANSWER)
        return obs

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: a text table of pulls and empirical means per arm; ``"rgb_array"``:
        an ``HxWx3 uint8`` frame (:func:`bandit_envs.rendering.render_rgb`)."""
        if self.render_mode == "rgb_array":
            p = self.problem
            return render_rgb(
                self._counts,
                self._emp,
                self._remaining_fraction(),
                p.k,
                p.reward_low,
                p.reward_high,
            )
        if self.render_mode != "ansi":
            return None
        lines = [f"pulls={self._pulls} batches={self._batches} phase={self._phase}"]
        for i, (c, m) in enumerate(zip(self._counts.tolist(), self._emp.tolist(), strict=True)):
            lines.append(f"arm {i:4d}: pulls={c:6d} mean={m: .4f}")
        return "\n".join(lines)

    def _step_result(
        self, result: tuple[float, bool, bool, dict[str, Any]]
    ) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        reward, terminated, truncated, info = result
        return self._observation(), float(reward), bool(terminated), bool(truncated), info
