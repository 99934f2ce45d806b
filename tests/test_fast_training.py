"""The fast training path (agents.learned.fast): network, action law, rollouts, export, CLI."""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np
import pytest
import torch

import agents
from agents.learned.adapter import _action_probs
from agents.learned.callbacks import keep_deterministic
from agents.learned.cli import add_train_arguments, fast_config_from_args, train_from_args
from agents.learned.evaluation import VALIDATION_SEED0
from agents.learned.families import PRESETS, evaluation_env, family_prior, training_kwargs
from agents.learned.fast import FastConfig, fast_train
from agents.learned.fast.agent import NetAgent
from agents.learned.fast.network import NEVER
from agents.learned.fast.rollout import ActionLaw, Rollouts, play_scores
from agents.learned.fast.train import _network, _transform, _update, episode_horizon, to_sb3
from agents.runner import run_episode

pytestmark = pytest.mark.xdist_group("fast-training")


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """As fast_train runs: small batches on torch's thread pool crawl on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _components(config: FastConfig):
    """The training env's kwargs, the observation transform, the network and its law."""
    kwargs = training_kwargs(config.env_id, config.env_kwargs)
    transform = _transform(config, kwargs)
    net, law = _network(config, transform, kwargs)
    return kwargs, transform, net, law


def _parts(preset: str, **over):
    over.setdefault("eval_episodes", 0)
    over.setdefault("compile", False)
    config = FastConfig(preset, num_envs=16, n_steps=4, **over)
    return (config, *_components(config))


@pytest.mark.parametrize(
    ("preset", "over"),
    [
        ("one-pull", {}),
        ("batch-budget", {"prior": (5, 5)}),
        ("fixed-confidence", {"shared": True, "hidden": 8, "layers": 3}),
    ],
)
def test_export_gives_the_same_policy_and_value(preset, over):
    config, kwargs, transform, net, _ = _parts(preset, **over)
    with torch.no_grad():  # non-trivial weights: the initial heads are near zero
        for p in net.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    model = to_sb3(net, config, kwargs, transform)
    obs = torch.from_numpy(
        np.random.default_rng(0)
        .uniform(-1, 1, (64, transform.observation_space.shape[0]))
        .astype(np.float32)
    )
    with torch.no_grad():
        logits, value = net(obs)
        actor, critic = model.policy.mlp_extractor(obs)
        theirs = model.policy.action_net(actor)
        their_value = model.policy.value_net(critic).squeeze(-1)
    if net.stop_head is None and theirs.shape[1] == logits.shape[1] + 1:
        assert torch.all(theirs[:, -1] == NEVER)  # the fixed-budget stop, pinned off
        theirs = theirs[:, :-1]
    torch.testing.assert_close(theirs, logits, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(their_value, value, rtol=1e-5, atol=1e-5)


def test_fixed_budget_offers_no_stop_and_fixed_confidence_does():
    assert _parts("one-pull")[3].stop_head is None
    fc = {"n_arms": 5, "k": 1, "setting": "fixed_confidence", "instance": "beta-random"}
    config, kwargs, transform, net, law = _parts("TopK-v0", env_kwargs={**fc, "max_batches": 50})
    assert net.stop_head is not None and law.stop
    assert net(torch.zeros(2, transform.observation_space.shape[0]))[0].shape == (2, 6)


@pytest.mark.parametrize("per_arm", [1, 6])
def test_action_law_matches_torch_categorical(per_arm):
    law = ActionLaw(5, per_arm, stop=False)
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(7, 5 * per_arm, generator=g)
    actions = law.sample(logits, g)
    logp, entropy = law.log_prob_entropy(logits, actions)
    if per_arm == 1:
        dist = torch.distributions.Categorical(logits=logits)
        want_logp, want_entropy = dist.log_prob(actions), dist.entropy()
    else:
        dist = torch.distributions.Categorical(logits=logits.reshape(7, 5, per_arm))
        want_logp, want_entropy = dist.log_prob(actions).sum(-1), dist.entropy().sum(-1)
    torch.testing.assert_close(logp, want_logp)
    torch.testing.assert_close(entropy, want_entropy)
    want_mode = logits.argmax(-1) if per_arm == 1 else logits.reshape(7, 5, per_arm).argmax(-1)
    assert torch.equal(law.mode(logits), want_mode)


def test_gumbel_sampling_follows_the_softmax():
    """Each action's frequency lies within a 5-sigma binomial band of its probability."""
    law = ActionLaw(4, 1, stop=False)
    logits = torch.tensor([[0.0, 1.0, -1.0, 2.0]]).expand(40_000, 4)
    counts = torch.bincount(law.sample(logits, torch.Generator().manual_seed(3)), minlength=4)
    p = torch.softmax(logits[0], 0).numpy()
    n = 40_000
    assert np.all(np.abs(counts.numpy() - n * p) <= 5 * np.sqrt(n * p * (1 - p)))


def test_stagger_spreads_the_envs_over_an_episode():
    config, kwargs, transform, net, law = _parts("one-pull")
    rollouts = Rollouts(config.env_id, kwargs, transform, 256, 0)
    g = torch.Generator().manual_seed(0)
    taken = rollouts.stagger(net, law, episode_horizon(kwargs), g)
    assert taken == 256 * 200
    pulls = rollouts._raw["counts"].sum(axis=1)
    # env i restarted at a uniform step o_i: it has made 200 - o_i pulls (0 if o_i = 0
    # ended it exactly), so the phases cover the episode
    assert len(np.unique(pulls)) > 100
    assert pulls.min() >= 0 and pulls.max() <= 200
    rollouts.close()


def test_rollout_advantages_are_gae_of_the_terminal_reward():
    """With gamma = lambda = 1 the return of every step is the episode's reward to go."""
    config, kwargs, transform, net, law = _parts("one-pull")
    small = {**kwargs, "budget": 6, "n_arms": 3, "k": 1}
    transform = _transform(config, small)
    net, law = _network(config, transform, small)
    rollouts = Rollouts("TopK-v0", small, transform, 5, 0, reward_scale=1.0)
    rollout = rollouts.collect(net, law, 6, 1.0, 1.0, torch.Generator().manual_seed(0))
    final = -np.array(rollouts.scores)  # one episode per env, ended at the last step
    assert len(final) == 5
    np.testing.assert_allclose(rollout.returns.numpy(), np.tile(final, (6, 1)), atol=1e-6)
    rollouts.close()


def test_tiny_training_saves_a_model_that_plays_as_trained(tmp_path):
    path = tmp_path / "fast"
    result = fast_train(
        FastConfig(
            "batch-budget",
            total_timesteps=2_000,
            num_envs=32,
            n_steps=8,
            eval_episodes=50,
            compile=False,
            save_path=path,
            seed=3,
        ),
        log=None,
    )
    meta = json.loads((tmp_path / "fast.json").read_text())
    assert meta["training"]["path"] == "fast"
    assert meta["training"]["timesteps"] == result.metadata["training"]["timesteps"] >= 2_000
    assert set(meta["training"]["evaluations"][-1]) >= {"deterministic", "sampled", "timesteps"}
    agent = agents.make(f"ppo:{path}.zip")
    env = gym.make("TopK-Batch-v0", **{**PRESETS["batch-budget"][1], "invalid_action": "project"})
    obs, _ = env.reset(seed=0)
    flat = torch.from_numpy(result.transform(obs)[None].astype(np.float32))
    with torch.no_grad():
        want = result.net(flat)[0].reshape(10, 6).argmax(-1).numpy()
    played = result.model.predict(result.transform(obs), deterministic=True)[0]
    np.testing.assert_array_equal(played, want)
    episode = run_episode(env, agent, seed=0)
    assert episode.pulls == 200 and 0 <= episode.aggregate_regret <= 1
    scores = play_scores(
        result.net,
        ActionLaw(10, 6, False),
        "TopK-Batch-v0",
        training_kwargs("TopK-Batch-v0", PRESETS["batch-budget"][1]),
        result.transform,
        20,
        0,
    )
    assert scores.shape == (20,) and np.all((scores >= 0) & (scores <= 1))


def test_keep_best_keeps_the_checkpoint_with_the_lowest_validation_score(tmp_path):
    """keep_best: the saved ``-best`` model is the evaluation with the lowest score in the
    mode it would play; re-played on the validation episodes it scores exactly that."""
    config = FastConfig(
        "one-pull",
        total_timesteps=16_384,
        num_envs=16,
        n_steps=8,
        eval_every=2_048,
        eval_episodes=40,
        learning_rate=0.03,
        keep_best=True,
        compile=False,
        save_path=tmp_path / "m",
        seed=4,
    )
    result = fast_train(config, log=None)
    curve = result.curve
    assert len(curve) >= 6
    for entry in curve:
        played = "deterministic" if keep_deterministic(entry) else "sampled"
        assert entry["mode"] == played and entry["score"] == entry[played]["score"]
    scores = [entry["score"] for entry in curve]
    assert len(set(scores)) > 1  # the choice is not trivial at this step size
    best = result.best
    at = best.metadata["training"]["best_at"]
    assert at == curve[int(np.argmin(scores))] and at["score"] == min(scores)
    assert best.path == tmp_path / "m-best.zip" and (tmp_path / "m-best.json").exists()
    saved = json.loads((tmp_path / "m-best.json").read_text())
    assert saved["training"]["best_at"]["timesteps"] == at["timesteps"]
    assert saved["policy_agent"]["deterministic"] == (at["mode"] == "deterministic")
    assert json.loads((tmp_path / "m.json").read_text())["training"].get("best_at") is None
    kwargs, transform, _, law = _components(config)
    replay = play_scores(
        best.net,
        law,
        "TopK-v0",
        kwargs,
        transform,
        40,
        VALIDATION_SEED0,
        config.prior,
        deterministic=at["mode"] == "deterministic",
    )
    assert float(replay.mean()) == at["score"]
    with pytest.raises(ValueError, match="keep_best=True with eval_episodes=0"):
        FastConfig("one-pull", keep_best=True, eval_episodes=0)


def test_initial_network_of_another_n_starts_the_training():
    """A curriculum's stage: the weights of a 4-arm run start a 10-arm run (the arm-set
    weights do not depend on n); zero steps of training keep them exactly."""
    small = {**PRESETS["one-pull"][1], "n_arms": 4, "k": 1, "budget": 20}
    tiny = dict(num_envs=16, n_steps=4, eval_episodes=0, compile=False, seed=1)
    first = fast_train(FastConfig("TopK-v0", small, total_timesteps=256, **tiny), log=None)
    second = fast_train(
        FastConfig("one-pull", total_timesteps=0, **tiny), initial=first.net, log=None
    )
    assert second.net.n_arms == 10 and second.metadata["training"]["warm_start"]
    for name, weight in first.net.state_dict().items():
        torch.testing.assert_close(second.net.state_dict()[name], weight, rtol=0, atol=0)
    with pytest.raises(ValueError, match="layout"):
        fast_train(
            FastConfig("one-pull", total_timesteps=0, hidden=8, **tiny),
            initial=first.net,
            log=None,
        )
    with pytest.raises(TypeError, match="FastArmSetNet"):
        fast_train(FastConfig("one-pull", total_timesteps=0, **tiny), initial={}, log=None)


def test_linear_schedule_and_raw_advantages():
    """lr_schedule='linear' sets each update's step size to lr * (1 - steps / total);
    normalize_advantage=False trains on the advantages as the rollout computed them."""
    seen: list[float] = []
    import agents.learned.fast.train as fast_module

    original = fast_module._update

    def spy(net, law, optimizer, rollout, config, generator):
        seen.append(optimizer.param_groups[0]["lr"])
        return original(net, law, optimizer, rollout, config, generator)

    tiny = dict(num_envs=16, n_steps=4, eval_episodes=0, compile=False, seed=2)
    fast_module._update = spy
    try:
        fast_train(
            FastConfig("one-pull", total_timesteps=4096, lr_schedule="linear", **tiny), log=None
        )
    finally:
        fast_module._update = original
    # the stagger's untrained steps count: the first update starts below 1e-3, then each
    # of 64 steps (16 envs x 4) takes 1e-3 * 64 / 4096 off, down to the last above 0
    assert len(seen) > 10 and 0 < seen[-1] < seen[0] <= 1e-3
    np.testing.assert_allclose(np.diff(seen), -1e-3 * 64 / 4096, rtol=1e-9)
    # constant advantages: standardised they are all 0 (no policy gradient), raw they
    # are not (the policy moves)
    config, kwargs, transform, net, law = _parts("one-pull", seed=2)
    rollouts = Rollouts(config.env_id, kwargs, transform, 16, 2, reward="env")
    rollout = rollouts.collect(net, law, 4, 1.0, 0.95, torch.Generator().manual_seed(0))
    rollouts.close()
    rollout.advantages.fill_(0.5)
    moved = {}
    for normalize in (True, False):
        trained = _parts("one-pull", seed=2)[3]
        trained.load_state_dict(net.state_dict())
        optimizer = torch.optim.SGD(trained.parameters(), lr=1.0)
        quiet = FastConfig(
            "one-pull", normalize_advantage=normalize, ent_coef=0.0, vf_coef=0.0, **tiny
        )
        fast_module._update(trained, law, optimizer, rollout, quiet, torch.Generator())
        moved[normalize] = any(
            not torch.equal(trained.state_dict()[k], v) for k, v in net.state_dict().items()
        )
    assert moved == {True: False, False: True}


def test_fast_config_refuses_bad_values():
    with pytest.raises(ValueError, match="algo='dqn'"):
        FastConfig("one-pull", algo="dqn")
    with pytest.raises(ValueError, match="update_fraction=0"):
        FastConfig("one-pull", update_fraction=0)
    with pytest.raises(ValueError, match="reward='posterior' needs prior"):
        FastConfig("one-pull", reward="posterior", prior=None)
    with pytest.raises(ValueError, match="scores 'misidentified'"):
        FastConfig("misid", reward="posterior")
    with pytest.raises(ValueError, match="prior='flat'"):
        FastConfig("one-pull", prior="flat")
    with pytest.raises(ValueError, match="gamma=2"):
        FastConfig("one-pull", gamma=2)
    assert FastConfig("misid").reward == "env"  # auto: misidentification is not shaped
    with pytest.raises(ValueError, match="needs action masks"):
        FastConfig("batch-budget-pbp")
    with pytest.raises(ValueError, match="num_envs=0"):
        FastConfig("one-pull", num_envs=0)
    with pytest.raises(ValueError, match="lr_schedule='cosine'"):
        FastConfig("one-pull", lr_schedule="cosine")
    with pytest.raises(ValueError, match="normalize_advantage=1"):
        FastConfig("one-pull", normalize_advantage=1)


def test_family_prior():
    assert family_prior(PRESETS["one-pull"][1]) == (5.0, 5.0)
    assert family_prior({"instance": "jun2016-linear"}) is None
    assert family_prior({"instance": "beta-random", "distribution": "gaussian"}) is None


def _args(*argv):
    return add_train_arguments(argparse.ArgumentParser()).parse_args(list(argv))


def test_cli_fast_defaults_and_refusals():
    args = _args("--preset", "one-pull", "--fast")
    env_id, env_kwargs = PRESETS["one-pull"]
    config = fast_config_from_args(args, env_id, env_kwargs)
    assert (config.prior, config.reward, config.num_envs) == ((5.0, 5.0), "posterior", 4096)
    assert (config.gamma, config.gae_lambda) == (0.9, 0.8)
    plain = fast_config_from_args(_args("--fast", "--no-prior"), env_id, env_kwargs)
    assert (plain.prior, plain.reward, plain.gamma) == (None, "env", 1.0)
    tuned = fast_config_from_args(
        _args("--fast", "--algo-kwargs", '{"gamma": 0.5}'), env_id, env_kwargs
    )
    assert tuned.gamma == 0.5 and not tuned.keep_best
    assert fast_config_from_args(_args("--fast", "--keep-best"), env_id, env_kwargs).keep_best
    for argv, match in [
        (("--fast", "--policy", "mlp"), "--policy is an option of the SB3 path"),
        (("--fast", "--algo", "dqn"), "--fast trains ppo or a2c"),
        (("--fast", "--algo-kwargs", '{"n_epochs": 3}'), "not FastConfig fields"),
        (("--fast", "--no-prior", "--prior", "1", "1"), "contradict"),
    ]:
        with pytest.raises(ValueError, match=match):
            fast_config_from_args(_args(*argv), env_id, env_kwargs)
    with pytest.raises(ValueError, match="--no-prior is an option of --fast"):
        train_from_args(_args("--preset", "one-pull", "--no-prior"), log=None)


def test_posterior_reward_is_expected_for_few_outcomes_and_realised_otherwise():
    from agents.learned.vec_env import expected_value_gain, top_k_posterior_value

    config, kwargs, transform, net, law = _parts("batch-budget")
    rollouts = Rollouts(
        config.env_id, kwargs, transform, 2, 0, reward="posterior", prior=(5.0, 5.0)
    )
    before = {"counts": np.array([[2] * 10, [2] * 10]), "means": np.full((2, 10), 0.5)}
    before["means"][:, :3] = 1.0
    pulls = np.zeros((2, 10), dtype=np.int64)
    pulls[0, 3] = 5  # 6 joint outcomes: the expectation
    pulls[1, :] = 1  # 1,024 joint outcomes: the realised change
    after = {"counts": before["counts"] + pulls, "means": before["means"].copy()}
    after["means"][1] = 0.2
    done = np.zeros(2, dtype=bool)
    reward = rollouts._posterior_reward(before, after, {}, done)
    want0 = expected_value_gain(before["counts"][0], before["means"][0], pulls[0], (5, 5), 3)
    want1 = top_k_posterior_value(after["counts"][1], after["means"][1], (5, 5), 3) - (
        top_k_posterior_value(before["counts"][1], before["means"][1], (5, 5), 3)
    )
    np.testing.assert_allclose(reward, [want0, want1])
    rollouts.close()


# ------------------------------------------------------------------ the recurrent variant
#: A family whose episodes (6 pulls) end several times within a rollout.
SHORT = {**PRESETS["one-pull"][1], "n_arms": 4, "k": 1, "budget": 6}
SHORT_BATCH = {**PRESETS["batch-budget"][1], "budget": 60}  # 3 batches of 20


def _recurrent_parts(env_id, env_kwargs, **over):
    over.setdefault("compile", False)
    config = FastConfig(env_id, env_kwargs, recurrent=True, shared=False, eval_episodes=0, **over)
    kwargs, transform, net, law = _components(config)
    with torch.no_grad():  # non-trivial weights: the initial heads are near zero
        for p in net.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    rollouts = Rollouts(
        config.env_id,
        kwargs,
        transform,
        config.num_envs,
        0,
        reward=config.reward,
        reward_scale=config.reward_scale,
        prior=config.prior,
    )
    return config, kwargs, transform, net, law, rollouts


def test_recurrent_state_is_zeroed_at_episode_starts():
    config, kwargs, transform, net, law, rollouts = _recurrent_parts("TopK-v0", SHORT, num_envs=8)
    g = torch.Generator().manual_seed(0)
    rollout = rollouts.collect(net, law, 10, 1.0, 1.0, g)
    # every env starts at step 0 (fresh reset) and again after its 6 pulls
    assert rollout.starts[0].all() and rollout.starts[6].all()
    assert not rollout.starts[1:6].any() and not rollout.starts[7:].any()
    assert torch.all(rollout.state0 == 0)
    # after 10 steps no episode just ended: every state carries memory
    assert not rollouts._starts.any() and torch.all(rollouts._state.abs().sum(1) > 0)
    rollouts.collect(net, law, 2, 1.0, 1.0, g)  # steps 10, 11: the episodes end at 11
    assert rollouts._starts.all() and torch.all(rollouts._state == 0)
    # the network zeroes a starting env's state itself (the update's re-run relies on it)
    obs = rollout.obs[3]
    state = torch.randn(8, net.hidden, generator=g)
    start = torch.tensor([True, False] * 4)
    with torch.no_grad():
        fresh = net(obs, torch.zeros_like(state), torch.ones(8, dtype=torch.bool))
        mixed = net(obs, state, start)
    for ours, zeroed in zip(mixed, fresh, strict=True):
        torch.testing.assert_close(ours[start], zeroed[start], rtol=0, atol=0)
        assert not torch.equal(ours[~start], zeroed[~start])
    rollouts.close()


@pytest.mark.parametrize(
    ("env_id", "env_kwargs"), [("TopK-v0", SHORT), ("batch-budget", SHORT_BATCH)]
)
@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_recurrent_update_reruns_the_rollout_from_its_stored_state(env_id, env_kwargs, algo):
    """Truncated BPTT's key check: the update re-runs each sampled env's steps from the
    state stored at the rollout's start (through the episode starts within it) and gets
    the rollout's log-probabilities back before any gradient step (PPO ratio 1)."""
    config, kwargs, transform, net, law, rollouts = _recurrent_parts(
        env_id, env_kwargs, num_envs=32, n_steps=8, algo=algo, minibatch_size=64
    )
    g = torch.Generator().manual_seed(1)
    rollouts.stagger(net, law, episode_horizon(kwargs), g)  # envs at different phases
    rollout = rollouts.collect(net, law, 8, config.gamma, config.gae_lambda, g)
    assert rollout.starts.any() and not rollout.starts.all()
    assert (rollout.state0.abs().sum(1) > 0).any()  # episodes carried in from before
    with torch.no_grad():
        logits, values, _ = net.unroll(rollout.obs, rollout.state0, rollout.starts)
        logp = law.log_prob_entropy(logits, rollout.actions.flatten(0, 1))[0]
        torch.testing.assert_close(logp, rollout.log_probs.flatten(), rtol=0, atol=1e-6)
        torch.testing.assert_close(values, rollout.values.flatten(), rtol=0, atol=1e-6)
        # without the stored state and the starts the re-run would be another policy
        blind = net.unroll(rollout.obs, torch.zeros_like(rollout.state0), rollout.starts)[0]
        assert (
            law.log_prob_entropy(blind, rollout.actions.flatten(0, 1))[0] - logp
        ).abs().max() > 1e-3
    before = {k: v.clone() for k, v in net.state_dict().items()}
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    stats = _update(net, law, optimizer, rollout, config, g)
    assert stats["first_logp_error"] <= 1e-6  # the first minibatch's ratio is 1
    assert all(np.isfinite(v) for v in stats.values())
    assert any(not torch.equal(before[k], v) for k, v in net.state_dict().items())
    rollouts.close()


def test_tiny_recurrent_training_runs_validates_and_plays():
    result = fast_train(
        FastConfig(
            "batch-budget",
            total_timesteps=3_000,
            num_envs=32,
            n_steps=8,
            eval_episodes=40,
            compile=False,
            recurrent=True,
            seed=2,
        ),
        log=None,
    )
    assert result.model is None and result.path is None and result.net.recurrent
    training = result.metadata["training"]
    assert training["policy"] == "arm-set-gru" and training["fast_config"]["recurrent"]
    assert training["timesteps"] >= 3_000
    last = result.curve[-1]
    for mode in ("deterministic", "sampled"):
        assert 0 <= last[mode]["score"] <= 1
    with pytest.raises(ValueError, match="recurrent.*no stable-baselines3 model"):
        result.agent()
    agent = NetAgent.from_result(result)
    eid, ekw = evaluation_env(result.metadata["env_id"], result.metadata["env_kwargs"])
    env = gym.make(eid, **ekw)
    first = run_episode(env, agent, seed=5)
    assert first.pulls == 200 and 0 <= first.aggregate_regret <= 1
    assert agent._state is not None and not agent._episode_start
    second = run_episode(env, agent, seed=5)  # reset zeroes the state: the same episode
    np.testing.assert_array_equal(first.recommendation, second.recommendation)
    assert first.aggregate_regret == second.aggregate_regret
    # play_scores carries the state per env and resets it per episode: a sampled play
    # with the same seed is the same, and the deterministic play is NetAgent's
    kwargs = training_kwargs("TopK-Batch-v0", PRESETS["batch-budget"][1])
    law = ActionLaw(10, 6, False)
    args = (result.net, law, "TopK-Batch-v0", kwargs, result.transform, 20, 0)
    sampled = play_scores(*args, prior=(5.0, 5.0), deterministic=False)
    np.testing.assert_array_equal(sampled, play_scores(*args, (5.0, 5.0), deterministic=False))
    assert sampled.shape == (20,) and np.all((sampled >= 0) & (sampled <= 1))
    env.close()


@pytest.mark.parametrize("preset", ["one-pull", "batch-budget"])
def test_net_agent_acts_as_the_exported_model(preset):
    """On observations without ties (unpulled arms tie, and the two computations may
    break a tie apart by rounding) NetAgent's action is the exported model's."""
    config, kwargs, transform, net, _ = _parts(preset)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.3 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel())))
    model = to_sb3(net, config, kwargs, transform)
    agent = NetAgent(net, transform, answer="empirical")
    d = transform.observation_space.shape[0]
    for x in np.random.default_rng(0).uniform(-1, 1, (32, d)).astype(np.float32):
        probs = _action_probs(model, x, None)
        want = [int(np.argmax(p)) for p in probs]
        np.testing.assert_array_equal(np.atleast_1d(agent._net_action(x)), want)


def test_the_recurrent_variant_is_refused_where_models_are_saved(tmp_path):
    with pytest.raises(ValueError, match=r"recurrent=True with save_path=.*not saved"):
        FastConfig("one-pull", recurrent=True, save_path=tmp_path / "m")
    with pytest.raises(ValueError, match="recurrent=1 must be True or False"):
        FastConfig("one-pull", recurrent=1)
    env_id, env_kwargs = PRESETS["one-pull"]
    for argv in (
        ("--fast", "--algo-kwargs", '{"recurrent": true}'),
        ("--fast", "--out", str(tmp_path / "m"), "--algo-kwargs", '{"recurrent": true}'),
    ):
        with pytest.raises(ValueError, match="recurrent=true: topk-bench train --fast"):
            fast_config_from_args(_args(*argv), env_id, env_kwargs)
    from topk_bench import models
    from topk_bench.schema import ConfigError

    entry = {"model": "f", "preset": "one-pull", "fast": True, "timesteps": 100}
    with pytest.raises(ConfigError, match=r"train\[0\]\.algo_kwargs\.recurrent: the runner"):
        models._spec({**entry, "algo_kwargs": {"recurrent": True}}, "train[0]")
    # the network: no export, no state for a feed-forward net, a state for a recurrent one
    config, kwargs, transform, net, _ = _parts("one-pull")
    obs = torch.zeros(2, transform.observation_space.shape[0])
    with pytest.raises(ValueError, match="feed-forward FastArmSetNet .* takes no state"):
        net(obs, net.initial_state(2), torch.ones(2, dtype=torch.bool))
    recurrent = _recurrent_parts("TopK-v0", SHORT, num_envs=2)
    with pytest.raises(ValueError, match="needs state"):
        recurrent[3](torch.zeros(2, recurrent[2].observation_space.shape[0]))
    recurrent[5].close()
    with pytest.raises(ValueError, match="cannot be exported"):
        to_sb3(recurrent[3], config, recurrent[1], recurrent[2])
