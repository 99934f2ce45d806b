"""``TopK-PullByPull-v0``: the batch model composed pull by pull, with exact action masks.

* the masks are exactly the actions ``step`` accepts (raise mode), on random states;
* an episode is ``TopK-Batch-v0``'s episode for the same seed and batches (same
  observations after each batch, same return, same terminal ``info``);
* Gymnasium's and SB3's env checkers, seeding, pickling, project mode, vector use;
* sb3-contrib's ``MaskablePPO`` trains on it in raise mode: no invalid action, no
  projection (an invalid action would raise).
"""

from __future__ import annotations

import copy
import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import bandit_envs  # noqa: F401
from bandit_envs.problem import PROJECT_HINT
from bandit_envs.wrappers import vector_action_masks

CASES = [
    {"n_arms": 5, "k": 2, "batch_size": 4, "repeat_limit": 2, "budget": 23},
    {"n_arms": 4, "k": 2, "batch_size": 6, "repeat_limit": 3, "budget": 20, "answer": "agent"},
    {"n_arms": 4, "k": 1, "batch_size": None, "repeat_limit": 2, "budget": 15, "answer": "agent"},
    {
        "n_arms": 5,
        "k": 2,
        "batch_size": 3,
        "setting": "fixed_confidence",
        "max_batches": 12,
        "cost_per_batch": 0.01,
        "answer": "agent",
    },
    {"n_arms": 4, "k": 2, "batch_size": 4, "budget": 12, "max_batches": 3},
    {"n_arms": 4, "k": 2, "batch_size": 3, "budget": 16, "paired": True, "answer": "agent"},
    {
        "n_arms": 4,
        "k": 2,
        "instance": [0.2, 0.4, 0.6, 0.8],
        "distribution": "gaussian",
        "sigma": 0.5,
        "batch_size": 2,
        "objective": "misidentification",
        "epsilon": 0.1,
    },
]
IDS = [",".join(f"{k}={v}" for k, v in kw.items()) for kw in CASES]


def accepts(env, action) -> bool:
    clone = copy.deepcopy(env)
    try:
        clone.step(action)
    except (ValueError, RuntimeError):
        return False
    return True


def play_random(env, seed: int):
    """One episode of random valid sub-steps (end the batch: 15%); yields before each."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    n = env.unwrapped.problem.n_arms
    while True:
        yield
        mask = env.unwrapped.action_masks()
        arms = np.flatnonzero(mask[:n])
        if mask[n] and (arms.size == 0 or rng.random() < 0.15):
            action = n
        else:
            action = int(rng.choice(arms))
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return


@pytest.mark.parametrize("kwargs", CASES, ids=IDS)
def test_masks_are_exactly_the_valid_sub_steps(kwargs: dict) -> None:
    """The masks are what the strict mode accepts (the default projects the rest)."""
    env = gym.make("TopK-PullByPull-v0", **kwargs, invalid_action="raise").unwrapped
    n = env.problem.n_arms
    phases = set()
    for seed in range(6):
        for _ in play_random(env, seed):
            mask = env.action_masks()
            assert mask.shape == (n + 1,) and mask.dtype == np.bool_
            assert np.array_equal(mask, env.action_space.valid.astype(bool))
            for a in range(n + 1):
                assert mask[a] == accepts(env, a), (a, env._phase, env._batch.tolist())
            phases.add(env._phase)
        assert not env.action_masks().any()
        with pytest.raises(RuntimeError):
            env.step(0)
    assert phases == ({0, 1} if kwargs.get("answer") == "agent" else {0})


@pytest.mark.parametrize("kwargs", CASES, ids=IDS)
def test_episode_equals_the_batch_env_playing_the_same_batches(kwargs: dict) -> None:
    pbp = gym.make("TopK-PullByPull-v0", **kwargs)
    batch = gym.make("TopK-Batch-v0", **kwargs)
    sizes = []
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        obs, _ = pbp.reset(seed=seed)
        ref, _ = batch.reset(seed=seed)
        total = ref_total = 0.0
        done = False
        while not done:
            mask = pbp.unwrapped.action_masks()
            action = int(rng.choice(np.flatnonzero(mask)))
            obs, reward, terminated, truncated, info = pbp.step(action)
            total += reward
            done = terminated or truncated
            if "pulls_made" in info:  # a batch was sent (or sampling stopped)
                sizes.append(int(info["pulls_made"].sum()))
                ref, r, ref_term, ref_trunc, ref_info = batch.step(info["pulls_made"])
                ref_total += r
                assert (terminated, truncated) == (ref_term, ref_trunc)
                for key, value in ref.items():
                    assert np.array_equal(obs[key], value), key
                assert not obs["batch"].any()
            elif terminated and "recommendation" in info:  # the k-th answer sub-step
                ref, r, ref_term, ref_trunc, ref_info = batch.step(obs["batch"])
                ref_total += r
            else:
                assert reward == 0.0 and info == {}
                continue
            if done:
                assert set(info) - {"pulls_made"} == set(ref_info) - {"pulls_made"}
                for key in ref_info:
                    assert np.array_equal(info[key], ref_info[key]), key
        assert total == pytest.approx(ref_total, abs=1e-12)
    assert max(sizes) > 1  # batches of several pulls were composed


def test_a_full_batch_is_sent_at_b_at_the_budget_left_and_at_r_of_every_arm() -> None:
    env = gym.make("TopK-PullByPull-v0", n_arms=3, k=1, batch_size=4, repeat_limit=2, budget=6)
    env.reset(seed=0)
    for arm, sent in [(0, None), (1, None), (2, None), (2, [1, 1, 2])]:  # b = 4 reached
        _, _, _, _, info = env.step(arm)
        assert (info["pulls_made"].tolist() if sent else None) == sent
    env.step(0)
    _, _, terminated, _, info = env.step(1)  # 2 pulls left: the budget fills the batch
    assert terminated and info["pulls"] == 6
    env = gym.make("TopK-PullByPull-v0", n_arms=2, k=1, batch_size=None, repeat_limit=2, budget=9)
    env.reset(seed=0)
    for arm in (0, 0, 1):
        _, _, _, _, info = env.step(arm)
    _, _, _, _, info = env.step(1)  # r of every arm: n r = 4 pulls
    assert info["pulls_made"].tolist() == [2, 2]


def test_invalid_sub_steps_raise_naming_the_rule_or_are_projected() -> None:
    kwargs = {"n_arms": 3, "k": 2, "batch_size": 4, "repeat_limit": 1, "budget": 3}
    env = gym.make("TopK-PullByPull-v0", answer="agent", invalid_action="raise", **kwargs)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(ValueError, match="already has repeat_limit=1 pulls") as error:
        env.step(0)
    assert str(error.value).endswith(PROJECT_HINT)
    for bad in (4, -1, 1.5, np.array([0, 1]), True):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(1)
    env.step(2)  # the budget is spent: the answer step
    with pytest.raises(ValueError, match="not valid at the answer step") as error:
        env.step(3)
    assert str(error.value).endswith(PROJECT_HINT)
    env.step(1)
    with pytest.raises(ValueError, match="arm 1 is already in the answer") as error:
        env.step(1)
    assert str(error.value).endswith(PROJECT_HINT)

    proj = gym.make("TopK-PullByPull-v0", answer="agent", invalid_action="project", **kwargs)
    obs, _ = proj.reset(seed=0)
    proj.step(0)
    _, _, _, _, info = proj.step(0)  # arm 0 is at r: ends the batch instead
    assert info["projected"] and info["pulls_made"].tolist() == [1, 0, 0]
    proj.step(1)
    obs, _, _, _, info = proj.step(2)
    assert int(obs["phase"]) == 1
    proj.step(1)
    _, _, terminated, _, info = proj.step(3)  # not an arm to add: the best unchosen arm
    best = max((0, 2), key=lambda i: (obs["means"][i], -i))
    assert terminated and info["projected"] and info["recommendation"].tolist() == sorted([1, best])


@pytest.mark.parametrize("kwargs", CASES, ids=IDS)
def test_env_checkers_and_seeding(kwargs: dict) -> None:
    env = gym.make("TopK-PullByPull-v0", **kwargs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")
        check_env(env.unwrapped, skip_render_check=True)
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*infinity.*")
        sb3_checker.check_env(gym.make("TopK-PullByPull-v0", **kwargs).unwrapped, warn=True)

    def trace(e, seed):
        e.action_space.seed(seed)
        out = [e.reset(seed=seed)[0]]
        while True:  # action_space.sample() draws valid sub-steps only
            obs, reward, terminated, truncated, info = e.step(e.action_space.sample())
            out.append((obs, reward, sorted(info)))
            if terminated or truncated:
                return out

    t1, t2 = trace(env, 5), trace(gym.make("TopK-PullByPull-v0", **kwargs), 5)
    assert repr(t1) == repr(t2)
    env.reset(seed=1)
    env.step(0)
    clone = pickle.loads(pickle.dumps(env))
    assert repr(trace(clone, 9)) == repr(trace(env, 9))


def test_spec_render_and_agents() -> None:
    assert gym.spec("TopK-PullByPull-v0").to_json()
    env = gym.make("TopK-PullByPull-v0", n_arms=3, k=1, render_mode="ansi")
    env.reset(seed=0)
    env.step(2)
    assert env.render().endswith("batch: [0, 0, 1]")
    assert env.unwrapped.problem.action_format == "pull"
    with pytest.raises(ValueError, match="action_format='pull'"):
        agents.PolicyAgent(lambda obs: 0).reset(env.unwrapped.problem)
    with pytest.raises(ValueError, match="play scripted agents on TopK-Batch-v0"):
        agents.run_episode(env, agents.make("uniform"), seed=0)  # scripted: refused at reset


def test_sync_vector_env_and_its_masks() -> None:
    envs = gym.make_vec("TopK-PullByPull-v0", num_envs=3, n_arms=4, k=2, batch_size=3, budget=12)
    assert isinstance(envs, gym.vector.SyncVectorEnv)
    envs.reset(seed=0)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(80):
        masks = vector_action_masks(envs)
        assert masks.shape == (3, 5)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])  # none empty
        _, _, terminated, truncated, _ = envs.step(actions)
        ended += int(np.sum(terminated | truncated))
    assert ended >= 3


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_maskable_ppo_plays_the_batch_model_with_no_invalid_action(one_thread) -> None:
    """Raise mode: a single invalid sub-step during training or play would raise."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    kwargs = {
        "n_arms": 4, "k": 2, "batch_size": 3, "repeat_limit": 2, "budget": 18, "answer": "agent",
        "instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0},
        "invalid_action": "raise",
    }  # fmt: skip
    # make_vec_env asks for render_mode="rgb_array" unless told otherwise
    venv = make_vec_env(
        "TopK-PullByPull-v0", n_envs=2, seed=0, env_kwargs={**kwargs, "render_mode": None}
    )
    model = MaskablePPO(
        "MultiInputPolicy", venv, n_steps=256, batch_size=128, n_epochs=2, seed=0, device="cpu"
    )
    model.learn(2048)
    env = gym.make("TopK-PullByPull-v0", **kwargs)
    sent = []
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = model.predict(
                obs, action_masks=env.unwrapped.action_masks(), deterministic=False
            )
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if "pulls_made" in info:
                sent.append(info["pulls_made"])
        assert terminated and info["recommendation"].shape == (2,)
    assert any(int(s.sum()) > 1 for s in sent)


def test_maskable_ppo_example_runs(one_thread, capsys) -> None:
    pytest.importorskip("sb3_contrib")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "maskable_ppo.py"
    spec = importlib.util.spec_from_file_location("maskable_ppo_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    results = example.main(
        ["--timesteps", "256", "--episodes", "3", "--num-envs", "2", "--compare", "uniform"]
    )
    assert set(results) == {"maskable_ppo", "uniform"}
    assert all(np.isfinite(v) and v >= 0 for v in results.values())
    assert "maskable_ppo" in capsys.readouterr().out


def test_flat_observation_shows_the_batch_being_composed(one_thread) -> None:
    from bandit_envs.wrappers import FlatObservation, FlattenTopKObservation, transform_from_config

    kwargs = {"n_arms": 4, "k": 2, "batch_size": 3, "repeat_limit": 2, "budget": 12}
    env = FlattenTopKObservation(gym.make("TopK-PullByPull-v0", answer="agent", **kwargs))
    transform = env.transform
    assert transform.features[-1] == "batch" and transform.batch_scale == 2.0
    assert transform_from_config(transform.config()) == transform
    env.reset(seed=0)
    env.step(1)
    obs, *_ = env.step(1)
    n = 4
    block = obs[len(transform.features[:-1]) * n : len(transform.features) * n]
    assert block.tolist() == [0.0, 1.0, 0.0, 0.0]  # arm 1: r = 2 pulls in the batch
    assert env.observation_space.contains(obs)
    plain = FlatObservation.from_env(gym.make("TopK-PullByPull-v0", **kwargs), features=["mean"])
    assert plain.batch_scale is None and plain.features == ("mean",)
    with pytest.raises(ValueError, match="the observation has none"):
        FlatObservation(4, 12, features=["batch"], batch_scale=2)(
            {"counts": np.zeros(4), "means": np.zeros(4), "remaining": np.ones(1)}
        )
    for bad in (
        {"features": ["batch"]},
        {"batch_scale": 2.0},
        {"features": ["batch"], "batch_scale": 0.5},
    ):
        with pytest.raises(ValueError, match="batch_scale"):
            FlatObservation(4, 12, **bad)

    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv(
        [lambda: FlattenTopKObservation(gym.make("TopK-PullByPull-v0", **kwargs))] * 2
    )
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, seed=0, device="cpu")
    model.learn(256)  # the masks reach MaskablePPO through the observation wrapper
