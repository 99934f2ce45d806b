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

**Fast rows.** Besides the stable-baselines3 trainings, every task whose family is
``TopK-v0`` or ``TopK-Batch-v0`` (all six; not the ``-pbp`` forms) has :data:`SEEDS`
models ``fast_ppo-TASK-sN`` trained on the fast path (``[[train]]`` with ``fast =
true``: :func:`agents.learned.fast.fast_train`, PPO over a native vector env with the
family's Beta prior and, on fixed-budget tasks, the posterior reward; its defaults
otherwise) for :data:`FAST_TIMESTEPS` steps, validated on :data:`FAST_EVAL_EPISODES`
episodes every :data:`FAST_EVAL_EVERY` steps. They are the learned algorithm
``fast_ppo`` of the tables and curves (:data:`LEARNED`), scored like any other.

:func:`score_table` turns the results into normalised scores (after Agarwal et al.,
"Deep RL at the edge of the statistical precipice", NeurIPS 2021): the task score of an
agent is its mean episode score (:attr:`~agents.learned.families.Task.score`, lower is
better) over the held-out episodes, normalised per task as
``(U - S) / (U - B)`` with ``U`` the score of ``uniform`` and ``B`` the best reference
agent's (0 = uniform, 1 = the best reference agent); an algorithm's aggregate is the
interquartile mean (IQM) of its normalised scores over tasks and training seeds, with a
stratified bootstrap interval (the seeds of a task resampled within the task).

**The anchor and why nothing is clipped.** On the ladder's Beta(5, 5) families the
gaps between means are small, so uniform allocation is close to the best reference
agent: U - B is a small number (on ``one-pull``, uniform 0.031 and KG 0.019 of
aggregate regret in the learned-vs-scripted experiment: U - B = 0.012), and a weak
policy's normalised score is a large negative number (there, a policy at twice
uniform's regret scores -2.6, a barely trained one at 0.15 about -10), while no policy
scores much above 1. Such values are kept as they are: the IQM trims the lowest and
highest quarter of an algorithm's (task, seed) scores, so a few failed runs do not move
it (more than a quarter of them do, as they should), while the mean shows them all. Because the
normalisation divides by a noisy difference, :func:`report` also states each task's
anchor, U - B with its paired 95% half-width on the held-out episodes, and marks a
task ill-conditioned when that half-width exceeds :data:`ILL_CONDITIONED` x (U - B),
and it tables the raw scores with paired intervals against uniform and against the
best reference agent (:func:`paired_table`), which need no anchor. A task where
uniform is the best reference agent on the episodes (U - B = 0) is tabled raw only.

**Results.** :func:`report` writes the results page's Markdown: models present out of
those the points play, training CPU time (the sidecars' ``training.cpu_seconds``), the
anchors, the normalised tables (:func:`format_tables`) and the paired raw scores.
:func:`plot_curves` draws the learning curves: one panel per task, one line per
algorithm, the mean of its seeds' validation scores (the sidecars'
``training.evaluations``: task score of the mode the policy plays, on the validation
episodes; the fast path records both modes' scores, and the mode is chosen from them as
the SB3 path chooses it) with a min-max band over seeds, and the task's ``uniform`` and best
reference scores on the held-out episodes as horizontal lines. Validation episodes are
played on the training form of the task and the held-out ones on its benchmark form,
so the lines place the curves, they are not the same episodes. A model validated only
at the end of its training (no ``eval_every``) is a point with a min-max bar. Both work
on a partial directory and say what is missing.

**Tuned variants.** ``python -m topk_bench.experiments.rl_baselines tune`` searches an algorithm's
hyper-parameters on a task (:mod:`topk_bench.experiments.rl_tuning`); ``config --tuned
DIR/best.json ...`` adds, for each tuned (task, algorithm) pair, its seeds trained with
the best parameters (models ``ALGO-TASK-sN-tuned``, algorithm label ``ALGO (tuned)``
in the tables). Without ``--tuned`` the tuned variants are those of the searches
shipped in ``topk_bench/pretrained/rl-baselines/tuned.json`` (written by ``ship-tuned
DIR/best.json ...``; ``searches`` tables them): that config is the shipped one.

``python -m topk_bench.experiments.rl_baselines config`` prints the config;
``scores OUT`` the score tables of a results directory; ``report OUT [-o FILE]`` the
Markdown results; ``curves OUT [--figures DIR]`` writes ``DIR/learning_curves.png``
(default ``OUT/figures``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from topk_bench.experiments.rl_plan import ALGOS, SEEDS, runs
from topk_bench.generated import to_toml as _to_toml

__all__ = [
    "ALGOS",
    "FAST_ALGO",
    "LEARNED",
    "anchors",
    "episode_times",
    "experiment_config",
    "fast_runs",
    "format_tables",
    "keep_best_config",
    "mean_curve",
    "model_table",
    "paired_table",
    "played_models",
    "plot_curves",
    "report",
    "runs",
    "score_table",
    "task_scores",
    "to_toml",
    "SEEDS",
]

#: Environment steps per training run (all parallel envs together).
TIMESTEPS = 200_000
#: Held-out episodes per task.
EPISODES = 300
#: Validations per training run (every ``timesteps // CURVE_POINTS`` steps): the
#: learning curves.
CURVE_POINTS = 5
#: Suffix of the model names of the tuned variant (``ppo-one-pull-s0-tuned``).
TUNED = "-tuned"
#: The algorithm label (and model-name prefix) of the fast path's PPO rows.
FAST_ALGO = "fast_ppo"
#: The learned algorithms of the tables, in order: the SB3 ones, then the fast rows.
LEARNED = (*ALGOS, FAST_ALGO)
#: Environment steps per fast training run.
FAST_TIMESTEPS = 20_000_000
#: Steps between the fast runs' validations (the learning curves).
FAST_EVAL_EVERY = 4_000_000
#: Validation episodes of the fast runs (each mode, each validation).
FAST_EVAL_EPISODES = 1000
#: The keep_best rows on ``one-pull`` (:func:`keep_best_config`): model prefix and the
#: FastConfig fields that differ from the fast path's defaults.
KEEP_BEST_ROWS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fast_ppo_65m_best", {}),
    ("fast_ppo_65m_lin", {"lr_schedule": "linear"}),
)
#: Their training steps, validation (episodes, every that many steps) and held-out runs.
KEEP_BEST_TIMESTEPS = 65_000_000
KEEP_BEST_EVAL = (4000, 5_000_000)
KEEP_BEST_EPISODES = 600
_NAME = re.compile(
    r"^(?P<algo>[a-z0-9_]+)-(?P<task>[a-z-]+)-s(?P<seed>\d+)(?P<tuned>-tuned)?(?P<final>-final)?$"
)


def _point_env(task: Any) -> dict[str, Any]:
    from agents.learned.families import evaluation_env

    _, kwargs = evaluation_env(task.env_id, task.kwargs)
    for key in ("instance", "instance_params", "answer", "paired", "shuffle"):
        kwargs.pop(key, None)  # the experiment's env (the prior, shuffled) and the runner's
    return kwargs


def fast_runs(seeds: int = SEEDS) -> list[tuple[str, str, int]]:
    """``(model, preset, seed)`` of the fast rows: ``fast_ppo-TASK-sN`` for every ladder
    task whose family is ``TopK-v0`` or ``TopK-Batch-v0`` (the fast path has no
    pull-by-pull form), task by task."""
    from agents.learned.families import LADDER

    return [
        (f"{FAST_ALGO}-{name}-s{seed}", name, seed)
        for name, task in LADDER.items()
        if task.env_id in ("TopK-v0", "TopK-Batch-v0")
        for seed in range(seeds)
    ]


def experiment_config(
    seeds: int = SEEDS,
    timesteps: int = TIMESTEPS,
    episodes: int = EPISODES,
    tuned: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    fast: bool = True,
    sb3: bool = True,
) -> dict[str, Any]:
    """The ``rl-baselines`` config as a dict (:func:`to_toml` writes it).

    ``fast``: also the fast rows (:func:`fast_runs`: ``fast = true`` trainings of
    :data:`FAST_TIMESTEPS` steps, models ``fast_ppo-TASK-sN``), after the SB3 ones.
    ``sb3=False``: no stable-baselines3 rows (the fast rows and the reference agents
    alone, with the same points and held-out episodes, so their scores join those of a
    full run's table); it needs ``fast``.

    ``tuned``: ``(task, algo) -> algo_kwargs`` (:func:`topk_bench.experiments.rl_tuning.read_tuned`
    reads them from the files of ``tune``): each such pair also trains its seeds with
    those hyper-parameters, as models ``ALGO-TASK-sN-tuned`` played on the task's point.
    ``None`` (the default): the searches shipped in
    :data:`topk_bench.experiments.rl_tuning.SHIPPED_TUNED`, which makes the shipped config; ``{}``:
    the default hyper-parameters only.
    """
    from agents.learned.families import BETA_5_5, LADDER, reference_agents, reference_label
    from topk_bench.experiments.rl_tuning import shipped_tuned

    if not (fast or sb3):
        raise ValueError("fast=False and sb3=False: the config would train no model")
    tuned = shipped_tuned() if tuned is None else dict(tuned)
    default = runs(seeds)
    pairs = {(preset.removesuffix("-pbp"), algo) for _, preset, algo, _ in default}
    unknown = sorted(set(tuned) - pairs)
    if unknown:
        raise ValueError(
            f"tuned hyper-parameters for {unknown}: not (task, algorithm) pairs of the "
            f"experiment ({len(pairs)} pairs, e.g. ('one-pull', 'ppo'))"
        )
    every = [(model, preset, algo, seed, {}) for model, preset, algo, seed in default]
    every += [
        (model + TUNED, preset, algo, seed, dict(tuned[preset.removesuffix("-pbp"), algo]))
        for model, preset, algo, seed in default
        if (preset.removesuffix("-pbp"), algo) in tuned
    ]
    if not sb3:
        every, tuned = [], {}
    fast_rows = fast_runs(seeds) if fast else []
    variants = (
        f"; {len(tuned)} (task, algorithm) pairs also with tuned hyper-parameters (models "
        "ALGO-TASK-sN-tuned, found by python -m topk_bench.experiments.rl_baselines tune)"
        if tuned
        else ""
    )
    cfg: dict[str, Any] = {
        "name": "rl-baselines",
        "description": (
            (
                "Standard RL algorithms (stable-baselines3's PPO, A2C and DQN, sb3-contrib's "
                "RecurrentPPO and MaskablePPO, their default hyper-parameters in "
                "agents.learned.algos) on every task of the ladder (agents.learned.families."
                f"LADDER), {seeds} training seeds each, {timesteps:,} environment steps per "
                f"training run, validated on 100 episodes (vector validation){variants}; and "
                if sb3
                else "The fast rows of rl-baselines alone (no stable-baselines3 rows): "
            )
            + (
                f"the fast path's PPO (agents.learned.fast, models fast_ppo-TASK-sN) on "
                f"the {len({p for _, p, _ in fast_rows})} tasks of TopK-v0 and TopK-Batch-v0 "
                f"families, {seeds} seeds each, {FAST_TIMESTEPS:,} steps per training run, "
                f"validated on {FAST_EVAL_EPISODES:,} episodes every {FAST_EVAL_EVERY:,} steps"
                if fast_rows
                else ""
            )
            + f". Every "
            f"trained model and the task's reference agents play the same {episodes} "
            "held-out episodes per task. Scores are normalised per task: 0 = uniform "
            "allocation, 1 = the best reference agent (python -m "
            "topk_bench.experiments.rl_baselines scores OUT)."
        ),
        "reference": (
            "PPO (Schulman et al. 2017), A2C (Mnih et al., ICML 2016), DQN (Mnih et al., "
            "Nature 2015) from stable-baselines3 (Raffin et al., JMLR 22(268), 2021); "
            "RecurrentPPO and MaskablePPO (Huang & Ontanon, FLAIRS 2022) from sb3-contrib; "
            "normalised scores, IQM and stratified bootstrap after Agarwal et al., NeurIPS "
            "2021; the (b, r)-batch model of Jun, Jamieson, Nowak, Zhu (AISTATS 2016)"
            + (
                "; hyper-parameter search with Optuna's TPE sampler (Akiba et al., KDD 2019)"
                if tuned
                else ""
            )
            + "."
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
                "eval_every": timesteps // CURVE_POINTS,
                "validation": "vector",
                **({"algo_kwargs": kwargs} if kwargs else {}),
            }
            for model, preset, algo, seed, kwargs in every
        ]
        + [
            {
                "model": model,
                "preset": preset,
                "fast": True,
                "algo": "ppo",
                "seed": seed,
                "timesteps": FAST_TIMESTEPS,
                "eval_episodes": FAST_EVAL_EPISODES,
                "eval_every": FAST_EVAL_EVERY,
            }
            for model, preset, seed in fast_rows
        ],
        "agents": [],
        "points": [],
    }
    refs: dict[str, dict[str, Any]] = {}
    for task in LADDER.values():
        for name, params in reference_agents(task):
            label = reference_label(name, params)
            refs[label] = {"name": name, "label": label, **({"params": params} if params else {})}
    models = [m for m, *_ in every] + [m for m, *_ in fast_rows]
    cfg["agents"] = [{"name": f"trained:{m}", "label": m} for m in models] + list(refs.values())
    for name, task in LADDER.items():
        labels = [m for m, preset, *_ in every if preset.removesuffix("-pbp") == name]
        labels += [m for m, preset, _ in fast_rows if preset == name]
        labels += [reference_label(a, p) for a, p in reference_agents(task)]
        cfg["points"].append({"label": name, "x": name, "env": _point_env(task), "agents": labels})
    one = {
        name: [f"{algo}-{name}-s0{variant}" for algo in ALGOS for variant in ("", TUNED)]
        for name in ("one-pull", "batch-count")
    }
    cfg["reduced"] = {
        "runs": 10,
        "points": [
            {**p, "agents": [a for a in p["agents"] if not _NAME.match(a) or a in one[p["label"]]]}
            for p in cfg["points"]
            if p["label"] in one
        ],
        # tiny models: the smoke test checks the pipeline (train, save, resume, play, score);
        # the fast rows are not played in reduced mode (nor trained)
        "train": {"timesteps": 512, "num_envs": 2, "eval_episodes": 10, "eval_every": 256},
    }
    return cfg


def keep_best_config(seeds: int = SEEDS) -> dict[str, Any]:
    """The ``one-pull`` keep_best rows of ``rl-baselines`` as a config dict: for each of
    :data:`KEEP_BEST_ROWS`, ``seeds`` fast trainings of :data:`KEEP_BEST_TIMESTEPS` steps
    with ``keep_best = true``; each plays its best validated checkpoint
    (``trained:MODEL``) and its final model (``trained:MODEL-final``, ``ALGO (final)`` in
    the score tables) beside the task's reference agents, on the first
    :data:`KEEP_BEST_EPISODES` held-out episodes of ``rl-baselines`` (the same experiment
    name and point, hence the same episodes and training seeds as a run of the full
    config would have)."""
    from topk_bench.models import FINAL_SUFFIX

    base = experiment_config(seeds, fast=True, sb3=False)
    point = next(p for p in base["points"] if p["label"] == "one-pull")
    refs = [
        a for a in base["agents"] if a["label"] in point["agents"] and not _NAME.match(a["label"])
    ]
    episodes, every = KEEP_BEST_EVAL
    train, agents, labels = [], [], []
    for prefix, kwargs in KEEP_BEST_ROWS:
        for seed in range(seeds):
            model = f"{prefix}-one-pull-s{seed}"
            train.append(
                {
                    "model": model,
                    "preset": "one-pull",
                    "fast": True,
                    "algo": "ppo",
                    "seed": seed,
                    "timesteps": KEEP_BEST_TIMESTEPS,
                    "eval_episodes": episodes,
                    "eval_every": every,
                    "keep_best": True,
                    **({"algo_kwargs": dict(kwargs)} if kwargs else {}),
                }
            )
            for name in (model, model + FINAL_SUFFIX):
                agents.append({"name": f"trained:{name}", "label": name})
                labels.append(name)
    rows = ", ".join(
        f"{prefix} ({', '.join(f'{k} = {v}' for k, v in kwargs.items()) or 'defaults'})"
        for prefix, kwargs in KEEP_BEST_ROWS
    )
    cfg = {key: base[key] for key in ("name", "reference", "metrics", "x", "env")}
    cfg["description"] = (
        f"The one-pull keep_best rows of rl-baselines: the fast path's PPO, {rows}, "
        f"{seeds} seeds each, {KEEP_BEST_TIMESTEPS:,} steps per training run, validated on "
        f"{episodes:,} episodes every {every:,} steps; each row's best validated checkpoint "
        "(MODEL) and final model (MODEL-final) play the first "
        f"{KEEP_BEST_EPISODES} held-out episodes of rl-baselines with the task's reference "
        "agents (python -m topk_bench.experiments.rl_baselines scores OUT)."
    )
    cfg.update(
        runs=KEEP_BEST_EPISODES,
        train=train,
        agents=agents + refs,
        points=[{**point, "agents": labels + [a["label"] for a in refs]}],
    )
    return cfg


def to_toml(cfg: Mapping[str, Any]) -> str:
    """TOML text of the experiment's config, under the line that names its generator."""
    return _to_toml(
        cfg,
        (
            "Generated by `python -m topk_bench.experiments.rl_baselines config`: edit the "
            "generator (topk_bench/experiments/rl_baselines.py), not this file.",
        ),
    )


def _label(match: re.Match[str]) -> str:
    """The algorithm label of a model name's match: ``ppo``, ``ppo (tuned)``, and for the
    final model of a ``keep_best`` training (``MODEL-final``) ``ppo (final)``."""
    label = match["algo"] + (" (tuned)" if match["tuned"] else "")
    return label + (" (final)" if match["final"] else "")


def _algo_of(name: str) -> str:
    """The algorithm label of a model name (:func:`_label`), else the name itself."""
    m = _NAME.match(name)
    return _label(m) if m else name


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

    if len(df) == 0:
        raise ValueError("the results hold no episode yet: nothing to score")
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
                    "algo": _algo_of(agent),
                    "learned": m is not None,
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
    for (algo, learned), group in per_task.groupby(["algo", "learned"], sort=False):
        strata = [g["normalized"].to_numpy(float) for _, g in group.groupby("task", observed=True)]
        iqm = float(stats.trim_mean(np.concatenate(strata), 0.25))
        lo, hi = _stratified_interval(strata, n_resamples, seed, confidence)
        agg.append(
            {
                "algo": algo,
                "learned": bool(learned),
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


def played_models(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(model, task)`` of every model the points of a results directory's manifest
    play (a reduced run plays a subset of the declared ``[[train]]`` models)."""
    names = {a["label"]: a["name"] for a in manifest.get("agents", [])}
    out: dict[str, str] = {}
    for point in manifest.get("points", []):
        for label in point.get("agents", []):
            name = names.get(label, label)
            if name.startswith("trained:"):
                out.setdefault(name.removeprefix("trained:"), point["label"])
    return list(out.items())


def _manifest(out: str | os.PathLike[str]) -> dict[str, Any]:
    from topk_bench.store import ResultStore, StoreError

    manifest = ResultStore(out).manifest()
    if manifest is None:
        raise StoreError(f"{out}: not a results directory (no manifest.json)")
    return manifest


def model_table(out: str | os.PathLike[str]) -> Any:
    """One row per model the results directory ``out`` plays: ``model``, ``task``,
    ``algo`` (its label: ``ppo``, ``ppo (tuned)``), ``seed``, ``present`` (its ``.zip``
    exists), and from its sidecar the training's ``cpu_seconds`` (validation not
    counted), ``validation_cpu_seconds`` (NaN where the sidecar does not record it), wall
    ``seconds``, ``timesteps`` and ``curve``: the validation history,
    a list of ``(environment steps, task score of the mode played)`` (``[]`` when absent).
    """
    import pandas as pd

    from agents.learned.metadata import sidecar_path
    from topk_bench.models import model_path

    rows = []
    for model, task in played_models(_manifest(out)):
        m = _NAME.match(model)
        path = model_path(out, model)
        side = sidecar_path(path)
        info = json.loads(side.read_text()).get("training", {}) if side.exists() else {}
        rows.append(
            {
                "model": model,
                "task": task,
                "algo": _algo_of(model),
                "seed": int(m["seed"]) if m else -1,
                "present": path.exists(),
                "cpu_seconds": float(info.get("cpu_seconds", math.nan)),
                "validation_cpu_seconds": float(info.get("validation_cpu_seconds", math.nan)),
                "seconds": float(info.get("seconds", math.nan)),
                "timesteps": float(info.get("timesteps", math.nan)),
                "curve": [
                    (int(e["timesteps"]), score)
                    for e in info.get("evaluations", [])
                    if (score := _evaluation_score(e)) is not None
                ],
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "model",
            "task",
            "algo",
            "seed",
            "present",
            "cpu_seconds",
            "validation_cpu_seconds",
            "seconds",
            "timesteps",
            "curve",
        ],
    )


def _evaluation_score(entry: Mapping[str, Any]) -> float | None:
    """The task score of the mode a validation entry's policy plays, from either layout
    of a sidecar's ``training.evaluations``: the SB3 path's (``VecValidation``: the
    played mode's ``score`` at the top level) or the fast path's (``deterministic`` and
    ``sampled``, each a ``score`` with its ``score_ci``: the mode is chosen as the SB3
    path chooses it, sampled only if clearly better,
    :func:`agents.learned.callbacks.keep_deterministic`). ``None``: no task score (an
    agent-validation entry, which records regrets only)."""
    if "score" in entry:
        return float(entry["score"])
    det, sam = entry.get("deterministic"), entry.get("sampled")
    if not isinstance(det, Mapping) or "score" not in det:
        return None
    if isinstance(sam, Mapping) and "score" in sam:
        if sam["score"] < det["score"] - det.get("score_ci", 0.0):
            return float(sam["score"])
    return float(det["score"])


def mean_curve(curves: Sequence[Sequence[tuple[int, float]]]) -> Any:
    """Seeds' validation curves on one grid: the union of their steps, each curve
    interpolated linearly within its own range (no value outside it). A DataFrame of
    ``timesteps``, ``mean``, ``low``, ``high`` (min and max over the curves that reach
    the step) and ``n`` (how many do)."""
    import pandas as pd

    curves = [sorted(c) for c in curves if len(c)]
    grid = np.array(sorted({t for c in curves for t, _ in c}), dtype=float)
    values = np.full((len(curves), grid.size), np.nan)
    for i, c in enumerate(curves):
        t, v = np.array(c, dtype=float).T
        inside = (grid >= t[0]) & (grid <= t[-1])
        values[i, inside] = np.interp(grid[inside], t, v)
    n = np.sum(~np.isnan(values), axis=0)
    with np.errstate(all="ignore"):
        return pd.DataFrame(
            {
                "timesteps": grid,
                "mean": np.nanmean(values, axis=0) if curves else grid,
                "low": np.nanmin(values, axis=0) if curves else grid,
                "high": np.nanmax(values, axis=0) if curves else grid,
                "n": n,
            }
        )


def _common_runs(df: Any) -> Any:
    """Rows of the runs (held-out episodes) that every agent present at a task played:
    each task's comparisons are then paired."""
    import pandas as pd

    keep = []
    for _, rows in df.groupby("point", sort=False):
        runs_of = rows.groupby("agent")["run"].apply(set)
        common = set.intersection(*runs_of) if len(runs_of) else set()
        keep.append(rows[rows["run"].isin(common)])
    return pd.concat(keep) if keep else df.iloc[0:0]


def _episode_scores(df: Any) -> Any:
    """A DataFrame of ``task``, ``agent``, ``run``, ``score`` (the task's episode score)."""
    import pandas as pd

    from agents.learned.families import LADDER

    parts = []
    for task, rows in df.groupby("point", sort=False):
        score = LADDER[task].episode_score(
            rows["aggregate_regret"].to_numpy(float),
            rows["misidentified"].to_numpy(float),
            rows["batches"].to_numpy(float),
        )
        parts.append(
            pd.DataFrame(
                {
                    "task": task,
                    "agent": rows["agent"].to_numpy(),
                    "run": rows["run"],
                    "score": score,
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else None


def _paired(a: Any, b: Any) -> tuple[float, float]:
    """Mean of ``a - b`` over paired episodes and its 95% half-width (normal)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    hw = 1.96 * d.std(ddof=1) / math.sqrt(d.size) if d.size > 1 else math.inf
    return float(d.mean()), float(hw)


#: A seed's curve whose evaluations span at most this fraction of its steps was validated
#: at the end of training only (``eval_every`` unset): it is drawn as a point.
END_ONLY = 0.05
#: A panel of the learning curves whose runs end at steps more than this factor apart (the
#: fast rows' 20M and the SB3 runs' 200k) has a log x axis.
WIDE_STEPS = 20
#: A task's anchor is ill-conditioned when the 95% half-width of U - B exceeds this
#: fraction of U - B: normalised scores are then uncertain by a factor of 2 or more from
#: the anchor alone.
ILL_CONDITIONED = 0.5


def anchors(df: Any) -> Any:
    """The normalisation anchors of each task of a results frame, on the episodes every
    agent of the task played: ``uniform`` (U), the best reference agent and its score
    (B, ``uniform`` itself when no other reference agent beats it, as in
    :func:`score_table`), ``gap`` = U - B with its paired 95% half-width ``gap_hw``,
    ``episodes``, and ``ill_conditioned`` (``gap_hw > ILL_CONDITIONED * gap``, or
    ``gap <= 0``: such a task cannot be normalised). Tasks without ``uniform`` or
    without another reference agent are left out."""
    import pandas as pd

    scores = _episode_scores(_common_runs(df))
    rows = []
    for task, group in scores.groupby("task", sort=False) if scores is not None else ():
        wide = group.pivot(index="run", columns="agent", values="score")
        refs = [a for a in wide.columns if _NAME.match(a) is None]
        if "uniform" not in wide.columns or len(refs) < 2:
            continue
        best = min(refs, key=lambda a: wide[a].mean())
        gap, hw = _paired(wide["uniform"], wide[best])
        rows.append(
            {
                "task": task,
                "uniform": float(wide["uniform"].mean()),
                "best_reference": best,
                "best": float(wide[best].mean()),
                "gap": gap,
                "gap_hw": hw,
                "episodes": len(wide),
                "ill_conditioned": not gap > 0 or hw > ILL_CONDITIONED * gap,
            }
        )
    out = pd.DataFrame(
        rows,
        columns=[
            "task",
            "uniform",
            "best_reference",
            "best",
            "gap",
            "gap_hw",
            "episodes",
            "ill_conditioned",
        ],
    )
    order = {t: i for i, t in enumerate(_tasks_in_order(out["task"]))}
    return out.sort_values("task", key=lambda c: c.map(order)).reset_index(drop=True)


def paired_table(df: Any) -> Any:
    """Raw scores with paired intervals: per task and agent (a learned algorithm's
    seeds averaged episode by episode), its mean score ``score`` and the paired
    differences ``vs_uniform`` = S - U and ``vs_best`` = S - B with their 95%
    half-widths, over the episodes every agent of the task played (the intervals are
    over episodes, for the models trained; ``seeds`` says how many)."""
    import pandas as pd

    anchor = anchors(df).set_index("task")
    scores = _episode_scores(_common_runs(df))
    rows = []
    for task, group in scores.groupby("task", sort=False) if scores is not None else ():
        if task not in anchor.index:
            continue
        wide = group.pivot(index="run", columns="agent", values="score")
        labels = _seed_groups(wide.columns)
        for label, agents in labels.items():
            if label == "uniform":
                continue
            s = wide[agents].mean(axis=1)
            du, du_hw = _paired(s, wide["uniform"])
            db, db_hw = _paired(s, wide[anchor.loc[task, "best_reference"]])
            rows.append(
                {
                    "task": task,
                    "agent": label,
                    "learned": _NAME.match(agents[0]) is not None,
                    "seeds": len(agents),
                    "score": float(s.mean()),
                    "vs_uniform": du,
                    "vs_uniform_hw": du_hw,
                    "vs_best": db,
                    "vs_best_hw": db_hw,
                }
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "task",
            "agent",
            "learned",
            "seeds",
            "score",
            "vs_uniform",
            "vs_uniform_hw",
            "vs_best",
            "vs_best_hw",
        ],
    )
    order = {t: i for i, t in enumerate(_tasks_in_order(out["task"]))}
    out["rank"] = out["task"].map(order)
    out = out.sort_values(["rank", "learned", "score"], ascending=[True, False, True])
    return out.drop(columns="rank").reset_index(drop=True)


def _seed_groups(agents: Iterable[str]) -> dict[str, list[str]]:
    """The agents of a task by algorithm label (:func:`_algo_of`): a learned algorithm's
    seeds together (``ppo``, ``ppo (tuned)``), each reference agent alone."""
    groups: dict[str, list[str]] = {}
    for agent in agents:
        groups.setdefault(_algo_of(agent), []).append(agent)
    return groups


def tuning_table(df: Any) -> Any:
    """What tuning changed: per task and algorithm with both a default and a tuned
    variant, the mean score of each (seeds averaged episode by episode) and the paired
    difference ``diff`` = tuned - default with its 95% half-width ``diff_hw``, over the
    episodes both played (negative: the tuned variant is better)."""
    import pandas as pd

    scores = _episode_scores(_common_runs(df))
    rows = []
    for task, group in scores.groupby("task", sort=False) if scores is not None else ():
        wide = group.pivot(index="run", columns="agent", values="score")
        labels = _seed_groups(wide.columns)
        for label, agents in labels.items():
            base = label.removesuffix(" (tuned)")
            if base == label or base not in labels:
                continue
            tuned, default = wide[agents].mean(axis=1), wide[labels[base]].mean(axis=1)
            diff, hw = _paired(tuned, default)
            rows.append(
                {
                    "task": task,
                    "algo": base,
                    "default": float(default.mean()),
                    "tuned": float(tuned.mean()),
                    "diff": diff,
                    "diff_hw": hw,
                }
            )
    out = pd.DataFrame(rows, columns=["task", "algo", "default", "tuned", "diff", "diff_hw"])
    order = {t: i for i, t in enumerate(_tasks_in_order(out["task"]))}
    out["rank"] = out["task"].map(order)
    return out.sort_values(["rank", "algo"]).drop(columns="rank").reset_index(drop=True)


def _tasks_in_order(tasks: Any) -> list[str]:
    from agents.learned.families import LADDER

    present = set(tasks)
    return [t for t in LADDER if t in present] + sorted(present - set(LADDER))


def report(out: str | os.PathLike[str], n_resamples: int = 2000, seed: int = 0) -> str:
    """The results of an rl-baselines directory as Markdown: models present and their
    training CPU time, the held-out episodes' time, the normalisation anchors per task,
    the aggregate (IQM) and per-task normalised scores, and the raw scores with paired
    intervals. Works on a partial directory: it says what is missing and tables what
    exists."""
    from topk_bench.store import read_results

    models = model_table(out)
    lines = ["### Models and training time", ""]
    present = models[models["present"]]
    lines.append(
        f"{len(present)} of {len(models)} models present; training CPU time "
        f"{present['cpu_seconds'].sum():,.0f} CPU-s = "
        f"{present['cpu_seconds'].sum() / 3600:.2f} CPU-hours (sum of the sidecars' "
        "`training.cpu_seconds`, validation not counted), wall time "
        f"{present['seconds'].sum() / 3600:.2f} hours."
    )
    validated = present["validation_cpu_seconds"].dropna()
    if len(validated):
        lines[-1] += (
            f" Validation CPU time {validated.sum():,.0f} CPU-s in the {len(validated)} "
            "sidecars that record it (`training.validation_cpu_seconds`), against "
            f"{present.loc[validated.index, 'cpu_seconds'].sum():,.0f} CPU-s of their training."
        )
    tasks = _tasks_in_order(models["task"])
    lines += [
        "",
        "Models present / expected, and mean CPU seconds per training run:",
        "",
        "| algorithm | " + " | ".join(tasks) + " |",
        "| --- " * (len(tasks) + 1) + "|",
    ]
    for algo in dict.fromkeys(models["algo"]):
        cells = []
        for task in tasks:
            g = models[(models["algo"] == algo) & (models["task"] == task)]
            if g.empty:
                cells.append("-")
                continue
            p = g[g["present"]]
            cpu = f", {p['cpu_seconds'].mean():.0f} s" if len(p) else ""
            cells.append(f"{len(p)}/{len(g)}{cpu}")
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    missing = models[~models["present"]]["model"].tolist()
    if missing:
        shown = ", ".join(missing[:12]) + (
            f" and {len(missing) - 12} more" if len(missing) > 12 else ""
        )
        lines += ["", f"Missing models ({len(missing)}): {shown}."]
    df = read_results(out)
    if not df.empty:
        lines += _episode_time_lines(df)
    lines += ["", "### Scores", ""]
    if df.empty:
        lines.append("No held-out episodes yet: no score table.")
        return "\n".join(lines) + "\n"
    anchor = anchors(df)
    skipped = sorted(set(df["point"]) - set(anchor["task"]))
    usable = df[df["point"].isin(set(anchor["task"]))]
    if anchor.empty:
        lines.append("No task has episodes of uniform and of a reference agent yet.")
        return "\n".join(lines) + "\n"
    lines += [
        "Normalisation anchors, on the held-out episodes every agent of the task played: "
        "U = uniform, B = the best reference agent, U - B with its paired 95% half-width. "
        f"A task is marked ill-conditioned when the half-width exceeds {ILL_CONDITIONED:g} "
        "x (U - B): its normalised scores are uncertain by a factor 2 or more from the "
        "anchor alone.",
        "",
        "| task | episodes | U | best reference | B | U - B ± 95% | half-width / (U - B) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in anchor.itertuples():
        flag = " (ill-conditioned)" if r.ill_conditioned else ""
        ratio = r.gap_hw / r.gap if r.gap > 0 else math.inf
        lines.append(
            f"| {r.task} | {r.episodes} | {r.uniform:.4f} | {r.best_reference} | {r.best:.4f} "
            f"| {r.gap:.4f} ± {r.gap_hw:.4f} | {ratio:.2f}{flag} |"
        )
    if skipped:
        lines += [
            "",
            f"Not scored yet (no uniform or no reference episodes): {', '.join(skipped)}.",
        ]
    flat = anchor[~(anchor["gap"] > 0)]["task"].tolist()
    if flat:
        lines += [
            "",
            f"Not normalised: {', '.join(flat)} (uniform is the best reference agent on "
            "these episodes, U - B = 0).",
        ]
    normalisable = _common_runs(usable[~usable["point"].isin(set(flat))])
    if not normalisable.empty:
        per_task, aggregate = score_table(normalisable, n_resamples=n_resamples, seed=seed)
        lines += [
            "",
            "Normalised scores (U - S) / (U - B), not clipped: the IQM over tasks and seeds "
            "with a 95% stratified bootstrap interval, the mean, then each agent's mean per "
            "task:",
            "",
            format_tables(per_task, aggregate),
        ]
    lines += [
        "",
        "Raw scores (lower is better) with paired 95% intervals over the held-out "
        "episodes (a learned algorithm's seeds averaged episode by episode; the interval "
        "is over episodes, for the models trained):",
        "",
        "| task | agent | seeds | score | S - U ± 95% | S - B ± 95% |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in paired_table(usable).itertuples():
        seeds = str(r.seeds) if r.learned else "-"
        lines.append(
            f"| {r.task} | {r.agent} | {seeds} | {r.score:.4f} | {r.vs_uniform:+.4f} ± "
            f"{r.vs_uniform_hw:.4f} | {r.vs_best:+.4f} ± {r.vs_best_hw:.4f} |"
        )
    gains = tuning_table(usable)
    if not gains.empty:
        lines += [
            "",
            "### Tuned against default",
            "",
            "Tuned against default hyper-parameters, paired over the held-out episodes "
            "(tuned - default; negative: tuning helped):",
            "",
            "| task | algorithm | default | tuned | tuned - default ± 95% |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {r.task} | {r.algo} | {r.default:.4f} | {r.tuned:.4f} | {r.diff:+.4f} ± "
            f"{r.diff_hw:.4f} |"
            for r in gains.itertuples()
        ]
    return "\n".join(lines) + "\n"


def episode_times(df: Any) -> Any:
    """The time of the held-out episodes of a results frame, by algorithm (a learned
    algorithm's seeds together, :func:`_label`) or reference agent and task: columns
    ``agent``, ``task``, ``episodes``, ``seconds`` (the episodes' ``wall_time`` in their
    worker, one episode at a time per worker: about their CPU time) and ``warmup`` (the
    part spent in warm-up episodes, the first an agent plays in a worker: it also loads
    the model or compiles the agent's code)."""
    import pandas as pd

    from topk_bench.report import warmup_flags

    warm = warmup_flags(df)
    frame = pd.DataFrame(
        {
            "agent": [_algo_of(a) for a in df["agent"].astype(str)],
            "task": df["point"].astype(str),
            "seconds": df["wall_time"].astype(float),
        }
    )
    frame["warmup"] = frame["seconds"].where(warm, 0.0)
    out = frame.groupby(["agent", "task"], sort=False).agg(
        episodes=("seconds", "size"), seconds=("seconds", "sum"), warmup=("warmup", "sum")
    )
    return out.reset_index()


def _episode_time_lines(df: Any) -> list[str]:
    """The report's episode-time section: totals, then ms per episode by agent and task."""
    if "wall_time" not in df or df["wall_time"].isna().all():
        return []
    times = episode_times(df)
    total, warm = times["seconds"].sum(), times["warmup"].sum()
    tasks = _tasks_in_order(times["task"])
    lines = [
        "",
        "### Episode time",
        "",
        f"{int(times['episodes'].sum()):,} held-out episodes in {total:,.0f} s = "
        f"{total / 3600:.2f} CPU-hours (each episode's time in its worker, one at a time "
        f"per worker), {warm:,.0f} s of which in warm-up episodes (the first an agent "
        "plays in a worker: it also loads the model or compiles the agent). Mean ms per "
        "episode, warm-up included:",
        "",
        "| agent | " + " | ".join(tasks) + " |",
        "| --- " * (len(tasks) + 1) + "|",
    ]
    table = times.set_index(["agent", "task"])
    seen = list(dict.fromkeys(times["agent"]))

    def order(agent: str) -> tuple[int, int, int]:  # the learned first, as LEARNED
        base = agent.removesuffix(" (tuned)")
        if base in LEARNED:
            return (0, LEARNED.index(base), agent != base)
        return (1, seen.index(agent), 0)

    for agent in sorted(seen, key=order):
        cells = []
        for task in tasks:
            if (agent, task) in table.index:
                row = table.loc[(agent, task)]
                cells.append(f"{1000 * row['seconds'] / row['episodes']:.1f}")
            else:
                cells.append("-")
        lines.append(f"| {agent} | " + " | ".join(cells) + " |")
    return lines


def plot_curves(
    out: str | os.PathLike[str], figures: str | os.PathLike[str] | None = None
) -> tuple[Path, list[str]]:
    """Learning curves of a results directory: one panel per task, one line per
    algorithm (the mean of its seeds' validation scores against environment steps,
    :func:`mean_curve`, with a min-max band), and the task's ``uniform`` and best
    reference scores on the held-out episodes as horizontal lines when there are any.
    A panel whose runs end more than :data:`WIDE_STEPS` x apart in steps (the fast rows
    and the SB3 runs) has a log x axis. Returns the PNG (``FIGURES/learning_curves.png``,
    ``FIGURES`` defaulting to ``OUT/figures``) and notes on what is missing."""
    from topk_bench.plot import (
        _LINESTYLES,
        _compact,
        _plt,
        agent_styles,
        finish_grid,
        grid_shape,
    )
    from topk_bench.store import read_results

    plt = _plt()
    models = model_table(out)
    notes = []
    missing = models[~models["present"]]
    if len(missing):
        notes.append(f"{len(missing)} of {len(models)} models missing: not plotted")
    flat = models[models["present"] & (models["curve"].map(len) == 0)]
    if len(flat):
        notes.append(f"{len(flat)} models have no validation curve in their sidecar")
    end = models[
        models["curve"].map(lambda c: bool(c) and c[-1][0] - c[0][0] <= END_ONLY * c[-1][0])
    ]
    if len(end):
        notes.append(
            f"{len(end)} models were validated at the end of training only (their [[train]] "
            "tables set no eval_every): each is a point (mean, min-max over seeds), not a curve"
        )
    df = read_results(out)
    anchor = anchors(df).set_index("task") if not df.empty else None
    tasks = _tasks_in_order(models["task"])
    no_lines = [t for t in tasks if anchor is None or t not in anchor.index]
    if no_lines:
        notes.append(f"no uniform/reference episodes yet for {', '.join(no_lines)}: no lines")
    labels = list(dict.fromkeys(models["algo"]))
    styles = agent_styles(labels, {a: a.removesuffix(" (tuned)") for a in labels})
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    rows, cols = grid_shape(len(tasks))
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.0 * cols, 3.6 * rows), squeeze=False, layout="constrained"
    )
    for ax, task in zip(axes.flat, tasks, strict=False):
        here = models[(models["task"] == task) & models["present"]]
        ends = [c[-1][0] for c in here["curve"] if c and c[-1][0] > 0]
        # the fast rows train 100x the SB3 runs' steps: a log axis shows both
        logx = bool(ends) and max(ends) > WIDE_STEPS * min(ends)
        for j, label in enumerate(labels):
            curves = [c for c in here[here["algo"] == label]["curve"] if c]
            if not curves:
                continue
            colour, variant = styles[label]
            color = palette[colour % len(palette)]
            style = {"color": color, "label": label, "marker": "o", "ms": 3}
            curve = mean_curve(curves)
            t = curve["timesteps"].to_numpy(float)
            if t[-1] - t[0] <= END_ONLY * t[-1]:  # validated at the end only: one point
                last = np.array([c[-1][1] for c in curves])
                dodge = 1 + 0.015 * (j - (len(labels) - 1) / 2)  # side by side
                ax.errorbar(
                    [t[-1] * dodge],
                    [last.mean()],
                    yerr=[[last.mean() - last.min()], [last.max() - last.mean()]],
                    capsize=3,
                    ls="none",
                    **style,
                )
                continue
            ax.plot(t, curve["mean"], ls=_LINESTYLES[variant % len(_LINESTYLES)], **style)
            if len(curves) > 1:
                ax.fill_between(t, curve["low"], curve["high"], alpha=0.2, color=color, lw=0)
        if here.empty:
            ax.text(0.5, 0.5, "no model yet", transform=ax.transAxes, ha="center", va="center")
        if anchor is not None and task in anchor.index:
            a = anchor.loc[task]
            ax.axhline(a["uniform"], color="grey", ls="--", lw=1, label="uniform (held-out)")
            ax.axhline(a["best"], color="black", ls=":", lw=1, label="best reference (held-out)")
            ax.text(
                0.99,
                a["best"],
                f" {a['best_reference']}",
                transform=ax.get_yaxis_transform(),
                ha="right",
                va="bottom",
                fontsize=7,
            )
        expected = int((models["task"] == task).sum())
        ax.set_title(f"{task} ({len(here)}/{expected} models)", fontsize=9)
        if logx:
            ax.set_xscale("log")
        else:
            ax.set_xlim(left=0)
        ax.xaxis.set_major_formatter(lambda v, _pos: _compact(v))
        ax.set_xlabel("environment steps" + (" (log)" if logx else ""))
        ax.set_ylabel("validation score (lower is better)")
        ax.grid(alpha=0.3)
    finish_grid(fig, axes, len(tasks))
    fig.suptitle("rl-baselines: validation score (mean over seeds, min-max band)", fontsize=10)
    path = Path(figures if figures is not None else Path(out) / "figures")
    path.mkdir(parents=True, exist_ok=True)
    path = path / "learning_curves.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path, notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topk_bench.experiments.rl_baselines")
    sub = parser.add_subparsers(dest="command", required=True)
    config = sub.add_parser("config", help="print the rl-baselines config (TOML)")
    config.add_argument(
        "--no-fast",
        action="store_true",
        help="leave out the fast rows (fast_ppo-TASK-sN: 30 trainings of "
        f"{FAST_TIMESTEPS:,} steps on agents.learned.fast)",
    )
    config.add_argument(
        "--fast-only",
        action="store_true",
        help="only the fast rows and the reference agents (no stable-baselines3 rows; "
        "their scores join those of a full run's tables)",
    )
    config.add_argument(
        "--keep-best",
        action="store_true",
        help="the one-pull keep_best rows instead (best checkpoint and final model of "
        f"{len(KEEP_BEST_ROWS)} x {SEEDS} fast trainings of {KEEP_BEST_TIMESTEPS:,} steps)",
    )
    config.add_argument(
        "--tuned",
        nargs="+",
        default=(),
        metavar="JSON",
        help="best-parameter files of `tune` (DIR/best.json): the tuned variants to add "
        "(default: the shipped ones, topk_bench/pretrained/rl-baselines/tuned.json)",
    )
    scores = sub.add_parser("scores", help="normalised score tables of a results directory")
    scores.add_argument("out")
    rep = sub.add_parser(
        "report", help="Markdown results of a results directory (models, CPU time, scores)"
    )
    rep.add_argument("out")
    rep.add_argument("--output", "-o", help="write the Markdown there (default: stdout)")
    curves = sub.add_parser("curves", help="learning-curve figure of a results directory")
    curves.add_argument("out")
    curves.add_argument("--figures", help="where to write the PNG (default: OUT/figures)")
    searches = sub.add_parser(
        "searches", help="Markdown table of the searches of `tune` (default: the shipped ones)"
    )
    searches.add_argument("best", nargs="*", metavar="JSON", help="DIR/best.json of `tune`")
    ship = sub.add_parser(
        "ship-tuned", help="write best.json files of `tune` as the shipped config's tuned variants"
    )
    ship.add_argument("best", nargs="+", metavar="JSON", help="DIR/best.json of `tune`")
    from topk_bench.experiments.rl_tuning import add_tune_parser

    add_tune_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "config":
        from topk_bench.experiments.rl_tuning import read_tuned

        tuned = read_tuned(args.tuned) if args.tuned else None
        if args.no_fast and args.fast_only:
            parser.error("--no-fast and --fast-only: the config would train no model")
        if args.keep_best and (args.no_fast or args.fast_only or args.tuned):
            parser.error("--keep-best prints a config of its own: no other option applies")
        cfg = (
            keep_best_config()
            if args.keep_best
            else experiment_config(tuned=tuned, fast=not args.no_fast, sb3=not args.fast_only)
        )
        print(to_toml(cfg), end="")
        return 0
    if args.command == "searches":
        from topk_bench.experiments.rl_tuning import read_records, search_table, shipped_records

        records = [r for _, r in read_records(args.best)] if args.best else shipped_records()
        print(search_table(records))
        return 0
    if args.command == "ship-tuned":
        from topk_bench.experiments.rl_tuning import ship_tuned

        print(
            f"wrote {ship_tuned(args.best)}; now: "
            "python -m topk_bench.experiments.rl_baselines config"
        )
        return 0
    if args.command == "tune":
        from topk_bench.experiments.rl_tuning import tune_from_args

        tune_from_args(args)
        return 0
    if args.command == "curves":
        path, notes = plot_curves(args.out, args.figures)
        for note in notes:
            print(note)
        print(f"wrote {path}")
        return 0
    if args.command == "report":
        text = report(args.out)
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
            print(f"wrote {args.output}")
        else:
            print(text, end="")
        return 0
    from topk_bench.store import read_results

    try:
        tables = score_table(read_results(args.out))
    except ValueError as err:
        print(f"error: {args.out}: {err}", file=sys.stderr)
        return 2
    print(format_tables(*tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
