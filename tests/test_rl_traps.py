"""What a reinforcement-learning user meets first: each of these once misled or crashed.

* ``gym.make_vec("TopK-Batch-v0", ...).action_space.sample()`` gives actions the vector
  env accepts in raise mode (a batch of :class:`~bandit_envs.spaces.BatchPulls`);
* :class:`agents.PolicyAgent` does not score a policy's untrained answer: a policy that
  cannot see the answer phase answers with the empirical top k (with a warning), or is
  refused when told to answer itself;
* ``topk-bench train --compare`` compares with scripted agents, as its help says;
* a fixed-budget env whose budget cannot be spent within ``max_batches`` batches is
  refused, naming both (also through a training preset);
* the report's CPU-time table keeps the first episode of an agent in a worker process
  (compiling or loading its code) apart from play time.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import agents
import bandit_envs  # noqa: F401
from bandit_envs.scoring import top_k

# ------------------------------------------------------------------ vector action space
VECTOR_CASES = [
    {"n_arms": 6, "k": 2, "batch_size": 10, "repeat_limit": 5, "budget": 37},
    {"n_arms": 6, "k": 2, "batch_size": 4, "answer": "agent", "budget": 30},
    {"n_arms": 5, "k": 1, "setting": "fixed_confidence", "batch_size": 3, "max_batches": 20},
    {"n_arms": 4, "k": 2, "batch_size": None, "repeat_limit": 3, "budget": 40, "answer": "agent"},
]


@pytest.mark.parametrize("kwargs", VECTOR_CASES, ids=lambda kw: ",".join(map(str, kw.values())))
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_native_vector_action_space_samples_valid_actions(kwargs: dict, mode) -> None:
    envs = gym.make_vec(
        "TopK-Batch-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        autoreset_mode=mode,
        **kwargs,
    )
    envs.reset(seed=0)
    envs.action_space.seed(0)
    ended = answers = 0
    for _ in range(200):
        actions = envs.action_space.sample()
        assert envs.action_space.contains(actions)
        if "phase" in envs.unwrapped._observation():
            answers += int(np.sum(envs.unwrapped._phase == 1))
        _, _, terminated, truncated, _ = envs.step(actions)  # raise mode: a bad row raises
        ended += int(np.sum(terminated | truncated))
    assert ended >= 8
    if kwargs.get("answer") == "agent":
        assert answers >= 8


def test_batched_space_is_a_batch_of_batch_pulls() -> None:
    envs = gym.make_vec(
        "TopK-Batch-v0",
        num_envs=3,
        vectorization_mode="vector_entry_point",
        n_arms=4,
        k=1,
        batch_size=3,
        repeat_limit=2,
    )
    space = envs.action_space
    assert space.shape == (3, 4) and space.dtype == np.int64
    assert space.contains(np.array([[2, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0]]))
    assert not space.contains(np.array([[2, 2, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0]]))  # 4 > b
    assert not space.contains(np.array([[3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]))  # 3 > r


# ------------------------------------------------------------------ PolicyAgent answers
def _plain_sb3_model(answer: str):
    """A plain SB3 PPO (no saved metadata) on the Dict observation of ``TopK-Batch-v0``."""
    sb3 = pytest.importorskip("stable_baselines3")
    env = gym.make("TopK-Batch-v0", n_arms=5, k=2, budget=20, batch_size=5, answer=answer)
    return sb3.PPO("MultiInputPolicy", env, device="cpu", seed=0, n_steps=8, batch_size=8)


def _answer_observations(n: int, count: int) -> list[dict]:
    rng = np.random.default_rng(3)
    return [
        {
            "counts": rng.integers(1, 6, size=n).astype(np.int64),
            "means": rng.random(n),
            "remaining": np.zeros(1),
            "phase": np.int64(1),
        }
        for _ in range(count)
    ]


def test_policy_without_a_phase_answers_with_the_empirical_top_k() -> None:
    """Trained with ``answer="empirical"``: its answer head never learned anything."""
    model = _plain_sb3_model("empirical")
    problem = gym.make(
        "TopK-Batch-v0", n_arms=5, k=2, budget=20, batch_size=5, answer="agent"
    ).unwrapped.problem
    agent = agents.PolicyAgent(model)  # answer="auto"
    with pytest.warns(UserWarning, match="cannot see the answer phase"):
        agent.reset(problem, seed=0)
    for obs in _answer_observations(5, 20):
        action = agent.act(obs)
        assert sorted(np.flatnonzero(action)) == sorted(top_k(obs["means"], 2, None))
    assert agent.projections == 0
    with pytest.raises(ValueError, match="answer='policy'.*cannot see the answer phase"):
        agents.PolicyAgent(model, answer="policy").reset(problem, seed=0)


def test_policy_that_sees_the_phase_answers_itself_without_warning() -> None:
    model = _plain_sb3_model("agent")
    env = gym.make("TopK-Batch-v0", n_arms=5, k=2, budget=20, batch_size=5, answer="agent")
    agent = agents.PolicyAgent(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = agents.run_episode(env, agent, seed=0)
    assert result.terminated and agent.decisions >= 5


def test_policy_without_a_phase_plays_episodes_scored_on_the_empirical_answer() -> None:
    model = _plain_sb3_model("empirical")
    env = gym.make(
        "TopK-Batch-v0",
        n_arms=5,
        k=2,
        budget=20,
        batch_size=5,
        answer="agent",
        instance=[0.9, 0.7, 0.5, 0.3, 0.1],
        distribution="gaussian",
        sigma=1.0,
    )
    agent = agents.PolicyAgent(model)
    with pytest.warns(UserWarning, match="cannot see the answer phase"):
        for seed in range(5):
            result = agents.run_episode(env, agent, seed=seed)
            base = env.unwrapped
            values = np.where(base._counts > 0, base._emp, -np.inf)
            assert result.recommendation.tolist() == sorted(top_k(values, 2, None).tolist())


# ------------------------------------------------------------------ topk-bench train --compare
def test_topk_bench_train_compare(tmp_path, capsys) -> None:
    pytest.importorskip("stable_baselines3")
    from topk_bench.cli import main

    code = main(
        [
            "train", "--timesteps", "32", "--num-envs", "2", "--eval-episodes", "0",
            "--env", "n_arms=4", "--env", "k=2", "--env", "budget=12",
            "--algo-kwargs", '{"n_steps": 16, "batch_size": 16, "n_epochs": 1}',
            "--compare", "uniform,round_robin", "--test-episodes", "4",
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    for label in ("ppo", "uniform", "round_robin"):
        assert f"| {label} | 4 |" in out


# ------------------------------------------------------------------ unspendable budgets
def test_env_refuses_a_budget_beyond_max_batches() -> None:
    with pytest.raises(ValueError, match=r"budget=200.*max_batches=5.*50 pulls"):
        gym.make("TopK-Batch-v0", n_arms=10, k=3, budget=200, batch_size=10, max_batches=5)
    with pytest.raises(ValueError, match=r"budget=30.*max_batches=3"):
        gym.make("TopK-v0", n_arms=5, k=2, budget=30, max_batches=3)
    # r n below b: at most n r = 8 pulls per batch
    with pytest.raises(ValueError, match=r"budget=50.*max_batches=5.*40 pulls"):
        gym.make("TopK-Batch-v0", n_arms=4, k=1, budget=50, batch_size=10, repeat_limit=2,
                 max_batches=5)  # fmt: skip
    for kw in ({"budget": 50}, {"budget": 40}, {"budget": 10**6, "batch_size": None}):
        kw = {"batch_size": 10, **kw}
        gym.make("TopK-Batch-v0", n_arms=10, k=3, max_batches=5, **kw)


def test_batch_preset_with_fewer_batches_is_refused_naming_both(capsys) -> None:
    pytest.importorskip("stable_baselines3")
    from topk_bench.cli import main

    code = main(["train", "--preset", "batch", "--env", "max_batches=5", "--timesteps", "16"])
    assert code == 2
    err = capsys.readouterr().err
    assert "budget=200" in err and "max_batches=5" in err and "50" in err


# ------------------------------------------------------------------ report: compile time
def test_report_keeps_first_episode_warm_up_apart(tmp_path, monkeypatch) -> None:
    pytest.importorskip("pyarrow")
    from topk_bench import episodes
    from topk_bench.config import load
    from topk_bench.report import build_report
    from topk_bench.run import run_experiment
    from topk_bench.store import read_results

    monkeypatch.setattr(episodes, "_WARMED", set())  # as in a fresh worker process
    exp = load(
        {
            "name": "warm-up",
            "metrics": ["aggregate_regret"],
            "runs": 4,
            "env": {"n_arms": 6, "k": 2, "budget": 60},
            "agents": [{"name": "uniform"}, {"name": "sar"}],
            "points": [{"label": "p"}],
        }
    )
    run_experiment(exp, tmp_path, jobs=1, progress=False)
    df = read_results(tmp_path).sort_values(["agent", "run"])
    for agent, group in df.groupby("agent"):
        assert group["warmup"].tolist() == [True, False, False, False], agent
    html = build_report(tmp_path, n_resamples=100)
    assert "warm-up" in html and "ms per warm episode" in html
    for agent, group in df.groupby("agent"):
        warm = group.loc[~group["warmup"].astype(bool), "wall_time"]
        assert f"{1000 * warm.mean():.2f}" in html, agent
