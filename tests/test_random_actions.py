"""Every element of an env's action space is a legal action in the default mode.

Gymnasium's convention, which stable-baselines3, RL Zoo and CleanRL rely on. Random
actions play whole episodes of every id, setting, answer mode and budget, through every
way of building the envs: ``gym.make``, ``SyncVectorEnv``, ``AsyncVectorEnv``,
``gym.make_vec`` in each vectorization mode the id supports, and the native vector env.
Two kinds of random actions are stepped, in turn: ``action_space.sample()`` and what a
policy head draws, each dimension of the underlying ``Discrete``/``MultiDiscrete``/
``Box`` on its own (ignoring the sum rule, the budget left, the answer step and the
masks). The strict mode (``invalid_action="raise"``) rejects many of those draws: the
controls below show that the same loops raise there, with the hint naming the fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import bandit_envs  # noqa: F401  (registers the ids)
from bandit_envs.problem import PROJECT_HINT
from bandit_envs.vector import TopKBatchVectorEnv, TopKVectorEnv

EPISODES = 3  # episode ends each path must reach
MAX_STEPS = 400  # a path that needs more steps than this never ends its episodes
NUM_ENVS = 2

_SMALL = {"n_arms": 4, "k": 2}
_BATCH = {  # raw draws: a sum up to 8 > b = 3; a sub-step on an arm at r = 1 in the batch
    "TopK-Batch-v0": {**_SMALL, "batch_size": 3, "repeat_limit": 2},
    "TopK-PullByPull-v0": {**_SMALL, "batch_size": 3, "repeat_limit": 1},
}
_BATCH_BUDGETS = {
    # budget 10 is not a multiple of b: the last batch has fewer pulls left than b
    "pulls": {"budget": 10},
    "batches": {"max_batches": 4},
    "pulls+batches": {"budget": 10, "max_batches": 4},
    "confidence": {"setting": "fixed_confidence", "max_batches": 4},
}
_ONE_PULL_BUDGETS = {
    "pulls": {"budget": 10},
    "batches": {"max_batches": 6},
    "confidence": {"setting": "fixed_confidence", "max_batches": 6},
}


def _configs() -> list[Any]:
    out = []
    for name, budget in _ONE_PULL_BUDGETS.items():
        out.append(pytest.param("TopK-v0", {**_SMALL, **budget}, id=f"TopK-v0-{name}"))
    for env_id in ("TopK-Batch-v0", "TopK-PullByPull-v0"):
        for name, budget in _BATCH_BUDGETS.items():
            for answer in ("empirical", "agent"):
                kwargs = {**_BATCH[env_id], **budget, "answer": answer}
                out.append(pytest.param(env_id, kwargs, id=f"{env_id}-{name}-{answer}"))
    return out


CONFIGS = _configs()
HAS_VECTOR_ENTRY = {"TopK-v0", "TopK-Batch-v0"}  # TopK-PullByPull-v0: sync and async only
NATIVE = {"TopK-v0": TopKVectorEnv, "TopK-Batch-v0": TopKBatchVectorEnv}


def raw_sample(space: spaces.Space, rng: np.random.Generator) -> Any:
    """A per-dimension draw of the space's underlying ``Discrete``/``MultiDiscrete``/``Box``.

    What a policy head samples: each dimension uniformly on its own, with no sum rule,
    no budget left, no answer step and no mask.
    """
    if isinstance(space, spaces.Discrete):
        return space.start + rng.integers(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return space.start + rng.integers(space.nvec)
    if isinstance(space, spaces.Box) and np.issubdtype(space.dtype, np.integer):
        return rng.integers(space.low, space.high.astype(np.int64) + 1)
    raise TypeError(f"no per-dimension draw for {space!r}")


def _action(space: spaces.Space, rng: np.random.Generator, t: int) -> Any:
    return space.sample() if t % 2 == 0 else raw_sample(space, rng)


def _was_projected(env_id: str, action: Any, info: dict[str, Any]) -> bool:
    """Whether the single env replaced ``action`` (an element the strict mode rejects)."""
    if env_id == "TopK-PullByPull-v0":
        return bool(info.get("projected", False))
    made = info.get("pulls_made")
    return made is not None and not np.array_equal(made, action)


def play_single(env: gym.Env, env_id: str, seed: int) -> int:
    """Play ``EPISODES`` episodes with random actions; return how many steps were projected."""
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    env.reset(seed=seed)
    ended = projected = 0
    for t in range(MAX_STEPS):
        action = _action(env.action_space, rng, t)
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs), obs
        assert np.isfinite(reward)
        projected += _was_projected(env_id, action, info)
        if terminated or truncated:
            assert set(info) >= {"recommendation", "aggregate_regret", "pulls", "batches"}
            ended += 1
            if ended == EPISODES:
                return projected
            env.reset()
    pytest.fail(f"{EPISODES} episodes did not end within {MAX_STEPS} random steps")


def play_vector(envs: gym.vector.VectorEnv, seed: int) -> None:
    """Step ``envs`` with random batched actions until ``EPISODES`` episodes have ended."""
    rng = np.random.default_rng(seed)
    envs.action_space.seed(seed)
    envs.reset(seed=seed)
    ended = 0
    try:
        for t in range(MAX_STEPS):
            obs, reward, terminated, truncated, info = envs.step(_action(envs.action_space, rng, t))
            assert reward.shape == (envs.num_envs,) and np.all(np.isfinite(reward))
            ended += int(np.count_nonzero(terminated | truncated))
            if ended >= EPISODES:
                return
        pytest.fail(f"{EPISODES} episodes did not end within {MAX_STEPS} random steps")
    finally:
        envs.close()


def _env_fns(env_id: str, kwargs: dict[str, Any]) -> list[Callable[[], gym.Env]]:
    return [lambda: gym.make(env_id, **kwargs) for _ in range(NUM_ENVS)]


# ------------------------------------------------------------------------- the default mode
@pytest.mark.parametrize("env_id,kwargs", CONFIGS)
def test_gym_make_plays_random_actions(env_id: str, kwargs: dict[str, Any]) -> None:
    projected = play_single(gym.make(env_id, **kwargs), env_id, seed=0)
    if env_id != "TopK-v0":  # elements the strict mode rejects were stepped
        assert projected > 0


@pytest.mark.parametrize("env_id,kwargs", CONFIGS)
def test_sync_vector_env_plays_random_actions(env_id: str, kwargs: dict[str, Any]) -> None:
    play_vector(gym.vector.SyncVectorEnv(_env_fns(env_id, kwargs)), seed=1)


@pytest.mark.parametrize("env_id,kwargs", CONFIGS)
def test_async_vector_env_plays_random_actions(env_id: str, kwargs: dict[str, Any]) -> None:
    play_vector(gym.vector.AsyncVectorEnv(_env_fns(env_id, kwargs)), seed=2)


MAKE_VEC = [  # every mode gym.make_vec supports for the id
    pytest.param(*c.values, mode, id=f"{c.id}-{mode}")
    for c in CONFIGS
    for mode in ("sync", "async", "vector_entry_point")
    if mode != "vector_entry_point" or c.values[0] in HAS_VECTOR_ENTRY
]


@pytest.mark.parametrize("env_id,kwargs,mode", MAKE_VEC)
def test_make_vec_plays_random_actions(env_id: str, kwargs: dict[str, Any], mode: str) -> None:
    envs = gym.make_vec(env_id, num_envs=NUM_ENVS, vectorization_mode=mode, **kwargs)
    play_vector(envs, seed=3)


@pytest.mark.parametrize("env_id,kwargs", [c for c in CONFIGS if c.values[0] in NATIVE])
def test_native_vector_env_plays_random_actions(env_id: str, kwargs: dict[str, Any]) -> None:
    play_vector(NATIVE[env_id](num_envs=3, **kwargs), seed=4)


def test_default_modes() -> None:
    """The ids with an ``invalid_action`` argument default to ``"project"``."""
    for env_id in ("TopK-Batch-v0", "TopK-PullByPull-v0"):
        assert gym.make(env_id).unwrapped.invalid_action == "project"
    envs = gym.make_vec("TopK-Batch-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert envs.unwrapped.invalid_action == "project"


# ---------------------------------------------------------------------------- the controls
STRICT = [c for c in CONFIGS if c.values[0] != "TopK-v0"]


@pytest.mark.parametrize("env_id,kwargs", STRICT)
def test_strict_mode_rejects_random_actions_with_the_hint(
    env_id: str, kwargs: dict[str, Any]
) -> None:
    """The same random actions raise in strict mode, and the message names the fix."""
    env = gym.make(env_id, **kwargs, invalid_action="raise")
    with pytest.raises(ValueError) as error:
        play_single(env, env_id, seed=0)
    assert str(error.value).endswith(PROJECT_HINT)


@pytest.mark.parametrize(
    "kwargs",
    [
        c.values[1]
        for c in STRICT
        if c.id
        in {
            "TopK-Batch-v0-pulls-empirical",
            "TopK-Batch-v0-pulls-agent",
            "TopK-Batch-v0-batches-agent",
            "TopK-Batch-v0-pulls+batches-agent",
        }
    ],
)
def test_strict_sync_vector_env_rejects_its_own_samples(kwargs: dict[str, Any]) -> None:
    """``SyncVectorEnv``'s batched space knows no env's budget left nor answer step: its
    samples break the strict mode's rules (a batch over the budget left, an answer of the
    wrong size), which the default mode projects. (Its samples always pull, so a fixed
    confidence episode never reaches its answer step, and a budget of ``max_batches * b``
    is never overrun: those configurations are not here.)"""
    strict = {**kwargs, "invalid_action": "raise"}
    envs = gym.vector.SyncVectorEnv(_env_fns("TopK-Batch-v0", strict))
    envs.action_space.seed(0)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="budget has|the answer must mark") as error:
        for _ in range(MAX_STEPS):
            envs.step(envs.action_space.sample())
    assert str(error.value).endswith(PROJECT_HINT)
    envs.close()


# ------------------------------------------------------------------------ RL libraries
def test_untrained_ppo_learns_on_the_default_batch_env() -> None:
    """SB3's PPO samples each arm's count from the ``MultiDiscrete``: over ``b`` at once.

    The env is built as RL Zoo builds it (``make_vec_env`` of ``gym.spec(id).make``),
    with the default arguments.
    """
    torch = pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env

    spec = gym.spec("TopK-Batch-v0")
    venv = make_vec_env(lambda **kw: spec.make(**kw), n_envs=2, seed=0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = PPO(
            "MultiInputPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, device="cpu", seed=0
        )
        model.learn(total_timesteps=256)
    finally:
        torch.set_num_threads(threads)
    episodes = sum(len(r) for r in venv.env_method("get_episode_rewards"))
    assert model.num_timesteps >= 256 and episodes >= 2  # 200 pulls of b = 5: 40 steps each
    venv.close()


def test_rl_zoo_trains_ppo_on_the_default_batch_env(tmp_path: Path) -> None:
    """``python -m rl_zoo3.train --algo ppo --env TopK-Batch-v0 --gym-packages bandit_envs``.

    RL Zoo's default PPO hyperparameters use ``MlpPolicy``, which SB3 refuses for a
    ``Dict`` observation: the policy is given on the command line, nothing else.
    """
    pytest.importorskip("rl_zoo3", reason="rl-zoo3 is not installed (pip install rl-zoo3)")
    command = [
        sys.executable,
        "-m",
        "rl_zoo3.train",
        "--algo",
        "ppo",
        "--env",
        "TopK-Batch-v0",
        "--gym-packages",
        "bandit_envs",
        "-n",
        "2000",
        "--device",
        "cpu",
        "--seed",
        "0",
        "--num-threads",
        "1",
        "-f",
        str(tmp_path / "logs"),
        "--hyperparams",
        "policy:'MultiInputPolicy'",
        "n_steps:256",
        "batch_size:64",
        "n_epochs:1",
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("WANDB")}
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    saved = list((tmp_path / "logs" / "ppo").glob("TopK-Batch-v0_*/TopK-Batch-v0.zip"))
    assert len(saved) == 1, sorted(p.name for p in (tmp_path / "logs").rglob("*"))


# ------------------------------------------------------------------ the benchmark runner
class _OverBatchAgent:
    """A buggy duck-typed agent: asks for every arm ``r`` times, over ``b``."""

    def reset(self, problem: Any, *, seed: int | None = None) -> None:
        self.n, self.r = problem.n_arms, problem.repeat_limit

    def act(self, observation: Any) -> np.ndarray:
        return np.full(self.n, self.r)

    def observe(self, *args: Any) -> None:
        pass


def test_the_runner_makes_strict_envs_so_agent_bugs_surface() -> None:
    import agents
    from topk_bench.episodes import make_env

    kwargs = {**_BATCH["TopK-Batch-v0"], "budget": 12}
    for env_id in ("TopK-Batch-v0", "bandit_envs:TopK-Batch-v0", "TopK-PullByPull-v0"):
        assert make_env(env_id, kwargs).unwrapped.invalid_action == "raise"
    projecting = make_env("TopK-Batch-v0", {**kwargs, "invalid_action": "project"})
    assert projecting.unwrapped.invalid_action == "project"  # a mode given is kept
    assert not hasattr(make_env("TopK-v0", {"n_arms": 4, "k": 2}).unwrapped, "invalid_action")
    with pytest.raises(ValueError, match="action asks for 8 pulls, over batch_size=3"):
        agents.run_episode(make_env("TopK-Batch-v0", kwargs), _OverBatchAgent(), seed=0)
    played = agents.run_episode(gym.make("TopK-Batch-v0", **kwargs), _OverBatchAgent(), seed=0)
    assert played.pulls == 12  # the default env projects the same agent's actions
