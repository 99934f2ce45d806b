"""Play one episode of an agent on an environment: :func:`run_episode`."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from agents.base import AgentProtocol, ScriptedAgent
from bandit_envs.top_k_batch import TopKBatchEnv

__all__ = ["EpisodeResult", "run_episode"]


@dataclass(frozen=True)
class EpisodeResult:
    """What one episode produced, scored from the environment's ground truth."""

    recommendation: np.ndarray
    pulls: int
    batches: int
    aggregate_regret: float
    misidentified: bool
    precision: float
    reward: float
    terminated: bool
    truncated: bool
    epsilon_correct: bool | None
    wall_time: float

    def as_row(self) -> dict[str, Any]:
        """Plain Python values (the recommendation as a space-separated string)."""
        row = asdict(self)
        row["recommendation"] = " ".join(map(str, self.recommendation.tolist()))
        return row


def run_episode(
    env: gym.Env,
    agent: AgentProtocol,
    seed: int | None = None,
    *,
    max_steps: int | None = None,
) -> EpisodeResult:
    """Reset ``env`` with ``seed``, play ``agent`` to the end, return the scores.

    Meant for ``TopK-Batch-v0`` made with ``answer="agent"`` (the agent's answer is
    scored); with ``answer="empirical"`` the environment's own answer is. The agent is
    reset with the same ``seed``. Scripted agents on a ``TopKBatchEnv`` use its sparse
    fast paths (:meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_sparse`, and
    :meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_one` for one pull of one arm,
    e.g. a :class:`~agents.base.PullOne` request), which make exactly the draws of the
    dense path; anything else goes through ``env.step``.

    Args:
        env: the environment (wrapped or not).
        agent: any object with ``reset``/``act``/``observe``.
        seed: seeds the episode (env and agent).
        max_steps: raise ``RuntimeError`` after this many steps (a guard against agents
            that never stop in fixed confidence without ``max_batches``).
    """
    start = time.perf_counter()
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    problem = getattr(base, "problem", None)
    if problem is None:
        raise TypeError(f"{env!r} is not a bandit_envs environment (no .problem)")
    agent.reset(problem, seed=seed)
    total_reward = 0.0
    steps = 0
    if isinstance(base, TopKBatchEnv) and isinstance(agent, ScriptedAgent):
        terminated = truncated = False
        info: dict[str, Any] = {}
        next_step, update_one, step_one = agent.next_step, agent.update_one, base.step_one
        while not (terminated or truncated):
            if base.phase == 1:
                obs, reward, terminated, truncated, info = base.answer_sparse(agent.recommend())
            else:
                step = next_step()
                if type(step) is int:  # one pull of one arm (a PullOne request)
                    obs, reward, terminated, truncated, info = step_one(step)
                    update_one(step, obs["counts"], obs["means"])
                else:
                    arms, reps = step
                    obs, reward, terminated, truncated, info = base.step_sparse(arms, reps)
                    agent.update(arms, reps, obs["counts"], obs["means"])
            total_reward += reward
            steps += 1
            if max_steps is not None and steps >= max_steps and not (terminated or truncated):
                raise RuntimeError(f"episode did not end within max_steps={max_steps}")
    else:
        while True:
            action = agent.act(obs)
            next_obs, reward, terminated, truncated, info = env.step(action)
            agent.observe(action, next_obs, float(reward), terminated, truncated, info)
            obs = next_obs
            total_reward += float(reward)
            steps += 1
            if terminated or truncated:
                break
            if max_steps is not None and steps >= max_steps:
                raise RuntimeError(f"episode did not end within max_steps={max_steps}")
    return EpisodeResult(
        recommendation=np.asarray(info["recommendation"]),
        pulls=int(info["pulls"]),
        batches=int(info["batches"]),
        aggregate_regret=float(info["aggregate_regret"]),
        misidentified=bool(info["misidentified"]),
        precision=float(info["precision"]),
        reward=total_reward,
        terminated=bool(terminated),
        truncated=bool(truncated),
        epsilon_correct=info.get("epsilon_correct"),
        wall_time=time.perf_counter() - start,
    )
