"""``bandit_envs.sb3``: SB3's VecEnv interface over the vector envs, checked against DummyVecEnv."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Mapping

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import DummyVecEnv, VecCheckNan, VecMonitor  # noqa: E402

import bandit_envs  # noqa: E402,F401
from bandit_envs.sb3 import SB3VecEnv, make_sb3_vec_env  # noqa: E402

N_ENVS = 4


@pytest.fixture
def one_torch_thread():
    """PPO on a busy machine: one intra-op thread avoids oversubscription (10-30x faster)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def plain(value):
    """OrderedDicts as dicts, recursively (DummyVecEnv returns OrderedDict observations)."""
    if isinstance(value, Mapping):
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value


def check_sb3_vec_env(venv, policy, steps: int) -> None:
    """What SB3's env checker asks of an env, asked of a VecEnv (plus SB3's VecCheckNan)."""
    space = venv.observation_space
    checked = VecCheckNan(venv, raise_exception=True)
    obs = checked.reset()
    ended = 0
    for t in range(steps + 1):
        assert isinstance(obs, dict) and obs.keys() == space.spaces.keys()
        for key, sub in space.spaces.items():
            assert obs[key].shape == (venv.num_envs, *sub.shape) and obs[key].dtype == sub.dtype, (
                key
            )
        for i in range(venv.num_envs):
            assert space.contains({key: value[i] for key, value in obs.items()})
        if t == steps:
            break
        obs, rewards, dones, infos = checked.step(policy(obs, t))
        assert rewards.shape == (venv.num_envs,) and rewards.dtype == np.float32
        assert dones.shape == (venv.num_envs,) and dones.dtype == np.bool_
        assert isinstance(infos, list) and len(infos) == venv.num_envs
        for i, info in enumerate(infos):
            assert isinstance(info["TimeLimit.truncated"], bool)
            assert ("terminal_observation" in info) == bool(dones[i])
            if dones[i]:
                ended += 1
                assert space.contains(info["terminal_observation"])
                assert "aggregate_regret" in info or info["TimeLimit.truncated"]
    assert ended > 0


def round_robin(obs, t):
    return np.argmin(obs["counts"], axis=1)


def pull_all(obs, t):
    action = np.ones_like(obs["counts"])
    if "phase" in obs:
        answer = np.zeros_like(action)
        answer[:, :2] = 1
        action[obs["phase"] == 1] = answer[obs["phase"] == 1]
    return action


CASES = [
    ("TopK-v0", {"n_arms": 5, "k": 2, "budget": 10}, round_robin),
    (
        "TopK-v0",
        {"n_arms": 5, "k": 2, "setting": "fixed_confidence", "max_batches": 7},
        round_robin,
    ),
    ("TopK-v0", {"n_arms": 5, "k": 2, "max_episode_steps": 6}, round_robin),
    (
        "TopK-Batch-v0",
        {"n_arms": 5, "k": 2, "batch_size": 5, "max_batches": 3, "answer": "agent"},
        pull_all,
    ),
    (
        "TopK-Batch-v0",
        {"n_arms": 5, "k": 2, "batch_size": 3, "budget": 12, "invalid_action": "project"},
        pull_all,
    ),
]


@pytest.mark.parametrize(
    "env_id,kwargs,policy", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_adapter_follows_the_vec_env_contract(env_id: str, kwargs: dict, policy) -> None:
    venv = make_sb3_vec_env(env_id, N_ENVS, seed=0, **kwargs)
    single = gym.make(
        env_id, **{k: v for k, v in kwargs.items() if k != "max_episode_steps"}
    ).unwrapped
    assert (
        venv.observation_space == single.observation_space
        and venv.action_space == single.action_space
    )
    assert venv.venv.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    check_sb3_vec_env(venv, policy, 25)
    venv.close()


def dummy(env_id: str, kwargs: dict, seed: int) -> DummyVecEnv:
    limit = kwargs.pop("max_episode_steps", None)
    venv = DummyVecEnv(
        [lambda: gym.make(env_id, max_episode_steps=limit, **kwargs) for _ in range(N_ENVS)]
    )
    venv.seed(seed)
    return venv


@pytest.mark.parametrize("backend", ["native", "sync-next-step", "sync-same-step"])
@pytest.mark.parametrize(
    "env_id,kwargs,policy", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_adapter_equals_dummy_vec_env(env_id: str, kwargs: dict, policy, backend: str) -> None:
    """With deterministic rewards the adapter's output equals SB3's DummyVecEnv exactly."""
    kwargs = {**kwargs, "instance": [1.0, 0.0, 1.0, 0.0, 0.0], "shuffle": False}
    if backend == "native":
        ours = make_sb3_vec_env(env_id, N_ENVS, seed=0, **kwargs)
    else:
        mode = AutoresetMode.NEXT_STEP if backend == "sync-next-step" else AutoresetMode.SAME_STEP
        ours = SB3VecEnv(
            gym.make_vec(
                env_id,
                num_envs=N_ENVS,
                vectorization_mode="sync",
                vector_kwargs={"autoreset_mode": mode},
                **kwargs,
            )
        )
        ours.seed(0)
    ref = dummy(env_id, dict(kwargs), seed=0)
    obs = ours.reset()
    assert data_equivalence(plain(obs), plain(ref.reset()), exact=True)
    for t in range(25):
        action = policy(obs, t)
        got, want = ours.step(action), ref.step(action)
        for name, x, y in zip(("obs", "rewards", "dones", "infos"), got, want, strict=True):
            assert data_equivalence(plain(x), plain(y), exact=True), (t, name, x, y)
        obs = got[0]


def test_seeding_and_attributes() -> None:
    def trace(venv):
        out = [venv.reset()]
        for t in range(12):
            out.append(venv.step(np.full(N_ENVS, t % 5)))
        return out

    kwargs = {"n_arms": 5, "k": 2, "budget": 10}
    a = make_sb3_vec_env("TopK-v0", N_ENVS, seed=3, **kwargs)
    b = make_sb3_vec_env("TopK-v0", N_ENVS, **kwargs)
    assert b.seed(3) == [3, 4, 5, 6]
    assert data_equivalence(trace(a), trace(b), exact=True)
    a.seed(4)
    assert not data_equivalence(trace(a), trace(b), exact=True)

    assert a.get_attr("render_mode") == [None] * N_ENVS and a.render_mode is None
    assert a.get_attr("problem", indices=[1, 2]) == [a.venv.problem] * 2
    assert a.has_attr("problem") and not a.has_attr("no_such_attribute")
    a.set_attr("tag", 7)
    assert a.venv.tag == 7
    with pytest.raises(NotImplementedError, match="all envs"):
        a.set_attr("tag", 8, indices=[0])
    with pytest.raises(NotImplementedError, match="no per-env env objects"):
        a.env_method("render")
    assert a.env_is_wrapped(gym.Wrapper) == [False] * N_ENVS
    a.close()

    s = SB3VecEnv(gym.make_vec("TopK-v0", num_envs=2, vectorization_mode="sync", **kwargs))
    s.reset()
    assert s.env_method("render") == [None, None] and s.get_attr("problem")[0] == a.venv.problem
    assert s.env_is_wrapped(gym.wrappers.OrderEnforcing) == [True, True]
    s.set_attr("tag", 1, indices=[1])
    assert s.get_attr("tag", indices=[1]) == [1]


def test_rejects_what_it_cannot_adapt() -> None:
    with pytest.raises(TypeError, match="gymnasium.vector.VectorEnv"):
        SB3VecEnv(gym.make("TopK-v0"))
    disabled = gym.make_vec(
        "TopK-v0",
        num_envs=2,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.DISABLED},
    )
    with pytest.raises(ValueError, match="SAME_STEP"):
        SB3VecEnv(disabled)


def test_vec_monitor_sees_episodes() -> None:
    venv = VecMonitor(make_sb3_vec_env("TopK-v0", N_ENVS, seed=0, n_arms=4, k=2, budget=8))
    venv.reset()
    for t in range(8):
        _, rewards, dones, infos = venv.step(np.full(N_ENVS, t % 4))
    assert dones.all()
    for info, reward in zip(infos, rewards, strict=True):
        assert info["episode"]["l"] == 8 and info["episode"]["r"] == pytest.approx(reward)
        assert info["episode"]["r"] == pytest.approx(-info["aggregate_regret"])


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        ("TopK-v0", {}),
        ("TopK-Batch-v0", {"invalid_action": "project"}),
        ("TopK-Batch-v0", {"invalid_action": "project", "answer": "agent"}),
    ],
    ids=["TopK-v0", "TopK-Batch-v0", "TopK-Batch-v0-answer"],
)
def test_ppo_trains_on_the_adapter(env_id: str, kwargs: dict, one_torch_thread) -> None:
    from stable_baselines3 import PPO

    venv = make_sb3_vec_env(env_id, 8, seed=0, n_arms=5, k=2, budget=20, **kwargs)
    model = PPO(
        "MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=2, device="cpu", seed=0
    )
    model.learn(512)
    assert model.num_timesteps == 512


def test_missing_sb3_names_the_extra(monkeypatch) -> None:
    for name in [
        m for m in sys.modules if m == "stable_baselines3" or m.startswith("stable_baselines3.")
    ]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "bandit_envs.sb3")
    with pytest.raises(ImportError, match=r"pip install 'topk-bandit-envs\[rl\]'"):
        importlib.import_module("bandit_envs.sb3")


def test_bandit_envs_does_not_import_sb3() -> None:
    code = (
        "import sys, gymnasium as gym, bandit_envs, bandit_envs.vector;"
        "gym.make_vec('TopK-v0', num_envs=2, vectorization_mode='vector_entry_point');"
        "assert not [m for m in sys.modules if m.startswith(('stable_baselines3', 'torch'))]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
