"""``action_masks()`` of ``TopK-v0``, ``TopK-Batch-v0`` and their vector envs, against ``step``.

The masks are in the layout sb3-contrib's ``MaskablePPO`` reads (``Discrete``: ``bool[n]``;
``MultiDiscrete``: the per-dimension masks concatenated, ``bool[sum(nvec)]``; vector envs:
one row per env). On random states of random valid episodes, each is compared with what
the space's ``contains`` and ``step`` (raise mode, on a copy of the env) accept:

* ``Discrete``: an action is unmasked iff it is valid;
* ``MultiDiscrete`` while sampling: count ``c`` of arm ``j`` is unmasked iff the one-arm
  action ``c e_j`` is valid. Any action with ``a_j = c`` holds at least ``c`` pulls, so
  ``c e_j`` invalid means no valid action has ``a_j = c``: the masks are exactly each
  coordinate's projection of the valid set. They cannot express the sum rule: the
  vector of every arm's largest unmasked count is invalid whenever it holds more than
  ``min(b, pulls left)`` pulls (checked to happen);
* ``MultiDiscrete`` at the answer step: counts 0 and 1 are unmasked for every arm (an
  answer may leave out or mark any arm), larger counts are masked although they mark
  the arm too (the same answer as 1: checked).
"""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import bandit_envs  # noqa: F401

BATCH_CASES = [
    {"n_arms": 5, "k": 2, "batch_size": 4, "repeat_limit": 2, "budget": 23},
    {"n_arms": 4, "k": 2, "batch_size": 6, "repeat_limit": 3, "budget": 20, "answer": "agent"},
    {"n_arms": 4, "k": 1, "batch_size": None, "repeat_limit": 2, "budget": 15, "answer": "agent"},
    {
        "n_arms": 5,
        "k": 2,
        "batch_size": 3,
        "setting": "fixed_confidence",
        "max_batches": 12,
        "answer": "agent",
    },
    {"n_arms": 3, "k": 1, "batch_size": None, "budget": 9},
    {"n_arms": 4, "k": 2, "batch_size": 4, "budget": 12, "max_batches": 3},
]
ARM_CASES = [
    {"n_arms": 4, "k": 2, "budget": 9},
    {"n_arms": 4, "k": 1, "setting": "fixed_confidence", "max_batches": 7},
]


def _ids(cases: list[dict]) -> list[str]:
    return [",".join(f"{k}={v}" for k, v in kw.items()) for kw in cases]


def accepts(env: gym.Env, action) -> bool:
    """Whether ``step(action)`` on a copy of ``env`` succeeds (raise mode)."""
    clone = copy.deepcopy(env)
    try:
        clone.step(action)
    except (ValueError, RuntimeError):
        return False
    return True


def random_states(env: gym.Env, seed: int, steps: int, stop_every: int = 0):
    """``env`` at each state of random valid episodes (``action_space.sample()``)."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    for t in range(steps):
        yield
        action = env.action_space.sample()
        if stop_every and t % stop_every == stop_every - 1 and getattr(env, "phase", 0) == 0:
            action = np.zeros_like(action)  # a stop now and then
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            yield  # the ended episode: nothing is valid
            env.reset(seed=seed + t + 1)


# ------------------------------------------------------------------ TopK-v0
@pytest.mark.parametrize("kwargs", ARM_CASES, ids=_ids(ARM_CASES))
def test_discrete_masks_are_exactly_the_valid_actions(kwargs: dict) -> None:
    env = gym.make("TopK-v0", **kwargs).unwrapped
    space = env.action_space
    ended = 0
    for _ in random_states(env, 0, 60):
        mask = env.action_masks()
        assert mask.shape == (space.n,) and mask.dtype == np.bool_
        for a in range(space.n):
            assert mask[a] == (space.contains(a) and accepts(env, a)), a
        ended += not mask.any()
    assert ended >= 2


# ------------------------------------------------------------------ TopK-Batch-v0
@pytest.mark.parametrize("kwargs", BATCH_CASES, ids=_ids(BATCH_CASES))
def test_multidiscrete_masks_are_each_arms_possible_counts(kwargs: dict) -> None:
    """The masks are each arm's counts in the strict mode's valid set (the default projects)."""
    env = gym.make("TopK-Batch-v0", **kwargs, invalid_action="raise").unwrapped
    space = env.action_space
    n, r = env.problem.n_arms, int(space.nvec[0]) - 1
    seen = {"sampling": 0, "answer": 0, "ended": 0, "sum_rule": 0}
    for _ in random_states(env, 1, 40, stop_every=7):
        mask = env.action_masks()
        assert mask.shape == (int(space.nvec.sum()),) and mask.dtype == np.bool_
        per_arm = mask.reshape(n, r + 1)
        if env.phase == 2:
            assert not mask.any()
            seen["ended"] += 1
        elif env.phase == 0:
            seen["sampling"] += 1
            for j in range(n):
                for c in range(r + 1):
                    action = np.zeros(n, dtype=np.int64)
                    action[j] = c
                    assert per_arm[j, c] == (space.contains(action) and accepts(env, action))
            largest = per_arm.sum(axis=1) - 1  # each arm's largest allowed count
            caps = [c for c in (space.batch_size, env.pulls_left) if c is not None]
            if largest.sum() > min(caps):  # what per-dimension masks cannot express
                assert not accepts(env, largest)
                seen["sum_rule"] += 1
            else:
                assert accepts(env, largest)
        else:
            seen["answer"] += 1
            k = env.problem.k
            assert per_arm[:, :2].all() and not per_arm[:, 2:].any()
            for j in range(n):
                others = [i for i in range(n) if i != j]
                with_j = np.zeros(n, dtype=np.int64)
                with_j[[j, *others[: k - 1]]] = 1
                without_j = np.zeros(n, dtype=np.int64)
                without_j[others[:k]] = 1
                assert accepts(env, with_j) and accepts(env, without_j)
                if r >= 2:  # a masked count marks the arm too: the same answer
                    a, b = copy.deepcopy(env), copy.deepcopy(env)
                    rec = a.step(with_j)[4]["recommendation"]
                    assert np.array_equal(rec, b.step(2 * with_j)[4]["recommendation"])
    assert seen["sampling"] >= 20 and seen["ended"] >= 1
    if kwargs.get("answer") == "agent":
        assert seen["answer"] >= 1
    b = kwargs.get("batch_size")
    if b is not None and b < n * r:
        assert seen["sum_rule"] >= 1


# ------------------------------------------------------------------ vector envs
def _base_actions(venv, n: int, k: int, batch: bool) -> np.ndarray:
    """A valid action for every env: stop (zeros / arm 0) while sampling, the first k at answers."""
    if not batch:
        return np.zeros(venv.num_envs, dtype=np.int64)
    actions = np.zeros((venv.num_envs, n), dtype=np.int64)
    actions[venv._phase == 1, :k] = 1
    return actions


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize(
    "env_id,kwargs",
    [("TopK-Batch-v0", kw) for kw in BATCH_CASES[:4]] + [("TopK-v0", kw) for kw in ARM_CASES],
    ids=[f"batch-{i}" for i in range(4)] + [f"arm-{i}" for i in range(len(ARM_CASES))],
)
def test_vector_masks_are_the_single_env_masks_per_row(env_id, kwargs, mode) -> None:
    batch = env_id == "TopK-Batch-v0"
    strict = {"invalid_action": "raise"} if batch else {}  # what the masks describe
    venv = gym.make_vec(
        env_id,
        num_envs=3,
        vectorization_mode="vector_entry_point",
        autoreset_mode=mode,
        **kwargs,
        **strict,
    )
    assert not venv.action_masks().any()  # before the first reset
    venv.reset(seed=2)
    venv.action_space.seed(2)
    n, k = venv.problem.n_arms, venv.problem.k
    r = venv._r if batch else 0
    width = n * (r + 1) if batch else venv.single_action_space.n
    pending_seen = 0
    for _ in range(25):
        masks = venv.action_masks()
        assert masks.shape == (3, width) and masks.dtype == np.bool_
        base = _base_actions(venv, n, k, batch)
        for i in range(3):
            if venv._autoreset[i]:  # NEXT_STEP: the action is ignored, anything goes
                assert masks[i].all()
                pending_seen += 1
                continue
            if batch and venv._phase[i] == 1:  # answer step: 0 and 1 per arm
                assert masks[i].reshape(n, r + 1)[:, :2].all()
                assert not masks[i].reshape(n, r + 1)[:, 2:].any()
                continue
            for col in range(width):
                actions = base.copy()
                if batch:
                    j, c = divmod(col, r + 1)
                    actions[i] = 0
                    actions[i, j] = c
                else:
                    actions[i] = col
                assert masks[i, col] == accepts(venv, actions), (i, col)
        venv.step(venv.action_space.sample())
    if mode is AutoresetMode.NEXT_STEP:
        assert pending_seen >= 1


def test_sb3_vec_env_gives_maskable_ppo_the_native_masks() -> None:
    pytest.importorskip("stable_baselines3")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from bandit_envs.sb3 import make_sb3_vec_env

    venv = make_sb3_vec_env("TopK-Batch-v0", num_envs=3, seed=0, n_arms=4, k=1, batch_size=3)
    venv.reset()
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (3, 4 * 4) and np.array_equal(masks, venv.venv.action_masks())


def test_maskable_ppo_trains_on_the_native_vector_envs(one_thread) -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from bandit_envs.sb3 import make_sb3_vec_env

    tiny = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "device": "cpu", "seed": 0}
    # TopK-v0: every per-step rule is in the mask, raise mode
    venv = make_sb3_vec_env("TopK-v0", num_envs=2, seed=0, n_arms=4, k=2, budget=8)
    MaskablePPO("MultiInputPolicy", venv, **tiny).learn(128)
    # TopK-Batch-v0: the masks bound each count; the sum rule needs project mode
    venv = make_sb3_vec_env(
        "TopK-Batch-v0", num_envs=2, seed=0, n_arms=4, k=2, budget=12, batch_size=3,
        invalid_action="project",
    )  # fmt: skip
    MaskablePPO("MultiInputPolicy", venv, **tiny).learn(128)


@pytest.fixture
def one_thread():
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
