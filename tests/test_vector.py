"""The native vector envs: API, exact agreement with SyncVectorEnv, equality in law, errors.

Statistical checks are sound tests at level 1e-3 (or smaller) with fixed seeds:
Hoeffding bounds for means of bounded quantities (two-sample for "vector vs single
env", one-sample against an exact value), a union bound over the compared quantities.
Exact checks run the vector env next to ``gym.make_vec(..., "sync")`` on instances whose
rewards are deterministic (means 0 or 1, one-hot categorical arms, ``shuffle=False``),
so every observation, reward, flag and ``info`` entry must be identical.
"""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

import bandit_envs
from bandit_envs.scoring import score, top_k, true_top_k
from bandit_envs.top_k_batch import project_answer, project_pulls
from bandit_envs.vector import (
    TopKBatchVectorEnv,
    TopKVectorEnv,
    project_answer_rows,
    project_pulls_rows,
    score_rows,
    top_k_rows,
)

NEXT, SAME = AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP
ALPHA = 1e-3


def native(env_id: str, n: int, mode: AutoresetMode = NEXT, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec(
        env_id, num_envs=n, vectorization_mode="vector_entry_point", autoreset_mode=mode, **kwargs
    )


def sync(env_id: str, n: int, mode: AutoresetMode = NEXT, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec(
        env_id,
        num_envs=n,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )


def hoeffding(m: int, width: float, alpha: float = ALPHA) -> float:
    """Half-width t with P(|mean of m i.i.d. in an interval of `width` - E| >= t) <= alpha."""
    return width * math.sqrt(math.log(2 / alpha) / (2 * m))


def assert_same_mean(x: np.ndarray, y: np.ndarray, width: float, alpha: float = ALPHA) -> None:
    """Two-sample Hoeffding: |mean(x) - mean(y)| <= t when both have the same law."""
    t = width * math.sqrt(math.log(2 / alpha) / 2 * (1 / len(x) + 1 / len(y)))
    assert abs(x.mean() - y.mean()) <= t, (x.mean(), y.mean(), t)


# --- policies: deterministic functions of the batched observation ------------------------------


def round_robin(obs: dict, t: int) -> np.ndarray:
    return np.argmin(obs["counts"], axis=1)


def round_robin_stop(first: int):
    """Round robin; env i stops once it has made first + i pulls (fixed confidence)."""

    def policy(obs: dict, t: int) -> np.ndarray:
        counts = obs["counts"]
        action = np.argmin(counts, axis=1)
        action[counts.sum(axis=1) >= first + np.arange(counts.shape[0])] = counts.shape[1]
        return action

    return policy


def least_pulled(b: int, k: int):
    """One pull of each of the b least pulled arms; in the answer phase the top k means."""

    def policy(obs: dict, t: int) -> np.ndarray:
        counts = obs["counts"]
        n_envs, n = counts.shape
        rows = np.arange(n_envs)[:, None]
        action = np.zeros((n_envs, n), dtype=np.int64)
        action[rows, np.argsort(counts, axis=1, kind="stable")[:, :b]] = 1
        if "phase" in obs:
            answer = np.zeros_like(action)
            answer[rows, np.argsort(-obs["means"], axis=1, kind="stable")[:, :k]] = 1
            action[obs["phase"] == 1] = answer[obs["phase"] == 1]
        return action

    return policy


def noisy_counts(obs: dict, t: int) -> np.ndarray:
    """Arbitrary elements of the action space at r >= 2 (project mode maps those over the
    batch or the budget), arm 0 always asked for most."""
    action = np.random.default_rng(t).integers(0, 3, size=obs["counts"].shape)
    action[:, 0] = 2
    return action


ONE_ZERO = [0.0, 1.0, 0.0, 1.0, 0.0]
CATEGORICAL = bandit_envs.instances.from_categorical(np.eye(3)[[2, 0, 1, 0]], [0.0, 0.5, 1.0], k=1)

# (id, kwargs, policy, steps): deterministic rewards, no empirical ties at the end.
EXACT = [
    ("TopK-v0", {"instance": ONE_ZERO, "k": 2, "budget": 7}, round_robin, 30),
    (
        "TopK-v0",
        {
            "instance": ONE_ZERO,
            "k": 2,
            "setting": "fixed_confidence",
            "max_batches": 8,
            "cost_per_batch": 0.1,
        },
        round_robin_stop(5),
        40,
    ),
    (
        "TopK-v0",
        {
            "instance": ONE_ZERO,
            "k": 2,
            "objective": "misidentification",
            "epsilon": 0.1,
            "budget": 10,
            "max_episode_steps": 7,
        },
        round_robin,
        30,
    ),
    ("TopK-v0", {"instance": CATEGORICAL, "budget": 8}, round_robin, 30),
    (
        "TopK-Batch-v0",
        {"instance": ONE_ZERO, "k": 2, "batch_size": 3, "budget": 12, "answer": "agent"},
        least_pulled(3, 2),
        30,
    ),
    (
        "TopK-Batch-v0",
        {
            "instance": ONE_ZERO,
            "k": 2,
            "batch_size": 2,
            "setting": "fixed_confidence",
            "max_batches": 4,
            "answer": "agent",
            "cost_per_batch": 0.5,
        },
        least_pulled(2, 2),
        30,
    ),
    (
        "TopK-Batch-v0",
        {
            "instance": [1.0, 0, 0, 0, 0],
            "k": 1,
            "batch_size": 6,
            "repeat_limit": 3,
            "budget": 20,
            "invalid_action": "project",
        },
        noisy_counts,
        30,
    ),
    (
        "TopK-Batch-v0",
        {
            "instance": [1.0, 0, 0, 0, 0],
            "k": 1,
            "batch_size": 6,
            "repeat_limit": 3,
            "budget": 20,
            "answer": "agent",
            "invalid_action": "project",
        },
        noisy_counts,
        30,
    ),
    (
        "TopK-Batch-v0",
        {"instance": ONE_ZERO, "k": 2, "batch_size": None, "budget": 30},
        lambda obs, t: np.full(obs["counts"].shape, 2),
        30,
    ),
    (
        "TopK-Batch-v0",
        {"instance": CATEGORICAL, "batch_size": 4, "max_batches": 3},
        lambda obs, t: np.ones(obs["counts"].shape, dtype=np.int64),
        30,
    ),
    (
        "TopK-Batch-v0",
        {"instance": [1.0, 0.0] * 5 + [0.0] * 6, "k": 5, "batch_size": 2, "budget": 40},
        lambda obs, t: 2 * np.eye(16, dtype=np.int64)[np.argmin(obs["counts"], axis=1)],
        45,
    ),  # sparse
]


def exact_id(case: tuple) -> str:
    env_id, kwargs, _, _ = case
    return env_id + "-" + ",".join(f"{k}={getattr(v, 'name', v)}" for k, v in kwargs.items())


@pytest.mark.parametrize("mode", [NEXT, SAME], ids=["next_step", "same_step"])
@pytest.mark.parametrize("case", EXACT, ids=[exact_id(c) for c in EXACT])
def test_identical_to_sync_vector_env(case: tuple, mode: AutoresetMode) -> None:
    """Every output (obs, rewards, flags, info with masks and final_obs) equals SyncVectorEnv's."""
    env_id, kwargs, policy, steps = case
    kwargs = {"shuffle": False, **kwargs}
    ours, ref = native(env_id, 4, mode, **kwargs), sync(env_id, 4, mode, **kwargs)
    obs, info = ours.reset(seed=0)
    assert data_equivalence((obs, info), ref.reset(seed=0), exact=True)
    for t in range(steps):
        action = policy(obs, t)
        got, want = ours.step(action), ref.step(action)
        for name, x, y in zip(
            ("obs", "reward", "terminated", "truncated", "info"), got, want, strict=True
        ):
            assert data_equivalence(x, y, exact=True), (t, name, x, y)
        obs = got[0]


# --- API ---------------------------------------------------------------------------------------

API_CASES = [
    ("TopK-v0", {}, round_robin),
    ("TopK-v0", {"setting": "fixed_confidence", "max_batches": 12}, round_robin_stop(6)),
    ("TopK-v0", {"instance": "jiang2017-1-sparse", "n_arms": 8, "k": 2}, round_robin),
    ("TopK-v0", {"instance": CATEGORICAL}, round_robin),
    ("TopK-Batch-v0", {"answer": "agent", "max_batches": 6}, least_pulled(5, 3)),
    (
        "TopK-Batch-v0",
        {"batch_size": None, "budget": 100},
        lambda obs, t: np.ones(obs["counts"].shape, int),
    ),
    (
        "TopK-Batch-v0",
        {"invalid_action": "project", "batch_size": 4, "repeat_limit": 2},
        noisy_counts,
    ),
]


def rollout(envs: gym.vector.VectorEnv, policy, steps: int, seed: int) -> list:
    obs, info = envs.reset(seed=seed)
    trace = [(obs, info)]
    for t in range(steps):
        out = envs.step(policy(obs, t))
        trace.append(out)
        obs = out[0]
    return trace


@pytest.mark.parametrize("mode", [NEXT, SAME], ids=["next_step", "same_step"])
@pytest.mark.parametrize(
    "env_id,kwargs,policy", API_CASES, ids=[exact_id((*c, 0)) for c in API_CASES]
)
def test_vector_env_api(env_id: str, kwargs: dict, policy, mode: AutoresetMode) -> None:
    """Gymnasium's vector env contract, step by step, and same seed -> same trajectory."""
    n_envs = 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # make_vec warns on missing/invalid autoreset metadata
        envs = native(env_id, n_envs, mode, **kwargs)
    single = gym.make(env_id, **kwargs).unwrapped
    assert isinstance(envs, TopKVectorEnv if env_id == "TopK-v0" else TopKBatchVectorEnv)
    assert envs.metadata["autoreset_mode"] is mode
    assert envs.single_observation_space == single.observation_space
    assert envs.single_action_space == single.action_space
    assert envs.observation_space == batch_space(single.observation_space, n_envs)
    assert envs.action_space == batch_space(single.action_space, n_envs)
    trace = rollout(envs, policy, 60, seed=3)
    obs, info = trace[0]
    assert info == {} and envs.observation_space.contains(obs)
    previous = obs
    for obs, reward, terminated, truncated, info in trace[1:]:
        assert envs.observation_space.contains(obs)
        assert reward.shape == (n_envs,) and reward.dtype == np.float64
        for flags in (terminated, truncated):
            assert flags.shape == (n_envs,) and flags.dtype == np.bool_
        for key in [k for k in info if not k.startswith("_")]:
            mask = info["_" + key]
            assert mask.shape == (n_envs,) and mask.dtype == np.bool_
            if key == "final_info":
                assert np.array_equal(mask, terminated | truncated)
            elif key == "final_obs":
                for i in np.flatnonzero(mask):
                    assert envs.single_observation_space.contains(info[key][i])
            else:
                assert info[key].shape[0] == n_envs
        for key in obs:  # fresh arrays every step (copy=True)
            assert not np.shares_memory(obs[key], previous[key])
        previous = obs
    assert data_equivalence(trace, rollout(envs, policy, 60, seed=3), exact=True)
    assert not data_equivalence(trace, rollout(envs, policy, 60, seed=4), exact=True)


@pytest.mark.parametrize("env_id", ["TopK-v0", "TopK-Batch-v0"])
def test_make_vec_default_mode_is_the_native_env(env_id: str) -> None:
    envs = gym.make_vec(env_id, num_envs=3)
    assert type(envs).__name__ == ("TopKVectorEnv" if env_id == "TopK-v0" else "TopKBatchVectorEnv")
    assert envs.metadata["autoreset_mode"] is NEXT
    assert envs.spec.id == env_id and envs.problem == gym.make(env_id).unwrapped.problem
    envs.close()


@pytest.mark.parametrize("mode", [NEXT, SAME], ids=["next_step", "same_step"])
def test_gymnasium_vector_wrappers_read_the_info(mode: AutoresetMode) -> None:
    """RecordEpisodeStatistics and DictInfoToList understand the info layout."""
    envs = native("TopK-v0", 3, mode, n_arms=4, k=2, budget=4)
    envs = gym.wrappers.vector.DictInfoToList(gym.wrappers.vector.RecordEpisodeStatistics(envs))
    envs.reset(seed=0)
    for t in range(4):
        _, reward, term, _, infos = envs.step(np.full(3, t))
    assert term.all() and len(infos) == 3
    for info, r in zip(infos, reward, strict=True):
        final = info if mode is NEXT else info["final_info"]
        assert info["episode"]["l"] == 4 and info["episode"]["r"] == r == -final["aggregate_regret"]
        assert final["recommendation"].shape == (2,)


def test_copy_false_returns_the_buffers() -> None:
    envs = native("TopK-v0", 3, copy=False, n_arms=4, k=2)
    obs, _ = envs.reset(seed=0)
    nxt, *_ = envs.step(np.zeros(3, dtype=int))
    assert np.shares_memory(obs["counts"], nxt["counts"]) and nxt["counts"][:, 0].tolist() == [
        1,
        1,
        1,
    ]


def test_render_ansi() -> None:
    envs = native("TopK-v0", 2, n_arms=3, k=1, render_mode="ansi")
    envs.reset(seed=0)
    envs.step(np.array([0, 2]))
    frames = envs.render()
    assert (
        len(frames) == 2
        and "arm    0: pulls=     1" in frames[0]
        and "arm    2: pulls=     1" in frames[1]
    )
    assert native("TopK-v0", 2).render() is None


# --- autoreset ---------------------------------------------------------------------------------


def test_next_step_autoreset_ignores_the_action() -> None:
    envs = native("TopK-v0", 3, n_arms=4, k=2, setting="fixed_confidence")
    envs.reset(seed=0)
    envs.step(np.array([0, 1, 2]))
    obs, reward, term, trunc, info = envs.step(np.array([4, 1, 2]))  # env 0 stops
    assert term.tolist() == [True, False, False] and info["_recommendation"].tolist() == [
        True,
        False,
        False,
    ]
    assert obs["counts"][0].sum() == 1  # the terminal observation
    # The next step restarts env 0 whatever its action (even an invalid one).
    obs, reward, term, trunc, info = envs.step(np.array([99, 3, 3]))
    assert (
        obs["counts"][0].tolist() == [0, 0, 0, 0]
        and reward[0] == 0
        and not term[0]
        and not trunc[0]
    )
    assert obs["counts"][1].sum() == 3 and info == {}
    obs, *_ = envs.step(np.array([1, 0, 0]))
    assert obs["counts"][0].tolist() == [0, 1, 0, 0]
    with pytest.raises(ValueError, match="env 0: action=99 is not an arm"):
        envs.step(np.array([99, 0, 0]))


def test_next_step_autoreset_ignores_bad_batch_rows() -> None:
    envs = native("TopK-Batch-v0", 2, n_arms=3, k=1, batch_size=3, budget=3)
    envs.reset(seed=0)
    _, _, term, *_ = envs.step(np.array([[1, 1, 1], [1, 0, 0]]))
    assert term.tolist() == [True, False]
    obs, *_ = envs.step(np.array([[9, -9, 9], [0, 1, 0]]))
    assert obs["counts"].tolist() == [[0, 0, 0], [1, 1, 0]]


def test_same_step_autoreset_reports_final_obs_and_info() -> None:
    envs = native("TopK-v0", 3, SAME, n_arms=4, k=2, budget=4, epsilon=0.0)
    obs, _ = envs.reset(seed=0)
    for t in range(4):
        obs, reward, term, trunc, info = envs.step(np.full(3, t))
    assert term.all() and obs["counts"].sum() == 0  # already restarted
    assert set(info) == {"final_obs", "_final_obs", "final_info", "_final_info"}
    final = info["final_info"]
    assert set(final) >= {
        "recommendation",
        "aggregate_regret",
        "epsilon_correct",
        "_recommendation",
    }
    for i in range(3):
        assert info["final_obs"][i]["counts"].tolist() == [1, 1, 1, 1]
        assert info["final_obs"][i]["remaining"].tolist() == [0.0]
        assert reward[i] == -final["aggregate_regret"][i]
        assert final["recommendation"][i].shape == (2,)


def test_reset_mask_restarts_some_envs() -> None:
    envs = native("TopK-v0", 3, n_arms=4, k=2)
    with pytest.raises(RuntimeError, match="full reset"):
        envs.reset(options={"reset_mask": np.array([True, False, False])})
    envs.reset(seed=1)
    envs.step(np.array([0, 1, 2]))
    obs, info = envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert info == {} and obs["counts"].sum(axis=1).tolist() == [1, 0, 1]
    for bad in (np.array([1, 0, 0]), np.array([True, False]), [True, False, True]):
        with pytest.raises(ValueError, match="reset_mask"):
            envs.reset(options={"reset_mask": bad})


def test_answer_phase() -> None:
    envs = native(
        "TopK-Batch-v0",
        3,
        n_arms=4,
        k=2,
        instance=[0.9, 0.8, 0.2, 0.1],
        shuffle=False,
        batch_size=4,
        max_batches=2,
        answer="agent",
    )
    obs, _ = envs.reset(seed=0)
    assert obs["phase"].tolist() == [0, 0, 0]
    for _ in range(2):
        obs, reward, term, trunc, info = envs.step(np.ones((3, 4), dtype=int))
        assert not term.any() and reward.tolist() == [0, 0, 0]
    assert obs["phase"].tolist() == [1, 1, 1] and obs["remaining"].ravel().tolist() == [0, 0, 0]
    answers = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [3, 0, 4, 0]])
    obs, reward, term, trunc, info = envs.step(answers)
    assert term.all() and info["recommendation"].tolist() == [[0, 1], [2, 3], [0, 2]]
    assert np.allclose(reward, [0.0, -0.7, -0.3]) and "pulls_made" not in info
    assert obs["phase"].tolist() == [0, 0, 0] and info["pulls"].tolist() == [8, 8, 8]


def test_max_episode_steps_truncates() -> None:
    envs = native("TopK-v0", 2, max_episode_steps=3, n_arms=4, k=2)
    envs.reset(seed=0)
    for t in range(3):
        obs, reward, term, trunc, info = envs.step(np.array([t, t]))
    assert trunc.all() and not term.any() and info == {}
    obs, *_ = envs.step(np.array([0, 0]))
    assert obs["counts"].sum() == 0


# --- row-wise math equals the single-row functions ---------------------------------------------


def test_score_rows_and_top_k_rows_equal_the_single_versions() -> None:
    rng = np.random.default_rng(0)
    for n in (2, 5, 11, 20):
        means = rng.integers(0, 4, size=(300, n)) / 4  # many ties
        means[::3] = rng.random((len(means[::3]), n))
        for k in range(1, n):
            rec = np.sort(np.argsort(rng.random((300, n)), axis=1)[:, :k], axis=1)
            regret, mis, prec = score_rows(means, rec, k)
            truth = top_k_rows(means, k, None)
            for i in range(300):
                s = score(means[i], rec[i], k)
                assert (regret[i], mis[i], prec[i]) == (
                    s.aggregate_regret,
                    s.misidentified,
                    s.precision,
                )
                assert truth[i].tolist() == true_top_k(means[i], k).tolist()
            drawn = top_k_rows(means, k, rng)
            for i in range(300):
                row = means[i]
                assert set(np.flatnonzero(row > np.sort(row)[n - k])) <= set(drawn[i].tolist())
                if np.count_nonzero(row == np.sort(row)[n - k]) == 1:
                    assert drawn[i].tolist() == top_k(row, k, None).tolist()


def test_top_k_rows_breaks_ties_uniformly() -> None:
    m = 20000
    values = np.tile([0.9, -np.inf, 0.5, 0.5, 0.2, 0.5], (m, 1))
    picked = top_k_rows(values, 3, np.random.default_rng(1))
    freq = np.bincount(picked.ravel(), minlength=6) / m
    # 0.9 always; 2 of the 3 entries at 0.5, each with probability 2/3.
    t = hoeffding(m, 1.0, ALPHA / 3)
    assert freq[0] == 1 and freq[1] == freq[4] == 0
    assert np.all(np.abs(freq[[2, 3, 5]] - 2 / 3) <= t), freq


def test_projections_equal_the_single_versions() -> None:
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        r = int(rng.integers(1, 6))
        a = rng.integers(-3, 9, size=(40, n))
        cap = rng.integers(0, 3 * n, size=40)
        rows = project_pulls_rows(a, r, cap)
        free = project_pulls_rows(a, r, None)
        emp = rng.integers(0, 3, size=(40, n)) / 2
        k = int(rng.integers(1, n + 1))
        answers = project_answer_rows(a, k, emp)
        for i in range(40):
            assert rows[i].tolist() == project_pulls(a[i], r, int(cap[i])).tolist()
            assert free[i].tolist() == project_pulls(a[i], r, None).tolist()
            assert answers[i].tolist() == project_answer(a[i], k, emp[i]).tolist()


# --- equal in law to the single env ------------------------------------------------------------


def greedy_after_one_each(obs: dict, t: int) -> np.ndarray:
    """Pull unpulled arms first, then the arm with the highest empirical mean (data dependent)."""
    counts, means = obs["counts"], obs["means"]
    return np.where(counts.min(axis=1) == 0, np.argmin(counts, axis=1), np.argmax(means, axis=1))


def gap_stop(k: int, gap: float, first: int):
    """Round robin; stop when the k-th and (k+1)-th empirical means differ by > gap."""

    def policy(obs: dict, t: int) -> np.ndarray:
        counts, means = obs["counts"], obs["means"]
        top = -np.sort(-means, axis=1)
        stop = (counts.min(axis=1) >= first) & (top[:, k - 1] - top[:, k] > gap)
        action = np.argmin(counts, axis=1)
        action[stop] = counts.shape[1]
        return action

    return policy


def random_counts(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs, t: rng.integers(0, 3, size=obs["counts"].shape)  # the space at r = 2


def vector_episodes(
    env_id: str, kwargs: dict, policy, episodes: int, n_envs: int, seed: int
) -> dict:
    envs = native(env_id, n_envs, **kwargs)
    obs, _ = envs.reset(seed=seed)
    out: dict[str, list] = {"return": [], "regret": [], "misidentified": [], "pulls": []}
    running = np.zeros(n_envs)
    t = 0
    while len(out["return"]) < episodes:
        obs, reward, term, trunc, info = envs.step(policy(obs, t))
        t += 1
        running += reward
        for i in np.flatnonzero(term | trunc):
            out["return"].append(running[i])
            out["regret"].append(info["aggregate_regret"][i])
            out["misidentified"].append(info["misidentified"][i])
            out["pulls"].append(info["pulls"][i])
        running[term | trunc] = 0.0
    return {key: np.array(value[:episodes], dtype=float) for key, value in out.items()}


def single_episodes(env_id: str, kwargs: dict, policy, episodes: int, seed: int) -> dict:
    env = gym.make(env_id, **kwargs)
    out: dict[str, list] = {"return": [], "regret": [], "misidentified": [], "pulls": []}
    obs, _ = env.reset(seed=seed)
    t, total = 0, 0.0
    while len(out["return"]) < episodes:
        batch = {key: np.asarray(value)[None] for key, value in obs.items()}
        obs, reward, term, trunc, info = env.step(policy(batch, t)[0])
        t += 1
        total += reward
        if term or trunc:
            for key, value in (
                ("return", total),
                ("regret", info["aggregate_regret"]),
                ("misidentified", info["misidentified"]),
                ("pulls", info["pulls"]),
            ):
                out[key].append(value)
            total = 0.0
            obs, _ = env.reset()
    return {key: np.array(value, dtype=float) for key, value in out.items()}


# (id, kwargs, policy maker, widths of (return, regret, misidentified, pulls), episodes)
LAW = [
    (
        "TopK-v0",
        {"n_arms": 10, "k": 3, "budget": 30},
        lambda: greedy_after_one_each,
        (1.0, 1.0, 1.0, 0.0),
        1500,
    ),
    (
        "TopK-v0",
        {
            "instance": "jiang2017-1-sparse",
            "n_arms": 6,
            "k": 2,
            "setting": "fixed_confidence",
            "max_batches": 40,
            "cost_per_batch": 0.01,
        },
        lambda: gap_stop(2, 0.4, 2),
        (1.4, 0.5, 1.0, 40.0),
        1200,
    ),
    (
        "TopK-Batch-v0",
        {
            "instance": bandit_envs.instances.from_categorical(
                [[0.5, 0.3, 0.2], [0.2, 0.3, 0.5], [0.6, 0.2, 0.2], [0.1, 0.1, 0.8]],
                [0.0, 0.5, 1.0],
                k=2,
            ),
            "batch_size": 4,
            "repeat_limit": 3,
            "budget": 14,
            "answer": "agent",
            "invalid_action": "project",
        },
        lambda: random_counts(5),
        (1.0, 1.0, 1.0, 14.0),
        1500,
    ),
    (
        "TopK-Batch-v0",
        {
            "instance": "uniform-random",
            "n_arms": 6,
            "k": 2,
            "distribution": "gaussian",
            "sigma": 0.5,
            "batch_size": 3,
            "max_batches": 5,
            "objective": "misidentification",
        },
        lambda: least_pulled(3, 2),
        (1.0, 1.0, 1.0, 0.0),
        1500,
    ),
]


@pytest.mark.parametrize(
    "env_id,kwargs,make_policy,widths,episodes", LAW, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAW)]
)
def test_equal_in_law_to_single_env(env_id, kwargs, make_policy, widths, episodes) -> None:
    """Episode statistics of the vector env and of a single env agree (Hoeffding, 1e-3 overall)."""
    ours = vector_episodes(env_id, kwargs, make_policy(), episodes, 64, seed=11)
    ref = single_episodes(env_id, kwargs, make_policy(), episodes, seed=12)
    for key, width in zip(("return", "regret", "misidentified", "pulls"), widths, strict=True):
        if width:
            assert_same_mean(ours[key], ref[key], width, ALPHA / 4)
        else:
            assert np.array_equal(np.unique(ours[key]), np.unique(ref[key])), key


def test_shuffle_and_random_instances_are_per_env_and_per_episode() -> None:
    m = 4000
    envs = native("TopK-v0", m, n_arms=4, k=1, instance=[0.9, 0.1, 0.1, 0.1], budget=4)
    envs.reset(seed=0)
    for t in range(4):
        _, _, _, _, info = envs.step(np.full(m, t))
    best = np.argmax(info["means"], axis=1)
    freq = np.bincount(best, minlength=4) / m
    assert np.all(np.abs(freq - 0.25) <= hoeffding(m, 1.0, ALPHA / 4)), freq
    envs = native("TopK-v0", m, n_arms=3, k=1, budget=3)  # uniform-random means
    envs.reset(seed=1)
    firsts = []
    for _ in range(2):
        for t in range(3):
            _, _, _, _, info = envs.step(np.full(m, t))
        firsts.append(info["means"][:, 0].copy())
        envs.step(np.zeros(m, dtype=int))  # autoreset step
    assert len(np.unique(firsts[0])) == m and not np.array_equal(firsts[0], firsts[1])
    t = hoeffding(m, 1.0, ALPHA / 2)
    assert abs(firsts[0].mean() - 0.5) <= t and abs(np.mean(firsts[0] ** 2) - 1 / 3) <= t


def test_empirical_answer_breaks_ties_at_random() -> None:
    """Equal means: each arm is recommended with probability k/n (a lowest-index rule fails)."""
    m = 6000
    envs = native("TopK-v0", m, n_arms=4, k=2, instance=[0.5] * 4, shuffle=False, budget=4)
    envs.reset(seed=3)
    for t in range(4):
        *_, info = envs.step(np.full(m, t))
    freq = np.bincount(info["recommendation"].ravel(), minlength=4) / m
    assert np.all(np.abs(freq - 0.5) <= hoeffding(m, 1.0, ALPHA / 4)), freq
    envs = native(
        "TopK-Batch-v0",
        m,
        n_arms=4,
        k=2,
        instance=[0.5] * 4,
        shuffle=False,
        batch_size=1,
        setting="fixed_confidence",
    )
    envs.reset(seed=4)
    envs.step(np.tile([1, 0, 0, 0], (m, 1)))
    *_, info = envs.step(np.zeros((m, 4), dtype=int))  # stop: arm 0 pulled, 1..3 never
    rec = info["recommendation"]
    assert np.all(rec[:, 0] == 0)
    freq = np.bincount(rec[:, 1], minlength=4)[1:] / m  # one of three never-pulled arms
    assert np.all(np.abs(freq - 1 / 3) <= hoeffding(m, 1.0, ALPHA / 3)), freq


# --- exact laws of the rewards -----------------------------------------------------------------


def one_batch(kwargs: dict, pulls: list[int], m: int, seed: int) -> np.ndarray:
    """Reward sums of one batch `pulls` in m envs (shuffle off): shape (m, len(pulls))."""
    envs = native(
        "TopK-Batch-v0", m, batch_size=None, budget=10 * sum(pulls), shuffle=False, **kwargs
    )
    envs.reset(seed=seed)
    obs, *_ = envs.step(np.tile(pulls, (m, 1)))
    return obs["means"] * obs["counts"]


@pytest.mark.parametrize("n_arms", [4, 30], ids=["dense", "sparse"])
def test_bernoulli_sums_are_binomial_small_and_large(n_arms: int) -> None:
    means = [0.3, 0.6, 0.8] + [0.5] * (n_arms - 3)
    m = 20000
    pulls = [3, 1, 2] + [0] * (n_arms - 3)
    sums = np.rint(one_batch({"instance": means, "k": 1}, pulls, m, seed=0)).astype(int)
    checks = [(j, reps, means[j]) for j, reps in ((0, 3), (1, 1), (2, 2))]
    t = hoeffding(m, 1.0, ALPHA / 9)  # 3 + 2 + 3 + 1 frequencies below
    for j, reps, p in checks:
        freq = np.bincount(sums[:, j], minlength=reps + 1) / m
        pmf = [math.comb(reps, x) * p**x * (1 - p) ** (reps - x) for x in range(reps + 1)]
        assert np.all(np.abs(freq - pmf) <= t), (j, freq, pmf)
    # Large batch: binomial draws; mean (Hoeffding) and variance (6 standard deviations).
    pulls, p, m = 1000, 0.3, 400
    s = one_batch({"instance": [p, 0.5], "k": 1}, [pulls, 0], m, seed=1)[:, 0]
    assert np.allclose(s, np.rint(s))
    assert abs(s.mean() / pulls - p) <= hoeffding(m * pulls, 1.0, 1e-6)
    assert abs(s.var(ddof=1) / (pulls * p * (1 - p)) - 1) <= 6 * math.sqrt(2 / (m - 1))


def test_gaussian_and_categorical_sums() -> None:
    pulls, mu, sigma, m = 500, 0.25, 2.0, 400
    s = one_batch(
        {"instance": [mu, 0.5], "k": 1, "distribution": "gaussian", "sigma": sigma},
        [pulls, 0],
        m,
        0,
    )[:, 0]
    assert abs((s.mean() - pulls * mu) / math.sqrt(pulls * sigma**2 / m)) < 5
    assert abs(s.var(ddof=1) / (pulls * sigma**2) - 1) <= 6 * math.sqrt(2 / (m - 1))
    support = np.array([0.0, 0.5, 1.0])
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4]])
    inst = bandit_envs.instances.from_categorical(probs, support, k=1)
    s = one_batch({"instance": inst}, [800, 0, 0], m, 1)[:, 0]
    mean, var = probs[0] @ support, probs[0] @ support**2 - (probs[0] @ support) ** 2
    assert abs(s.mean() / 800 - mean) <= hoeffding(m * 800, 1.0, 1e-6)
    assert abs(s.var(ddof=1) / (800 * var) - 1) <= 6 * math.sqrt(2 / (m - 1))
    assert np.allclose(s * 2, np.rint(s * 2))


@pytest.mark.parametrize(
    "kwargs,values,probs",
    [
        ({"instance": [0.7, 0.2], "k": 1}, [0.0, 1.0], [[0.3, 0.7], [0.8, 0.2]]),
        (
            {
                "instance": bandit_envs.instances.from_categorical(
                    [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2]], [0.0, 0.5, 1.0], k=1
                )
            },
            [0.0, 0.5, 1.0],
            [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2]],
        ),
    ],
    ids=["bernoulli", "categorical"],
)
def test_single_pulls_have_the_arm_law(kwargs: dict, values: list, probs: list) -> None:
    m, steps = 2000, 10
    envs = native("TopK-v0", m, shuffle=False, budget=2 * steps, **kwargs)
    envs.reset(seed=0)
    for t in range(2 * steps):
        obs, *_ = envs.step(np.full(m, t % 2))
    assert obs["counts"].tolist() == [[steps, steps]] * m
    t = hoeffding(m * steps, 1.0, ALPHA / 2)
    for arm in range(2):
        assert abs(obs["means"][:, arm].mean() - np.dot(probs[arm], values)) <= t
    sums = obs["means"] * steps * 2  # multiples of 1/2 for both laws
    assert np.allclose(sums, np.rint(sums))


def test_single_gaussian_pulls() -> None:
    m = 5000
    envs = native(
        "TopK-v0",
        m,
        shuffle=False,
        budget=2,
        instance=[0.3, -0.2],
        k=1,
        distribution="gaussian",
        sigma=1.5,
    )
    envs.reset(seed=0)
    envs.step(np.zeros(m, dtype=int))
    obs, *_ = envs.step(np.ones(m, dtype=int))
    for arm, mu in enumerate((0.3, -0.2)):
        x = obs["means"][:, arm]
        assert abs((x.mean() - mu) / (1.5 / math.sqrt(m))) < 5
        assert abs(x.var(ddof=1) / 1.5**2 - 1) <= 6 * math.sqrt(2 / (m - 1))


# --- bad input raises like the single env ------------------------------------------------------

BAD_KWARGS = [
    ("TopK-v0", {"n_arms": 5, "k": 5}),
    ("TopK-v0", {"n_arms": 5.5}),
    ("TopK-Batch-v0", {"batch_size": 2, "repeat_limit": 3}),
    ("TopK-Batch-v0", {"batch_size": 0}),
    ("TopK-v0", {"instance": [0.2, 1.5, 0.3], "k": 1}),
    ("TopK-v0", {"n_arms": 10, "budget": 5}),
    ("TopK-v0", {"setting": "fixed_confidence", "budget": 50}),
    ("TopK-v0", {"setting": "anytime"}),
    ("TopK-Batch-v0", {"answer": "oracle"}),
    ("TopK-Batch-v0", {"invalid_action": "clip"}),
    ("TopK-v0", {"distribution": "categorical"}),
    ("TopK-v0", {"epsilon": -0.1}),
    ("TopK-v0", {"cost_per_batch": 0.1}),
    ("TopK-v0", {"instance": "no-such-instance"}),
    ("TopK-v0", {"instance": "uniform-random", "instance_params": {"bogus": 1}}),
    ("TopK-Batch-v0", {"setting": "fixed_confidence", "batch_size": None}),
    ("TopK-v0", {"render_mode": "bogus"}),
    ("TopK-v0", {"shuffle": "yes"}),
    ("TopK-v0", {"paired": "yes"}),
]


@pytest.mark.filterwarnings("ignore:.*render_mode.*")
@pytest.mark.parametrize(
    "env_id,kwargs", BAD_KWARGS, ids=[exact_id((*c, 0, 0)) for c in BAD_KWARGS]
)
def test_bad_arguments_raise_the_single_env_error(env_id: str, kwargs: dict) -> None:
    with pytest.raises(Exception) as single:
        gym.make(env_id, **kwargs)
    with pytest.raises(type(single.value)) as vector:
        native(env_id, 2, **kwargs)
    assert str(vector.value) == str(single.value)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"num_envs": 0}, "num_envs=0 must be an integer >= 1"),
        ({"num_envs": 2.5}, "num_envs=2.5"),
        ({"num_envs": True}, "num_envs=True"),
        ({"autoreset_mode": AutoresetMode.DISABLED}, "autoreset_mode"),
        ({"autoreset_mode": "sometimes"}, "autoreset_mode='sometimes'"),
        ({"copy": "yes"}, "copy='yes' must be a bool"),
        ({"max_episode_steps": 0}, "max_episode_steps=0"),
        ({"paired": True}, "paired=True .* not supported"),
    ],
)
def test_bad_vector_arguments(kwargs: dict, match: str) -> None:
    kwargs = {"num_envs": 2, **kwargs}
    for cls in (TopKVectorEnv, TopKBatchVectorEnv):
        with pytest.raises(ValueError, match=match):
            cls(**kwargs)


def test_step_before_reset_raises() -> None:
    with pytest.raises(RuntimeError, match="before reset"):
        native("TopK-v0", 2).step(np.zeros(2, dtype=int))


def single_error(env_id: str, kwargs: dict, prefix: list, action) -> str:
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=0)
    for a in prefix:
        env.step(a)
    with pytest.raises(ValueError) as error:
        env.step(action)
    return str(error.value)


# The strict mode: bad actions raise (the default projects them).
STRICT = {"invalid_action": "raise"}
BATCH = {"n_arms": 4, "k": 2, "batch_size": 4, "repeat_limit": 2, "budget": 10, **STRICT}
ANSWER = {"n_arms": 4, "k": 2, "batch_size": 4, "budget": 4, "answer": "agent", **STRICT}
ONE, PAIR = np.array([1, 0, 0, 0]), np.array([1, 1, 0, 0])
# (id, kwargs, steps before, a valid action after them, the bad action)
BAD_ACTIONS = [
    ("TopK-v0", {"n_arms": 7, "k": 2}, [], 0, 8),
    ("TopK-v0", {"n_arms": 7, "k": 2}, [], 0, -1),
    ("TopK-v0", {"n_arms": 3, "k": 1}, [], 0, 4),
    ("TopK-v0", {"n_arms": 3, "k": 1, "setting": "fixed_confidence"}, [], 0, 4),
    ("TopK-Batch-v0", BATCH, [], ONE, np.array([-1, 1, 0, 0])),
    ("TopK-Batch-v0", BATCH, [], ONE, np.array([0.5, 1, 0, 0])),
    ("TopK-Batch-v0", BATCH, [], ONE, np.array([np.nan, 1, 0, 0])),
    ("TopK-Batch-v0", BATCH, [], ONE, np.array([3, 0, 0, 0])),
    ("TopK-Batch-v0", BATCH, [], ONE, np.array([2, 2, 1, 0])),
    ("TopK-Batch-v0", BATCH, [np.array([2, 2, 0, 0])] * 2, ONE, np.array([1, 1, 1, 0])),
    ("TopK-Batch-v0", ANSWER, [np.ones(4, dtype=int)], PAIR, np.array([1, 1, 1, 0])),
    ("TopK-Batch-v0", ANSWER, [np.ones(4, dtype=int)], PAIR, np.array([1, 0, 0, 0])),
    ("TopK-Batch-v0", ANSWER, [np.ones(4, dtype=int)], PAIR, np.array([1, -1, 1, 0])),
]


def after(env_id: str, kwargs: dict, prefix: list, steps: list) -> list:
    """Observations of 3 envs after `prefix` (same action in every env), then `steps`."""
    envs = native(env_id, 3, **kwargs)
    envs.reset(seed=0)
    for a in prefix:
        envs.step(np.stack([np.asarray(a)] * 3))
    out = []
    for actions in steps:
        try:
            out.append(envs.step(actions))
        except ValueError as error:
            out.append(str(error))
    return out


@pytest.mark.parametrize(
    "env_id,kwargs,prefix,good,bad",
    BAD_ACTIONS,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_ACTIONS)],
)
def test_bad_actions_raise_the_single_env_error_and_nothing_moves(
    env_id, kwargs, prefix, good, bad
) -> None:
    """Env 1 of 3 gets the bad action: the single env's error, prefixed ``env 1:``; no env moves."""
    message = single_error(env_id, kwargs, prefix, bad)
    actions = np.stack([np.asarray(good), np.asarray(bad), np.asarray(good)])
    valid = np.stack([np.asarray(good)] * 3)
    with_error = after(env_id, kwargs, prefix, [actions, valid])
    assert with_error[0] == "env 1: " + message
    assert data_equivalence(with_error[1], after(env_id, kwargs, prefix, [valid])[0], exact=True)


@pytest.mark.parametrize("bad", [np.array([0.0, 1.0, 0.0]), np.array([False, True, False])])
def test_non_integer_discrete_actions_raise(bad: np.ndarray) -> None:
    message = single_error("TopK-v0", {"n_arms": 3, "k": 1}, [], bad[1])
    assert "must be an integer arm index" in message
    with pytest.raises(
        ValueError, match=r"env 0: action=(0\.0|False) must be an integer arm index"
    ):
        after_raise = native("TopK-v0", 3, n_arms=3, k=1)
        after_raise.reset(seed=0)
        after_raise.step(bad)


def test_bad_action_shapes_and_dtypes() -> None:
    envs = native("TopK-v0", 3, n_arms=4, k=2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions shape \(4,\) must be \(3,\)"):
        envs.step(np.zeros(4, dtype=int))
    envs.step(np.zeros((3, 1), dtype=int))  # (N, 1) is accepted
    batch = native("TopK-Batch-v0", 3, n_arms=4, k=2)
    batch.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions shape \(3, 3\) must be \(3, 4\)"):
        batch.step(np.zeros((3, 3), dtype=int))
    with pytest.raises(ValueError, match="action dtype <U1 must be integer"):
        batch.step(np.full((3, 4), "a"))
    batch.step(np.ones((3, 4), dtype=bool))  # bool counts as 0/1, as in the single env
