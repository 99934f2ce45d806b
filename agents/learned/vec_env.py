"""The vector environments PPO, A2C and DQN train on (SB3 ``VecEnv``, flat observations).

:func:`make_training_env` builds ``num_envs`` copies of a training family: the native
vector env through ``bandit_envs.sb3`` when present, else SB3's ``DummyVecEnv`` (or
Gymnasium's sync vector env), with the observation flattened by
:class:`~bandit_envs.wrappers.FlatObservation` and the rewards scaled for the critic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvStepReturn

import bandit_envs  # noqa: F401  (registers the ids)
from agents.learned.families import training_kwargs
from bandit_envs.wrappers import FlatObservation

__all__ = ["VecFlatObservation", "VecScaleReward", "make_training_env"]


class VecFlatObservation(VecEnvWrapper):
    """SB3 ``VecEnv`` wrapper applying a :class:`~bandit_envs.wrappers.FlatObservation`.

    The SB3-side twin of :class:`bandit_envs.wrappers.FlattenTopKVectorObservation`:
    it transforms the batched ``Dict`` observation and each
    ``info["terminal_observation"]``, whichever ``VecEnv`` sits below (the native vector
    env adapter or ``DummyVecEnv``).
    """

    def __init__(self, venv: VecEnv, transform: FlatObservation) -> None:
        super().__init__(venv, observation_space=transform.observation_space)
        self.transform = transform

    def reset(self) -> np.ndarray:
        """Reset all envs; flat observations."""
        return self.transform(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        """Step; flat observations, terminal observations included."""
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            final = info.get("terminal_observation")
            if final is not None and isinstance(final, Mapping):
                info["terminal_observation"] = self.transform(final)
        return self.transform(obs), rewards, dones, infos


class VecScaleReward(VecEnvWrapper):
    """Multiply rewards by a constant (the terminal regret is small; the critic likes O(1))."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        super().__init__(venv)
        self.scale = float(scale)

    def reset(self) -> Any:
        """Reset all envs."""
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        """Step; scaled rewards."""
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * self.scale, dones, infos


def _native_factory() -> Callable[..., VecEnv] | None:
    try:
        from bandit_envs.sb3 import make_sb3_vec_env  # type: ignore[import-not-found]
    except ImportError:
        return None
    return make_sb3_vec_env


def make_training_env(
    env_id: str,
    num_envs: int,
    *,
    seed: int | None = 0,
    env_kwargs: Mapping[str, Any] | None = None,
    transform: FlatObservation | None = None,
    backend: str = "auto",
    reward_scale: float = 1.0,
) -> tuple[VecEnv, FlatObservation, str]:
    """An SB3 ``VecEnv`` of ``num_envs`` copies of ``env_id`` with flat observations.

    Args:
        env_id: ``"TopK-v0"`` or ``"TopK-Batch-v0"``.
        num_envs: parallel environments.
        seed: env ``i`` is reset with ``seed + i`` first, then continues its stream.
        env_kwargs: ``gym.make`` kwargs (``invalid_action="project"`` is set for the
            batch id).
        transform: the observation transform; by default
            :meth:`FlatObservation.from_env` of the environment.
        backend: ``"native"`` (``bandit_envs.sb3.make_sb3_vec_env``), ``"dummy"``
            (SB3's ``DummyVecEnv`` of ``gym.make`` envs), ``"sync"``
            (``gym.make_vec(..., "sync")`` through ``bandit_envs.sb3.SB3VecEnv``) or
            ``"auto"`` (native when available).
        reward_scale: multiply rewards (training signal only; ``info`` is unchanged).

    Returns:
        ``(vec_env, transform, backend_used)``.
    """
    kwargs = training_kwargs(env_id, env_kwargs)
    if num_envs < 1:
        raise ValueError(f"num_envs={num_envs} must be >= 1")
    native = _native_factory()
    if backend == "auto":
        backend = "native" if native is not None else "dummy"
    if backend == "native":
        if native is None:
            raise ImportError(
                "backend='native' needs bandit_envs.sb3 (the native vector env adapter)"
            )
        venv = native(env_id, num_envs, seed=seed, **kwargs)
    elif backend == "sync":
        from bandit_envs.sb3 import SB3VecEnv  # type: ignore[import-not-found]

        venv = SB3VecEnv(
            gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", **kwargs)
        )
        if seed is not None:
            venv.seed(seed)
    elif backend == "dummy":
        venv = DummyVecEnv([_env_fn(env_id, kwargs) for _ in range(num_envs)])
        if seed is not None:
            venv.seed(seed)
    else:
        raise ValueError(f"backend={backend!r} must be 'auto', 'native', 'sync' or 'dummy'")
    if transform is None:
        probe = gym.make(env_id, **kwargs)
        transform = FlatObservation.from_env(probe)
        probe.close()
    wrapped: VecEnv = VecFlatObservation(venv, transform)
    if reward_scale != 1.0:
        wrapped = VecScaleReward(wrapped, reward_scale)
    return wrapped, transform, backend


def _env_fn(env_id: str, kwargs: Mapping[str, Any]) -> Callable[[], gym.Env]:
    def make() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return make
