"""``render_mode="rgb_array"``: NumPy frames, and SB3's ``make_vec_env`` with its default."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bandit_envs  # noqa: F401  (registers the ids)
from bandit_envs.rendering import BAR_HEIGHT, FRAME_HEIGHT, frame_shape

IDS = ["TopK-v0", "TopK-Batch-v0", "TopK-PullByPull-v0"]


def _pull(env: gym.Env, arm: int) -> None:
    """Pull ``arm`` once (a one-pull batch for the batch id)."""
    if env.spec.id == "TopK-Batch-v0":
        action = np.zeros(env.unwrapped.problem.n_arms, dtype=np.int64)
        action[arm] = 1
        env.step(action)
    else:
        env.step(arm)
    if env.spec.id == "TopK-PullByPull-v0":
        env.step(env.unwrapped.problem.n_arms)  # send the one-pull batch


@pytest.mark.parametrize("env_id", IDS)
def test_rgb_frames_shape_and_change(env_id: str) -> None:
    env = gym.make(env_id, n_arms=6, k=2, budget=200, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.dtype == np.uint8
    assert first.shape == frame_shape(6) and first.shape[0] == FRAME_HEIGHT
    frames = [first]
    for _ in range(20):
        _pull(env, 3)
        frames.append(env.render())
    assert all(f.shape == first.shape and f.dtype == np.uint8 for f in frames)
    assert not np.array_equal(first, frames[-1])
    again = env.render()
    np.testing.assert_array_equal(again, frames[-1])  # rendering has no side effect
    env.reset(seed=0)
    np.testing.assert_array_equal(env.render(), first)


def test_bar_of_the_pulled_arm_changes() -> None:
    env = gym.make(
        "TopK-v0",
        n_arms=5,
        k=1,
        instance=[0.9, 0.7, 0.5, 0.3, 0.1],
        shuffle=False,
        render_mode="rgb_array",
    )
    env.reset(seed=1)
    before = env.render()
    for _ in range(30):
        env.step(0)
    after = env.render()
    width = before.shape[1] // 5
    bar_area = slice(0, BAR_HEIGHT)
    assert not np.array_equal(before[bar_area, :width], after[bar_area, :width])
    np.testing.assert_array_equal(before[bar_area, width:], after[bar_area, width:])


@pytest.mark.parametrize("n_arms", [1_000, 10_000])
def test_large_n_width_is_capped(n_arms: int) -> None:
    env = gym.make("TopK-v0", n_arms=n_arms, k=5, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == frame_shape(n_arms) and frame.shape[1] <= 2048


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_rgb_array(env_id: str) -> None:
    check_env(gym.make(env_id, render_mode="rgb_array").unwrapped)


@pytest.mark.parametrize("env_id", ["TopK-v0", "TopK-Batch-v0"])
def test_native_vector_env_rgb_array(env_id: str) -> None:
    envs = gym.make_vec(
        env_id, num_envs=2, vectorization_mode="vector_entry_point", render_mode="rgb_array"
    )
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 2 and all(f.shape == frame_shape(envs.problem.n_arms) for f in frames)
    envs.step(envs.action_space.sample())
    assert all(f.dtype == np.uint8 for f in envs.render())


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_make_vec_env_default(env_id: str) -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(env_id, n_envs=2)
    venv.reset()
    for _ in range(3):
        venv.step(np.array([venv.action_space.sample() for _ in range(2)]))
    frames = venv.get_images()
    assert len(frames) == 2 and all(f.dtype == np.uint8 for f in frames)
    venv.close()


def test_sb3_ppo_learns_on_make_vec_env() -> None:
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("TopK-Batch-v0", n_envs=2)
    model = PPO("MultiInputPolicy", venv, n_steps=32, batch_size=32, device="cpu", seed=0)
    model.learn(total_timesteps=64)
    venv.close()
