"""Every violated rule raises a clear exception naming the value and the rule."""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import pytest

import bandit_envs  # noqa: F401


@pytest.mark.parametrize(
    "env_id,kwargs,match",
    [
        ("TopK-v0", {"n_arms": 5, "k": 5}, "k=5 must be smaller than n_arms=5"),
        ("TopK-v0", {"instance": [0.1, 0.2, 0.3], "k": 3}, "k=3 must be smaller than n_arms=3"),
        ("TopK-v0", {"n_arms": 5, "k": 0}, "k=0 must be >= 1"),
        ("TopK-v0", {"n_arms": 5.5}, "n_arms=5.5 must be an integer"),
        (
            "TopK-Batch-v0",
            {"batch_size": 2, "repeat_limit": 3},
            "repeat_limit=3 must not exceed batch_size=2",
        ),
        ("TopK-Batch-v0", {"batch_size": 0}, "batch_size=0 must be >= 1"),
        ("TopK-v0", {"instance": [0.2, 1.5, 0.3], "k": 1}, r"\[0, 1\]"),
        ("TopK-v0", {"instance": [0.2, float("nan"), 0.3], "k": 1}, "(?i)nan|finite"),
        ("TopK-v0", {"n_arms": 10, "budget": 5}, "budget=5 is smaller than n_arms=10"),
        (
            "TopK-v0",
            {"setting": "fixed_confidence", "budget": 50},
            "budget=50 applies to setting='fixed_budget'",
        ),
        ("TopK-v0", {"setting": "anytime"}, "setting='anytime' must be one of"),
        ("TopK-v0", {"objective": "regret"}, "objective='regret' must be one of"),
        ("TopK-Batch-v0", {"answer": "oracle"}, "answer='oracle' must be one of"),
        ("TopK-Batch-v0", {"invalid_action": "clip"}, "invalid_action='clip' must be one of"),
        ("TopK-v0", {"distribution": "poisson"}, "distribution='poisson' must be one of"),
        ("TopK-v0", {"distribution": "gaussian", "instance": [0.1, 0.2, 0.3], "k": 1}, "sigma"),
        ("TopK-v0", {"distribution": "categorical"}, "categorical"),
        ("TopK-v0", {"sigma": -1.0, "distribution": "gaussian"}, "sigma=-1.0 must be a positive"),
        ("TopK-v0", {"epsilon": -0.1}, "epsilon=-0.1 must be a number >= 0"),
        ("TopK-v0", {"cost_per_batch": 0.1}, "applies only to setting='fixed_confidence'"),
        ("TopK-v0", {"instance": "no-such-instance"}, "no-such-instance"),
        ("TopK-v0", {"instance": [0.1, 0.2, 0.3], "n_arms": 4, "k": 1}, "n_arms=4 disagrees"),
        ("TopK-v0", {"instance": "uniform-random", "instance_params": {"bogus": 1}}, "bogus"),
        (
            "TopK-Batch-v0",
            {"setting": "fixed_confidence", "batch_size": None},
            "needs a repeat_limit",
        ),
        ("TopK-v0", {"render_mode": "bogus"}, "render_mode='bogus'"),
        ("TopK-v0", {"shuffle": "yes"}, "shuffle='yes' must be a bool"),
    ],
)
def test_bad_constructor_arguments(env_id: str, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make(env_id, **kwargs)


@pytest.fixture
def batch_env():
    """The strict mode, where bad actions raise (the default projects them)."""
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=4,
        k=2,
        batch_size=4,
        repeat_limit=2,
        budget=10,
        invalid_action="raise",
    ).unwrapped
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    "action,match",
    [
        (np.array([1, 1, 1]), r"action shape \(3,\) must be \(4,\)"),
        (np.array([-1, 1, 0, 0]), r"action\[0\]=-1 is outside the action space"),
        (np.array([0.5, 1, 0, 0]), r"action\[0\]=0.5 is not an integer"),
        (np.array([np.nan, 1, 0, 0]), r"action\[0\]=nan is not a finite"),
        (np.array([3, 0, 0, 0]), r"action\[0\]=3 is outside the action space MultiDiscrete"),
        (np.array([2, 2, 1, 0]), "5 pulls, over batch_size=4"),
        (np.array(["a", "b", "c", "d"]), "dtype"),
    ],
)
def test_bad_batch_actions(batch_env, action, match) -> None:
    with pytest.raises(ValueError, match=match):
        batch_env.step(action)


def test_over_budget_raises(batch_env) -> None:
    batch_env.step(np.array([2, 2, 0, 0]))
    batch_env.step(np.array([2, 2, 0, 0]))
    with pytest.raises(ValueError, match="asks for 3 pulls but the budget has 2 left"):
        batch_env.step(np.array([1, 1, 1, 0]))


def test_wrong_answer_size_raises() -> None:
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=4,
        k=2,
        batch_size=4,
        budget=4,
        answer="agent",
        invalid_action="raise",
    ).unwrapped
    env.reset(seed=0)
    env.step(np.ones(4, dtype=int))
    with pytest.raises(ValueError, match="exactly k=2 arms"):
        env.step(np.array([1, 1, 1, 0]))
    with pytest.raises(ValueError, match="exactly k=2 arms"):
        env.step(np.array([1, 0, 0, 0]))


@pytest.mark.parametrize(
    "action,match",
    [
        (8, r"action=8 is not an arm"),
        (-1, "action=-1 is not an arm"),
        (1.5, "must be an integer"),
        (True, "must be an integer"),
        (np.array([1, 2]), "single arm index"),
    ],
)
def test_bad_discrete_actions(action, match) -> None:
    env = gym.make("TopK-v0", n_arms=7, k=2).unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)


@pytest.mark.parametrize("setting", ["fixed_budget", "fixed_confidence"])
def test_discrete_stop_in_both_settings(setting: str) -> None:
    """Action ``n_arms`` stops sampling in either setting; ``n_arms + 1`` is no action."""
    env = gym.make("TopK-v0", n_arms=3, k=1, setting=setting, max_batches=10).unwrapped
    env.reset(seed=0)
    assert env.action_space.n == 4
    with pytest.raises(ValueError, match="action=4 is not an arm"):
        env.step(4)
    env.step(0)
    _, _, terminated, truncated, info = env.step(3)
    assert terminated and not truncated and info["pulls"] == 1


def test_sparse_path_validates() -> None:
    env = gym.make(
        "TopK-Batch-v0", n_arms=4, k=2, batch_size=4, repeat_limit=2, budget=10
    ).unwrapped
    env.reset(seed=0)
    for arms, reps, match in [
        ([0, 0], [1, 1], "distinct"),
        ([5], [1], "must lie in"),
        ([0], [3], "repeat_limit=2"),
        ([0, 1, 2], [2, 2, 1], "batch_size=4"),
        ([0], [0], "must lie in"),
    ]:
        with pytest.raises(ValueError, match=match):
            env.step_sparse(np.array(arms), np.array(reps))
    with pytest.raises(RuntimeError, match="answer phase"):
        env.answer_sparse(np.array([0, 1]))


STRICT_BATCH = {
    "n_arms": 4,
    "k": 2,
    "batch_size": 4,
    "repeat_limit": 2,
    "budget": 10,
    "answer": "agent",
    "invalid_action": "raise",
}
# (pull vectors played first, the bad action, the start of the message naming value and rule)
HINTED = [
    ([], [2, 2, 1, 0], "action asks for 5 pulls, over batch_size=4"),
    ([[2, 2, 0, 0]] * 2, [1, 1, 1, 0], "action asks for 3 pulls but the budget has 2 left"),
    ([[2, 2, 0, 0]] * 2 + [[1, 1, 0, 0]], [1, 1, 1, 0], "the answer must mark exactly k=2"),
]


@pytest.mark.parametrize("prefix,bad,start", HINTED, ids=["batch", "budget", "answer"])
def test_strict_mode_errors_name_the_fix(prefix: list, bad: list, start: str) -> None:
    """Over ``r``, over ``b``, over the budget, a wrong answer: the message names the value
    and the rule, then the argument that maps any action into the valid set; the native
    vector env says the same, prefixed with the env."""
    from bandit_envs.problem import PROJECT_HINT

    env = gym.make("TopK-Batch-v0", **STRICT_BATCH).unwrapped
    env.reset(seed=0)
    envs = gym.make_vec(
        "TopK-Batch-v0", num_envs=2, vectorization_mode="vector_entry_point", **STRICT_BATCH
    )
    envs.reset(seed=0)
    for a in prefix:
        env.step(np.array(a))
        envs.step(np.array([a, a]))
    with pytest.raises(ValueError, match=start) as single:
        env.step(np.array(bad))
    with pytest.raises(ValueError) as vector:
        envs.step(np.array([[1, 1, 0, 0], bad]))  # env 0: valid while sampling and answering
    assert str(single.value).endswith(" " + PROJECT_HINT)
    assert str(vector.value) == "env 1: " + str(single.value)
    assert PROJECT_HINT.startswith('(pass invalid_action="project"')


OUTSIDE = {"n_arms": 8, "k": 2, "batch_size": 4, "repeat_limit": 2, "budget": 40}


@pytest.mark.parametrize("mode", ["project", "raise"])
@pytest.mark.parametrize(
    "bad,index,value",
    [([-1, 1] + [0] * 6, 0, -1), ([3] + [0] * 7, 0, 3), ([10**9] * 8, 0, 10**9)],
    ids=["negative", "over-repeat-limit", "huge"],
)
def test_values_outside_the_action_space_raise_in_every_mode(mode, bad, index, value) -> None:
    """A negative count, one above ``repeat_limit`` or ``10**9`` is not in
    ``MultiDiscrete([r + 1] * n)``: projection maps elements of the space only, so every
    mode raises, naming the value and the space; the vector envs say the same, prefixed
    with the env, in the sampling and in the answer phase."""
    from bandit_envs.vector import TopKBatchVectorEnv

    message = (
        f"action[{index}]={value} is outside the action space MultiDiscrete([3] * 8): "
        "every entry must be in 0..2 (repeat_limit=2)"
    )
    for answer in ("empirical", "agent"):
        kwargs = {**OUTSIDE, "invalid_action": mode, "answer": answer}
        env = gym.make("TopK-Batch-v0", **kwargs)
        env.reset(seed=0)
        assert not env.action_space.contains(np.array(bad))
        with pytest.raises(ValueError) as single:
            env.step(np.array(bad))
        assert str(single.value) == message
        valid = np.array([1, 1] + [0] * 6)
        makers = [
            partial(gym.make_vec, "TopK-Batch-v0", num_envs=2, vectorization_mode="sync"),
            partial(TopKBatchVectorEnv, num_envs=2),
        ]
        for make in makers:
            envs = make(**kwargs)
            envs.reset(seed=0)
            with pytest.raises(ValueError) as vector:
                envs.step(np.array([valid, bad]))
            native = isinstance(envs, TopKBatchVectorEnv)
            assert str(vector.value) == ("env 1: " + message if native else message)
    # at the answer step (max_batches spent) the same rule holds
    env = gym.make("TopK-Batch-v0", **{**OUTSIDE, "invalid_action": mode, "answer": "agent"})
    env.reset(seed=0)
    for _ in range(10):
        env.step(np.array([2, 2] + [0] * 6))
    assert env.unwrapped._phase == 1
    with pytest.raises(ValueError, match=r"is outside the action space MultiDiscrete"):
        env.step(np.array(bad))


@pytest.mark.parametrize("answer", ["empirical", "agent"])
def test_every_element_of_the_space_stays_legal(answer: str) -> None:
    """``action_space.sample()`` (any element of the ``MultiDiscrete``, the sum rule
    ignored) plays whole episodes in the default mode, single and vectorised."""
    from bandit_envs.vector import TopKBatchVectorEnv

    kwargs = {**OUTSIDE, "answer": answer}
    env = gym.make("TopK-Batch-v0", **kwargs)
    space = gym.spaces.MultiDiscrete([3] * 8, seed=1)
    for episode in range(20):
        env.reset(seed=episode)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(space.sample())
            done = terminated or truncated
        assert info["pulls"] <= OUTSIDE["budget"]
    for envs in (
        gym.make_vec("TopK-Batch-v0", num_envs=3, vectorization_mode="sync", **kwargs),
        TopKBatchVectorEnv(num_envs=3, **kwargs),
    ):
        envs.reset(seed=0)
        ended = 0
        for _ in range(200):
            _, _, terminated, truncated, _ = envs.step(envs.action_space.sample())
            ended += int(np.sum(terminated | truncated))
        assert ended >= 3


@pytest.mark.parametrize(
    "kwargs",
    [{"n_arms": 5, "k": 5}, {"n_arms": 5, "k": 9}, {"instance": [0.1, 0.2, 0.3], "k": 3}],
)
def test_k_out_of_range_reads_the_same_on_single_and_vector_envs(kwargs: dict) -> None:
    from bandit_envs.vector import TopKBatchVectorEnv, TopKVectorEnv

    messages = set()
    for env_id, native in (("TopK-v0", TopKVectorEnv), ("TopK-Batch-v0", TopKBatchVectorEnv)):
        makers = [
            partial(gym.make, env_id, **kwargs),
            partial(gym.make_vec, env_id, num_envs=2, vectorization_mode="sync", **kwargs),
            partial(
                gym.make_vec, env_id, num_envs=2, vectorization_mode="vector_entry_point", **kwargs
            ),
            partial(native, num_envs=2, **kwargs),
        ]
        for make in makers:
            with pytest.raises(ValueError) as error:
                make()
            messages.add(str(error.value))
    k, n = kwargs["k"], kwargs.get("n_arms", 3)
    assert messages == {f"k={k} must be smaller than n_arms={n} (1 <= k < n_arms)"}


def test_row_wise_top_k_checks_k_as_the_single_top_k() -> None:
    from bandit_envs.scoring import top_k
    from bandit_envs.vector import top_k_rows

    values = np.array([0.3, 0.1, 0.2])
    for k in (0, 4):
        with pytest.raises(ValueError) as single:
            top_k(values, k, None)
        with pytest.raises(ValueError) as rows:
            top_k_rows(values[None, :], k, None)
        assert str(single.value) == str(rows.value)
        assert str(single.value).startswith(f"k={k} must satisfy 1 <= k <= n=3")
