"""API conformance, seeding, termination and scoring of TopK-v0 and TopK-Batch-v0."""

from __future__ import annotations

import pickle
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bandit_envs
from bandit_envs.scoring import score

IDS = ["TopK-v0", "TopK-Batch-v0"]

# Representative argument combinations: both settings, both objectives, both answer
# modes, batch and non-batch, each distribution.
COMMON = [
    {},
    {"setting": "fixed_confidence", "max_batches": 40},
    {"objective": "misidentification", "epsilon": 0.05},
    {"instance": "jiang2017-1-sparse", "n_arms": 8, "k": 2},
    {
        "instance": "zhou2014-two-level",
        "n_arms": 12,
        "k": 3,
        "distribution": "gaussian",
        "sigma": 0.3,
    },
    {"instance": [0.1, 0.5, 0.5, 0.9], "k": 2, "shuffle": False},
    {"paired": True},
    {"instance": "shahrampour2017-setup5", "n_arms": 10, "k": 2},
]
BATCH_ONLY = [
    {"answer": "agent"},
    {"answer": "agent", "setting": "fixed_confidence", "max_batches": 30, "cost_per_batch": 0.01},
    {"batch_size": None, "budget": 100},
    {"batch_size": 8, "repeat_limit": 2, "max_batches": 20},
    {"invalid_action": "project", "batch_size": 4, "repeat_limit": 2},
]


def categorical_instance() -> bandit_envs.Instance:
    probs = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8]])
    return bandit_envs.instances.from_categorical(probs, [0.0, 0.5, 1.0], k=2)


def cases() -> list[tuple[str, dict]]:
    out = [(env_id, kw) for env_id in IDS for kw in COMMON]
    out += [("TopK-Batch-v0", kw) for kw in BATCH_ONLY]
    out += [(env_id, {"instance": categorical_instance()}) for env_id in IDS]
    return out


def case_id(case: tuple[str, dict]) -> str:
    env_id, kw = case
    return (
        env_id
        + "-"
        + ",".join(f"{k}={v if not hasattr(v, 'name') else v.name}" for k, v in kw.items())
    )


CASES = cases()


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[case_id(c) for c in CASES])
def test_gymnasium_check_env(env_id: str, kwargs: dict) -> None:
    env = gym.make(env_id, **kwargs).unwrapped
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*infinity.*")
        check_env(env, skip_render_check=True)


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[case_id(c) for c in CASES])
def test_sb3_check_env(env_id: str, kwargs: dict) -> None:
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make(env_id, **kwargs).unwrapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3's checker reports problems as warnings
        warnings.filterwarnings("ignore", message=".*infinity.*")
        sb3_checker.check_env(env, warn=True)


def play(env: gym.Env, seed: int, steps_rng_seed: int = 0) -> list:
    """Random rollout; returns everything observed."""
    env.action_space.seed(steps_rng_seed)
    obs, _ = env.reset(seed=seed)
    trace = [obs]
    while True:
        obs, reward, term, trunc, info = env.step(env.action_space.sample())
        trace.append((obs, reward, term, trunc, {k: v for k, v in info.items()}))
        if term or trunc:
            return trace


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[case_id(c) for c in CASES])
def test_seed_determinism(env_id: str, kwargs: dict) -> None:
    t1 = play(gym.make(env_id, **kwargs), seed=7)
    t2 = play(gym.make(env_id, **kwargs), seed=7)
    assert same(t1, t2)


def test_different_seeds_differ() -> None:
    t1 = play(gym.make("TopK-v0"), seed=1)
    t2 = play(gym.make("TopK-v0"), seed=2)
    assert not same(t1, t2)


@pytest.mark.parametrize("env_id", IDS)
def test_pickle_and_spec(env_id: str) -> None:
    env = gym.make(env_id, n_arms=6, k=2)
    env.reset(seed=0)
    clone = pickle.loads(pickle.dumps(env))
    assert same(play(clone, 3), play(env, 3))
    assert gym.spec(env_id).to_json()


@pytest.mark.parametrize("env_id", IDS)
def test_make_without_arguments(env_id: str) -> None:
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    assert obs["counts"].shape == (10,) and info == {}
    p = env.unwrapped.problem
    assert (p.n_arms, p.k, p.budget, p.setting) == (10, 3, 200, "fixed_budget")


def test_namespaced_id_form() -> None:
    env = gym.make("bandit_envs:TopK-Batch-v0")
    assert isinstance(env.unwrapped, bandit_envs.TopKBatchEnv)


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[case_id(c) for c in CASES])
def test_terminal_reward_is_minus_score(env_id: str, kwargs: dict) -> None:
    env = gym.make(env_id, **kwargs)
    for seed in range(3):
        trace = play(env, seed)
        obs, reward, term, trunc, info = trace[-1]
        s = score(info["means"], info["recommendation"], env.unwrapped.problem.k)
        assert info["aggregate_regret"] == s.aggregate_regret
        assert info["misidentified"] == s.misidentified
        assert info["precision"] == s.precision
        assert info["pulls"] == int(obs["counts"].sum())
        if "epsilon" in kwargs:
            assert info["epsilon_correct"] == (s.aggregate_regret <= kwargs["epsilon"])
        total = sum(step[1] for step in trace[1:])
        p = env.unwrapped.problem
        cost = p.cost_per_batch * info["batches"] if p.setting == "fixed_confidence" else 0.0
        if trunc:
            expected = -cost
        elif p.objective == "aggregate_regret":
            expected = -s.aggregate_regret - cost
        else:
            expected = -float(s.misidentified) - cost
        assert total == pytest.approx(expected, abs=1e-12)
        assert isinstance(trace[-1][1], float) and type(term) is bool and type(trunc) is bool
        assert set(info) >= {
            "recommendation",
            "top_k",
            "means",
            "aggregate_regret",
            "misidentified",
            "precision",
            "pulls",
            "batches",
        }


def test_fixed_budget_terminates_exactly_at_budget() -> None:
    env = gym.make("TopK-v0", n_arms=5, k=2, budget=23)
    env.reset(seed=0)
    for t in range(23):
        obs, r, term, trunc, info = env.step(t % 5)
        assert term == (t == 22) and not trunc
    assert info["pulls"] == 23 and obs["remaining"][0] == 0.0


def test_batch_budget_in_batches() -> None:
    env = gym.make("TopK-Batch-v0", n_arms=6, k=2, batch_size=4, max_batches=5)
    assert env.unwrapped.problem.budget == 20
    env.reset(seed=0)
    for t in range(5):
        obs, r, term, trunc, info = env.step(np.array([1, 1, 0, 0, 1, 0]))
        assert term == (t == 4)
    assert (info["batches"], info["pulls"]) == (5, 15)


def test_fixed_confidence_stop_and_truncation() -> None:
    env = gym.make("TopK-v0", n_arms=4, k=1, setting="fixed_confidence", max_batches=6)
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(4)  # stop
    assert term and not trunc and info["pulls"] == 0
    env.reset(seed=0)
    for t in range(6):
        obs, r, term, trunc, info = env.step(t % 4)
    assert trunc and not term and r == 0.0 and "aggregate_regret" in info


def test_truncation_in_answer_mode_skips_answer_step() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=4,
        k=1,
        setting="fixed_confidence",
        max_batches=2,
        answer="agent",
        batch_size=4,
    )
    env.reset(seed=0)
    env.step(np.ones(4, dtype=int))
    obs, r, term, trunc, info = env.step(np.ones(4, dtype=int))
    assert trunc and not term and int(obs["phase"]) == 0


def test_answer_phase_flow() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=5,
        k=2,
        instance=[0.9, 0.8, 0.3, 0.2, 0.1],
        shuffle=False,
        batch_size=5,
        budget=10,
        answer="agent",
    )
    obs, _ = env.reset(seed=0)
    assert int(obs["phase"]) == 0
    env.step(np.ones(5, dtype=int))
    obs, r, term, trunc, info = env.step(np.zeros(5, dtype=int))  # stop early
    assert int(obs["phase"]) == 1 and not term and r == 0.0
    obs, r, term, trunc, info = env.step(np.array([0, 3, 0, 0, 1]))  # marks arms 1 and 4
    assert term and list(info["recommendation"]) == [1, 4]
    assert r == pytest.approx(-(0.9 - 0.1) / 2)
    assert info["pulls"] == 5 and info["batches"] == 1


def test_step_after_end_raises() -> None:
    env = gym.make("TopK-v0", n_arms=3, k=1, budget=3).unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    for a in range(3):
        env.step(a)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_empirical_answer_never_prefers_unpulled_arms() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=6,
        k=2,
        instance=[0.0] * 6,
        shuffle=False,
        batch_size=None,
        budget=6,
        objective="misidentification",
    )
    for seed in range(20):
        env.reset(seed=seed)
        *_, info = env.step(np.array([2, 2, 2, 0, 0, 0]))
        assert set(info["recommendation"]) <= {0, 1, 2}


def test_empirical_answer_breaks_ties_at_random() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=4,
        k=1,
        instance=[0.0, 0.0, 0.0, 0.0],
        shuffle=False,
        batch_size=None,
        budget=4,
    )
    picks = set()
    for seed in range(40):
        env.reset(seed=seed)
        *_, info = env.step(np.ones(4, dtype=int))
        picks.add(int(info["recommendation"][0]))
    assert picks == {0, 1, 2, 3}  # P(missing one) <= 4 (3/4)^40 < 1e-4


def test_shuffle_permutes_means_and_keeps_the_multiset() -> None:
    means = np.linspace(0.1, 0.9, 9)
    env = gym.make("TopK-v0", n_arms=9, k=2, instance=means, budget=9)
    orders = set()
    for seed in range(5):
        env.reset(seed=seed)
        for a in range(9):
            *_, info = env.step(a)
        assert np.allclose(np.sort(info["means"]), means)
        orders.add(tuple(np.argsort(info["means"])))
    assert len(orders) > 1


def test_random_instance_draws_from_episode_generator() -> None:
    env = gym.make("TopK-v0", n_arms=5, k=2, budget=5)
    means = []
    for seed in (0, 0, 1):
        env.reset(seed=seed)
        for a in range(5):
            *_, info = env.step(a)
        means.append(info["means"])
    assert np.array_equal(means[0], means[1]) and not np.array_equal(means[0], means[2])


def test_render_ansi() -> None:
    env = gym.make("TopK-v0", n_arms=3, k=1, render_mode="ansi")
    env.reset(seed=0)
    env.step(1)
    text = env.render()
    assert "arm    1: pulls=     1" in text


def test_reward_states_have_one_numba_type_whatever_the_rewards() -> None:
    """Every agent's compiled fast path takes the reward state as an argument: one numba
    type for Bernoulli, Gaussian and categorical rewards, paired or not, is one compiled
    overload of each kernel (a categorical state holding the instance's read-only arrays
    was another type, and every kernel compiled twice)."""
    from numba import typeof

    types = set()
    for instance in ("uniform-random", "jiang2017-1-sparse", categorical_instance()):
        for paired in (False, True):
            env = gym.make("TopK-Batch-v0", instance=instance, n_arms=4, k=2, paired=paired)
            env.reset(seed=0)
            types.add(typeof(env.unwrapped._rewards.kernel_state()))
    assert len(types) == 1, types
