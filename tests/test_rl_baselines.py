"""The rl-baselines experiment: the shipped config is the generator's, every ladder task
and algorithm is in it, scores are normalised per task (0 = uniform, 1 = the best
reference agent), and a reduced run trains only the models its points play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib

from agents.learned.families import LADDER
from topk_bench import rl_baselines
from topk_bench.config import load, shipped

SHIPPED = Path(rl_baselines.__file__).parent / "experiments" / "rl-baselines.toml"


def test_shipped_config_is_the_generators() -> None:
    """Edit the generator, then `python -m topk_bench.rl_baselines config > ...`."""
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
    assert len(exp.train) == 27 * rl_baselines.SEEDS
    for point in exp.points:
        models = [a for a in point.agents if rl_baselines._NAME.match(a)]
        assert models and all(f"-{point.label}-s" in m for m in models)
        assert "uniform" in point.agents
    reduced = load("rl-baselines", reduced=True)
    played = {a.name for _, a in reduced.pairs() if a.name.startswith("trained:")}
    assert len(played) == 9  # seed 0 of each algorithm on one-pull and batch-count


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


def test_a_run_trains_only_the_models_its_points_play(tmp_path, monkeypatch) -> None:
    """Reduced mode plays 9 of the 135 models: only those are handed to training."""
    from topk_bench import run

    asked: list[str] = []
    monkeypatch.setattr(
        run, "train_missing", lambda specs, *a, **k: asked.extend(s.model for s in specs)
    )
    exp = run._with_models(load("rl-baselines", reduced=True), tmp_path, set(), 1, 0, False)
    assert len(asked) == 9 and all(m.endswith("-s0") for m in asked)
    assert {m.split("-", 1)[1].rsplit("-", 1)[0] for m in asked} == {"one-pull", "batch-count"}
    played = {a.name for _, a in exp.pairs() if ":" in a.name and "trained" not in a.name}
    assert len(played) == 9  # trained:MODEL resolved to ALGO:PATH
