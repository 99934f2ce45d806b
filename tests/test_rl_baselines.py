"""The rl-baselines experiment: the shipped config is the generator's, every ladder task
and algorithm is in it, scores are normalised per task (0 = uniform, 1 = the best
reference agent), and a reduced run trains only the models its points play."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib

from agents.learned.families import LADDER
from topk_bench.config import load, shipped
from topk_bench.experiments import rl_baselines, rl_tuning

SHIPPED = Path(rl_baselines.__file__).parent / "rl-baselines.toml"


def test_shipped_config_is_the_generators() -> None:
    """Edit the generator, then `python -m topk_bench.experiments.rl_baselines config > ...`."""
    text = rl_baselines.to_toml(rl_baselines.experiment_config())
    assert SHIPPED.read_text(encoding="utf-8") == text
    assert tomllib.loads(text) == rl_baselines.experiment_config()
    assert "rl-baselines" in shipped()


def test_runs_cover_the_ladder_by_algorithm() -> None:
    runs = rl_baselines.runs()
    pairs = {(preset.removesuffix("-pbp"), algo) for _, preset, algo, _ in runs}
    batch = {n for n, t in LADDER.items() if t.env_id == "TopK-Batch-v0"}
    expected = {
        (task, algo)
        for task in LADDER
        for algo in rl_baselines.ALGOS
        if not (algo == "dqn" and task in batch)
    }
    assert pairs == expected and len(expected) == 27
    assert len(runs) == 27 * rl_baselines.SEEDS
    # MaskablePPO plays a batch task through its masked pull-by-pull form only
    assert {p for _, p, a, _ in runs if a == "maskable_ppo"} >= {f"{t}-pbp" for t in batch}
    assert not any(p.endswith("-pbp") for _, p, a, _ in runs if a != "maskable_ppo")


def test_config_loads_and_points_play_their_tasks_models() -> None:
    exp = load("rl-baselines")
    assert [p.label for p in exp.points] == list(LADDER)
    # the default models, then the shipped searches' tuned variants with their kwargs
    tuned = rl_tuning.shipped_tuned()
    fast = [s for s in exp.train if s.fast]
    assert len(exp.train) == (27 + len(tuned)) * rl_baselines.SEEDS + len(fast)
    variants = [s for s in exp.train if s.model.endswith(rl_baselines.TUNED)]
    assert len(variants) == len(tuned) * rl_baselines.SEEDS
    for spec in variants:
        task = rl_baselines._NAME.match(spec.model)["task"]
        assert spec.algo_kwargs == tuned[task, spec.algo], spec.model
    # every training is validated along the way: a learning curve, not an end point
    steps = rl_baselines.TIMESTEPS // rl_baselines.CURVE_POINTS
    assert all(spec.eval_every == steps for spec in exp.train if not spec.fast)
    # the fast rows: fast_ppo on every task (all are TopK-v0 / TopK-Batch-v0 families)
    assert [s.model for s in fast] == [m for m, _, _ in rl_baselines.fast_runs()]
    assert len(fast) == len(LADDER) * rl_baselines.SEEDS
    for spec in fast:
        m = rl_baselines._NAME.match(spec.model)
        assert m["algo"] == rl_baselines.FAST_ALGO and spec.algo == "ppo"
        assert spec.env_id == LADDER[m["task"]].env_id and spec.seed == int(m["seed"])
        assert (spec.timesteps, spec.eval_every, spec.eval_episodes) == (
            20_000_000,
            4_000_000,
            1000,
        )
        assert spec.num_envs == 4096 and spec.prior == "auto" and spec.reward == "auto"
    for point in exp.points:
        models = [a for a in point.agents if rl_baselines._NAME.match(a)]
        assert models and all(f"-{point.label}-s" in m for m in models)
        assert "uniform" in point.agents
    reduced = load("rl-baselines", reduced=True)
    played = {a.name for _, a in reduced.pairs() if a.name.startswith("trained:")}
    # seed 0 of each algorithm on one-pull and batch-count, and of their tuned variants
    assert len(played) == 9 + _reduced_tuned()


def _reduced_tuned() -> int:
    """The shipped tuned variants on the reduced run's tasks (one-pull, batch-count)."""
    return sum(task in ("one-pull", "batch-count") for task, _ in rl_tuning.shipped_tuned())


def _frame(scores: dict[str, dict[str, list[float]]]) -> pd.DataFrame:
    rows = []
    for task, agents in scores.items():
        for agent, values in agents.items():
            for run, v in enumerate(values):
                rows.append(
                    {
                        "point": task,
                        "agent": agent,
                        "run": run,
                        "aggregate_regret": v,
                        "misidentified": v,
                        "batches": 0,
                    }
                )
    return pd.DataFrame(rows)


def test_scores_are_normalised_between_uniform_and_the_best_reference() -> None:
    df = _frame(
        {
            "one-pull": {
                "uniform": [0.04, 0.06],  # mean 0.05
                "kg (prior)": [0.01, 0.01],  # the best reference: 1
                "sar": [0.03, 0.03],  # 0.5
                "ppo-one-pull-s0": [0.05, 0.05],  # 0
                "ppo-one-pull-s1": [0.09, 0.09],  # -1
            },
            "misid": {
                "uniform": [1.0, 0.0],  # 0.5
                "ttts": [0.0, 0.0],  # 1
                "ppo-misid-s0": [0.0, 0.5],  # 0.5
            },
        }
    )
    per_task, agg = rl_baselines.score_table(df, n_resamples=200)
    got = {(r.task, r.agent): r.normalized for r in per_task.itertuples()}
    assert got[("one-pull", "uniform")] == 0.0
    assert got[("one-pull", "kg (prior)")] == pytest.approx(1.0)
    assert got[("one-pull", "sar")] == pytest.approx(0.5)
    assert got[("one-pull", "ppo-one-pull-s1")] == pytest.approx(-1.0)
    assert got[("misid", "ppo-misid-s0")] == pytest.approx(0.5)
    ppo = agg.set_index("algo").loc["ppo"]
    # IQM of {0, -1, 0.5}: the 25%-trimmed mean of three values is their mean here
    assert ppo["iqm"] == pytest.approx(np.mean([0.0, -1.0, 0.5]))
    assert ppo["iqm_low"] <= ppo["iqm"] <= ppo["iqm_high"]
    assert ppo["runs"] == 3 and ppo["tasks"] == 2
    assert "| ppo |" in rl_baselines.format_tables(per_task, agg)


def test_cost_task_counts_batches() -> None:
    df = _frame({"fixed-confidence": {"uniform": [0.0], "lucb": [0.0]}})
    df["batches"] = [100, 20]  # cost 0.1 and 0.02
    per_task, _ = rl_baselines.score_table(df, n_resamples=50)
    score = dict(zip(per_task["agent"], per_task["score"], strict=True))
    assert score["uniform"] == pytest.approx(0.1) and score["lucb"] == pytest.approx(0.02)


def test_a_task_uniform_ties_cannot_be_normalised() -> None:
    df = _frame({"one-pull": {"uniform": [0.02], "sar": [0.02], "ppo-one-pull-s0": [0.1]}})
    with pytest.raises(ValueError, match="nothing to normalise by"):
        rl_baselines.score_table(df)


def test_no_episode_is_a_clear_error(tmp_path, capsys) -> None:
    df = _frame({"one-pull": {"uniform": [0.02], "sar": [0.01]}}).iloc[:0]
    with pytest.raises(ValueError, match="no episode yet: nothing to score"):
        rl_baselines.score_table(df)
    (tmp_path / "manifest.json").write_text('{"name": "rl-baselines"}')
    assert rl_baselines.main(["scores", str(tmp_path)]) == 2
    assert "no episode yet" in capsys.readouterr().err


def test_a_run_trains_only_the_models_its_points_play(tmp_path, monkeypatch) -> None:
    """Reduced mode plays seed 0 of each algorithm (and tuned variant) on two tasks: only
    those of the config's models are handed to training."""
    from topk_bench import run

    asked: list[str] = []
    monkeypatch.setattr(
        run, "train_missing", lambda specs, *a, **k: asked.extend(s.model for s in specs)
    )
    exp = run._with_models(load("rl-baselines", reduced=True), tmp_path, set(), 1, 0, False)
    tuned = _reduced_tuned()
    assert len(asked) == 9 + tuned
    assert all(rl_baselines._NAME.match(m)["seed"] == "0" for m in asked)
    assert {rl_baselines._NAME.match(m)["task"] for m in asked} == {"one-pull", "batch-count"}
    played = {a.name for _, a in exp.pairs() if ":" in a.name and "trained" not in a.name}
    assert len(played) == 9 + tuned  # trained:MODEL resolved to ALGO:PATH


def test_tuned_hyper_parameters_add_a_variant_and_nothing_else() -> None:
    tuned = {("one-pull", "ppo"): {"learning_rate": 1e-4, "policy_kwargs": {"hidden": 32}}}
    cfg = rl_baselines.experiment_config(tuned=tuned, fast=False)
    base = rl_baselines.experiment_config(tuned={}, fast=False)
    extra = cfg["train"][len(base["train"]) :]
    assert cfg["train"][: len(base["train"])] == base["train"]
    assert [t["model"] for t in extra] == [f"ppo-one-pull-s{s}-tuned" for s in range(5)]
    assert all(t["algo_kwargs"] == tuned["one-pull", "ppo"] for t in extra)
    assert not any("algo_kwargs" in t for t in base["train"])
    point = next(p for p in cfg["points"] if p["label"] == "one-pull")
    assert {t["model"] for t in extra} <= set(point["agents"])
    assert all("tuned" not in a for p in cfg["points"][1:] for a in p["agents"])
    # the generated TOML loads, and a reduced run plays seed 0 of the tuned variant too
    assert tomllib.loads(rl_baselines.to_toml(cfg)) == cfg
    with pytest.raises(ValueError, match=r"\('batch-count', 'dqn'\)"):
        rl_baselines.experiment_config(tuned={("batch-count", "dqn"): {}})


def test_shipped_searches_make_the_shipped_config(tmp_path, monkeypatch) -> None:
    """ship-tuned writes the records; config (no --tuned) then trains their variants."""
    monkeypatch.setattr(rl_tuning, "SHIPPED_TUNED", tmp_path / "shipped" / "tuned.json")
    assert rl_tuning.shipped_tuned() == {} and rl_tuning.shipped_records() == []
    records = {
        ("misid", "a2c"): {"learning_rate": 1e-3, "hidden": 32},
        ("one-pull", "dqn"): {"learning_rate": 1e-4, "net_width": 64},
    }
    paths = []
    for (task, algo), params in records.items():
        path = tmp_path / f"{algo}-{task}" / "best.json"
        path.parent.mkdir()
        record = {
            "task": task,
            "algo": algo,
            "timesteps": 500,
            "params": params,
            "algo_kwargs": rl_tuning.algo_kwargs(algo, params),
            "value": 0.5,
            "trial": 1,
            "trials": 3,
            "cpu_seconds": 12.0,
            "cpu_trials": 2,
        }
        path.write_text(json.dumps(record))
        paths.append(path)
    assert rl_baselines.main(["ship-tuned", *map(str, paths)]) == 0
    shipped = rl_tuning.shipped_records()
    assert [(r["task"], r["algo"]) for r in shipped] == [("one-pull", "dqn"), ("misid", "a2c")]
    cfg = rl_baselines.experiment_config()
    tuned = {t["model"]: t["algo_kwargs"] for t in cfg["train"] if "algo_kwargs" in t}
    assert sorted(tuned) == sorted(
        [f"dqn-one-pull-s{s}-tuned" for s in range(5)] + [f"a2c-misid-s{s}-tuned" for s in range(5)]
    )
    assert tuned["dqn-one-pull-s0-tuned"] == {
        "learning_rate": 1e-4,
        "policy_kwargs": {"net_arch": [64, 64]},
    }
    assert rl_baselines.experiment_config(tuned={}) == rl_baselines.experiment_config(
        tuned=rl_tuning.read_tuned([])
    )
    table = rl_tuning.search_table(shipped).splitlines()
    assert table[2].startswith("| one-pull | dqn | 3 x 500 | 1 | 0.5000 |")
    assert table[3].endswith("| 12 (2 of 3 trials) |")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"task": "one-pull", "algo": "dqn"}))
    with pytest.raises(ValueError, match="bad.json: not a best.json of tune"):
        rl_tuning.ship_tuned([bad])


def test_tuned_and_final_variants_are_algorithms_of_their_own_in_the_scores() -> None:
    """``-tuned``: other hyper-parameters; ``-final``: the final model of a keep_best
    training (``trained:MODEL-final``), beside its best checkpoint."""
    df = _frame(
        {
            "one-pull": {
                "uniform": [0.05],
                "kg (prior)": [0.01],
                "ppo-one-pull-s0": [0.03],  # 0.5
                "ppo-one-pull-s0-tuned": [0.02],  # 0.75
                "ppo-one-pull-s0-final": [0.04],  # 0.25
                "ppo-one-pull-s0-tuned-final": [0.01],  # 1.0
            }
        }
    )
    per_task, agg = rl_baselines.score_table(df, n_resamples=50)
    iqm = dict(zip(agg["algo"], agg["iqm"], strict=True))
    assert iqm["ppo"] == pytest.approx(0.5) and iqm["ppo (tuned)"] == pytest.approx(0.75)
    assert iqm["ppo (final)"] == pytest.approx(0.25)
    assert iqm["ppo (tuned) (final)"] == pytest.approx(1.0)
    learned = agg.set_index("algo")["learned"]
    assert learned["ppo (tuned)"] and learned["ppo (final)"] and not learned["uniform"]


def test_tuning_table_pairs_the_tuned_and_default_seeds_episode_by_episode() -> None:
    df = _frame(
        {
            "one-pull": {
                "uniform": [0.05, 0.05, 0.05],
                "kg (prior)": [0.01, 0.01, 0.01],
                "ppo-one-pull-s0": [0.04, 0.02, 0.03],
                "ppo-one-pull-s1": [0.02, 0.04, 0.03],  # default: 0.03 on every episode
                "ppo-one-pull-s0-tuned": [0.01, 0.03, 0.02],
                "ppo-one-pull-s1-tuned": [0.02, 0.02, 0.01],  # tuned: 0.015, 0.025, 0.015
                "a2c-one-pull-s0": [0.05, 0.05, 0.05],  # no tuned variant: no row
            }
        }
    )
    table = rl_baselines.tuning_table(df)
    assert table[["task", "algo"]].values.tolist() == [["one-pull", "ppo"]]
    row = table.iloc[0]
    d = np.array([0.015, 0.025, 0.015]) - 0.03
    assert row["default"] == pytest.approx(0.03) and row["tuned"] == pytest.approx(0.055 / 3)
    assert row["diff"] == pytest.approx(d.mean())
    assert row["diff_hw"] == pytest.approx(1.96 * d.std(ddof=1) / np.sqrt(3))
    assert rl_baselines.tuning_table(df[~df["agent"].str.endswith("-tuned")]).empty


def test_mean_curve_interpolates_each_seed_within_its_own_range() -> None:
    a = [(0, 1.0), (10, 0.0)]
    b = [(0, 3.0), (5, 2.0), (20, 1.0)]
    c = rl_baselines.mean_curve([a, b])
    assert c["timesteps"].tolist() == [0, 5, 10, 20]
    # at 5: a interpolates to 0.5; at 10: b to 2 - 5/15; at 20 only b reaches
    assert c["mean"].tolist() == pytest.approx([2.0, 1.25, (0 + 2 - 5 / 15) / 2, 1.0])
    assert c["low"].tolist() == pytest.approx([1.0, 0.5, 0.0, 1.0])
    assert c["high"].tolist() == pytest.approx([3.0, 2.0, 2 - 5 / 15, 1.0])
    assert c["n"].tolist() == [2, 2, 2, 1]


def test_fast_only_config_has_the_full_configs_points_and_no_sb3_row() -> None:
    """--fast-only: the fast rows and references of the full config, nothing else, on
    the same points and episodes (its scores join a full run's tables)."""
    full = rl_baselines.experiment_config(tuned={})
    only = rl_baselines.experiment_config(tuned={}, sb3=False)
    fast = [t for t in full["train"] if t.get("fast")]
    assert only["train"] == fast and len(fast) == 30
    sb3 = {t["model"] for t in full["train"]} - {t["model"] for t in fast}
    assert [p["label"] for p in only["points"]] == [p["label"] for p in full["points"]]
    for a, b in zip(only["points"], full["points"], strict=True):
        assert a["env"] == b["env"] and a["agents"] == [x for x in b["agents"] if x not in sb3]
    assert only["runs"] == full["runs"] and only["env"] == full["env"]
    assert {a["label"] for a in only["agents"]} == {a["label"] for a in full["agents"]} - sb3
    assert "no stable-baselines3 rows" in only["description"]
    assert tomllib.loads(rl_baselines.to_toml(only)) == only
    with pytest.raises(ValueError, match="no model"):
        rl_baselines.experiment_config(fast=False, sb3=False)
    with pytest.raises(SystemExit):
        rl_baselines.main(["config", "--fast-only", "--no-fast"])


def test_keep_best_config_plays_best_and_final_on_the_one_pull_episodes(tmp_path) -> None:
    """config --keep-best: 2 x 5 keep_best trainings on one-pull, each played as its best
    checkpoint and its final model, on the one-pull point and episodes of rl-baselines."""
    from topk_bench.config import load

    cfg = rl_baselines.keep_best_config()
    full = rl_baselines.experiment_config(tuned={})
    one_pull = next(p for p in full["points"] if p["label"] == "one-pull")
    assert cfg["name"] == full["name"] and cfg["env"] == full["env"] and cfg["runs"] == 600
    assert len(cfg["train"]) == 10 and all(t["keep_best"] and t["fast"] for t in cfg["train"])
    linear = [t for t in cfg["train"] if t.get("algo_kwargs") == {"lr_schedule": "linear"}]
    assert [t["model"] for t in linear] == [f"fast_ppo_65m_lin-one-pull-s{s}" for s in range(5)]
    (point,) = cfg["points"]
    assert point["env"] == one_pull["env"]
    refs = [a for a in one_pull["agents"] if not rl_baselines._NAME.match(a)]
    assert point["agents"][-len(refs) :] == refs
    names = {a["name"] for a in cfg["agents"]}
    for t in cfg["train"]:
        assert {f"trained:{t['model']}", f"trained:{t['model']}-final"} <= names
    path = tmp_path / "keep-best.toml"
    path.write_text(rl_baselines.to_toml(cfg))
    exp = load(path)
    assert len(exp.agents) == 20 + len(refs) and all(s.keep_best for s in exp.train)
    with pytest.raises(SystemExit):
        rl_baselines.main(["config", "--keep-best", "--fast-only"])


def test_fast_rows_are_the_learned_algorithm_fast_ppo(tmp_path) -> None:
    """A fast_ppo-TASK-sN model is a seed of the learned algorithm fast_ppo; its
    sidecar's evaluations (both modes, no top-level score) make its learning curve."""
    df = _frame(
        {
            "one-pull": {
                "uniform": [0.05],
                "kg (prior)": [0.01],
                "ppo-one-pull-s0": [0.03],  # 0.5
                "fast_ppo-one-pull-s0": [0.02],  # 0.75
                "fast_ppo-one-pull-s1": [0.01],  # 1
            }
        }
    )
    per_task, agg = rl_baselines.score_table(df, n_resamples=50)
    row = agg.set_index("algo").loc["fast_ppo"]
    assert row["learned"] and row["runs"] == 2 and row["iqm"] == pytest.approx(0.875)
    assert "| fast_ppo |" in rl_baselines.format_tables(per_task, agg)
    manifest = {
        "name": "rl-baselines",
        "agents": [{"label": "fast_ppo-one-pull-s0", "name": "trained:fast_ppo-one-pull-s0"}],
        "points": [{"label": "one-pull", "agents": ["fast_ppo-one-pull-s0"]}],
    }
    (tmp_path / "models").mkdir()
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "models" / "fast_ppo-one-pull-s0.zip").write_bytes(b"")
    evals = [  # the fast path's layout: the played mode is chosen as the SB3 path does
        {"timesteps": 4000, "deterministic": {"score": 0.05, "score_ci": 0.01},
         "sampled": {"score": 0.02, "score_ci": 0.01}},  # sampled clearly better
        {"timesteps": 8000, "deterministic": {"score": 0.03, "score_ci": 0.01},
         "sampled": {"score": 0.025, "score_ci": 0.01}},  # within the interval: deterministic
        {"timesteps": 9000, "deterministic": {"regret": 0.1, "regret_ci": 0.01}},  # no score
    ]  # fmt: skip
    training = {"path": "fast", "cpu_seconds": 9.0, "seconds": 12.0, "timesteps": 8192}
    side = {"training": {**training, "validation_cpu_seconds": 1.0, "evaluations": evals}}
    (tmp_path / "models" / "fast_ppo-one-pull-s0.json").write_text(json.dumps(side))
    models = rl_baselines.model_table(tmp_path)
    row = models.iloc[0]
    assert row["algo"] == "fast_ppo" and row["seed"] == 0 and row["present"]
    assert row["curve"] == [(4000, 0.02), (8000, 0.03)]
    assert row["cpu_seconds"] == 9.0 and row["timesteps"] == 8192
    path, notes = rl_baselines.plot_curves(tmp_path)
    assert path.stat().st_size > 0 and not any("no validation curve" in n for n in notes)


def _results_dir(root: Path, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A partial rl-baselines directory: 2 tasks, ppo seeds 0-1 and dqn seed 0 on
    one-pull (ppo-one-pull-s1 not trained yet), ppo seed 0 on misid, uniform and two
    references; 40 episodes per agent, one extra run of uniform on one-pull (unpaired).
    Returns the episode scores by agent."""
    from topk_bench.store import ResultStore

    models = {
        "ppo-one-pull-s0": ("one-pull", 60.0, [(1000, 0.2), (2000, 0.1)]),
        "ppo-one-pull-s1": ("one-pull", None, None),
        "dqn-one-pull-s0": ("one-pull", 12.0, [(2000, 0.3)]),
        "ppo-misid-s0": ("misid", 30.0, [(1000, 0.9), (2000, 0.7)]),
    }
    refs = {
        "one-pull": ["uniform", "kg (prior)", "sar"],
        "misid": ["uniform", "ttts", "kg (prior)"],
    }
    manifest = {
        "name": "rl-baselines",
        "agents": [{"label": m, "name": f"trained:{m}"} for m in models]
        + [{"label": r, "name": r.split()[0]} for r in {r for v in refs.values() for r in v}],
        "points": [
            {"label": t, "agents": [m for m, v in models.items() if v[0] == t] + refs[t]}
            for t in refs
        ],
    }
    (root / "models").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps(manifest))
    for model, (_, cpu, curve) in models.items():
        if cpu is None:
            continue
        (root / "models" / f"{model}.zip").write_bytes(b"")
        evals = [{"timesteps": t, "score": s, "mode": "sampled"} for t, s in curve]
        side = {"training": {"cpu_seconds": cpu, "seconds": 2 * cpu, "evaluations": evals}}
        if model == "ppo-misid-s0":  # the one sidecar that records its validation time
            side["training"]["validation_cpu_seconds"] = 4.0
        (root / "models" / f"{model}.json").write_text(json.dumps(side))
    n = 40
    means = {
        ("one-pull", "uniform"): 0.05,
        ("one-pull", "kg (prior)"): 0.02,
        ("one-pull", "sar"): 0.03,
        ("one-pull", "ppo-one-pull-s0"): 0.04,
        ("one-pull", "dqn-one-pull-s0"): 0.09,
        ("misid", "uniform"): 0.5,
        ("misid", "ttts"): 0.45,
        ("misid", "kg (prior)"): 0.48,
        ("misid", "ppo-misid-s0"): 0.6,
    }
    scores, rows = {}, []
    for (task, agent), mean in means.items():
        runs = n + 1 if (task, agent) == ("one-pull", "uniform") else n
        if task == "misid":
            v = (rng.random(runs) < mean).astype(float)
        else:
            v = np.clip(mean + 0.02 * rng.standard_normal(runs), 0, None)
        scores[task, agent] = v
        for run, x in enumerate(v):
            rows.append(
                {
                    "experiment": "rl-baselines",
                    "point": task,
                    "agent": agent,
                    "run": run,
                    "aggregate_regret": x,
                    "misidentified": x,
                    "batches": 1,
                }
            )
    ResultStore(root).write(rows)
    return scores


def test_anchors_and_paired_scores_on_the_common_episodes(tmp_path) -> None:
    from topk_bench.store import read_results

    scores = _results_dir(tmp_path, np.random.default_rng(0))
    df = read_results(tmp_path)
    anchor = rl_baselines.anchors(df).set_index("task")
    n = 40  # uniform's extra run on one-pull is not paired with anything: left out
    for task, best in (("one-pull", "kg (prior)"), ("misid", "ttts")):
        u, b = scores[task, "uniform"][:n], scores[task, best]
        d = u - b
        row = anchor.loc[task]
        assert row["best_reference"] == best and row["episodes"] == n
        assert row["gap"] == pytest.approx(d.mean())
        assert row["gap_hw"] == pytest.approx(1.96 * d.std(ddof=1) / np.sqrt(n))
    # U - B = 0.03 (+- about 0.009) on one-pull; 0.05 (+- about 0.2) on misid
    assert not anchor.loc["one-pull", "ill_conditioned"]
    assert anchor.loc["misid", "ill_conditioned"]
    paired = rl_baselines.paired_table(df).set_index(["task", "agent"])
    ppo = paired.loc[("one-pull", "ppo")]
    s = scores["one-pull", "ppo-one-pull-s0"]
    assert ppo["seeds"] == 1 and ppo["score"] == pytest.approx(s.mean())
    assert ppo["vs_uniform"] == pytest.approx((s - scores["one-pull", "uniform"][:n]).mean())
    assert ppo["vs_best"] == pytest.approx((s - scores["one-pull", "kg (prior)"]).mean())
    assert not paired.loc[("one-pull", "sar"), "learned"]


def test_report_of_a_partial_directory(tmp_path) -> None:
    _results_dir(tmp_path, np.random.default_rng(1))
    text = rl_baselines.report(tmp_path, n_resamples=50)
    assert "3 of 4 models present" in text
    assert "Missing models (1): ppo-one-pull-s1." in text
    assert f"102 CPU-s = {(60 + 12 + 30) / 3600:.2f} CPU-hours" in text
    assert "Validation CPU time 4 CPU-s in the 1 sidecars that record it" in text
    assert "against 30 CPU-s of their training." in text
    assert "| ppo | 1/2, 60 s | 1/1, 30 s |" in text
    assert "| dqn | 1/1, 12 s | - |" in text
    assert "| misid | 40 |" in text and "(ill-conditioned)" in text
    assert "| one-pull | ppo | 1 |" in text  # the paired raw-score table
    assert "IQM of normalised scores" in text
    assert "Tuned against default" not in text  # no tuned variant in this directory


def test_episode_times_group_seeds_and_keep_warm_up_apart() -> None:
    df = pd.DataFrame(
        {
            "point": ["one-pull"] * 5 + ["misid"],
            "agent": ["ppo-one-pull-s0", "ppo-one-pull-s0", "ppo-one-pull-s1", "uniform",
                      "ppo-one-pull-s0-tuned", "uniform"],
            "wall_time": [2.0, 0.5, 0.25, 0.125, 1.0, 0.0625],
            "warmup": [True, False, False, False, True, True],
        }
    )  # fmt: skip
    times = rl_baselines.episode_times(df).set_index(["agent", "task"])
    assert times.loc[("ppo", "one-pull")].tolist() == [3, 2.75, 2.0]
    assert times.loc[("ppo (tuned)", "one-pull")].tolist() == [1, 1.0, 1.0]
    assert times.loc[("uniform", "one-pull")].tolist() == [1, 0.125, 0.0]
    assert times.loc[("uniform", "misid")].tolist() == [1, 0.0625, 0.0625]
    text = "\n".join(rl_baselines._episode_time_lines(df))
    assert "6 held-out episodes in 4 s" in text and "3 s of which in warm-up" in text
    assert "| ppo | 916.7 | - |" in text and "| uniform | 125.0 | 62.5 |" in text


def test_report_and_curves_before_any_episode(tmp_path) -> None:
    from topk_bench.store import ResultStore

    _results_dir(tmp_path, np.random.default_rng(2))
    for part in ResultStore(tmp_path).part_files():
        part.unlink()
    assert "No held-out episodes yet: no score table." in rl_baselines.report(tmp_path)
    path, notes = rl_baselines.plot_curves(tmp_path, tmp_path / "fig")
    assert path == tmp_path / "fig" / "learning_curves.png" and path.stat().st_size > 0
    assert "1 of 4 models missing: not plotted" in notes
    # dqn-one-pull-s0 has one evaluation (the end of training): a point, not a curve
    assert any(n.startswith("1 models were validated at the end of training only") for n in notes)
    assert any("no uniform/reference episodes yet for one-pull, misid" in n for n in notes)


def test_curves_cli_on_a_results_directory(tmp_path, capsys) -> None:
    _results_dir(tmp_path, np.random.default_rng(3))
    assert rl_baselines.main(["curves", str(tmp_path)]) == 0
    assert (tmp_path / "figures" / "learning_curves.png").exists()
    assert rl_baselines.main(["report", str(tmp_path), "-o", str(tmp_path / "r.md")]) == 0
    assert "### Scores" in (tmp_path / "r.md").read_text()


def test_tune_minimises_the_validation_score_resumes_and_feeds_the_config(
    tmp_path, monkeypatch
) -> None:
    """The search wiring, with training replaced by a score known in advance."""
    from types import SimpleNamespace

    from agents.learned import training
    from topk_bench.experiments import rl_tuning

    seen: list = []

    def fake_train(config, log=None):
        seen.append(config)
        score = 1000 * config.algo_kwargs["learning_rate"] + (config.seed - rl_tuning.TUNE_SEED0)
        return SimpleNamespace(evaluations=[{"score": 99.0}, {"score": score}])  # the last counts

    monkeypatch.setattr(training, "train", fake_train)
    args = dict(timesteps=100, seeds=2, eval_episodes=7, num_envs=2, log=None)
    best = rl_tuning.tune("batch-count", "maskable_ppo", 3, out=tmp_path, **args)
    assert len(seen) == 6 and [c.seed for c in seen] == [1000, 1001] * 3
    for c in seen:  # the experiment's training form, validated on validation episodes
        assert c.env_id.endswith("PullByPull-v0") and c.algo == "maskable_ppo"
        assert c.validation == "vector" and c.eval_episodes == 7 and c.total_timesteps == 100
        assert 1e-5 <= c.algo_kwargs["learning_rate"] <= 1e-3
        assert c.algo_kwargs["n_steps"] in (64, 128, 256, 512)
        assert c.algo_kwargs["policy_kwargs"]["hidden"] in (32, 64, 128)
    lrs = [c.algo_kwargs["learning_rate"] for c in seen[::2]]
    assert best["value"] == pytest.approx(1000 * min(lrs) + 0.5)  # mean over seeds 0 and 1
    assert best["algo_kwargs"]["learning_rate"] == min(lrs)
    assert best["trials"] == 3 and best["preset"] == "batch-count-pbp"
    assert json.loads((tmp_path / "best.json").read_text()) == best
    # resumed: nothing left at 3 trials; 2 more at 5, at points not tried before
    rl_tuning.tune("batch-count", "maskable_ppo", 3, out=tmp_path, **args)
    assert len(seen) == 6
    best = rl_tuning.tune("batch-count", "maskable_ppo", 5, out=tmp_path, **args)
    assert len(seen) == 10 and best["trials"] == 5
    assert not {c.algo_kwargs["learning_rate"] for c in seen[6:]} & set(lrs)
    with pytest.raises(ValueError, match="timesteps"):
        rl_tuning.tune("batch-count", "maskable_ppo", 5, out=tmp_path, **{**args, "timesteps": 9})
    with pytest.raises(ValueError, match="not a training of rl-baselines"):
        rl_tuning.tune("batch-count", "dqn", 1, out=tmp_path / "x", **args)
    tuned = rl_tuning.read_tuned([tmp_path / "best.json"])
    assert tuned == {("batch-count", "maskable_ppo"): best["algo_kwargs"]}
    with pytest.raises(ValueError, match="tuned twice"):
        rl_tuning.read_tuned([tmp_path / "best.json"] * 2)
    cfg = rl_baselines.experiment_config(tuned=tuned)
    entry = next(t for t in cfg["train"] if t["model"] == "maskable_ppo-batch-count-s0-tuned")
    assert entry["preset"] == "batch-count-pbp" and entry["algo_kwargs"] == best["algo_kwargs"]


def test_a_tiny_search_trains_and_keeps_the_best_trial(tmp_path) -> None:
    """Two real trials of a few hundred steps: the study and best.json agree."""
    import optuna

    from topk_bench.experiments import rl_tuning

    best = rl_tuning.tune(
        "one-pull", "ppo", 2, 256, tmp_path, num_envs=2, eval_episodes=4, log=None
    )
    study = optuna.load_study(study_name="ppo-one-pull", storage=f"sqlite:///{tmp_path}/study.db")
    values = [t.value for t in study.trials]
    assert len(values) == 2 and best["value"] == min(values)
    assert best["params"] == study.trials[values.index(min(values))].params
    assert best["algo_kwargs"]["policy_kwargs"] == {"hidden": best["params"]["hidden"]}
    cpu = [t.user_attrs["cpu_seconds"] for t in study.trials]
    assert min(cpu) > 0 and best["cpu_seconds"] == pytest.approx(sum(cpu))
    assert best["cpu_trials"] == 2
    row = rl_tuning.search_table([best]).splitlines()[2]
    assert row.startswith(f"| one-pull | ppo | 2 x 256 | {best['trial']} | {best['value']:.4f} |")
    assert f"hidden={best['params']['hidden']}" in row and row.endswith(f"| {sum(cpu):,.0f} |")


@pytest.mark.parametrize("task", ["one-pull", "misid"])
def test_maskable_ppo_is_ppo_where_every_action_is_valid(task) -> None:
    """On the ``TopK-v0`` tasks every action is valid while sampling, so MaskablePPO
    takes PPO's updates and draws: the same seed trains the same parameters up to
    float32 rounding (its masked log-probabilities take other operations; why the tuning
    searches MaskablePPO on the batch tasks only, docs/experiments/rl-baselines.md). A
    mask that excluded an action moves them apart (masking the stop action: by 3.6e-3)."""
    import torch

    from agents.learned.training import TrainConfig, train

    params = {}
    for algo in ("ppo", "maskable_ppo"):
        config = TrainConfig(
            task,
            algo=algo,
            total_timesteps=128,
            num_envs=2,
            seed=7,
            algo_kwargs={"n_steps": 32, "batch_size": 32, "n_epochs": 2},
            eval_episodes=0,
        )
        params[algo] = train(config, log=None).model.policy.state_dict()
    assert params["ppo"].keys() == params["maskable_ppo"].keys()
    for name, value in params["ppo"].items():
        assert torch.allclose(value, params["maskable_ppo"][name], rtol=0.0, atol=1e-6), name
