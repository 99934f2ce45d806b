"""Play one episode of an agent on an environment: :func:`run_episode`."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from agents import engine
from agents.base import AgentProtocol, ScriptedAgent
from agents.engine.dispatch import compiled_call
from bandit_envs.core import ANSWER, TopKBaseEnv
from bandit_envs.top_k_batch import TopKBatchEnv

__all__ = ["EpisodeResult", "fast_path_applies", "run_episode"]


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


def _play_fast(
    base: TopKBaseEnv, agent: ScriptedAgent, max_steps: int | None
) -> tuple[float, bool, bool, dict[str, Any]]:
    """Play a compiled agent's sampling in compiled code, then finish in the env.

    :func:`agents.engine.drive` runs the agent's generator on the environment's own
    arrays and reward source (the draws ``step`` would make); the environment then ends
    sampling exactly as its step would have (budget spent, or the agent stopped) and,
    with ``answer="agent"``, takes the agent's answer. The loop is called through
    :func:`agents.engine.dispatch.compiled_call` (numba would re-type ``ctx`` and the reward
    state, tuples holding generators, in Python at every call: ~90 us each).
    """
    ctx = agent.ctx._replace(counts=base._counts, means=base._emp)
    problem = base.problem
    cost = float(problem.cost_per_batch) if problem.setting == "fixed_confidence" else 0.0
    outcome, total = compiled_call(
        agent.episode_kernel,
        ctx,
        agent.params(),
        base._rewards.kernel_state(),
        base._counts,
        base._sums,
        base._emp,
        cost,
        -1 if max_steps is None else int(max_steps),
    )
    agent.counts[:] = base._counts
    agent.means[:] = base._emp
    iv = agent.ctx.iv
    base._pulls = int(iv[engine.PULLS])
    base._batches = int(iv[engine.BATCHES])
    if outcome == engine.SAMPLING_OVER:
        reward, terminated, truncated, info = base._after_batch()
    else:
        reward, terminated, truncated, info = base._stop()
    total += float(reward)
    base._remaining[0] = base._remaining_fraction()
    if isinstance(base, TopKBatchEnv):
        base.action_space.sample_limit = base.pulls_left
        if base.phase == ANSWER:
            _, reward, terminated, truncated, info = base.answer_sparse(agent.recommend())
            total += reward
    return total, bool(terminated), bool(truncated), info


def fast_path_applies(env: gym.Env, agent: Any) -> bool:
    """Whether :func:`run_episode` plays ``agent`` on ``env`` in compiled code.

    True for a compiled scripted agent (every registered algorithm) on ``TopK-v0`` or
    ``TopK-Batch-v0``, through ``gym.make`` and any wrappers (whose ``step`` the fast
    path skips, as it skips the observation); not on ``TopK-PullByPull-v0``, whose
    actions are sub-steps.
    """
    return (
        isinstance(env.unwrapped, TopKBaseEnv)
        and env.unwrapped.problem.action_format in ("pulls", "arm")
        and isinstance(agent, ScriptedAgent)
        and agent.kernel is not None
        and agent.episode_kernel is not None
    )


def run_episode(
    env: gym.Env,
    agent: AgentProtocol,
    seed: int | None = None,
    *,
    max_steps: int | None = None,
    fast: bool = True,
) -> EpisodeResult:
    """Reset ``env`` with ``seed``, play ``agent`` to the end, return the scores.

    Meant for ``TopK-Batch-v0`` made with ``answer="agent"`` (the agent's answer is
    scored); with ``answer="empirical"`` the environment's own answer is. The agent is
    reset with the same ``seed``. An agent with a ``see_instance(instance)`` method (the
    agents fitted to one family: :class:`~agents.bayesian.learned_batch.FamilyGuard`,
    :class:`~agents.learned.adapter.PolicyAgent`) is shown the env's instance before
    ``reset``, so that it can check the prior its means are drawn from (the problem does
    not show it); the act/observe protocol is unchanged.

    Paths, all playing the same episode for a seed (the same pulls in the same batches,
    the same answer, ``info`` and reward; ``tests/test_fast_path.py``):

    * compiled scripted agents on ``TopK-v0``/``TopK-Batch-v0`` (:func:`fast_path_applies`)
      run their whole sampling phase in compiled code (:func:`agents.engine.drive`);
    * other scripted agents on a ``TopKBatchEnv``, and every scripted agent with
      ``fast=False``, use its sparse steps
      (:meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_sparse` and
      :meth:`~bandit_envs.top_k_batch.TopKBatchEnv.step_one`);
    * anything else goes through ``env.step`` (act/observe).

    Args:
        env: the environment (wrapped or not).
        agent: any object with ``reset``/``act``/``observe``.
        seed: seeds the episode (env and agent).
        max_steps: raise ``RuntimeError`` after this many steps (a guard against agents
            that never stop in fixed confidence without ``max_batches``; the compiled
            path counts sampling steps).
        fast: allow the compiled path (``False``: the step-by-step reference).
    """
    start = time.perf_counter()
    obs, _ = env.reset(seed=seed)
    base = env.unwrapped
    problem = getattr(base, "problem", None)
    if problem is None:
        raise TypeError(f"{env!r} is not a bandit_envs environment (no .problem)")
    see_instance = getattr(agent, "see_instance", None)
    if see_instance is not None:
        see_instance(getattr(base, "instance", None))
    agent.reset(problem, seed=seed)
    total_reward = 0.0
    steps = 0
    if fast and fast_path_applies(env, agent):
        total_reward, terminated, truncated, info = _play_fast(base, agent, max_steps)
    elif isinstance(base, TopKBatchEnv) and isinstance(agent, ScriptedAgent):
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
