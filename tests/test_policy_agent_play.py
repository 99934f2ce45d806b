"""PolicyAgent plays on any env of the suite: its actions are mapped by the env's own rule.

A policy trained on ``TopK-Batch-v0`` with ``invalid_action="project"`` used to crash on
the env every scripted agent plays (``invalid_action="raise"``); a ``TopK-v0`` policy
could not play ``TopK-v0`` through ``run_episode`` at all (the agent sent pull vectors).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from bandit_envs.top_k_batch import project_pulls

N, K = 6, 2


def _batch_env(**over):
    kwargs = dict(n_arms=N, k=K, instance="beta-random", batch_size=2, repeat_limit=1)
    return gym.make("TopK-Batch-v0", **{**kwargs, **over})


class _Recorder:
    """A policy that returns ``fn(obs)`` and remembers every raw action."""

    def __init__(self, fn):
        self.fn, self.raw = fn, []

    def __call__(self, obs):
        self.raw.append(np.asarray(self.fn(obs)))
        return self.raw[-1]


# ------------------------------------------------------------------ stub policies
@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_vector_over_the_batch_is_projected_by_the_env_rule(setting: str) -> None:
    """3 pulls asked (an element of the action space, r = 1), b = 2: the agent's projection
    plays the same episode as the env's project mode."""
    over = {"budget": 13} if setting == "fixed_budget" else {"max_batches": 5}
    raise_env = _batch_env(setting=setting, answer="agent", invalid_action="raise", **over)
    project_env = _batch_env(setting=setting, answer="agent", invalid_action="project", **over)
    policy = _Recorder(lambda obs: np.array([1, 0, 1, 0, 1, 0]))  # 3 pulls, over b
    agent = agents.PolicyAgent(policy, answer="policy")
    with pytest.raises(ValueError, match="over batch_size=2"):
        raise_env.reset(seed=0)
        raise_env.step(np.array([1, 0, 1, 0, 1, 0]))
    played = agents.run_episode(raise_env, agent, seed=4)
    # every sampling action needed projection, and the answer (if the episode reached
    # its answer step) marks 3 arms, not k = 2
    calls = played.batches + int(played.terminated)
    assert len(policy.raw) == agent.decisions == agent.projections == calls
    assert agent.projection_rate == 1.0 and agent.total_projections == agent.projections
    same = agents.run_episode(project_env, agents.PolicyAgent(lambda obs: policy.fn(obs)), seed=4)
    for field in ("recommendation", "pulls", "batches", "aggregate_regret", "truncated"):
        assert np.array_equal(getattr(played, field), getattr(same, field)), field
    if setting == "fixed_budget":  # the last batch is cut to the one pull left (13 = 6 x 2 + 1)
        assert played.pulls == 13 and played.batches == 7 and played.terminated
    else:
        assert played.truncated and played.batches == 5 and played.pulls == 10
    assert raise_env.unwrapped.problem.action_format == "pulls"


def test_projection_uses_the_budget_left_and_repeat_limit() -> None:
    env = _batch_env(batch_size=4, repeat_limit=2, budget=9, answer="agent")
    obs, _ = env.reset(seed=0)
    agent = agents.PolicyAgent(lambda obs: np.array([5, 5, 0, 0, 0, 1]), answer="policy")
    agent.reset(env.unwrapped.problem, seed=0)
    steps = []
    while int(obs["phase"]) == 0:
        action = agent.act(obs)
        left = 9 - int(obs["counts"].sum())
        assert np.array_equal(action, project_pulls(np.array([5, 5, 0, 0, 0, 1]), 2, min(4, left)))
        steps.append(action)
        obs, *_ = env.step(action)
    assert [a.sum() for a in steps] == [4, 4, 1]
    assert agent.projections == 3 and agent.decisions == 3


def test_valid_actions_are_not_counted_and_answers_are_projected() -> None:
    env = _batch_env(batch_size=3, repeat_limit=2, budget=12, answer="agent")

    def policy(obs):
        if int(obs["phase"]) == 1:  # marks 3 arms; k = 2: the two largest entries win
            return np.array([0, 1, 3, 2, 0, 0])
        return np.array([1, 0, 0, 2, 0, 0])  # in A: 3 pulls, r = 2

    agent = agents.PolicyAgent(policy, answer="policy")
    result = agents.run_episode(env, agent, seed=1)
    assert result.recommendation.tolist() == [2, 3]
    assert agent.decisions == 5 and agent.projections == 1  # only the answer
    agent = agents.PolicyAgent(policy, answer="empirical")
    agents.run_episode(env, agent, seed=1)
    assert agent.projections == 0 and agent.decisions == 5


@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_scalar_and_vector_policies_play_topk_v0(setting: str) -> None:
    """On ``TopK-v0`` the agent sends an arm index (``n_arms`` = stop)."""
    over = {"budget": 18} if setting == "fixed_budget" else {"max_batches": 10}
    env = gym.make("TopK-v0", n_arms=N, k=K, setting=setting, **over)
    assert env.unwrapped.problem.action_format == "arm"
    agent = agents.PolicyAgent(lambda obs: 4)
    result = agents.run_episode(env, agent, seed=0, fast=False)
    assert agent.projections == 0 and result.pulls == (18 if setting == "fixed_budget" else 10)
    # a pull vector: the env's rule with b = r = 1 keeps the lowest-index pulled arm
    counts = []

    def vector(obs):
        counts.append(obs["counts"].copy())
        return np.array([0, 2, 0, 1, 0, 0])

    agent = agents.PolicyAgent(vector)
    result = agents.run_episode(env, agent, seed=0)
    assert counts[-1][1] == result.pulls - 1 and counts[-1].sum() == result.pulls - 1
    assert agent.projections == agent.decisions == result.pulls
    # stopping: the stop action, in either setting
    agent = agents.PolicyAgent(lambda obs: N)
    result = agents.run_episode(env, agent, seed=0, max_steps=100)
    assert result.pulls == 0 and result.terminated and agent.projections == 0


def test_policy_with_an_answer_step_plays_an_env_without_one() -> None:
    """A policy trained with ``answer="agent"`` sees ``phase = 0`` where the env has none."""
    from bandit_envs.wrappers import FlatObservation

    trained = _batch_env(batch_size=2, repeat_limit=1, budget=12, answer="agent")
    transform = FlatObservation.from_env(trained)
    assert transform.phase
    seen = []
    agent = agents.PolicyAgent(
        lambda x: (seen.append(x[-1]), np.ones(N, dtype=np.int64))[1], obs_transform=transform
    )
    result = agents.run_episode(_batch_env(budget=12), agent, seed=0)
    assert result.pulls == 12 and seen == [0.0] * 6 and agent.projections == 6


def test_bad_policy_actions_raise_naming_the_value() -> None:
    env = _batch_env(budget=12, answer="agent")
    for bad, match in [
        (N + 1, r"policy action 7 must be an arm in \[0, 6\) or the stop action 6"),
        (np.array([1, 0]), r"policy action of shape \(2,\) must be \(6,\)"),
        (np.full(N, 0.5), "must hold integers"),
    ]:
        with pytest.raises(ValueError, match=match):
            agents.run_episode(env, agents.PolicyAgent(lambda obs, bad=bad: bad), seed=0)


# -------------------------------------------------------- stable-baselines3 models
pytest.importorskip("stable_baselines3")
from agents.learned.training import TrainConfig, train  # noqa: E402

FAMILY = {"instance": "beta-random", "n_arms": N, "k": K}
SETTINGS = {
    "fixed_budget": {"budget": 24},
    "fixed_confidence": {"setting": "fixed_confidence", "max_batches": 12},
}
BATCH = {"batch_size": 4, "repeat_limit": 2, "answer": "agent"}
TINY = {
    "ppo": {"n_steps": 32, "batch_size": 64, "n_epochs": 1},
    "a2c": {"n_steps": 8},
    "dqn": {"learning_starts": 100, "buffer_size": 1000, "target_update_interval": 100},
}


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize(
    "algo,train_id",
    [
        ("ppo", "TopK-Batch-v0"),
        ("a2c", "TopK-Batch-v0"),
        ("ppo", "TopK-v0"),
        ("a2c", "TopK-v0"),
        ("dqn", "TopK-v0"),
    ],
)
def test_trained_policy_plays_the_scripted_agents_env(algo: str, train_id: str, setting: str):
    """Train with ``invalid_action="project"``, play without it, on both ids."""
    family = {**FAMILY, **SETTINGS[setting]}
    trained_on = {**family, **BATCH} if train_id == "TopK-Batch-v0" else family
    result = train(
        TrainConfig(
            train_id,
            trained_on,
            algo=algo,
            policy="mlp" if algo == "dqn" else "arm-set",
            total_timesteps=256,
            num_envs=2,
            algo_kwargs=TINY[algo],
            eval_episodes=0,
        ),
        log=None,
    )
    assert result.metadata["env_kwargs"].get("invalid_action") == (
        "project" if train_id == "TopK-Batch-v0" else None
    )
    play = {
        "TopK-v0": gym.make("TopK-v0", **family),
        "TopK-Batch-v0": gym.make("TopK-Batch-v0", **family, **BATCH),  # raise mode
    }
    modes = [True] if algo == "dqn" else [True, False]
    for play_id, env in play.items():
        for deterministic in modes:
            agent = result.agent(deterministic=deterministic)
            for seed in range(3):
                res = agents.run_episode(env, agent, seed=seed, max_steps=200)
                assert res.recommendation.shape == (K,)
                if setting == "fixed_budget":
                    assert res.terminated and res.pulls <= 24
                else:
                    assert res.terminated or (res.truncated and res.batches == 12)
                assert 0 <= agent.projections <= agent.decisions
                assert agent.projection_rate == agent.projections / agent.decisions
            if play_id == "TopK-Batch-v0" and train_id == "TopK-Batch-v0" and not deterministic:
                # sampling a near-uniform 6-arm policy asks for ~6 pulls per step, b = 4
                assert agent.total_projections > 0
            if train_id == "TopK-v0" and play_id == "TopK-Batch-v0":
                assert agent.total_projections == 0  # one pull (or stop) is always valid
