"""Properties every registered agent must have, whatever its algorithm.

* budgets (pulls and batches) are never exceeded, at any n, k, b, r, budget;
* the answer is k distinct arms;
* seeded runs are deterministic;
* the dense act/observe path through ``env.step`` and ``run_episode``'s fast paths
  (``step_sparse``, and ``step_one`` for one-pull requests) play exactly the same
  episode;
* fixed-budget-only agents refuse fixed-confidence problems with a clear error, and
  fixed-confidence-only agents (the PAC eliminations) fixed-budget ones;
* agents of both settings also run fixed-confidence algorithms in fixed budget (anytime).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agents
import bandit_envs
from agents.base import FIXED_BUDGET, FIXED_CONFIDENCE, ScriptedAgent

# bayes_dp solves the exact Bayes-optimal DP: tiny families only (at most 40M posterior
# states, e.g. 4 arms with budget <= 45; it refuses larger ones by design), tested in
# test_agents_bayes.py and test_bayes_exact.py.
NAMES = [n for n in agents.available() if n != "bayes_dp"]
K_ONE_ONLY = {n for n in NAMES if agents.agent_class(n).k_values == frozenset({1})}


def settings_of(name: str) -> frozenset[str]:
    return agents.agent_class(name).settings


def make_agent(name: str) -> ScriptedAgent:
    return agents.make(name)


def pick_instance(name: str, instance: str) -> str:
    """``instance``, or a Bernoulli one for agents that play only Bernoulli rewards."""
    dists = agents.agent_class(name).distributions
    if dists is not None and bandit_envs.instances.catalog()[instance].distribution not in dists:
        return "uniform-random"
    return instance


def pick_k(name: str, n: int, k: int) -> int:
    return 1 if name in K_ONE_ONLY else k


@pytest.mark.parametrize("name", [n for n in NAMES if FIXED_BUDGET in settings_of(n)])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 12),
    k_frac=st.floats(0.0, 1.0),
    b=st.one_of(st.none(), st.integers(1, 12)),
    r_frac=st.floats(0.0, 1.0),
    per_arm=st.integers(1, 12),
    max_batches=st.one_of(st.none(), st.integers(1, 30)),
    seed=st.integers(0, 1000),
)
def test_fixed_budget_never_exceeded(
    name, n, k_frac, b, r_frac, per_arm, max_batches, seed
) -> None:
    k = pick_k(name, n, 1 + int(k_frac * (n - 2)))
    r = None if b is None else 1 + int(r_frac * (b - 1))
    budget = n * per_arm
    if max_batches is not None and b is not None and max_batches * b < n:
        max_batches = -(-n // b)
    if max_batches is not None and b is not None:  # a budget the batches can spend
        budget = min(budget, max_batches * min(b, n * r))
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=n,
        k=k,
        batch_size=b,
        repeat_limit=r,
        budget=budget,
        max_batches=max_batches,
        answer="agent",
        instance="uniform-random",
    )
    result = agents.run_episode(env, make_agent(name), seed=seed, max_steps=10**6)
    assert result.pulls <= budget
    if max_batches is not None:
        assert result.batches <= max_batches
    assert result.recommendation.shape == (k,) and np.unique(result.recommendation).size == k
    assert result.terminated and not result.truncated


@pytest.mark.parametrize("name", NAMES)
def test_seeded_runs_are_deterministic_and_dense_equals_sparse(name: str) -> None:
    k = pick_k(name, 8, 2)
    setting = FIXED_BUDGET if FIXED_BUDGET in settings_of(name) else FIXED_CONFIDENCE
    kw = {
        "n_arms": 8,
        "k": k,
        "batch_size": 3,
        "repeat_limit": 2,
        "answer": "agent",
        "instance": "uniform-random",
        "setting": setting,
    }
    kw.update({"budget": 120} if setting == FIXED_BUDGET else {"max_batches": 400})
    env = gym.make("TopK-Batch-v0", **kw)
    first = agents.run_episode(env, make_agent(name), seed=5)
    again = agents.run_episode(env, make_agent(name), seed=5)
    assert first.as_row() | {"wall_time": 0} == again.as_row() | {"wall_time": 0}

    # Dense path: act/observe through the full gymnasium wrapper stack.
    agent = make_agent(name)
    obs, _ = env.reset(seed=5)
    agent.reset(env.unwrapped.problem, seed=5)
    while True:
        action = agent.act(obs)
        obs, reward, term, trunc, info = env.step(action)
        agent.observe(action, obs, reward, term, trunc, info)
        if term or trunc:
            break
    assert list(info["recommendation"]) == list(first.recommendation)
    assert (info["pulls"], info["batches"]) == (first.pulls, first.batches)


def _dense_episode(env: gym.Env, agent: ScriptedAgent, seed: int) -> dict:
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    while True:
        action = agent.act(obs)
        obs, reward, term, trunc, info = env.step(action)
        agent.observe(action, obs, reward, term, trunc, info)
        if term or trunc:
            return info


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 9),
    k_frac=st.floats(0.0, 1.0),
    b=st.one_of(st.none(), st.integers(1, 6)),
    r_frac=st.floats(0.0, 1.0),
    fixed_budget=st.booleans(),
    paired=st.booleans(),
    instance=st.sampled_from(["uniform-random", "jiang2017-1-sparse"]),
    seed=st.integers(0, 1000),
)
def test_dense_path_equals_run_episode(
    name, n, k_frac, b, r_frac, fixed_budget, paired, instance, seed
) -> None:
    """act/observe + env.step plays exactly run_episode's episode (same draws, same state).

    Unpaired draws of a batch of several arms follow the order of ``arms`` in
    ``step_sparse`` but the index order in ``step``; LUCB-style agents ask for (h, l)
    in either order, so batches of several arms are compared in paired mode (rewards
    indexed by arm and pull number). ``batch_size=1`` (every batch one pull: the
    ``step_one`` path) is compared in both modes.
    """
    k = pick_k(name, n, 1 + int(k_frac * (n - 2)))
    if FIXED_BUDGET not in settings_of(name):
        fixed_budget = False
    if FIXED_CONFIDENCE not in settings_of(name):
        fixed_budget = True
    r = (3 if not fixed_budget else None) if b is None else 1 + int(r_frac * (b - 1))
    kw = {
        "n_arms": n,
        "k": k,
        "batch_size": b,
        "repeat_limit": r,
        "answer": "agent",
        "instance": pick_instance(name, instance),
        "paired": paired or b != 1,
    }
    if fixed_budget:
        kw.update(setting=FIXED_BUDGET, budget=n * 12)
    else:
        kw.update(setting=FIXED_CONFIDENCE, max_batches=150)
    env = gym.make("TopK-Batch-v0", **kw)
    fast = agents.run_episode(env, make_agent(name), seed=seed, max_steps=10**6)
    fast_state = (env.unwrapped._counts.tolist(), env.unwrapped._sums.tolist())
    info = _dense_episode(env, make_agent(name), seed)
    assert list(info["recommendation"]) == list(fast.recommendation)
    assert (info["pulls"], info["batches"]) == (fast.pulls, fast.batches)
    assert info["aggregate_regret"] == fast.aggregate_regret
    assert (env.unwrapped._counts.tolist(), env.unwrapped._sums.tolist()) == fast_state


@pytest.mark.parametrize("name", [n for n in NAMES if settings_of(n) == {FIXED_BUDGET}])
def test_fixed_budget_agents_refuse_fixed_confidence(name: str) -> None:
    env = gym.make(
        "TopK-Batch-v0", n_arms=6, k=2, setting="fixed_confidence", max_batches=10, answer="agent"
    )
    with pytest.raises(ValueError, match=f"agent '{name}' cannot play setting='fixed_confidence'"):
        agents.run_episode(env, make_agent(name), seed=0)


@pytest.mark.parametrize("name", [n for n in NAMES if settings_of(n) == {FIXED_CONFIDENCE}])
def test_fixed_confidence_only_agents_refuse_fixed_budget(name: str) -> None:
    env = gym.make("TopK-Batch-v0", n_arms=6, k=pick_k(name, 6, 2), budget=60, answer="agent")
    with pytest.raises(ValueError, match=f"agent '{name}' cannot play setting='fixed_budget'"):
        agents.run_episode(env, make_agent(name), seed=0)


@pytest.mark.parametrize("name", [n for n in NAMES if len(settings_of(n)) == 2])
def test_fixed_confidence_agents_run_anytime_in_fixed_budget(name: str) -> None:
    k = pick_k(name, 10, 3)
    env = gym.make("TopK-Batch-v0", n_arms=10, k=k, batch_size=1, budget=60, answer="agent")
    result = agents.run_episode(env, make_agent(name), seed=1)
    assert result.terminated and result.pulls <= 60 and result.recommendation.shape == (k,)


@pytest.mark.parametrize("name", [n for n in NAMES if FIXED_CONFIDENCE in settings_of(n)])
def test_fixed_confidence_truncates_at_max_batches(name: str) -> None:
    k = pick_k(name, 10, 3)
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=10,
        k=k,
        batch_size=2,
        setting="fixed_confidence",
        max_batches=5,
        answer="agent",
        instance="zhou2014-two-level",
        shuffle=True,
    )
    result = agents.run_episode(env, make_agent(name), seed=1)
    # 5 batches of 2 pulls give every arm about one pull: no agent can be confident yet,
    # so the env truncates the episode at exactly max_batches and answers for the agent.
    assert result.truncated and not result.terminated
    assert result.batches == 5 and result.pulls <= 10
    assert result.recommendation.shape == (k,)


def test_registry_lists_and_builds() -> None:
    assert "uniform" in NAMES
    for name in NAMES:
        agent = agents.make(name)
        assert agent.name == name
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        agents.make("nope")
    with pytest.raises(ValueError, match="bad parameters"):
        agents.make("uniform", no_such_param=1)


def test_policy_agent_plays_a_scalar_policy() -> None:
    env = gym.make("TopK-Batch-v0", n_arms=5, k=2, batch_size=1, budget=25, answer="agent")
    counter = iter(range(10**6))
    agent = agents.PolicyAgent(lambda obs: next(counter) % 5, name="cycle")
    result = agents.run_episode(env, agent, seed=0)
    assert result.pulls == 25 and result.recommendation.shape == (2,)
