"""A short stable-baselines3 PPO run on both ids (device="cpu")."""

from __future__ import annotations

import gymnasium as gym
import pytest

import bandit_envs  # noqa: F401

sb3 = pytest.importorskip("stable_baselines3")


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        ("TopK-v0", {"n_arms": 6, "k": 2, "budget": 30}),
        (
            "TopK-Batch-v0",
            {
                "n_arms": 6,
                "k": 2,
                "batch_size": 4,
                "repeat_limit": 2,
                "budget": 24,
                "invalid_action": "project",
            },
        ),
        (
            "TopK-Batch-v0",
            {
                "n_arms": 6,
                "k": 2,
                "batch_size": 4,
                "repeat_limit": 2,
                "budget": 24,
                "invalid_action": "project",
                "answer": "agent",
            },
        ),
    ],
)
def test_ppo_learns_without_error(env_id: str, kwargs: dict) -> None:
    env = gym.make(env_id, **kwargs)
    model = sb3.PPO(
        "MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(action) or kwargs.get("invalid_action") == "project"
