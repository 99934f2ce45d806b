"""The compiled fast path plays exactly the episode of the Gymnasium step path.

For every registered compiled agent and a grid of n, k, (b, r), both settings, each
reward distribution, paired and not: ``agents.run_episode`` (fast path,
:func:`agents.engine.drive`) and the reference path (``fast=False``: the agent's
act/observe through ``env.step``, dense actions) produce the same pulls in the same
batches, the same answer, the same terminal ``info`` and the same total reward. The
step-by-step trace of the reference path is also compared with the fast path's final
counts and the environment's state.
"""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import agents
import agents.engine.serving
import bandit_envs
from agents.base import ScriptedAgent

#: (n, k, batch_size, repeat_limit, distribution, paired): a covering grid of the factors.
GRID: list[tuple[int, int, int | None, int | None, str, bool]] = [
    (6, 1, 1, 1, "bernoulli", False),
    (6, 2, 1, 1, "bernoulli", True),
    (9, 3, 4, 2, "bernoulli", False),
    (9, 2, 4, 2, "gaussian", True),
    (7, 1, 3, 3, "gaussian", False),
    (8, 3, None, 3, "bernoulli", True),
    (8, 2, None, 2, "categorical", False),
    (5, 2, 1, 1, "categorical", True),
    (12, 4, 16, 4, "bernoulli", False),
    (10, 1, 64, 64, "gaussian", False),
]


def compiled_agents() -> list[str]:
    names = []
    for name in agents.available():
        cls = agents.agent_class(name)
        if issubclass(cls, ScriptedAgent) and cls.kernel is not None:
            names.append(name)
    return names


def _instance(n: int, k: int, dist: str, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    if dist == "categorical":
        support = np.array([0.0, 0.5, 1.0])
        probs = rng.dirichlet(np.ones(3), size=n)
        return bandit_envs.instances.from_categorical(probs, support, k=k)
    means = np.sort(rng.uniform(0.2, 0.8, size=n))[::-1].copy()
    means[k:] -= 0.1  # a gap, so that fixed-confidence agents stop in a few thousand pulls
    sigma = 0.5 if dist == "gaussian" else None
    return bandit_envs.instances.from_means(means, k=k, distribution=dist, sigma=sigma)


def _make_env(
    setting: str, n: int, k: int, b: int | None, r: int | None, dist: str, paired: bool
) -> gym.Env:
    kwargs: dict[str, Any] = dict(
        instance=_instance(n, k, dist, seed=n * 31 + k),
        batch_size=b,
        repeat_limit=r,
        setting=setting,
        answer="agent",
        paired=paired,
    )
    if setting == "fixed_budget":
        kwargs["budget"] = 25 * n
    else:
        kwargs["max_batches"] = 1000
        kwargs["cost_per_batch"] = 0.001
    return gym.make("TopK-Batch-v0", **kwargs)


def _params(name: str, setting: str) -> dict[str, Any]:
    if name == "uniform" and setting == "fixed_confidence":
        return {"rounds": 40}
    if name == "median_elimination":
        # rounds of 10, 23 and 49 pulls per arm, so that episodes end within max_batches
        # (the defaults ask 26k pulls per arm in round 1); every round still runs
        return {"epsilon": 4.0, "delta": 0.5}
    if name == "bayes_ttts":
        # fewer resamples once the posterior has concentrated (a long fixed-confidence
        # episode), so the capped fallback (the least-pulled leader) is played too
        return {"max_resamples": 10}
    return {}


def _result_dict(res: agents.EpisodeResult) -> dict[str, Any]:
    row = res.as_row()
    row.pop("wall_time")
    return row


def _cases() -> list[tuple[str, str, tuple]]:
    out = []
    for name in compiled_agents():
        cls = agents.agent_class(name)
        for setting, point in itertools.product(("fixed_budget", "fixed_confidence"), GRID):
            if setting not in cls.settings:
                continue
            k, dist = point[1], point[4]
            if cls.k_values is not None and k not in cls.k_values:
                continue
            if cls.distributions is not None and dist not in cls.distributions:
                continue
            out.append((name, setting, point))
    return out


@pytest.mark.parametrize(("name", "setting", "point"), _cases(), ids=lambda v: str(v))
def test_fast_path_plays_the_reference_episode(name: str, setting: str, point: tuple) -> None:
    n, k, b, r, dist, paired = point
    env = _make_env(setting, n, k, b, r, dist, paired)
    for seed in (point[0],):  # one seed per grid point (seeds differ across points)
        fast_agent = agents.make(name, **_params(name, setting))
        ref_agent = agents.make(name, **_params(name, setting))
        assert agents.fast_path_applies(env, fast_agent)
        fast = agents.run_episode(env, fast_agent, seed=seed)
        fast_counts = env.unwrapped._counts.copy()
        fast_sums = env.unwrapped._sums.copy()
        ref = agents.run_episode(env, ref_agent, seed=seed, fast=False, max_steps=100_000)
        assert _result_dict(fast) == _result_dict(ref)
        assert np.array_equal(fast_counts, env.unwrapped._counts)
        assert np.array_equal(fast_sums, env.unwrapped._sums)
        assert np.array_equal(fast_agent.counts, ref_agent.counts)
        assert fast_agent.total_pulls == ref_agent.total_pulls == fast.pulls


@pytest.mark.parametrize("name", ["median_elimination", "exp_gap"])
@pytest.mark.parametrize(("dist", "paired"), [("bernoulli", False), ("gaussian", True)])
def test_fast_path_plays_whole_pac_elimination_episodes(name: str, dist: str, paired: bool) -> None:
    """Whole episodes of the PAC eliminations (rounds of 1e5 pulls per arm: one batch each)."""
    inst = _instance(5, 1, dist, seed=3)
    env = gym.make(
        "TopK-Batch-v0",
        instance=inst,
        batch_size=None,
        repeat_limit=10**9,
        setting="fixed_confidence",
        max_batches=100,
        answer="agent",
        paired=paired,
    )
    for seed in (0, 1):
        fast = agents.run_episode(env, agents.make(name), seed=seed)
        ref = agents.run_episode(env, agents.make(name), seed=seed, fast=False)
        assert fast.terminated and _result_dict(fast) == _result_dict(ref)


def _assert_fast_is_reference(env: gym.Env, name: str, setting: str, seed: int) -> None:
    """The fast path's episode is the reference path's: result, reward sums, counts, the
    registers (the fast path alone counts its steps) and the agent's next draw."""
    fast_agent = agents.make(name, **_params(name, setting))
    ref_agent = agents.make(name, **_params(name, setting))
    fast = agents.run_episode(env, fast_agent, seed=seed)
    fast_sums = env.unwrapped._sums.copy()
    ref = agents.run_episode(env, ref_agent, seed=seed, fast=False, max_steps=100_000)
    assert _result_dict(fast) == _result_dict(ref)
    assert np.array_equal(fast_sums, env.unwrapped._sums)
    assert np.array_equal(fast_agent.counts, ref_agent.counts)
    steps = agents.engine.STEPS
    assert np.array_equal(np.delete(fast_agent.ctx.iv, steps), np.delete(ref_agent.ctx.iv, steps))
    assert fast_agent.ctx.rng.random() == ref_agent.ctx.rng.random()


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("exp_gap", "fixed_confidence"),
        ("median_elimination", "fixed_confidence"),
        ("lucb", "fixed_confidence"),
        ("sequential_halving", "fixed_budget"),
        ("uniform", "fixed_budget"),
    ],
)
@pytest.mark.parametrize("r", [None, 1])
def test_one_pull_batches_of_pull_requests(name: str, setting: str, r: int | None) -> None:
    """``batch_size=1``: the fused one-pull loop of ``drive`` plays the reference episode.

    Pull requests at one pull per batch (``agents.engine.serving._one_pull_request``), with and
    without a repeat limit, ended by the request, the budget or ``max_batches`` mid-request.
    """
    for dist, paired in (("bernoulli", False), ("gaussian", True)):
        env = _make_env(setting, 5, 1, 1, r, dist, paired)
        for seed in (0, 1):
            _assert_fast_is_reference(env, name, setting, seed)


@pytest.mark.parametrize(
    ("name", "setting"),
    [
        ("batch_racing", "fixed_budget"),
        ("batch_racing", "fixed_confidence"),
        ("halving", "fixed_budget"),
        ("batch_sar", "fixed_budget"),
        ("sar", "fixed_budget"),
        ("uniform", "fixed_budget"),
        ("lucb", "fixed_budget"),
    ],
)
@pytest.mark.parametrize("r", [64, 2, 1])
def test_whole_batch_requests(name: str, setting: str, r: int) -> None:
    """Pull requests that are exactly one batch (``agents.engine.serving._whole_batch``) at b = 64.

    With 150 arms, BatchRacing, Halving and BatchSAR draw their batches themselves and
    ask for exactly those (one pull each, or two at the end of a sweep); SAR and uniform
    ask for pulls of every survivor, LUCB for two arms in either order (served whole with
    independent rewards too, drawn in arm order as the general path sorts them); the
    budget (25n, not a multiple of 64) cuts the last batch. With 8 arms, requests of more than ``r``
    pulls of an arm fit in one batch of 64 but must be split. Served directly or through
    the scheduler, the episode is the reference path's, registers and agent draws included.
    """
    for (n, k), dist, paired in (
        ((150, 5), "bernoulli", False),
        ((150, 5), "gaussian", True),
        ((8, 2), "bernoulli", False),
    ):
        env = _make_env(setting, n, k, 64, r, dist, paired)
        for seed in (0, 1):
            _assert_fast_is_reference(env, name, setting, seed)


def test_distinct_check_of_whole_batches() -> None:
    """``agents.engine.serving._distinct`` (paired whole batches in any order) finds repeated arms.

    A request with a repeated arm must take the general path, whose ``accept_request``
    raises; the scratch bitmap is left clear either way.
    """
    bits = np.zeros(3, dtype=np.uint64)
    cases = [
        ([5, 130, 64, 0, 63], True),
        ([5, 130, 64, 130], False),
        ([7, 7], False),
        ([0, 64, 128, 1, 65, 0], False),
        ([191], True),
    ]
    for arms, distinct in cases:
        a = np.array(arms, dtype=np.int64)
        assert agents.engine.serving._distinct(a, a.shape[0], bits) is distinct
        assert not bits.any()


def _dense_episode(env: gym.Env, agent: ScriptedAgent, seed: int) -> tuple[list, dict]:
    """The act/observe path through ``env.step`` (dense actions), with its batches."""
    obs, _ = env.reset(seed=seed)
    agent.reset(env.unwrapped.problem, seed=seed)
    batches = []
    while True:
        action = agent.act(obs)
        if int(obs.get("phase", 0)) == 0:
            batches.append(action.copy())
        obs, reward, terminated, truncated, info = env.step(action)
        agent.observe(action, obs, float(reward), terminated, truncated, info)
        if terminated or truncated:
            return batches, info


@pytest.mark.parametrize("name", compiled_agents())
def test_act_observe_through_env_step_matches_fast_path(name: str) -> None:
    """The dense Gymnasium path (act/observe, ``env.step``) against the fast path."""
    for setting in ("fixed_budget", "fixed_confidence"):
        if setting not in agents.agent_class(name).settings:
            continue
        k = 1 if agents.agent_class(name).k_values == frozenset({1}) else 2
        env = _make_env(setting, 8, k, 4, 2, "bernoulli", True)
        batches, info = _dense_episode(env, agents.make(name, **_params(name, setting)), seed=5)
        fast = agents.run_episode(env, agents.make(name, **_params(name, setting)), seed=5)
        assert fast.batches == info["batches"] == sum(1 for a in batches if a.any())
        assert fast.pulls == info["pulls"] == int(sum(a.sum() for a in batches))
        assert fast.recommendation.tolist() == info["recommendation"].tolist()
        assert fast.aggregate_regret == info["aggregate_regret"]


def test_fast_path_through_wrappers_and_topk_v0() -> None:
    """``gym.make`` wrappers are skipped; ``TopK-v0`` takes the fast path too."""
    env = gym.make("TopK-v0", instance="zhou2014-two-level", n_arms=20, k=3, budget=400)
    agent = agents.make("uniform")
    assert agents.fast_path_applies(env, agent)
    res = agents.run_episode(env, agent, seed=2)
    assert res.pulls == 400 and res.batches == 400 and res.terminated
    batch_env = gym.make(
        "TopK-Batch-v0", instance="zhou2014-two-level", n_arms=20, k=3, budget=400, batch_size=1
    )
    other = agents.run_episode(batch_env, agents.make("uniform"), seed=2)
    assert res.recommendation.tolist() == other.recommendation.tolist()
    assert res.aggregate_regret == other.aggregate_regret


#: ``TopK-v0`` points (n, k, distribution, paired).
ONE_PULL_GRID = [
    (6, 1, "bernoulli", False),
    (6, 2, "bernoulli", True),
    (9, 2, "gaussian", True),
    (7, 1, "gaussian", False),
    (8, 2, "categorical", False),
]


def _one_pull_env(setting: str, n: int, k: int, dist: str, paired: bool) -> gym.Env:
    kwargs: dict[str, Any] = dict(
        instance=_instance(n, k, dist, seed=n * 31 + k), setting=setting, paired=paired
    )
    if setting == "fixed_budget":
        kwargs["budget"] = 25 * n
    else:
        kwargs["max_batches"] = 1000
        kwargs["cost_per_batch"] = 0.001
    return gym.make("TopK-v0", **kwargs)


def _one_pull_cases() -> list[tuple[str, str, tuple]]:
    out = []
    for name in compiled_agents():
        cls = agents.agent_class(name)
        for setting, point in itertools.product(
            ("fixed_budget", "fixed_confidence"), ONE_PULL_GRID
        ):
            if setting not in cls.settings:
                continue
            if cls.k_values is not None and point[1] not in cls.k_values:
                continue
            if cls.distributions is not None and point[2] not in cls.distributions:
                continue
            out.append((name, setting, point))
    return out


@pytest.mark.parametrize(("name", "setting", "point"), _one_pull_cases(), ids=lambda v: str(v))
def test_act_observe_on_topk_v0_plays_the_fast_path_episode(
    name: str, setting: str, point: tuple
) -> None:
    """On ``TopK-v0`` act/observe through ``env.step`` (an arm index per step, ``n_arms``
    to stop) plays the fast path's episode: result, reward sums, counts, registers and the
    agent's next draw."""
    n, k, dist, paired = point
    env = _one_pull_env(setting, n, k, dist, paired)
    assert env.unwrapped.problem.action_format == "arm"
    for seed in (n, n + 1):
        _assert_fast_is_reference(env, name, setting, seed)


class _PythonSAR(ScriptedAgent):
    """Successive rejects for the best arm as a plain Python generator (no kernel)."""

    name = "python_sar"
    settings = frozenset({"fixed_budget"})

    def _run(self):
        from agents.base import Pull, PullOne

        n, budget = self.problem.n_arms, self.problem.budget
        alive = list(range(n))
        log_bar = 0.5 + sum(1.0 / i for i in range(2, n + 1))
        done = 0
        for phase in range(1, n):
            target = int(np.ceil((budget - n) / (log_bar * (n + 1 - phase))))
            if target > done:
                yield Pull.each(alive, target - done)
                done = target
            worst = min(alive, key=lambda a: (self.means[a], -a))
            alive.remove(worst)
            if phase == n - 2:  # one more single pull of the leader
                yield PullOne(alive[0])
        return sorted(np.argsort(-self.means, kind="stable")[: self.problem.k].tolist())


@pytest.mark.parametrize("paired", [False, True])
def test_a_python_agent_plays_both_ids_through_act_observe(paired: bool) -> None:
    """A third-party Python agent (``_run`` generator, no kernel) plays ``TopK-v0`` and
    ``TopK-Batch-v0`` through act/observe, and both equal the batch id's sparse path on
    the same seed (one pull per step: the same pulls, rewards and empirical answer)."""
    inst = _instance(6, 1, "bernoulli", seed=11)
    one = gym.make("TopK-v0", instance=inst, budget=60, paired=paired)
    batch = gym.make(
        "TopK-Batch-v0", instance=inst, budget=60, batch_size=1, repeat_limit=1, paired=paired
    )
    for seed in (0, 1, 2):
        sparse = agents.run_episode(batch, _PythonSAR(), seed=seed)
        sparse_counts = batch.unwrapped._counts.copy()
        dense = agents.run_episode(batch, _PythonSAR(), seed=seed, fast=False)
        assert not agents.fast_path_applies(one, _PythonSAR())
        arm = agents.run_episode(one, _PythonSAR(), seed=seed)
        assert _result_dict(sparse) == _result_dict(dense) == _result_dict(arm)
        assert np.array_equal(sparse_counts, one.unwrapped._counts)
