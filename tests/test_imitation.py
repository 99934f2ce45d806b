"""DAgger imitation of the knowledge-gradient teacher (agents.learned.imitation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

import torch  # noqa: E402

from agents.bayesian.knowledge_gradient import kg_values  # noqa: E402
from agents.learned.imitation import ImitationSettings, imitate, kg_teacher  # noqa: E402
from agents.learned.training import TrainConfig, train  # noqa: E402

PRIOR = (5.0, 5.0)
FAMILY = {
    "instance": "beta-random",
    "instance_params": {"a": 5.0, "b": 5.0},
    "n_arms": 4,
    "k": 2,
    "budget": 12,
}


def test_teacher_picks_a_kg_star_arm() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        counts = rng.integers(0, 10, size=(1, 6))
        wins = np.minimum(rng.integers(0, 10, size=(1, 6)), counts)
        means = np.where(counts > 0, wins / np.maximum(counts, 1), 0.0)
        left = rng.integers(1, 30, size=1)
        arm = kg_teacher(counts, means, left, PRIOR, 2, rng)[0]
        values = kg_values(5.0 + wins[0], 5.0 + counts[0] - wins[0], 2, int(left[0]))
        assert values[arm] >= values.max() - 1e-12


def test_teacher_breaks_ties_at_random() -> None:
    rng = np.random.default_rng(1)
    zero = np.zeros((200, 4))
    arms = kg_teacher(zero, zero, np.full(200, 10), PRIOR, 2, rng)
    assert set(arms.tolist()) == {0, 1, 2, 3}  # all arms equal at the prior


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"nope": 1}, r"unknown keys \['nope'\]"),
        ({"teacher": "ppo"}, "teacher='ppo' must be one of"),
        ({"episodes": 0}, "episodes=0 must be an integer >= 1"),
        ({"epochs": 1.5}, "epochs=1.5 must be an integer >= 1"),
        ({"learning_rate": 0}, r"learning_rate=0 must be in \(0, 1\)"),
    ],
)
def test_bad_settings(values: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ImitationSettings.from_mapping(values)


def test_train_refuses_imitation_without_a_prior_or_on_batches() -> None:
    with pytest.raises(ValueError, match="imitate= needs prior"):
        train(
            TrainConfig("TopK-v0", FAMILY, total_timesteps=0, imitate={}, eval_episodes=0), log=None
        )
    batch = {**FAMILY, "batch_size": 2, "repeat_limit": 1}
    with pytest.raises(ValueError, match="imitate= needs prior"):
        train(
            TrainConfig(
                "TopK-Batch-v0", batch, total_timesteps=0, prior=PRIOR, imitate={}, eval_episodes=0
            ),
            log=None,
        )


def test_imitation_fits_the_teacher_and_is_recorded(tmp_path) -> None:
    """Each fit lowers the policy's cross-entropy on the teacher's actions."""
    torch.manual_seed(0)
    result = train(
        TrainConfig(
            "TopK-v0",
            FAMILY,
            total_timesteps=0,
            num_envs=4,
            prior=PRIOR,
            reward="posterior",
            obs_options={"features": ["post_gap", "post_std", "log_count"]},
            imitate={"iterations": 3, "episodes": 16, "epochs": 8, "batch_size": 64},
            eval_episodes=20,
            sample=False,
            save_path=tmp_path / "imit.zip",
        ),
        log=None,
    )
    history = result.metadata["training"]["imitation"]["history"]
    assert [h["iteration"] for h in history] == [0, 1, 2]
    # each iteration adds at least `episodes` episodes of `budget` states
    assert all(h["states"] >= (h["iteration"] + 1) * 16 * 12 for h in history)
    # the untrained policy is near uniform over the 4 arms and the stop action:
    # cross-entropy near log 5 on any labels
    assert history[0]["loss_before_fit"] == pytest.approx(math.log(5), abs=0.05)
    assert all(h["loss"] < h["loss_before_fit"] for h in history)
    assert 0.0 <= history[-1]["agreement_before_fit"] <= 1.0
    assert result.timesteps == 0
    agent = result.agent()
    assert agent.answer == "posterior" and agent.prior == PRIOR
    meta = result.metadata
    assert meta["training"]["imitation"]["teacher"] == "kg"
    assert (tmp_path / "imit.json").exists()


def test_imitate_needs_a_discrete_one_pull_env() -> None:
    import gymnasium as gym

    from agents.learned.vec_env import make_training_env
    from bandit_envs.wrappers import FlatObservation

    batch = {**FAMILY, "batch_size": 2, "repeat_limit": 1}
    probe = gym.make("TopK-Batch-v0", **batch)
    transform = FlatObservation.from_env(probe, features=["post_gap"], prior=PRIOR)
    venv, _, _ = make_training_env("TopK-Batch-v0", 2, env_kwargs=batch, transform=transform)
    with pytest.raises(ValueError, match="one-pull family"):
        imitate(None, venv.venv, transform, ImitationSettings(), budget=12)  # type: ignore[arg-type]


def test_dp_teacher_weights_the_tied_optimal_arms() -> None:
    from agents.bayesian.bayes_dp import solved
    from agents.learned.imitation import dp_teacher

    rng = np.random.default_rng(2)
    dp = solved(4, 2, 12, *PRIOR)
    for trial in range(40):
        counts = rng.multinomial(int(rng.integers(0, 12)), [0.25] * 4)[None]
        if trial % 5 == 0:
            counts = np.full((1, 4), trial % 3)  # equal arms: ties
        wins = rng.binomial(counts, 0.5)
        means = np.where(counts > 0, wins / np.maximum(counts, 1), 0.0)
        w = dp_teacher(counts, means, 12 - counts.sum(axis=1), PRIOR, 2, rng)[0]
        q = dp.q_values(wins[0], counts[0] - wins[0])
        tied = q >= q.max() - 1e-12
        assert np.array_equal(w > 0, tied)
        assert np.allclose(w[tied], 1 / tied.sum())


def test_dagger_on_the_dp_teacher_fits_its_tied_arms() -> None:
    """Soft targets (uniform over the teacher's tied arms): the fits lower the loss."""
    torch.manual_seed(0)
    result = train(
        TrainConfig(
            "TopK-v0",
            FAMILY,
            total_timesteps=0,
            num_envs=4,
            prior=PRIOR,
            obs_options={"features": ["post_gap", "post_std", "log_count"]},
            imitate={"teacher": "dp", "iterations": 3, "episodes": 16, "epochs": 8},
            eval_episodes=0,
        ),
        log=None,
    )
    history = result.metadata["training"]["imitation"]["history"]
    assert result.metadata["training"]["imitation"]["teacher"] == "dp"
    assert all(h["loss"] < h["loss_before_fit"] for h in history)
    assert 0.0 <= history[-1]["agreement_before_fit"] <= 1.0


def test_level_policy_is_the_greedy_policy_on_played_observations() -> None:
    """The observation rebuilt from a posterior state is the one the env shows: on the
    states of played episodes the level policy's arms are the greedy player's."""
    import gymnasium as gym

    from agents.learned.exact import level_policy

    torch.manual_seed(1)
    result = train(
        TrainConfig(
            "TopK-v0",
            FAMILY,
            total_timesteps=0,
            num_envs=2,
            prior=PRIOR,
            obs_options={"features": ["post_gap", "post_std", "log_count", "fraction", "mean"]},
            imitate={"teacher": "dp", "iterations": 1, "episodes": 4, "epochs": 2},
            eval_episodes=0,
        ),
        log=None,
    )
    policy, transform = result.model.policy, result.transform
    weights = level_policy(policy, transform, 12, PRIOR)
    env = gym.make("TopK-v0", **FAMILY)
    checked = 0
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            with torch.no_grad():
                action, _ = policy.predict(transform(obs), deterministic=True)
            wins = np.rint(obs["means"] * obs["counts"])
            alpha, beta = PRIOR[0] + wins, PRIOR[1] + obs["counts"] - wins
            w = weights(alpha[None], beta[None], 2, 12 - int(obs["counts"].sum()))[0]
            assert w[int(action)] == 1.0
            checked += 1
            obs, _, done, _, _ = env.step(int(action))
    assert checked == 5 * 12


def test_level_policy_refuses_a_policy_that_stops_with_pulls_left() -> None:
    """Exact evaluation spends the budget: a greedy stop (index n) is refused, by name."""
    import types

    import gymnasium as gym

    from agents.learned.exact import level_policy
    from bandit_envs.wrappers import FlatObservation

    class StopFirst:
        def get_distribution(self, x):
            logits = torch.zeros((x.shape[0], 5))
            logits[:, 4] = 1.0  # the stop action of TopK-v0 with 4 arms
            return types.SimpleNamespace(distribution=types.SimpleNamespace(logits=logits))

    transform = FlatObservation.from_env(
        gym.make("TopK-v0", **FAMILY), features=["post_gap"], prior=PRIOR
    )
    weights = level_policy(StopFirst(), transform, 12, PRIOR)
    alpha = np.full((1, 4), PRIOR[0])
    with pytest.raises(ValueError, match="stop action \\(index 4\\) with 12 pulls left"):
        weights(alpha, np.full((1, 4), PRIOR[1]), 2, 12)
