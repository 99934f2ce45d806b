"""Playing learned policies: one torch thread per ``act``, and errors that name the fix.

* ``PolicyAgent.act`` runs the network on ``torch_threads`` threads (default 1: with
  torch's default threads a step of one observation was 10-45x slower) and gives torch
  its setting back;
* a model saved by plain ``model.save()`` whose policy takes a flat observation is
  refused at load, naming the path, ``save_policy`` and ``obs_transform``;
* ``TopK-PullByPull-v0`` is refused up front for ``PolicyAgent`` and scripted agents,
  naming ``TopK-Batch-v0`` (the same problem).
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from bandit_envs.wrappers import FlatObservation, FlattenTopKObservation

torch = pytest.importorskip("torch")
sb3 = pytest.importorskip("stable_baselines3")

FAMILY = {"n_arms": 4, "k": 2, "budget": 12}
PULL_BY_PULL = {
    "n_arms": 4, "k": 2, "batch_size": 3, "repeat_limit": 2, "budget": 12, "answer": "agent",
}  # fmt: skip


@pytest.fixture
def three_threads():
    """torch at 3 threads during the test (not 1, the agent's default), restored after."""
    threads = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(threads)


def _ppo(env: gym.Env, policy: str):
    return sb3.PPO(policy, env, device="cpu", seed=0, n_steps=8, batch_size=8)


def _flat_model():
    """A PPO on the flat observation of ``TopK-v0`` and its transform (no metadata)."""
    env = FlattenTopKObservation(gym.make("TopK-v0", **FAMILY))
    return _ppo(env, "MlpPolicy"), env.transform


def _threads_seen(model) -> list[int]:
    """torch's thread count at each forward pass of the policy's action head."""
    seen: list[int] = []
    model.policy.action_net.register_forward_hook(lambda *_: seen.append(torch.get_num_threads()))
    return seen


# ------------------------------------------------------------------ torch threads
@pytest.mark.parametrize("kind", ["flat deterministic", "flat sampled", "dict predict"])
def test_act_runs_on_one_torch_thread_and_gives_the_setting_back(kind: str, three_threads) -> None:
    if kind.startswith("flat"):
        model, transform = _flat_model()
        make = agents.learned.SampledPolicyAgent if "sampled" in kind else agents.PolicyAgent
        agent = make(model, obs_transform=transform)
    else:  # the Dict observation goes through SB3's predict
        model = _ppo(gym.make("TopK-v0", **FAMILY), "MultiInputPolicy")
        agent = agents.PolicyAgent(model)
    seen = _threads_seen(model)
    env = gym.make("TopK-v0", **FAMILY)
    result = agents.run_episode(env, agent, seed=0)
    assert result.pulls > 0 and len(seen) >= agent.decisions > 0
    assert set(seen) == {1}
    assert torch.get_num_threads() == three_threads
    agent.policy_action(env.reset(seed=1)[0])
    assert seen[-1] == 1 and torch.get_num_threads() == three_threads


def test_torch_threads_none_leaves_torch_as_it_is(three_threads) -> None:
    model, transform = _flat_model()
    seen = _threads_seen(model)
    agent = agents.PolicyAgent(model, obs_transform=transform, torch_threads=None)
    agents.run_episode(gym.make("TopK-v0", **FAMILY), agent, seed=0)
    assert seen and set(seen) == {three_threads}
    two = agents.PolicyAgent(model, obs_transform=transform, torch_threads=2)
    agents.run_episode(gym.make("TopK-v0", **FAMILY), two, seed=0)
    assert seen[-1] == 2 and torch.get_num_threads() == three_threads


def test_loaded_policy_plays_on_one_thread(tmp_path: Path, three_threads) -> None:
    from agents.learned.metadata import policy_metadata
    from agents.learned.saving import save_policy

    model, transform = _flat_model()
    meta = policy_metadata("ppo", "TopK-v0", FAMILY, transform)
    path = save_policy(model, tmp_path / "m", meta)
    agent = agents.make(f"ppo:{path}")
    assert agent.torch_threads == 1
    seen = _threads_seen(agent.policy)
    agents.run_episode(gym.make("TopK-v0", **FAMILY), agent, seed=0)
    assert seen and set(seen) == {1} and torch.get_num_threads() == three_threads
    assert agents.make(f"ppo:{path}", torch_threads=None).torch_threads is None


def test_threads_are_given_back_when_the_policy_raises(three_threads) -> None:
    def broken(obs):
        assert torch.get_num_threads() == 1
        raise RuntimeError("broken policy")

    agent = agents.PolicyAgent(broken)
    env = gym.make("TopK-v0", **FAMILY)
    with pytest.raises(RuntimeError, match="broken policy"):
        agents.run_episode(env, agent, seed=0)
    assert torch.get_num_threads() == three_threads


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_torch_threads_must_be_a_positive_integer(bad) -> None:
    with pytest.raises(ValueError, match="torch_threads"):
        agents.PolicyAgent(lambda obs: 0, torch_threads=bad)


# ------------------------------------------------------------------ plain model.save()
def test_plain_save_of_a_flat_policy_names_the_fix(tmp_path: Path) -> None:
    model, transform = _flat_model()
    model.save(tmp_path / "plain")  # no metadata, no sidecar
    for load in (
        lambda: agents.make(f"ppo:{tmp_path / 'plain'}"),
        lambda: agents.learned.load_policy(tmp_path / "plain", algo="ppo"),
    ):
        with pytest.raises(ValueError) as err:
            load()
        message = str(err.value)
        assert str(tmp_path / "plain.zip") in message
        assert "agents.learned.save_policy" in message and "obs_transform=" in message
    with pytest.raises(ValueError, match="flat observation.*obs_transform="):
        agents.PolicyAgent(model)
    env = gym.make("TopK-v0", **FAMILY)
    agent = agents.make(f"ppo:{tmp_path / 'plain'}", obs_transform=FlatObservation.from_env(env))
    assert agents.run_episode(env, agent, seed=0).terminated


def test_plain_save_of_a_dict_policy_still_plays(tmp_path: Path) -> None:
    env = gym.make("TopK-v0", **FAMILY)
    _ppo(env, "MultiInputPolicy").save(tmp_path / "plain")
    agent = agents.make(f"ppo:{tmp_path / 'plain'}")
    assert agents.run_episode(env, agent, seed=0).terminated


# ------------------------------------------------------------------ TopK-PullByPull-v0
def test_masked_policy_on_the_pull_by_pull_env_names_the_batch_env() -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gym.make("TopK-PullByPull-v0", **PULL_BY_PULL)
    model = sb3_contrib.MaskablePPO(
        "MultiInputPolicy", env, device="cpu", seed=0, n_steps=8, batch_size=8
    )
    agent = agents.PolicyAgent(model)
    assert agent.masked and agent.pull_by_pull
    with pytest.raises(ValueError, match="play it on TopK-Batch-v0 with the same kwargs"):
        agents.run_episode(env, agent, seed=0)
    batch = gym.make("TopK-Batch-v0", **PULL_BY_PULL)  # what the message says works
    result = agents.run_episode(batch, agent, seed=0)
    assert result.terminated and result.pulls == 12


@pytest.mark.parametrize("name", ["uniform", "sar", "lucb"])
def test_scripted_agent_on_the_pull_by_pull_env_is_refused_up_front(name: str) -> None:
    env = gym.make("TopK-PullByPull-v0", **PULL_BY_PULL)
    with pytest.raises(ValueError, match="for masked policies.*play scripted agents on TopK-Batch"):
        agents.run_episode(env, agents.make(name), seed=0)
    assert env.unwrapped._pulls == 0  # nothing was played
    assert np.all(env.unwrapped._counts == 0)
