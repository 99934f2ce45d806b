"""bandit_envs.wrappers: the flat, normalised observation for learned policies."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import agents
import bandit_envs  # noqa: F401
from bandit_envs.wrappers import (
    FlatObservation,
    FlattenTopKObservation,
    FlattenTopKVectorObservation,
    transform_from_config,
)

STD = {"n_arms": 5, "k": 2, "budget": 40, "instance": "beta-random"}
BATCH = {
    "n_arms": 5,
    "k": 2,
    "budget": 40,
    "batch_size": 4,
    "repeat_limit": 2,
    "instance": "beta-random",
    "invalid_action": "project",
}


def _play(env: gym.Env, steps: int, seed: int = 0) -> dict:
    obs, _ = env.reset(seed=seed)
    for t in range(steps):
        action = (
            t % env.unwrapped.problem.n_arms
            if isinstance(env.action_space, gym.spaces.Discrete)
            else np.eye(env.unwrapped.problem.n_arms, dtype=np.int64)[t % 5] * 2
        )
        obs, *_ = env.step(action)
    return obs


def test_features_by_hand() -> None:
    env = gym.make("TopK-v0", **STD)
    obs = _play(env, 7)  # arms 0, 1 pulled twice, 2..4 once
    t = FlatObservation.from_env(env)
    x = t(obs)
    assert x.dtype == np.float32 and x.shape == (4 * 5 + 1,)
    counts, means = obs["counts"], obs["means"]
    np.testing.assert_allclose(x[0:5], counts / 40, rtol=1e-6)
    np.testing.assert_allclose(x[5:10], np.log1p(counts) / np.log1p(40), rtol=1e-6)
    np.testing.assert_allclose(x[10:15], (means - means.mean()) * 2.0, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(x[15:20], 1.0)
    assert x[20] == pytest.approx(obs["remaining"][0])
    assert t.observation_space.contains(x)


def test_unpulled_arms_and_no_centering() -> None:
    env = gym.make("TopK-v0", **STD)
    obs, _ = env.reset(seed=1)
    obs, *_ = env.step(3)
    t = FlatObservation.from_env(env, center_means=False, features=["mean", "pulled", "inv_sqrt"])
    x = t(obs)
    assert x.shape == (3 * 5 + 1,)
    expected = np.zeros(5)
    expected[3] = (obs["means"][3] - 0.5) * 2.0
    np.testing.assert_allclose(x[0:5], expected, atol=1e-6)
    np.testing.assert_array_equal(x[5:10], [0, 0, 0, 1, 0])
    np.testing.assert_allclose(x[10:15], 1 / np.sqrt(obs["counts"] + 1.0), rtol=1e-6)
    centred = FlatObservation.from_env(env)(obs)
    assert centred[10 + 3] == 0.0  # one pulled arm: its mean is the centre


def test_phase_with_agent_answer() -> None:
    env = gym.make("TopK-Batch-v0", answer="agent", **BATCH)
    t = FlatObservation.from_env(env)
    assert t.phase and t.observation_space.shape == (4 * 5 + 2,)
    obs = _play(env, 20)  # 20 batches of 2 pulls: the budget is spent, answer phase
    assert int(obs["phase"]) == 1
    assert t(obs)[-1] == 1.0
    without = FlatObservation.from_env(gym.make("TopK-Batch-v0", **BATCH))
    assert not without.phase
    with pytest.raises(ValueError, match="phase"):
        t({k: v for k, v in obs.items() if k != "phase"})


def test_batched_equals_stacked() -> None:
    env = gym.make("TopK-v0", **STD)
    t = FlatObservation.from_env(env)
    singles = [_play(env, s, seed=s) for s in range(6)]
    batch = {key: np.stack([np.asarray(o[key]) for o in singles]) for key in singles[0]}
    np.testing.assert_array_equal(t(batch), np.stack([t(o) for o in singles]))
    grid = {key: value.reshape(2, 3, *value.shape[1:]) for key, value in batch.items()}
    np.testing.assert_array_equal(t(grid).reshape(6, -1), t(batch))


def test_config_round_trip_json() -> None:
    for kwargs in (
        STD,
        {
            "n_arms": 4,
            "k": 1,
            "instance": [0.0, 1.0, 2.0, 3.0],
            "distribution": "gaussian",
            "sigma": 0.5,
            "budget": 30,
        },
    ):
        env = gym.make("TopK-v0", **kwargs)
        t = FlatObservation.from_env(env, features=["log_count", "mean"])
        again = transform_from_config(json.loads(json.dumps(t.config())))
        assert again == t and hash(again) == hash(t)
        obs = _play(env, 9)
        np.testing.assert_array_equal(again(obs), t(obs))
        assert again.observation_space == t.observation_space


def test_gaussian_scale_and_bounds() -> None:
    env = gym.make(
        "TopK-v0",
        n_arms=4,
        k=1,
        instance=[0.0, 1.0, 2.0, 3.0],
        distribution="gaussian",
        sigma=0.5,
        budget=30,
    )
    t = FlatObservation.from_env(env)
    assert t.mean_scale == pytest.approx(2.0) and math.isinf(t.mean_bound)
    assert t.config()["mean_bound"] == "inf"


def test_bad_arguments() -> None:
    env = gym.make("TopK-v0", **STD)
    with pytest.raises(ValueError, match="unknown feature"):
        FlatObservation.from_env(env, features=["counts"])
    with pytest.raises(ValueError, match="repeat"):
        FlatObservation.from_env(env, features=["mean", "mean"])
    with pytest.raises(ValueError, match="n_arms=5"):
        FlatObservation.from_env(env)(
            {"counts": np.zeros(3), "means": np.zeros(3), "remaining": np.ones(1)}
        )
    with pytest.raises(ValueError, match="kind"):
        transform_from_config({"kind": "other"})
    with pytest.raises(ValueError, match="budget"):
        FlatObservation.from_env(gym.make("TopK-v0", n_arms=5, k=2, setting="fixed_confidence"))
    with pytest.raises(TypeError, match="bandit_envs"):
        FlatObservation.from_env(gym.make("CartPole-v1"))


@pytest.mark.parametrize(
    "env_id,kwargs",
    [("TopK-v0", STD), ("TopK-Batch-v0", BATCH), ("TopK-Batch-v0", {**BATCH, "answer": "agent"})],
)
@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
def test_single_env_wrapper_passes_checker(env_id: str, kwargs: dict) -> None:
    env = FlattenTopKObservation(gym.make(env_id, **kwargs))
    check_env(env, skip_render_check=True)
    again = gym.make(env.spec)  # the spec records the transform's config
    assert isinstance(again, FlattenTopKObservation) and again.transform == env.transform
    json.loads(env.spec.to_json())
    obs, _ = env.reset(seed=3)
    raw, _ = env.unwrapped.reset(seed=3)
    np.testing.assert_array_equal(obs, env.transform(raw))
    with pytest.raises(ValueError, match="either"):
        FlattenTopKObservation(
            gym.make(env_id, **kwargs), transform=env.transform, center_means=False
        )


@pytest.mark.parametrize("mode", ["vector_entry_point", "sync"])
@pytest.mark.parametrize("autoreset", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_wrapper(mode: str, autoreset: AutoresetMode) -> None:
    raw = gym.make_vec(
        "TopK-v0",
        num_envs=3,
        vectorization_mode=mode,
        vector_kwargs={"autoreset_mode": autoreset} if mode == "sync" else None,
        **({"autoreset_mode": autoreset} if mode != "sync" else {}),
        **STD,
    )
    wrapped = FlattenTopKVectorObservation(raw)
    single = FlatObservation.from_env(gym.make("TopK-v0", **STD))
    assert wrapped.transform == single
    assert wrapped.single_observation_space == single.observation_space
    assert wrapped.observation_space.shape == (3, single.observation_space.shape[0])
    obs, _ = wrapped.reset(seed=0)
    assert obs.shape == (3, 21) and obs.dtype == np.float32
    seen_final = False
    for t in range(41):
        obs, rewards, term, trunc, info = wrapped.step(np.full(3, t % 5))
        assert wrapped.observation_space.contains(obs)
        if "final_obs" in info:
            for i in np.flatnonzero(info["_final_obs"]):
                final = info["final_obs"][i]
                assert final.shape == (21,) and final[:5].sum() == pytest.approx(
                    1.0
                )  # all 40 pulls
                seen_final = True
    assert seen_final == (autoreset == AutoresetMode.SAME_STEP)


def test_policy_agent_sees_the_training_observation() -> None:
    """The same transform in PolicyAgent gives the policy exactly the wrapper's vectors."""
    kwargs = {**BATCH, "answer": "agent"}
    wrapped = FlattenTopKObservation(gym.make("TopK-Batch-v0", **kwargs))
    seen: list[np.ndarray] = []

    def policy(x: np.ndarray) -> np.ndarray:
        seen.append(x)
        return np.array([2, 1, 1, 0, 0]) if x[-1] == 0 else np.array([1, 1, 0, 0, 0])

    agent = agents.PolicyAgent(policy, obs_transform=wrapped.transform, answer="policy")
    env = gym.make("TopK-Batch-v0", **kwargs)
    result = agents.run_episode(env, agent, seed=7)
    assert result.pulls == 40 and result.recommendation.tolist() == [0, 1]
    obs, _ = wrapped.reset(seed=7)
    expected = [obs]
    done = False
    while not done:
        action = np.array([2, 1, 1, 0, 0]) if obs[-1] == 0 else np.array([1, 1, 0, 0, 0])
        obs, _, term, trunc, _ = wrapped.step(action)
        done = term or trunc
        if not done:
            expected.append(obs)
    assert len(seen) == len(expected)
    for a, b in zip(seen, expected, strict=True):
        np.testing.assert_array_equal(a, b)
