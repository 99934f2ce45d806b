"""``[[train]]`` tables with ``fast = true``: trained by agents.learned.fast.fast_train."""

from __future__ import annotations

import json
import queue

import pytest

pytest.importorskip("stable_baselines3")

from _tiny_learned import FAMILY  # noqa: E402

import agents  # noqa: E402
from topk_bench import models  # noqa: E402
from topk_bench.config import load  # noqa: E402
from topk_bench.run import run_experiment  # noqa: E402
from topk_bench.schema import ConfigError  # noqa: E402
from topk_bench.store import read_results  # noqa: E402

#: A fast training of about 2,000 steps: a second or two, no torch.compile.
TINY_FAST = {
    "timesteps": 2000,
    "num_envs": 32,
    "eval_episodes": 20,
    "algo_kwargs": {"n_steps": 8, "compile": False},
}


def config(**entry):
    return {
        "name": "tiny-fast",
        "metrics": ["aggregate_regret", "misidentified"],
        "runs": 2,
        "env": dict(FAMILY),
        "train": [{"model": "f", "env_id": "TopK-v0", "env": dict(FAMILY), "fast": True, **entry}],
        "agents": [{"name": "trained:f", "label": "fast"}, {"name": "uniform"}],
        "points": [{"label": "one", "env": {"batch_size": 1, "repeat_limit": 1}}],
    }


def test_a_fast_entry_takes_the_fast_defaults():
    spec = load(config(timesteps=1000)).train[0]
    assert spec.fast and spec.algo == "ppo" and spec.policy == "arm-set"
    assert (spec.num_envs, spec.eval_episodes, spec.reward_scale) == (4096, 1000, 10.0)
    assert (spec.prior, spec.reward, spec.eval_every) == ("auto", "auto", None)
    described = spec.describe()
    assert described["fast"] is True and described["prior"] == "auto"
    assert json.loads(json.dumps(described)) == described


def test_a_non_fast_spec_describes_as_before():
    """Manifests written before ``fast`` existed compare equal: no ``fast`` key."""
    cfg = config(timesteps=64, num_envs=2, eval_episodes=0)
    cfg["train"][0].pop("fast")
    described = load(cfg).train[0].describe()
    assert set(described) == {
        "model", "env_id", "env_kwargs", "timesteps", "algo", "policy", "num_envs", "seed",
        "algo_kwargs", "reward_scale", "eval_episodes", "eval_every", "keep_best", "prior",
        "reward", "obs_options", "imitate",
    }  # fmt: skip
    assert described["prior"] is None and described["num_envs"] == 2
    cfg["train"][0]["fast"] = False
    assert load(cfg).train[0].describe() == described


def test_config_maps_the_table_to_fast_config_fields():
    from agents.learned.fast import FastConfig

    spec = load(
        config(
            algo="a2c",
            timesteps=5000,
            num_envs=64,
            seed=3,
            eval_episodes=50,
            eval_every=1000,
            reward_scale=2.0,
            obs_options={"features": ["mean", "log_count"]},
            algo_kwargs={"n_steps": 4, "learning_rate": 3e-4, "hidden": 16, "compile": False},
        )
    ).train[0]
    c = models._config(spec, seed=123, save_path="x.zip", progress=False)
    assert isinstance(c, FastConfig)
    assert (c.env_id, c.algo, c.total_timesteps, c.num_envs, c.seed) == (
        "TopK-v0",
        "a2c",
        5000,
        64,
        123,
    )
    assert (c.eval_episodes, c.eval_every, c.reward_scale) == (50, 1000, 2.0)
    assert (c.n_steps, c.learning_rate, c.hidden, c.compile) == (4, 3e-4, 16, False)
    assert c.features == ("mean", "log_count") and str(c.save_path) == "x.zip"
    # prior "auto": the family's Beta(5, 5), and then the posterior reward (fixed budget)
    assert c.prior == (5.0, 5.0) and c.reward == "posterior"
    assert dict(c.env_kwargs) == FAMILY
    none = load(config(timesteps=100, prior="none")).train[0]
    c = models._config(none, seed=0, save_path=None, progress=False)
    assert none.prior is None and c.prior is None and c.reward == "env"
    given = load(config(timesteps=100, prior=[2, 3], reward="env")).train[0]
    c = models._config(given, seed=0, save_path=None, progress=False)
    assert given.prior == (2.0, 3.0) and c.prior == (2.0, 3.0) and c.reward == "env"
    preset = models._spec(
        {"model": "f", "preset": "one-pull", "fast": True, "timesteps": 100}, "train[0]"
    )
    assert preset.env_id == "TopK-v0" and preset.env_kwargs["budget"] == 200


def _pbp(c):
    c["train"][0].pop("env_id")
    c["train"][0]["preset"] = "batch-budget-pbp"


def _sb3_auto(c):
    c["train"][0].pop("fast")
    c["train"][0]["prior"] = "auto"


BAD_FAST = [
    (r"train\[0\]\.policy: 'mlp' is a setting of the SB3 path", {"policy": "mlp"}),
    (
        r"train\[0\]: keep_best=True with eval_episodes=0: choosing a checkpoint needs",
        {"keep_best": True, "eval_episodes": 0},
    ),
    (r"train\[0\]\.validation: 'vector' is a setting", {"validation": "vector"}),
    (r"train\[0\]\.imitate: \{\} is a setting", {"imitate": {}}),
    (r"train\[0\]\.obs_options\.prior: fast = true takes only", {"obs_options": {"prior": 1}}),
    (r"train\[0\]\.algo_kwargs\.nope: not a FastConfig field", {"algo_kwargs": {"nope": 1}}),
    (
        r"train\[0\]\.algo_kwargs\.total_timesteps: set by the table's timesteps",
        {"algo_kwargs": {"total_timesteps": 5}},
    ),
    (r"train\[0\]: n_steps=0 must be an integer >= 1", {"algo_kwargs": {"n_steps": 0}}),
    (r"train\[0\]\.algo: 'dqn': fast = true trains ppo or a2c", {"algo": "dqn"}),
    (r"train\[0\]\.prior: 'x' must be \[a, b\], 'auto' or 'none'", {"prior": "x"}),
    (r"train\[0\]\.prior: \[5\.0\] must be \[a, b\]", {"prior": [5.0]}),
    (r"train\[0\]\.prior: expected str or a list", {"prior": 5}),
    (r"train\[0\]\.reward: 'bayes' must be 'auto', 'env' or 'posterior'", {"reward": "bayes"}),
    (r"train\[0\]: reward='posterior' needs prior", {"prior": "none", "reward": "posterior"}),
    (r"train\[0\]\.timesteps: 0 trains nothing", {"timesteps": 0}),
    (r"train\[0\]\.fast: expected bool", {"fast": "yes"}),
    (r"train\[0\]\.preset: fast = true trains on 'TopK-v0' or 'TopK-Batch-v0'", _pbp),
    (r"train\[0\]\.prior: 'auto' must be \[a, b\].*fast = true entries", _sb3_auto),
]


@pytest.mark.parametrize(("message", "update"), BAD_FAST)
def test_bad_fast_entries_name_the_key(message, update):
    cfg = config(timesteps=100)
    if callable(update):
        update(cfg)
    else:
        cfg["train"][0].update(update)
    with pytest.raises(ConfigError, match=message):
        load(cfg)


def test_keep_best_on_the_fast_path_plays_the_best_validated_checkpoint(tmp_path):
    """keep_best = true: MODEL.zip is the evaluation of lowest validation score in the
    mode it plays, the final model is kept as MODEL-final.zip."""
    over = {**TINY_FAST, "timesteps": 8192, "eval_every": 1024, "keep_best": True}
    over["algo_kwargs"] = {**over["algo_kwargs"], "learning_rate": 0.03}
    cfg = config(**over)
    cfg["agents"].insert(1, {"name": "trained:f-final", "label": "fast, final"})
    exp = load(cfg)
    _, _, last_line = models._train_one(exp.train[0], exp.name, str(tmp_path), 0, False, None)
    played = models.model_path(tmp_path, "f")
    final = played.with_name("f-final.zip")
    assert played.exists() and final.exists() and not list(played.parent.glob(".tmp-*"))
    meta = json.loads(played.with_suffix(".json").read_text())
    last = json.loads(final.with_suffix(".json").read_text())
    evaluations = last["training"]["evaluations"]
    assert len(evaluations) >= 4
    best = meta["training"]["best_at"]
    assert best["score"] == min(e["score"] for e in evaluations)
    assert best["score"] == best[best["mode"]]["score"]
    assert meta["policy_agent"]["deterministic"] == (best["mode"] == "deterministic")
    assert meta["bench"] == models._bench_entry(exp.train[0], exp.name, 0)
    assert "best_at" not in last["training"]
    log = played.with_suffix(".log").read_text()
    assert f"plays the best checkpoint: t={best['timesteps']}, {best['mode']}" in log
    assert f"the best checkpoint ({best['timesteps']:,} steps) plays {best['mode']}" in last_line
    assert agents.make(f"ppo:{played}").answer == "posterior"
    # trained:f-final plays the final model beside the best checkpoint
    run_experiment(exp, tmp_path, jobs=1, progress=False)
    names = read_results(tmp_path).groupby("agent")["agent_name"].first()
    assert names["fast"] == f"ppo:{played.resolve()}"
    assert names["fast, final"] == f"ppo:{final.resolve()}"
    # without keep_best there is no final model to name
    plain = config(**TINY_FAST)
    plain["agents"].append({"name": "trained:f-final"})
    with pytest.raises(ConfigError, match=r"'trained:f-final' names no model .*MODEL-final"):
        load(plain)


def test_a_fast_model_is_trained_saved_and_played(tmp_path):
    """The runner's training of one process (and its progress queue), then the episodes;
    the Ray path's worker function trains the same way in a scratch directory."""
    exp = load(config(**TINY_FAST, eval_every=1000))
    spec = exp.train[0]
    steps: queue.Queue = queue.Queue()
    model, seconds, last = models._train_one(spec, exp.name, str(tmp_path), 0, False, steps)
    assert model == "f" and seconds > 0
    assert last.startswith("trained fast ppo: 2,048 steps in ") and "validation score" in last
    assert steps.get_nowait() == ("f", 2048)
    path = models.model_path(tmp_path, "f")
    assert path.exists() and not list(path.parent.glob(".tmp-*"))
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["bench"] == models._bench_entry(spec, exp.name, 0)
    assert meta["bench"]["spec"]["fast"] is True
    assert meta["training"]["path"] == "fast" and meta["training"]["timesteps"] == 2048
    assert [e["timesteps"] for e in meta["training"]["evaluations"]] == [1024, 2048]
    assert meta["training"]["fast_config"]["seed"] == models.train_seed(exp.name, spec, 0)
    log = path.with_suffix(".log").read_text()
    assert "fast ppo on TopK-v0" in log and log.rstrip().endswith(last)
    agent = agents.make(f"ppo:{path}")
    assert agent.answer == "posterior" and agent.prior == (5.0, 5.0)
    # the rerun finds the model and plays it: trained:f -> ppo:PATH
    run_experiment(exp, tmp_path, jobs=1, progress=False)
    df = read_results(tmp_path)
    assert len(df) == 4 and set(df["agent"]) == {"fast", "uniform"}
    assert df[df["agent"] == "fast"]["agent_name"].iloc[0] == f"ppo:{path.resolve()}"
    # the Ray task's function trains it in a scratch directory and sends the files back
    model, _, again, files = models._train_returned(spec, exp.name, 0)
    assert sorted(files) == ["f.json", "f.log", "f.zip"] and again.startswith("trained fast")
    assert json.loads(files["f.json"])["bench"] == meta["bench"]
