"""Experiments that train learned policies first (``[[train]]``, topk_bench.models)."""

from __future__ import annotations

import copy
import json
import os

import pytest
from gymnasium.utils import seeding

pytest.importorskip("stable_baselines3")

from _tiny_learned import FAMILY, TINY  # noqa: E402

import agents  # noqa: E402
from topk_bench import models, seeds  # noqa: E402
from topk_bench.config import load  # noqa: E402
from topk_bench.episodes import make_agent, make_env  # noqa: E402
from topk_bench.run import run_experiment  # noqa: E402
from topk_bench.schema import ConfigError  # noqa: E402
from topk_bench.store import StoreError, read_results  # noqa: E402


def config(**over):
    cfg = {
        "name": "tiny-learned",
        "metrics": ["aggregate_regret", "misidentified"],
        "runs": 3,
        "env": dict(FAMILY),
        "train": [
            {
                "model": "std",
                "env_id": "TopK-v0",
                "env": dict(FAMILY),
                "timesteps": 64,
                "num_envs": 2,
                "eval_episodes": 0,
                "algo_kwargs": dict(TINY),
            },
            {
                "model": "bat",
                "env_id": "TopK-Batch-v0",
                "env": {**FAMILY, "batch_size": 4, "repeat_limit": 2},
                "timesteps": 64,
                "num_envs": 2,
                "eval_episodes": 0,
                "algo_kwargs": dict(TINY),
            },
        ],
        "agents": [
            {"name": "trained:std", "label": "PPO-std"},
            {"name": "trained:bat", "label": "PPO-bat"},
            {"name": "uniform"},
        ],
        "points": [
            {
                "label": "one",
                "env": {"batch_size": 1, "repeat_limit": 1},
                "agents": ["PPO-std", "uniform"],
            },
            {
                "label": "batch",
                "env": {"batch_size": 4, "repeat_limit": 2, "invalid_action": "project"},
                "agents": ["PPO-bat", "uniform"],
            },
        ],
    }
    cfg.update(over)
    return cfg


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("learned")
    exp = load(config())
    report = run_experiment(exp, out, jobs=1, progress=False)
    return exp, out, report


def test_models_are_trained_then_played(trained):
    exp, out, report = trained
    for model in ("std", "bat"):
        path = models.model_path(out, model)
        assert path.exists() and path.with_suffix(".json").exists()
        assert not list(path.parent.glob(".tmp-*"))  # nothing half-written left behind
    df = read_results(out)
    assert report.ran == len(df) == 4 * 3
    ppo = df[df["agent"] == "PPO-std"]
    assert len(ppo) == 3 and set(ppo["point"]) == {"one"}
    assert ppo["agent_name"].iloc[0] == f"ppo:{models.model_path(out, 'std').resolve()}"
    assert (df["pulls"] <= FAMILY["budget"]).all()


def test_rerun_trains_nothing_and_runs_nothing(trained):
    exp, out, _ = trained
    before = {m: os.stat(models.model_path(out, m)).st_mtime_ns for m in ("std", "bat")}
    report = run_experiment(load(config()), out, jobs=1, progress=False)
    assert report.ran == 0
    after = {m: os.stat(models.model_path(out, m)).st_mtime_ns for m in ("std", "bat")}
    assert after == before


def test_rows_replay_with_the_saved_model(trained):
    """A stored row is reproduced by loading the saved model and replaying its seeds."""
    exp, out, _ = trained
    df = read_results(out)
    point = next(p for p in exp.points if p.label == "batch")
    rows = list(df[df["agent"] == "PPO-bat"].itertuples())
    assert len(rows) == 3
    for row in rows:
        env = make_env(point.env_id, point.env_kwargs)
        agent = make_agent(row.agent_name, {})
        env.unwrapped.np_random = seeding.np_random(int(row.seed))[0]
        agent.seed = int(row.agent_seed)
        result = agents.run_episode(env, agent, seed=None)
        assert result.aggregate_regret == pytest.approx(row.aggregate_regret)
        assert " ".join(map(str, result.recommendation.tolist())) == row.recommendation


def test_changed_training_settings_are_refused(trained):
    _, out, _ = trained
    cfg = config()
    cfg["train"][0]["timesteps"] = 128
    with pytest.raises(StoreError, match="model 'std' was trained with other settings"):
        run_experiment(load(cfg), out, jobs=1, progress=False)


def test_shipped_models_are_played_without_training(trained, tmp_path, monkeypatch):
    """A shipped model of the same table and seed is copied; --retrain or a change trains."""
    _, first, _ = trained
    shipped = tmp_path / "pretrained" / "tiny-learned"
    shipped.mkdir(parents=True)
    for model in ("std", "bat"):
        for suffix in (".zip", ".json"):
            src = models.model_path(first, model).with_suffix(suffix)
            (shipped / src.name).write_bytes(src.read_bytes())
    monkeypatch.setattr(models, "PRETRAINED_DIR", tmp_path / "pretrained")
    out = tmp_path / "out"
    run_experiment(load(config()), out, jobs=1, progress=False)
    for model in ("std", "bat"):
        path = models.model_path(out, model)
        assert path.read_bytes() == (shipped / path.name).read_bytes()
        assert not path.with_suffix(".log").exists()  # copied, not trained
    a, b = read_results(first), read_results(out)
    cols = ["agent", "point", "seed", "aggregate_regret", "recommendation"]
    assert a.sort_values(cols)[cols].values.tolist() == b.sort_values(cols)[cols].values.tolist()
    # --retrain trains anew; so does a changed table or another base seed
    spec = load(config()).train[0]
    assert models.shipped_model(spec, "tiny-learned") == shipped / "std.zip"
    assert models.shipped_model(spec, "tiny-learned", base_seed=1) is None
    assert models.shipped_model(spec, "other-experiment") is None
    changed = config()
    changed["train"][0]["num_envs"] = 4
    assert models.shipped_model(load(changed).train[0], "tiny-learned") is None
    again = tmp_path / "again"
    run_experiment(load(config()), again, jobs=1, progress=False, retrain=True)
    assert models.model_path(again, "std").with_suffix(".log").exists()


def test_posterior_trained_model_answers_with_the_posterior(tmp_path):
    cfg = config(runs=2)
    cfg["train"] = [
        {
            **cfg["train"][0],
            "prior": [5.0, 5.0],
            "reward": "posterior",
            "obs_options": {"features": ["post_gap", "post_std", "log_count"]},
        }
    ]
    cfg["agents"] = [cfg["agents"][0], cfg["agents"][2]]
    cfg["points"] = cfg["points"][:1]
    run_experiment(load(cfg), tmp_path, jobs=1, progress=False)
    meta = json.loads(models.model_path(tmp_path, "std").with_suffix(".json").read_text())
    assert meta["policy_agent"]["answer"] == "posterior"
    assert meta["policy_agent"]["prior"] == [5.0, 5.0]
    assert meta["obs_transform"]["features"] == ["post_gap", "post_std", "log_count"]
    assert meta["training"]["reward"] == "posterior"
    assert meta["bench"]["spec"]["reward"] == "posterior"
    agent = make_agent(f"ppo:{models.model_path(tmp_path, 'std')}", {})
    assert agent.answer == "posterior" and agent.prior == (5.0, 5.0)
    assert len(read_results(tmp_path)) == 4


def test_lost_model_with_rows_is_refused(tmp_path):
    cfg = config(runs=1)
    cfg["train"] = cfg["train"][:1]
    cfg["agents"] = [cfg["agents"][0], cfg["agents"][2]]
    cfg["points"] = cfg["points"][:1]
    run_experiment(load(cfg), tmp_path, jobs=1, progress=False)
    models.model_path(tmp_path, "std").unlink()
    with pytest.raises(StoreError, match="whose file .* is gone"):
        run_experiment(load(cfg), tmp_path, jobs=1, progress=False)


def test_training_seed_is_a_function_of_names():
    spec = load(config()).train[0]
    a = models.train_seed("e", spec, 0)
    assert a == models.train_seed("e", spec, 0)
    assert a != models.train_seed("e", spec, 1) != models.train_seed("f", spec, 0)
    assert 0 <= a < 2**31
    assert seeds.derived_seed("train", 0, "x", 1) != seeds.derived_seed("other", 0, "x", 1)


def test_reduced_train_overrides_every_model():
    cfg = config(reduced={"train": {"timesteps": 32}})
    assert [t.timesteps for t in load(cfg, reduced=True).train] == [32, 32]
    assert [t.timesteps for t in load(cfg).train] == [64, 64]


def test_presets_fill_the_family():
    cfg = config()
    cfg["train"] = [{"model": "p", "preset": "standard", "timesteps": 10}]
    cfg["agents"] = [{"name": "trained:p", "label": "PPO"}, {"name": "uniform"}]
    cfg["env"] = {"instance": "beta-random", "instance_params": {"a": 5.0, "b": 5.0}}
    cfg["points"] = [
        {
            "label": "p",
            "env": {"n_arms": 10, "k": 3, "budget": 200, "batch_size": 1, "repeat_limit": 1},
        }
    ]
    spec = load(cfg).train[0]
    assert spec.env_id == "TopK-v0" and spec.env_kwargs["n_arms"] == 10


def _bad(path, update):
    cfg = config()
    update(cfg)
    with pytest.raises(ConfigError, match=path):
        load(cfg)


def _set(i, **values):
    return lambda c: c["train"][i].update(values)


def _preset_nope(c):
    c["train"][0].pop("env_id")
    c["train"][0]["preset"] = "nope"


def _dqn_arm_set(c):
    c["train"][0].update(algo="dqn", policy="arm-set")


def _imitate_zero(c):
    c["train"][0].update(prior=[5.0, 5.0], imitate={"iterations": 0})


BAD_TRAIN = [
    (r"agents\[0\]\.name: 'trained:std' names no model", lambda c: c.update(train=c["train"][1:])),
    (r"train\[0\]\.timesteps: required", lambda c: c["train"][0].pop("timesteps")),
    (r"train\[0\]\.timesteps: 0 trains nothing", _set(0, timesteps=0)),
    (r"train\[0\]\.timesteps: expected an integer >= 0", _set(0, timesteps=-1)),
    (r"train\[0\]\.imitate: unknown keys \['nope'\]", _set(0, imitate={"nope": 1})),
    (r"train\[0\]\.imitate: needs prior", _set(0, imitate={"iterations": 1})),
    (r"train\[0\]\.imitate.iterations=0 must be", _imitate_zero),
    (r"train\[0\]\.seed: expected an integer >= 0", _set(0, seed=-1)),
    (r"train\[0\]: give exactly one of preset", _set(0, preset="standard")),
    (r"train\[0\]\.preset: unknown preset 'nope'", _preset_nope),
    (r"train\[0\]\.algo: 'sac' must be one of", _set(0, algo="sac")),
    (r"train\[0\]\.model: '\.\./x' must be a plain file name", _set(0, model="../x")),
    (r"train\[1\]\.model: model 'std' is declared twice", _set(1, model="std")),
    (r"train\[0\]\.env: ", lambda c: c["train"][0]["env"].update(k=9)),
    (r"train\[0\]\.wrong: unknown key", _set(0, wrong=1)),
    (r"reduced\.train\.model: unknown key", lambda c: c.update(reduced={"train": {"model": "x"}})),
    (r"train\[0\]\.algo: DQN needs", _dqn_arm_set),
    (r"train\[0\]\.reward_scale: must be > 0", _set(0, reward_scale=0)),
    (r"train\[0\]\.keep_best: needs eval_episodes > 0", _set(0, keep_best=True)),
    (r"train\[0\]\.eval_every: expected an integer >= 1", _set(0, eval_every=0)),
    (r"train\[0\]\.prior: \[5\.0\] must be \[a, b\]", _set(0, prior=[5.0])),
    (r"train\[0\]\.prior: \[0\.0, 1\.0\] must be \[a, b\]", _set(0, prior=[0.0, 1.0])),
    (r"train\[0\]\.reward: 'bayes' must be 'env' or 'posterior'", _set(0, reward="bayes")),
    (r"train\[0\]\.reward: 'posterior' needs prior", _set(0, reward="posterior")),
]


@pytest.mark.parametrize(("message", "update"), BAD_TRAIN)
def test_bad_train_configs_name_the_key(message, update):
    _bad(message, update)


def test_model_plays_only_points_of_its_shape():
    def batch_model_everywhere(c):
        c["points"][0]["agents"].append("PPO-bat")

    _bad(
        r"point 'one', agent 'PPO-bat'.*batch_size=4 but the point has batch_size=1",
        batch_model_everywhere,
    )

    def other_k(c):
        c["points"][0]["env"]["k"] = 1

    _bad(r"point 'one', agent 'PPO-std'.*k=2 but the point has k=1", other_k)


def test_one_pull_model_plays_batch_points():
    """A TopK-v0 model's single pulls are valid under every (b, r)."""
    cfg = config()
    cfg["points"][1]["agents"].append("PPO-std")
    exp = load(cfg)
    point = next(p for p in exp.points if p.label == "batch")
    assert "PPO-std" in point.agents


def test_best_arm_agent_is_skipped_where_k_above_one():
    cfg = {
        "name": "k-filter",
        "metrics": ["misidentified"],
        "runs": 1,
        "env": {"instance": "jun2016-sparse", "n_arms": 6, "budget": 60},
        "agents": [{"name": "lil_ucb"}, {"name": "uniform"}],
        "sweeps": [{"vary": {"k": [1, 2]}, "x": "k"}],
    }
    warned: list[str] = []
    exp = load(copy.deepcopy(cfg), warn=warned.append)
    playing = {p.k: p.agents for p in exp.points}
    assert playing == {1: ("lil_ucb", "uniform"), 2: ("uniform",)}
    assert any("lil_ucb" in w and "only k in [1]" in w for w in warned)


def test_keep_best_plays_the_best_validated_checkpoint(tmp_path):
    """keep_best: MODEL.zip is the checkpoint of lowest validation regret, the last is kept."""
    cfg = config()
    cfg["train"] = [
        {
            **cfg["train"][0],
            "timesteps": 96,
            "eval_every": 32,
            "eval_episodes": 4,
            "keep_best": True,
        }
    ]
    cfg["agents"] = [cfg["agents"][0], cfg["agents"][2]]
    cfg["points"] = [cfg["points"][0]]
    run_experiment(load(cfg), tmp_path, jobs=1, progress=False)
    played = models.model_path(tmp_path, "std")
    final = played.with_name("std-final.zip")
    assert played.exists() and final.exists() and final.with_suffix(".json").exists()
    meta = json.loads(played.with_suffix(".json").read_text())
    last = json.loads(final.with_suffix(".json").read_text())
    evaluations = last["training"]["evaluations"]
    assert len(evaluations) >= 3  # every 32 steps and at the end
    assert last["training"]["validation_cpu_seconds"] > 0  # 3+ validations of 4 episodes
    best = meta["training"]["best_at"]
    assert best["regret"] == min(e["regret"] for e in evaluations)
    # a checkpoint is scored in the mode it plays, and plays in that mode
    assert best["regret"] == best[best["mode"]]["regret"]
    assert meta["policy_agent"]["deterministic"] == (best["mode"] == "deterministic")
    log = played.with_suffix(".log").read_text()
    assert f"plays the best checkpoint: t={best['timesteps']}, {best['mode']}" in log
    assert "best_at" not in last["training"]
    assert agents.make(f"ppo:{played}") is not None


def test_shipped_learned_vs_scripted_models_match_the_config():
    """`topk-bench run learned-vs-scripted` plays the shipped models without training."""
    exp = load("learned-vs-scripted")
    assert exp.train, "the shipped experiment declares its models"
    for spec in exp.train:
        path = models.shipped_model(spec, exp.name)
        assert path is not None, f"no shipped model matches {spec.model} (retrain and ship it)"
        assert path.stat().st_size < 1_000_000  # small files
        agent = make_agent(f"{spec.algo}:{path}", {})
        assert agent.answer == "posterior" and agent.prior == (5.0, 5.0)
        point = exp.points[0]
        env = make_env(point.env_id, point.env_kwargs)
        result = agents.run_episode(env, agent, seed=0)
        assert result.pulls == 200 and agent.projections == 0


def test_a_resumed_run_trains_only_missing_models_and_clears_killed_ones(tmp_path, monkeypatch):
    """A killed training leaves ``.tmp-MODEL-PID`` (no .zip): the rerun trains that model
    again, from a clean directory, and leaves finished models and other dirs alone."""
    exp = load(config())
    models_dir = models.model_path(tmp_path, "std").parent
    models_dir.mkdir(parents=True)
    models.model_path(tmp_path, "bat").write_bytes(b"finished")
    (models_dir / ".tmp-std-4242").mkdir()  # killed while training std
    (models_dir / ".tmp-std-extra-7").mkdir()  # another model's name
    trained: list[str] = []

    def fake_train(spec, *args, **kwargs):
        assert not (models_dir / ".tmp-std-4242").exists()
        trained.append(spec.model)
        return spec.model, 0.0, ""

    monkeypatch.setattr(models, "_train_one", fake_train)
    assert models.train_missing(exp.train, exp.name, tmp_path, progress=False) == ["std"]
    assert trained == ["std"]
    assert (models_dir / ".tmp-std-extra-7").exists()
    assert models.model_path(tmp_path, "bat").read_bytes() == b"finished"
