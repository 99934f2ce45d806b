"""The ``rl-baselines`` experiment: RL algorithms on every task of the ladder, normalised.

:func:`experiment_config` writes the experiment (``topk_bench/experiments/rl-baselines.toml``
is its output, checked by ``tests/test_rl_baselines.py``): one ``[[train]]`` table per
(task, algorithm, seed) of :func:`runs` (PPO, A2C, RecurrentPPO on every task, DQN on
the ``TopK-v0`` tasks, MaskablePPO on the ``TopK-v0`` tasks and on the pull-by-pull form
of the batch tasks), one point per task (its benchmark form,
:func:`agents.learned.families.evaluation_env`), where its trained models and its
reference agents (:attr:`agents.learned.families.Task.reference`) play the same
held-out episodes. ``topk-bench run rl-baselines`` trains the missing models first,
``--jobs`` at a time, each saved with its validation curve (the sidecar's
``training.evaluations``) when it finishes, so an interrupted run resumes with only the
trainings that had not finished.

:func:`score_table` turns the results into normalised scores (after Agarwal et al.,
"Deep RL at the edge of the statistical precipice", NeurIPS 2021): the task score of an
agent is its mean episode score (:attr:`~agents.learned.families.Task.score`, lower is
better) over the held-out episodes, normalised per task as
``(U - S) / (U - B)`` with ``U`` the score of ``uniform`` and ``B`` the best reference
agent's (0 = uniform, 1 = the best reference agent); an algorithm's aggregate is the
interquartile mean (IQM) of its normalised scores over tasks and training seeds, with a
stratified bootstrap interval (the seeds of a task resampled within the task).

``python -m topk_bench.rl_baselines config`` prints the config;
``python -m topk_bench.rl_baselines scores OUT`` the score tables of a results directory.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["ALGOS", "experiment_config", "runs", "score_table", "task_scores", "to_toml"]

#: The algorithms of the experiment, in table order.
ALGOS = ("ppo", "a2c", "dqn", "recurrent_ppo", "maskable_ppo")
#: Training seeds per (task, algorithm).
SEEDS = 5
#: Environment steps per training run (all parallel envs together).
TIMESTEPS = 200_000
#: Held-out episodes per task.
EPISODES = 300
_NAME = re.compile(r"^(?P<algo>[a-z0-9_]+)-(?P<task>[a-z-]+)-s(?P<seed>\d+)$")


def runs(seeds: int = SEEDS) -> list[tuple[str, str, str, int]]:
    """``(model, preset, algo, seed)`` of every training run, task by task."""
    from agents.learned.families import LADDER

    out = []
    for name, task in LADDER.items():
        batch = task.env_id == "TopK-Batch-v0"
        for algo in ALGOS:
            if algo == "dqn" and batch:
                continue  # DQN needs a Discrete action space
            preset = f"{name}-pbp" if algo == "maskable_ppo" and batch else name
            out += [(f"{algo}-{name}-s{seed}", preset, algo, seed) for seed in range(seeds)]
    return out


def _point_env(task: Any) -> dict[str, Any]:
    from agents.learned.families import evaluation_env

    _, kwargs = evaluation_env(task.env_id, task.kwargs)
    for key in ("instance", "instance_params", "answer", "paired", "shuffle"):
        kwargs.pop(key, None)  # the experiment's env (the prior, shuffled) and the runner's
    return kwargs


def experiment_config(
    seeds: int = SEEDS, timesteps: int = TIMESTEPS, episodes: int = EPISODES
) -> dict[str, Any]:
    """The ``rl-baselines`` config as a dict (:func:`to_toml` writes it)."""
    from agents.learned.families import BETA_5_5, LADDER, reference_agents

    every = runs(seeds)
    cfg: dict[str, Any] = {
        "name": "rl-baselines",
        "description": (
            "Standard RL algorithms (stable-baselines3's PPO, A2C and DQN, sb3-contrib's "
            "RecurrentPPO and MaskablePPO, their default hyper-parameters in "
            "agents.learned.algos) on every task of the ladder (agents.learned.families."
            f"LADDER), {seeds} training seeds each, {timesteps:,} environment steps per "
            "training run, validated on 100 episodes (vector validation). Every trained "
            f"model and the task's reference agents play the same {episodes} held-out "
            "episodes per task. Scores are normalised per task: 0 = uniform allocation, "
            "1 = the best reference agent (python -m topk_bench.rl_baselines scores OUT)."
        ),
        "reference": (
            "PPO (Schulman et al. 2017), A2C (Mnih et al., ICML 2016), DQN (Mnih et al., "
            "Nature 2015) from stable-baselines3 (Raffin et al., JMLR 22(268), 2021); "
            "RecurrentPPO and MaskablePPO (Huang & Ontanon, FLAIRS 2022) from sb3-contrib; "
            "normalised scores, IQM and stratified bootstrap after Agarwal et al., NeurIPS "
            "2021; the (b, r)-batch model of Jun, Jamieson, Nowak, Zhu (AISTATS 2016)."
        ),
        "metrics": ["aggregate_regret", "misidentified", "batches"],
        "runs": episodes,
        "x": "task",
        "env": {**BETA_5_5, "shuffle": True},
        "train": [
            {
                "model": model,
                "preset": preset,
                "algo": algo,
                "seed": seed,
                "timesteps": timesteps,
                "num_envs": 8,
                "eval_episodes": 100,
                "validation": "vector",
            }
            for model, preset, algo, seed in every
        ],
        "agents": [],
        "points": [],
    }
    refs: dict[str, dict[str, Any]] = {}
    for task in LADDER.values():
        for name, params in reference_agents(task):
            label = f"{name} (prior)" if params else name
            refs[label] = {"name": name, "label": label, **({"params": params} if params else {})}
    cfg["agents"] = [{"name": f"trained:{m}", "label": m} for m, *_ in every] + list(refs.values())
    for name, task in LADDER.items():
        labels = [m for m, preset, *_ in every if preset.removesuffix("-pbp") == name]
        labels += [f"{a} (prior)" if p else a for a, p in reference_agents(task)]
        cfg["points"].append({"label": name, "x": name, "env": _point_env(task), "agents": labels})
    one = {name: [f"{algo}-{name}-s0" for algo in ALGOS] for name in ("one-pull", "batch-count")}
    cfg["reduced"] = {
        "runs": 10,
        "points": [
            {**p, "agents": [a for a in p["agents"] if not _NAME.match(a) or a in one[p["label"]]]}
            for p in cfg["points"]
            if p["label"] in one
        ],
        # tiny models: the smoke test checks the pipeline (train, save, resume, play, score)
        "train": {"timesteps": 512, "num_envs": 2, "eval_episodes": 10},
    }
    return cfg


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"{value!r} has no TOML form here")


def to_toml(cfg: Mapping[str, Any]) -> str:
    """TOML text of a config dict (top-level scalars, tables of scalars, arrays of tables)."""
    head = [
        "# Generated by `python -m topk_bench.rl_baselines config`: edit the generator "
        "(topk_bench/rl_baselines.py), not this file.",
    ]
    tables: list[str] = []
    for key, value in cfg.items():
        if isinstance(value, Mapping):
            tables += ["", f"[{key}]"]
            tables += [f"{k} = {_toml_value(v)}" for k, v in value.items()]
        elif isinstance(value, list) and value and isinstance(value[0], Mapping):
            for item in value:
                tables += ["", f"[[{key}]]"]
                tables += [f"{k} = {_toml_value(v)}" for k, v in item.items()]
        else:
            head.append(f"{key} = {_toml_value(value)}")
    return "\n".join(head + tables) + "\n"


def task_scores(df: Any) -> Any:
    """Mean episode score (lower is better) per (task, agent) of an rl-baselines results
    frame: a DataFrame with columns ``task``, ``agent``, ``score``, ``episodes``."""
    import pandas as pd

    from agents.learned.families import LADDER

    out = []
    for (task, agent), rows in df.groupby(["point", "agent"], sort=False):
        spec = LADDER[task]
        scores = spec.episode_score(
            rows["aggregate_regret"].to_numpy(float),
            rows["misidentified"].to_numpy(float),
            rows["batches"].to_numpy(float),
        )
        out.append(
            {"task": task, "agent": agent, "score": float(np.mean(scores)), "episodes": len(rows)}
        )
    return pd.DataFrame(out)


def _stratified_interval(
    strata: Sequence[Any], n_resamples: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile interval of the IQM by stratified bootstrap: each stratum (a task's
    seeds) resampled with replacement within itself, at its own size (a stratum of
    one value is that value in every resample)."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    draws = [
        np.asarray(s, dtype=float)[rng.integers(0, len(s), (n_resamples, len(s)))] for s in strata
    ]
    iqms = stats.trim_mean(np.concatenate(draws, axis=1), 0.25, axis=1)
    tail = (1 - confidence) / 2
    return float(np.quantile(iqms, tail)), float(np.quantile(iqms, 1 - tail))


def score_table(
    df: Any, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> tuple[Any, Any]:
    """``(per_task, aggregate)`` normalised scores of an rl-baselines results frame.

    ``per_task``: one row per (task, agent): the mean score, and the normalised score
    ``(U - S) / (U - B)`` (``U``: ``uniform``'s mean score on the task, ``B``: the
    lowest mean score of the task's reference agents). ``aggregate``: per algorithm,
    the IQM of its normalised scores over tasks and seeds with a stratified bootstrap
    interval (strata: tasks), the mean, and the number of (task, seed) runs; per
    reference agent the same over tasks (one value per task). A task where the best
    reference agent scores as ``uniform`` cannot be normalised and raises ``ValueError``.
    """
    import pandas as pd
    from scipy import stats

    from agents.learned.families import LADDER

    per = task_scores(df)
    rows = []
    for task, group in per.groupby("task", sort=False):
        scores = dict(zip(group["agent"], group["score"], strict=True))
        refs = [a for a in scores if _NAME.match(a) is None]
        if "uniform" not in scores:
            raise ValueError(f"task {task!r}: no 'uniform' rows to normalise with")
        low, best = scores["uniform"], min(scores[a] for a in refs)
        if not low > best:
            raise ValueError(
                f"task {task!r}: the best reference agent scores {best} and uniform {low}: "
                "nothing to normalise by"
            )
        for agent, score in scores.items():
            m = _NAME.match(agent)
            rows.append(
                {
                    "task": task,
                    "agent": agent,
                    "algo": m["algo"] if m else agent,
                    "seed": int(m["seed"]) if m else -1,
                    "score": score,
                    "normalized": (low - score) / (low - best),
                    "best_reference": min(refs, key=scores.__getitem__),
                }
            )
    per_task = pd.DataFrame(rows)
    order = list(LADDER)
    per_task["task"] = pd.Categorical(
        per_task["task"], [t for t in order if t in set(per_task["task"])]
    )
    per_task = per_task.sort_values(["task", "algo", "seed"]).reset_index(drop=True)
    agg = []
    for algo, group in per_task.groupby("algo", sort=False):
        strata = [g["normalized"].to_numpy(float) for _, g in group.groupby("task", observed=True)]
        iqm = float(stats.trim_mean(np.concatenate(strata), 0.25))
        lo, hi = _stratified_interval(strata, n_resamples, seed, confidence)
        agg.append(
            {
                "algo": algo,
                "learned": algo in ALGOS,
                "iqm": iqm,
                "iqm_low": float(lo),
                "iqm_high": float(hi),
                "mean": float(np.mean(np.concatenate(strata))),
                "tasks": len(strata),
                "runs": int(sum(s.size for s in strata)),
            }
        )
    aggregate = pd.DataFrame(agg).sort_values(["learned", "iqm"], ascending=[False, False])
    return per_task, aggregate.reset_index(drop=True)


def format_tables(per_task: Any, aggregate: Any) -> str:
    """Markdown: the aggregate table, then the per-task mean normalised score of each
    algorithm (over seeds) and reference agent."""
    lines = [
        "| agent | IQM of normalised scores | 95% interval | mean | tasks | runs |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in aggregate.itertuples():
        lines.append(
            f"| {r.algo} | {r.iqm:.3f} | [{r.iqm_low:.3f}, {r.iqm_high:.3f}] | {r.mean:.3f} "
            f"| {r.tasks} | {r.runs} |"
        )
    tasks = [str(t) for t in per_task["task"].cat.categories]
    table = per_task.groupby(["algo", "task"], observed=True)["normalized"].mean().unstack()
    lines += ["", "| agent | " + " | ".join(tasks) + " |", "| --- " * (len(tasks) + 1) + "|"]
    for algo in aggregate["algo"]:
        cells = [table.loc[algo].get(t, math.nan) for t in tasks]
        lines.append(
            f"| {algo} | " + " | ".join("-" if math.isnan(c) else f"{c:.3f}" for c in cells) + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topk_bench.rl_baselines")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("config", help="print the rl-baselines config (TOML)")
    scores = sub.add_parser("scores", help="normalised score tables of a results directory")
    scores.add_argument("out")
    args = parser.parse_args(argv)
    if args.command == "config":
        print(to_toml(experiment_config()), end="")
        return 0
    from topk_bench.store import read_results

    print(format_tables(*score_table(read_results(args.out))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
