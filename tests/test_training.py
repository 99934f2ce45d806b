"""agents.learned training: short SB3 runs; saved models replay exactly through PolicyAgent."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")

import agents  # noqa: E402
from agents.learned.adapter import SampledPolicyAgent  # noqa: E402
from agents.learned.evaluation import evaluate, summarize  # noqa: E402
from agents.learned.families import evaluation_env  # noqa: E402
from agents.learned.metadata import saved_agent_kwargs  # noqa: E402
from agents.learned.networks import ArmSetPolicy  # noqa: E402
from agents.learned.saving import load_policy  # noqa: E402
from agents.learned.training import TrainConfig, train  # noqa: E402
from agents.learned.vec_env import VecFlatObservation, make_training_env  # noqa: E402
from bandit_envs.wrappers import FlatObservation  # noqa: E402

STD = {"instance": "beta-random", "n_arms": 6, "k": 2, "budget": 30}
BATCH = {
    "instance": "beta-random",
    "n_arms": 6,
    "k": 2,
    "budget": 24,
    "batch_size": 4,
    "repeat_limit": 2,
}
FAST = {"n_steps": 64, "batch_size": 128, "n_epochs": 2}


def _observations(env_id: str, kwargs: dict, count: int = 30) -> list[dict]:
    """Observations from random play on the evaluation form of the family."""
    eid, ekw = evaluation_env(env_id, kwargs)
    env = gym.make(eid, **ekw)
    out = []
    obs, _ = env.reset(seed=11)
    while len(out) < count:
        out.append(obs)
        obs, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            obs, _ = env.reset()
    return out


@pytest.mark.parametrize(
    "env_id,kwargs,algo,policy",
    [
        ("TopK-v0", STD, "ppo", "arm-set"),
        ("TopK-Batch-v0", BATCH, "ppo", "arm-set"),
        ("TopK-Batch-v0", {**BATCH, "answer": "agent"}, "a2c", "arm-set"),
        ("TopK-v0", STD, "dqn", "mlp"),
    ],
)
def test_train_save_reload_play(
    tmp_path: Path, env_id: str, kwargs: dict, algo: str, policy: str
) -> None:
    algo_kwargs = (
        FAST if algo == "ppo" else ({"n_steps": 8} if algo == "a2c" else {"learning_starts": 200})
    )
    result = train(
        TrainConfig(
            env_id,
            kwargs,
            algo=algo,
            policy=policy,
            total_timesteps=2048,
            num_envs=4,
            seed=0,
            algo_kwargs=algo_kwargs,
            eval_episodes=5,
            save_path=tmp_path / "model",
        ),
        log=None,
    )
    assert result.timesteps >= 2048 and result.path == tmp_path / "model.zip"
    assert len(result.evaluations) == 1 and result.evaluations[0]["timesteps"] == result.timesteps
    meta = json.loads((tmp_path / "model.json").read_text())
    assert (
        meta["algo"] == algo and meta["env_id"] == env_id and meta["training"]["policy"] == policy
    )
    expected_answer = "policy" if kwargs.get("answer") == "agent" else "empirical"
    assert meta["policy_agent"]["answer"] == expected_answer
    assert set(result.evaluations[0]) >= (
        {"deterministic"} if algo == "dqn" else {"deterministic", "sampled"}
    )
    deterministic = meta["policy_agent"]["deterministic"]
    final = result.evaluations[-1]
    if algo != "dqn":  # sampling only when clearly better than deterministic on validation
        clearly = (
            final["sampled"]["regret"]
            < final["deterministic"]["regret"] - final["deterministic"]["regret_ci"]
        )
        assert deterministic == (not clearly)
    else:
        assert deterministic

    # The trained policy plays through PolicyAgent on the benchmark's environment.
    eid, ekw = evaluation_env(env_id, kwargs)
    results = evaluate(result.agent(), eid, ekw, range(3))
    budget = kwargs["budget"]
    assert all(
        r.terminated and r.recommendation.shape == (2,) and r.pulls <= budget for r in results
    )

    # Reloaded: same transform, same answer rule, same actions for the same observations.
    loaded = load_policy(result.path)
    assert loaded.obs_transform == result.transform and loaded.answer == expected_answer
    assert isinstance(loaded, SampledPolicyAgent) != deterministic
    fresh = result.agent()
    problem = gym.make(eid, **ekw).unwrapped.problem
    loaded.reset(problem, seed=0)
    fresh.reset(problem, seed=0)
    for obs in _observations(env_id, kwargs):
        np.testing.assert_array_equal(loaded.act(obs), fresh.act(obs))

    # What agents.make("ppo:PATH") loads carries the metadata inside SB3's zip.
    plain = agents.make(f"{algo}:{result.path}")
    stored = saved_agent_kwargs(plain.policy)
    assert stored["obs_transform"] == result.transform and stored["answer"] == expected_answer
    (tmp_path / "model.json").unlink()  # the zip alone is enough
    assert saved_agent_kwargs(plain.policy, result.path)["obs_transform"] == result.transform
    stored["deterministic"] = True
    fresh = result.agent(deterministic=True)
    fresh.reset(problem, seed=0)
    rebuilt = agents.PolicyAgent(plain.policy, **stored)
    rebuilt.reset(problem, seed=0)
    for obs in _observations(env_id, kwargs, 10):
        np.testing.assert_array_equal(rebuilt.act(obs), fresh.act(obs))


def test_training_is_deterministic_for_a_seed() -> None:
    runs = [
        train(
            TrainConfig(
                "TopK-v0",
                STD,
                total_timesteps=512,
                num_envs=2,
                seed=3,
                algo_kwargs=FAST,
                eval_episodes=0,
                backend="dummy",
            ),
            log=None,
        )
        for _ in range(2)
    ]
    obs = [
        FlatObservation.from_env(gym.make("TopK-v0", **STD))(o)
        for o in _observations("TopK-v0", STD, 8)
    ]
    x = torch.as_tensor(np.stack(obs))
    p0, p1 = (r.model.policy.get_distribution(x).distribution.probs.detach().numpy() for r in runs)
    np.testing.assert_array_equal(p0, p1)


def test_training_leaves_no_sb3_log_directory(tmp_path: Path, monkeypatch) -> None:
    """``train`` gives the model its own logger: SB3's default one, built by ``learn``,
    creates an empty ``SB3-<date>`` directory in the temporary directory on every call."""
    import tempfile

    monkeypatch.delenv("SB3_LOGDIR", raising=False)  # (conftest points it at a tmp dir)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    result = train(
        TrainConfig(
            "TopK-v0", STD, total_timesteps=64, num_envs=2, algo_kwargs=FAST, eval_episodes=0
        ),
        log=None,
    )
    assert result.model.num_timesteps >= 64
    assert not list(tmp_path.glob("SB3-*"))


@pytest.mark.parametrize("env_id,kwargs", [("TopK-v0", STD), ("TopK-Batch-v0", BATCH)])
def test_arm_set_policy_is_permutation_equivariant(env_id: str, kwargs: dict) -> None:
    result = train(
        TrainConfig(
            env_id, kwargs, total_timesteps=256, num_envs=2, algo_kwargs=FAST, eval_episodes=0
        ),
        log=None,
    )
    assert isinstance(result.model.policy, ArmSetPolicy)
    t = result.transform
    obs = _observations(env_id, kwargs, 12)[-1]
    perm = np.random.default_rng(0).permutation(6)
    permuted = {
        key: (np.asarray(v)[perm] if key in ("counts", "means") else v) for key, v in obs.items()
    }
    policy = result.model.policy
    with torch.no_grad():
        d0 = policy.get_distribution(torch.as_tensor(t(obs)[None])).distribution
        d1 = policy.get_distribution(torch.as_tensor(t(permuted)[None])).distribution
        v0 = policy.predict_values(torch.as_tensor(t(obs)[None]))
        v1 = policy.predict_values(torch.as_tensor(t(permuted)[None]))
    if env_id == "TopK-v0":  # the arms' probabilities permute, the stop action's stays
        p0, p1 = d0.probs[0].numpy(), d1.probs[0].numpy()
        np.testing.assert_allclose(p1, np.append(p0[:-1][perm], p0[-1]), rtol=1e-5, atol=1e-7)
    else:
        p0 = np.stack([d.probs[0].numpy() for d in d0])
        p1 = np.stack([d.probs[0].numpy() for d in d1])
        np.testing.assert_allclose(p1, p0[perm], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(v1.numpy(), v0.numpy(), rtol=1e-5, atol=1e-6)


def test_vec_flat_observation_transforms_terminal_observations() -> None:
    for backend in ("native", "dummy"):
        venv, transform, used = make_training_env(
            "TopK-v0", 3, seed=0, env_kwargs=STD, backend=backend
        )
        assert used == backend and isinstance(venv, VecFlatObservation)
        obs = venv.reset()
        assert obs.shape == (3, transform.observation_space.shape[0])
        for t in range(30):
            obs, rewards, dones, infos = venv.step(np.full(3, t % 6))
        assert dones.all()
        for info in infos:
            final = info["terminal_observation"]
            assert final.shape == obs.shape[1:] and final[:6].sum() == pytest.approx(1.0)
        assert np.all(obs[:, :6] == 0)  # restarted


def test_evaluation_env_and_bad_arguments() -> None:
    eid, kw = evaluation_env("TopK-v0", STD)
    assert (
        eid == "TopK-Batch-v0"
        and kw["batch_size"] == 1
        and kw["answer"] == "agent"
        and kw["paired"]
    )
    _, kw = evaluation_env("TopK-Batch-v0", BATCH)
    # the policy plays the env the scripted agents play (PolicyAgent projects its actions)
    assert "invalid_action" not in kw and kw["batch_size"] == 4
    with pytest.raises(ValueError, match="DQN"):
        train(
            TrainConfig("TopK-Batch-v0", BATCH, algo="dqn", policy="mlp", total_timesteps=10),
            log=None,
        )
    with pytest.raises(ValueError, match="arm-set"):
        train(
            TrainConfig("TopK-v0", STD, algo="dqn", policy="arm-set", total_timesteps=10),
            log=None,
        )
    assert TrainConfig("TopK-v0", STD, algo="dqn").policy == "mlp"  # each algo's default
    with pytest.raises(ValueError, match="invalid_action"):
        train(
            TrainConfig("TopK-Batch-v0", {**BATCH, "invalid_action": "raise"}, total_timesteps=10),
            log=None,
        )
    with pytest.raises(ValueError, match="algo"):
        train(TrainConfig("TopK-v0", STD, algo="sac", total_timesteps=10), log=None)


def test_summarize_intervals() -> None:
    results = evaluate(agents.make("uniform"), *evaluation_env("TopK-v0", STD), range(40))
    s = summarize("uniform", results)
    regrets = np.array([r.aggregate_regret for r in results])
    assert s.regret == pytest.approx(regrets.mean()) and s.episodes == 40
    assert s.misid_low <= s.misid <= s.misid_high
    assert s.regret_ci == pytest.approx(1.96 * regrets.std(ddof=1) / np.sqrt(40))
    assert s.row().startswith("| uniform | 40 |")


def test_sampled_policy_agent_is_seeded() -> None:
    result = train(
        TrainConfig(
            "TopK-Batch-v0",
            BATCH,
            total_timesteps=256,
            num_envs=2,
            algo_kwargs=FAST,
            eval_episodes=0,
        ),
        log=None,
    )
    eid, ekw = evaluation_env("TopK-Batch-v0", BATCH)
    env = gym.make(eid, **ekw)
    agent = result.agent(deterministic=False)
    assert isinstance(agent, SampledPolicyAgent)
    runs = [agents.run_episode(env, agent, seed=s) for s in (5, 5, 6)]
    assert runs[0].recommendation.tolist() == runs[1].recommendation.tolist()
    assert (
        runs[0].aggregate_regret == runs[1].aggregate_regret
        and runs[0].pulls == runs[1].pulls == 24
    )
    obs, _ = env.reset(seed=0)
    agent.reset(env.unwrapped.problem, seed=1)
    draws = np.stack([agent.policy_action(obs) for _ in range(200)])
    assert draws.min() >= 0 and draws.max() <= 2 and len({tuple(d) for d in draws}) > 10
    # what it plays is each draw in the env's action set: at most b = 4 pulls
    agent.reset(env.unwrapped.problem, seed=1)
    played = np.stack([agent.act(obs) for _ in range(200)])
    assert played.sum(axis=1).max() <= 4 and np.all(played <= draws)
    assert agent.projections == int((draws.sum(axis=1) > 4).sum()) > 0
    # the empirical distribution of each arm's count follows the policy's probabilities
    x = torch.as_tensor(result.transform(obs)[None])
    with torch.no_grad():
        dists = result.model.policy.get_distribution(x).distribution
    probs = np.stack([d.probs[0].numpy() for d in dists])
    freq = np.stack([(draws == v).mean(axis=0) for v in range(3)], axis=1)
    assert np.abs(freq - probs).max() < 0.15
    with pytest.raises(TypeError, match="distribution"):
        SampledPolicyAgent(lambda obs: 0)
