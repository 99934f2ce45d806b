"""The one-pull fast path: ``PullOne`` requests, ``TopKBatchEnv.step_one``, and the runner.

* ``step_one(arm)`` makes exactly the draws and the bookkeeping of ``step`` with the
  one-hot vector and of ``step_sparse([arm], [1])``, in independent and paired mode,
  up to and including the end of the budget / ``max_batches``;
* bad arms raise a ``ValueError`` naming the value; ``step_one`` outside sampling raises;
* ``run_episode`` plays one-pull requests with ``step_one`` and gives exactly the
  episode of the array protocol (``next_pulls`` + ``step_sparse``) and of the dense
  act/observe path, for every registered agent;
* compiled CLUCB-PAC plays exactly the episode of the paper's loop written literally.
"""

from __future__ import annotations

import math
import re

import gymnasium as gym
import numpy as np
import pytest

import agents
import bandit_envs  # noqa: F401
from agents.base import Pull, PullOne, ScriptedAgent
from agents.lucb.clucb_pac import CLUCBPAC

ENV_KW = {"n_arms": 6, "k": 2, "answer": "agent", "instance": "uniform-random"}


def make_env(**kw) -> gym.Env:
    return gym.make("TopK-Batch-v0", **(ENV_KW | kw))


def snapshot(base, obs, reward, term, trunc, info) -> tuple:
    """Everything a step shows, as plain values (info's arrays as lists)."""
    plain_info = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in info.items()}
    plain_info.pop("pulls_made", None)  # dense step only
    return (
        obs["counts"].tolist(),
        obs["means"].tolist(),
        obs["remaining"].tolist(),
        float(reward),
        term,
        trunc,
        plain_info,
        base.phase,
        base.action_space.sample_limit,
        base._sums.tolist(),
    )


# ------------------------------------------------------------------ env method
@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize(
    "kw",
    [
        {"setting": "fixed_budget", "budget": 40, "batch_size": 1},
        {"setting": "fixed_budget", "budget": 40, "batch_size": 3, "repeat_limit": 2},
        {"setting": "fixed_budget", "budget": 50, "batch_size": 2, "max_batches": 25},
        {"setting": "fixed_budget", "budget": 30, "batch_size": None, "answer": "empirical"},
        {"setting": "fixed_confidence", "batch_size": 1, "max_batches": 35},
        {"setting": "fixed_confidence", "batch_size": 4, "max_batches": 35, "cost_per_batch": 0.5},
        {"instance": "jiang2017-1-sparse", "setting": "fixed_budget", "budget": 33},
        {"instance": "chen2017-twogroup", "setting": "fixed_budget", "budget": 33},
    ],
)
def test_step_one_makes_the_draws_of_step_and_step_sparse(kw, paired) -> None:
    envs = [make_env(paired=paired, **kw).unwrapped for _ in range(3)]
    for env in envs:
        env.reset(seed=7)
    n = envs[0].problem.n_arms
    arms = np.random.default_rng(1).integers(n, size=1000)
    steps = 0
    for arm in arms.tolist():
        one_hot = np.zeros(n, dtype=np.int64)
        one_hot[arm] = 1
        dense = envs[0].step(one_hot)
        sparse = envs[1].step_sparse(np.array([arm]), np.array([1]))
        one = envs[2].step_one(arm)
        want = snapshot(envs[0], *dense)
        assert snapshot(envs[1], *sparse) == want
        assert snapshot(envs[2], *one) == want
        steps += 1
        if envs[0].phase != 0:  # budget or max_batches reached: same end everywhere
            assert envs[1].phase == envs[2].phase == envs[0].phase
            break
    assert 0 < steps < len(arms)
    if envs[0].phase == 1:  # the answer step still works after step_one
        infos = [env.answer_sparse(np.array([0, 1]))[-1] for env in envs]
        assert infos[0]["aggregate_regret"] == infos[2]["aggregate_regret"]
        assert infos[0]["pulls"] == infos[2]["pulls"] == steps


def test_step_one_returns_views_of_the_state() -> None:
    env = make_env(setting="fixed_budget", budget=10, batch_size=1).unwrapped
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step_one(np.int64(3))  # numpy ints are fine
    assert obs["counts"][3] == 1 and obs["counts"].sum() == 1
    assert (reward, term, trunc, info) == (0.0, False, False, {})
    with pytest.raises(ValueError):
        obs["counts"][0] = 5  # read-only views


@pytest.mark.parametrize("arm", [-1, 6, 100, 2.0, True, "1", None, np.float64(1.0)])
def test_step_one_rejects_bad_arms_naming_them(arm) -> None:
    env = make_env(setting="fixed_budget", budget=10, batch_size=1).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match=re.escape(f"arm={arm!r}")):
        env.step_one(arm)
    assert env._pulls == 0 and env._counts.sum() == 0  # nothing happened


def test_step_one_outside_sampling_raises() -> None:
    env = make_env(setting="fixed_budget", budget=6, batch_size=1).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step_one(0)
    env.reset(seed=0)
    for arm in range(6):
        env.step_one(arm)  # the last one spends the budget: answer phase
    with pytest.raises(RuntimeError, match="answer_sparse"):
        env.step_one(0)
    env.answer_sparse(np.array([0, 1]))
    with pytest.raises(RuntimeError, match="reset"):
        env.step_one(0)


# ------------------------------------------------------------------- agent side
class _Scripted(ScriptedAgent):
    """Plays a fixed list of requests, then returns arms 0..k-1."""

    name = "scripted"

    def __init__(self, requests, seed=None):
        super().__init__(seed=seed)
        self.requests = requests

    def _run(self):
        yield from self.requests
        return np.arange(self.problem.k)


def test_pull_one_is_served_as_an_int_and_pull_of_one_arm_once_too() -> None:
    env = make_env(setting="fixed_budget", budget=6, batch_size=3).unwrapped
    agent = _Scripted([PullOne(4), Pull(np.array([2]), np.array([1])), Pull.each([1, 3], 2)])
    env.reset(seed=0)
    agent.reset(env.problem, seed=0)
    assert agent.next_step() == 4
    obs = env.step_one(4)[0]
    agent.update_one(4, obs["counts"], obs["means"])
    assert agent.counts.tolist() == [0, 0, 0, 0, 1, 0] and agent.total_pulls == agent.batches == 1
    assert agent.means[4] == obs["means"][4]
    step = agent.next_step()
    assert type(step) is int and step == 2  # a Pull of one arm once is a one-pull request too
    obs = env.step_one(2)[0]
    agent.update_one(2, obs["counts"], obs["means"])
    arms, reps = agent.next_step()  # a RoundRobin batch of the 4 pulls asked: arrays
    # (a batch lists its arms in the order RoundRobin served them: random among ties)
    assert sorted(arms.tolist()) == [1, 3] and sorted(reps.tolist()) == [1, 2]
    obs = env.step_sparse(arms, reps)[0]
    agent.update(arms, reps, obs["counts"], obs["means"])
    arms, reps = agent.next_step()  # the request's last pull (scheduled, so arrays)
    assert arms.shape == (1,) and reps.tolist() == [1]
    obs = env.step_sparse(arms, reps)[0]
    agent.update(arms, reps, obs["counts"], obs["means"])
    assert agent.total_pulls == 6 and agent.counts.tolist() == [0, 2, 1, 2, 1, 0]
    stop = agent.next_step()  # budget spent: nothing more is asked for
    assert isinstance(stop, tuple) and stop[0].size == 0
    assert PullOne(3).arms.tolist() == [3] and PullOne(3).reps.tolist() == [1]


@pytest.mark.parametrize("arm", [-1, 6, 1.5, True])
def test_bad_pull_one_raises_naming_the_agent(arm) -> None:
    env = make_env(setting="fixed_budget", budget=10, batch_size=1)
    with pytest.raises(RuntimeError, match="agent 'scripted' requested arm"):
        agents.run_episode(env, _Scripted([PullOne(arm)]), seed=0)


def test_pull_one_respects_the_batch_budget() -> None:
    env = make_env(setting="fixed_confidence", batch_size=3, max_batches=4)
    res = agents.run_episode(env, _Scripted([PullOne(i % 6) for i in range(50)]), seed=0)
    assert (res.pulls, res.batches, res.truncated) == (4, 4, True)


# ----------------------------------------------------------------- the runner
def play_array_protocol(env: gym.Env, agent: ScriptedAgent, seed: int) -> tuple:
    """The runner loop before step_one: next_pulls + step_sparse + update."""
    base = env.unwrapped
    base.reset(seed=seed)
    agent.reset(base.problem, seed=seed)
    while True:
        if base.phase == 1:
            *_, info = base.answer_sparse(agent.recommend())
            break
        arms, reps = agent.next_pulls()
        obs, _, term, trunc, info = base.step_sparse(arms, reps)
        agent.update(arms, reps, obs["counts"], obs["means"])
        if term or trunc:
            break
    return outcome(base, info)


def play_dense(env: gym.Env, agent: ScriptedAgent, seed: int) -> tuple:
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    while True:
        action = agent.act(obs)
        obs, reward, term, trunc, info = env.step(action)
        agent.observe(action, obs, reward, term, trunc, info)
        if term or trunc:
            return outcome(env.unwrapped, info)


def outcome(base, info) -> tuple:
    return (
        info["recommendation"].tolist(),
        info["pulls"],
        info["batches"],
        info["aggregate_regret"],
        base._counts.tolist(),
        base._sums.tolist(),
    )


def run(env: gym.Env, agent: ScriptedAgent, seed: int) -> tuple:
    res = agents.run_episode(env, agent, seed=seed, max_steps=10**6)
    out = outcome(
        env.unwrapped,
        {
            "recommendation": res.recommendation,
            "pulls": res.pulls,
            "batches": res.batches,
            "aggregate_regret": res.aggregate_regret,
        },
    )
    return out


def k_for(name: str) -> int:
    """2, or 1 for the best-arm-only agents (their ``k_values`` say so)."""
    return 1 if agents.agent_class(name).k_values == frozenset({1}) else 2


# The exact Bayes-optimal DP refuses families with more than 40M posterior states (e.g. 4
# arms: budget <= 45): it plays a small instance here. Bayesian TTTS never stops by itself
# in fixed confidence and costs up to 100 posterior samples a pull: fewer batches.
OVERRIDES = {"bayes_dp": {"n_arms": 3, "budget": 12}, "bayes_ttts": {"max_batches": 40}}


@pytest.mark.parametrize("name", agents.available())
@pytest.mark.parametrize("batch", [(1, 1), (3, 2), (None, 2)])
def test_run_episode_equals_the_array_protocol_and_the_dense_path(name, batch) -> None:
    b, r = batch
    cls = agents.agent_class(name)
    setting = "fixed_confidence" if "fixed_confidence" in cls.settings else "fixed_budget"
    kw = {
        "n_arms": 7,
        "k": k_for(name),
        "batch_size": b,
        "repeat_limit": r,
        "setting": setting,
        # paired: draws do not depend on the order of arms within a batch (step_sparse
        # draws an unpaired batch in the order of its arms, step in index order)
        "paired": b != 1,
    }
    kw.update({"max_batches": 300} if setting == "fixed_confidence" else {"budget": 90})
    kw.update(OVERRIDES.get(name, {}))
    env = make_env(**kw)
    for seed in (0, 1):
        fast = run(env, agents.make(name), seed)
        assert play_array_protocol(env, agents.make(name), seed) == fast
        assert play_dense(env, agents.make(name), seed) == fast


def _compiled() -> list[str]:
    return [n for n in agents.available() if getattr(agents.agent_class(n), "kernel", None)]


@pytest.mark.parametrize("name", _compiled())  # (one test an agent: its kernel's xdist group)
def test_run_episode_plays_compiled_agents_off_the_step_functions(monkeypatch, name) -> None:
    """Compiled agents skip the env's step functions; ``fast=False`` steps one pull at a time.

    With ``batch_size=1`` the reference path makes one ``step_one`` (a one-pull request)
    or one one-arm ``step_sparse`` (a scheduled batch) per pull, plus the empty stop
    step; the fast path makes none and plays the same episode.
    """
    calls = {"one": 0, "sparse": 0}
    real_one = bandit_envs.top_k_batch.TopKBatchEnv.step_one
    real_sparse = bandit_envs.top_k_batch.TopKBatchEnv.step_sparse

    def one(self, arm):
        calls["one"] += 1
        return real_one(self, arm)

    def sparse(self, arms, reps):
        calls["sparse"] += 1
        assert len(arms) <= 1
        return real_sparse(self, arms, reps)

    monkeypatch.setattr(bandit_envs.top_k_batch.TopKBatchEnv, "step_one", one)
    monkeypatch.setattr(bandit_envs.top_k_batch.TopKBatchEnv, "step_sparse", sparse)
    assert "uniform" in _compiled()
    cls = agents.agent_class(name)
    setting = "fixed_confidence" if "fixed_confidence" in cls.settings else "fixed_budget"
    k = 1 if cls.k_values == frozenset({1}) else 2
    kw = {"max_batches": 3000} if setting == "fixed_confidence" else {"budget": 200}
    # (the Bernoulli-only Bayesian agents play a Bernoulli instance)
    instance = "jiang2017-1-sparse" if cls.distributions is None else "zhou2014-two-level"
    env = make_env(instance=instance, n_arms=10, k=k, setting=setting, batch_size=1, **kw)
    params = {"rounds": 30} if name == "uniform" and setting == "fixed_confidence" else {}
    calls.update(one=0, sparse=0)
    fast = agents.run_episode(env, agents.make(name, **params), seed=0)
    assert calls == {"one": 0, "sparse": 0}, name
    ref = agents.run_episode(env, agents.make(name, **params), seed=0, fast=False)
    stopped = ref.pulls < 200 if setting == "fixed_budget" else ref.terminated
    assert calls["one"] + calls["sparse"] == ref.pulls + stopped, name  # + the stop step
    assert (fast.pulls, fast.recommendation.tolist()) == (
        ref.pulls,
        ref.recommendation.tolist(),
    )


class _EachOnce(ScriptedAgent):
    """Pulls ``arms`` once each (by ``_each_once`` or by ``Pull.each``), then arm 0 twice."""

    name = "each_once"

    def __init__(self, arms, serial, seed=None):
        super().__init__(seed=seed)
        self.arms, self.serial = arms, serial

    def _run(self):
        for arms in self.arms:
            if self.serial:
                yield from self._each_once(arms)
            else:
                yield Pull.each(arms, 1)
        yield Pull.each([0], 2)
        return np.arange(self.problem.k)


@pytest.mark.parametrize(
    "rounds",
    [
        [range(6)],
        [[5, 1, 3, 0]],  # any order: RoundRobin keeps the request's order among ties
        [range(6), [4, 2, 0, 1]],  # equal counts again
        [[1, 2], [1, 3, 4]],  # unequal counts: a Pull
        [[3]],  # one arm
    ],
)
@pytest.mark.parametrize(
    "kw",
    [
        {"batch_size": 1, "budget": 30},
        {"batch_size": 1, "budget": 8},
        {"batch_size": 2, "max_batches": 3, "budget": 6},  # max_batches can end it first
        {"batch_size": 2, "budget": 30},
    ],
)
def test_each_once_equals_pull_each(rounds, kw) -> None:
    env = make_env(setting="fixed_budget", **kw)
    for seed in range(4):
        a, b = _EachOnce(rounds, True), _EachOnce(rounds, False)
        assert run(env, a, seed) == run(env, b, seed)
        assert a.rng.random() == b.rng.random()


def test_each_once_rejects_bad_arms_like_pull_each() -> None:
    env = make_env(setting="fixed_budget", budget=30, batch_size=1)
    for arms in ([0, 9], [1, 1, 2]):
        with pytest.raises(RuntimeError, match="agent 'each_once' requested"):
            agents.run_episode(env, _EachOnce([arms], True), seed=0)


# ------------------------------------------------- agents' direct references
class _LiteralCLUCBPAC(CLUCBPAC):
    """CLUCB-PAC as the paper's loop, in plain Python, recomputed from scratch every step.

    Chen et al. (2014) Alg. 1 with the PAC stop, literally: ``M`` = top k of the means,
    adjusted weights, ``M~`` = top k of them, stop when the gain is at most ``k
    epsilon``, else pull the arm of ``M (+) M~`` with the largest radius. Its random
    choices are spelled out as the compiled agent makes them (its docstring): a tie key
    per arm (drawn in arm order after the initial round, redrawn after each pull) orders
    equal means and equal weights, and equal radii go to a uniform pick (``floor(m u)``)
    among the tied arms listed ``M`` side ascending, then the other side descending. So
    the two must play exactly the same episode on every instance.
    """

    kernel = None
    episode_kernel = None

    def _run(self):
        p = self.problem
        n, k = p.n_arms, p.k
        eps_sum = k * self.epsilon
        counts, means, rng = self.counts, self.means, self.rng
        self.literal_steps = 0
        yield Pull.each(np.arange(n), 1)
        tb = np.array([rng.random() for _ in range(n)])
        while True:
            t = self.total_pulls
            m = np.zeros(n, dtype=bool)
            m[np.lexsort((tb, means))[n - k :]] = True
            scale = p.sigma * math.sqrt(2.0 * math.log(4.0 * n * float(t) ** 3 / self.delta))
            rad = scale / np.sqrt(counts)
            w = np.where(m, means - rad, means + rad)
            mt = np.zeros(n, dtype=bool)
            mt[np.lexsort((tb, w))[n - k :]] = True
            gain = w[mt].sum() - w[m].sum()
            if gain <= eps_sum:
                return np.flatnonzero(m)
            diff = np.flatnonzero(m ^ mt)
            fewest = counts[diff].min()
            out = [i for i in diff if m[i] and counts[i] == fewest]
            inn = [i for i in diff if not m[i] and counts[i] == fewest]
            out.sort(key=lambda i: (means[i], tb[i]))
            inn.sort(key=lambda i: (means[i], tb[i]), reverse=True)
            tied = out + inn
            u = min(int(rng.random() * len(tied)), len(tied) - 1) if len(tied) > 1 else 0
            arm = int(tied[u])
            self.literal_steps += 1
            yield PullOne(arm)
            tb[arm] = rng.random()


@pytest.mark.parametrize(
    "instance, n, k, eps",
    [
        ("jiang2017-1-sparse", 30, 3, 0.0),
        ("chen2017-twogroup", 40, 10, 0.01),  # Bernoulli: ties in means and bounds
        ("uniform-random", 25, 5, 0.05),
        ("chen2017-twogroup", 140, 70, 0.01),  # many ties: equal means, counts, radii
        ("uniform-random", 120, 30, 0.0),
    ],
)
def test_clucb_pac_equals_its_literal_loop(instance, n, k, eps) -> None:
    for setting, extra in (
        ("fixed_confidence", {"max_batches": 4000}),
        ("fixed_budget", {"budget": 9 * n}),
    ):
        batch = {"batch_size": 1} if n % 2 else {"batch_size": None, "repeat_limit": 2}
        env = make_env(instance=instance, n_arms=n, k=k, setting=setting, **batch, **extra)
        for seed in range(3):
            a, b = CLUCBPAC(epsilon=eps), _LiteralCLUCBPAC(epsilon=eps)
            assert run(env, a, seed) == run(env, b, seed)
            assert a.steps == b.literal_steps and a.rng.random() == b.rng.random()
