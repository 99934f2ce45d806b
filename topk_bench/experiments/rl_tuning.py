"""Hyper-parameter search for the ``rl-baselines`` experiment (Optuna's TPE sampler).

``python -m topk_bench.experiments.rl_baselines tune --task T --algo A --trials N
--timesteps S --out DIR`` searches the space :data:`SPACES` of algorithm ``A`` on task
``T`` of the ladder: each trial trains ``--seeds`` models (training seeds ``TUNE_SEED0 +
i``, the same for every trial) for ``S`` environment steps on the task's training form
(``NAME-pbp`` for MaskablePPO on a batch task, as in the experiment) with the trial's
hyper-parameters over the defaults of :data:`agents.learned.algos.ALGO_DEFAULTS`, and
scores it by the task score (lower is better) of its final validation:
``--eval-episodes`` episodes played all at once
(:class:`agents.learned.callbacks.VecValidation`, the episodes of
:data:`agents.learned.evaluation.VALIDATION_SEED0`, in the mode the saved policy would
play). Validation episodes are never the benchmark's held-out episodes, whose seeds
:func:`topk_bench.seeds.env_seed` derives from (experiment, point, run), so the search
does not see the episodes the tuned models are scored on. The objective is the mean over
the seeds; the sampler minimises it (Optuna's TPE, Akiba et al., "Optuna: a
next-generation hyperparameter optimization framework", KDD 2019; its first 10 trials
are random).

The study lives in ``DIR/study.db`` (SQLite): a rerun with the same arguments
continues it up to ``--trials`` finished trials (a trial that an interrupted run left
running is marked failed and is not counted; the sampler is seeded with
``--sampler-seed`` plus the number of trials stored, so a continued search draws new
points). ``DIR/best.json`` holds the best trial
so far (``task``, ``algo``, ``algo_kwargs``, ``value`` and the search's settings);
``python -m topk_bench.experiments.rl_baselines config --tuned DIR/best.json ...`` adds the tuned
variant of those (task, algorithm) pairs to the config (:func:`read_tuned`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "SHIPPED_TUNED",
    "SPACES",
    "TUNE_SEED0",
    "algo_kwargs",
    "read_records",
    "read_tuned",
    "search_table",
    "ship_tuned",
    "shipped_records",
    "shipped_tuned",
    "space_table",
    "tune",
]

#: Training seeds of a trial: ``TUNE_SEED0 + i`` (the experiment's are 0 to 4, hashed).
TUNE_SEED0 = 1_000
#: The searches' records (the ``best.json`` of each (task, algorithm) searched) that the
#: shipped ``rl-baselines`` config trains tuned variants from (:func:`shipped_tuned`).
SHIPPED_TUNED = (
    Path(__file__).resolve().parent.parent / "pretrained" / "rl-baselines" / "tuned.json"
)

_GAMMA = ("cat", (0.99, 0.995, 0.999, 1.0))
_ENT = ("cat", (0.0, 0.001, 0.01))
_PPO: dict[str, tuple[Any, ...]] = {
    "learning_rate": ("log", 1e-5, 1e-3),
    "n_steps": ("cat", (64, 128, 256, 512)),
    "gamma": _GAMMA,
    "ent_coef": _ENT,
    "hidden": ("cat", (32, 64, 128)),
}
#: The search space of each algorithm: ``("log", low, high)`` log-uniform,
#: ``("float", low, high)`` uniform, ``("cat", choices)``. ``hidden`` is the width of
#: ``ArmSetPolicy`` (both trunks), ``lstm_hidden_size`` RecurrentPPO's LSTM (its MLP
#: head stays ``[64]``), ``net_width`` the two layers of DQN's ``MlpPolicy``; the other
#: names are constructor arguments of the stable-baselines3 algorithm.
SPACES: dict[str, dict[str, tuple[Any, ...]]] = {
    "ppo": _PPO,
    "maskable_ppo": _PPO,
    "a2c": {
        "learning_rate": ("log", 1e-5, 3e-3),
        "n_steps": ("cat", (5, 8, 16, 32)),
        "gamma": _GAMMA,
        "ent_coef": _ENT,
        "hidden": ("cat", (32, 64, 128)),
    },
    "recurrent_ppo": {
        "learning_rate": ("log", 1e-5, 1e-3),
        "n_steps": ("cat", (64, 128, 256)),
        "gamma": _GAMMA,
        "ent_coef": _ENT,
        "lstm_hidden_size": ("cat", (32, 64, 128)),
    },
    "dqn": {
        "learning_rate": ("log", 1e-5, 1e-3),
        "gamma": _GAMMA,
        "exploration_fraction": ("float", 0.1, 0.5),
        "target_update_interval": ("cat", (500, 1000, 2000, 5000)),
        "net_width": ("cat", (64, 128, 256)),
    },
}


def algo_kwargs(algo: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``algo_kwargs`` of a ``[[train]]`` table from a point of ``SPACES[algo]``."""
    out = dict(params)
    if "hidden" in out:
        out["policy_kwargs"] = {"hidden": out.pop("hidden")}
    if "lstm_hidden_size" in out:
        out["policy_kwargs"] = {"lstm_hidden_size": out.pop("lstm_hidden_size"), "net_arch": [64]}
    if "net_width" in out:
        width = out.pop("net_width")
        out["policy_kwargs"] = {"net_arch": [width, width]}
    return out


def space_table() -> str:
    """The search spaces as a Markdown table (the results page shows it)."""

    def text(dim: tuple[Any, ...]) -> str:
        if dim[0] == "cat":
            return "{" + ", ".join(f"{v:g}" for v in dim[1]) + "}"
        return f"{dim[0]}-uniform [{dim[1]:g}, {dim[2]:g}]".replace("float-", "")

    lines = ["| algorithm | hyper-parameter | range |", "| --- | --- | --- |"]
    for algo, space in SPACES.items():
        lines += [f"| {algo} | `{name}` | {text(dim)} |" for name, dim in space.items()]
    return "\n".join(lines)


def _suggest(trial: Any, algo: str) -> dict[str, Any]:
    params = {}
    for name, dim in SPACES[algo].items():
        if dim[0] == "log":
            params[name] = trial.suggest_float(name, dim[1], dim[2], log=True)
        elif dim[0] == "float":
            params[name] = trial.suggest_float(name, dim[1], dim[2])
        else:
            params[name] = trial.suggest_categorical(name, list(dim[1]))
    return params


def _preset(task: str, algo: str) -> str:
    """The training preset of (task, algo) in the experiment (``ValueError`` if none)."""
    from topk_bench.experiments.rl_plan import runs

    for _, preset, a, _ in runs(1):
        if a == algo and preset.removesuffix("-pbp") == task:
            return preset
    raise ValueError(
        f"task={task!r} with algo={algo!r} is not a training of rl-baselines (DQN plays only "
        "the TopK-v0 tasks; tasks: the ladder's)"
    )


def tune(
    task: str,
    algo: str,
    trials: int,
    timesteps: int,
    out: str | os.PathLike[str],
    *,
    seeds: int = 1,
    eval_episodes: int = 100,
    num_envs: int = 8,
    sampler_seed: int = 0,
    log: Callable[[str], None] | None = print,
) -> dict[str, Any]:
    """Run (or continue) the search of ``algo`` on ``task`` up to ``trials`` finished
    trials; return the best record (as written to ``OUT/best.json``)."""
    import optuna
    from optuna.trial import TrialState

    from agents.learned.training import TrainConfig, train

    preset = _preset(task, algo)
    for name, value, low in (
        ("trials", trials, 1),
        ("timesteps", timesteps, 1),
        ("seeds", seeds, 1),
        ("eval_episodes", eval_episodes, 2),
        ("num_envs", num_envs, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    say = log or (lambda _msg: None)
    settings = {
        "task": task,
        "algo": algo,
        "preset": preset,
        "timesteps": timesteps,
        "seeds": seeds,
        "eval_episodes": eval_episodes,
        "num_envs": num_envs,
    }
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name=f"{algo}-{task}",
        storage=f"sqlite:///{root.resolve() / 'study.db'}",
        direction="minimize",
        load_if_exists=True,
    )
    stored = study.user_attrs.get("settings")
    if stored is None:
        study.set_user_attr("settings", settings)
    elif stored != settings:
        changed = {
            k: (stored.get(k), settings[k]) for k in settings if stored.get(k) != settings[k]
        }
        raise ValueError(
            f"{root / 'study.db'} holds a search with other settings (stored, asked: "
            f"{changed}); use another --out"
        )
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        study._storage.set_trial_state_values(t._trial_id, TrialState.FAIL)  # interrupted
    done = len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))
    # a resumed search must not replay the random start of the first run: the sampler's
    # seed moves on with the trials already stored
    study.sampler = optuna.samplers.TPESampler(seed=sampler_seed + len(study.trials))

    def objective(trial: Any) -> float:
        params = _suggest(trial, algo)
        kwargs = algo_kwargs(algo, params)
        start = time.process_time()
        scores = []
        for i in range(seeds):
            config = TrainConfig(
                preset,
                algo=algo,
                total_timesteps=timesteps,
                num_envs=num_envs,
                seed=TUNE_SEED0 + i,
                algo_kwargs=kwargs,
                eval_episodes=eval_episodes,
                validation="vector",
            )
            result = train(config, log=None)
            scores.append(float(result.evaluations[-1]["score"]))
        value = sum(scores) / len(scores)
        # the trial's CPU time, validations included (the search's cost)
        trial.set_user_attr("cpu_seconds", time.process_time() - start)
        say(f"trial {trial.number}: validation score {value:.4f} with {params}")
        return value

    def keep_best(study: Any, _trial: Any) -> None:
        best = study.best_trial
        finished = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        timed = [t for t in finished if "cpu_seconds" in t.user_attrs]
        record = {
            **settings,
            "algo_kwargs": algo_kwargs(algo, best.params),
            "params": best.params,
            "value": best.value,
            "trial": best.number,
            "trials": len(finished),
            # CPU seconds (training and validation) of the finished trials that record it
            "cpu_seconds": sum(t.user_attrs["cpu_seconds"] for t in timed),
            "cpu_trials": len(timed),
            "space": {k: list(v) for k, v in SPACES[algo].items()},
            "objective": (
                f"mean task score of the final validation ({eval_episodes} episodes, "
                f"VALIDATION_SEED0) over training seeds {TUNE_SEED0}..{TUNE_SEED0 + seeds - 1}"
            ),
            "optuna": optuna.__version__,
        }
        (root / "best.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

    if done < trials:
        say(f"{algo} on {task}: {done} trials done, running {trials - done} more")
        study.optimize(objective, n_trials=trials - done, callbacks=[keep_best])
    else:
        say(f"{algo} on {task}: {done} trials done already")
        keep_best(study, None)
    return json.loads((root / "best.json").read_text(encoding="utf-8"))


def read_tuned(paths: Iterable[str | os.PathLike[str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """``(task, algo) -> algo_kwargs`` from ``best.json`` files of :func:`tune` (for
    :func:`topk_bench.experiments.rl_baselines.experiment_config`); a pair given twice, a file
    without those keys or with a non-finite value is a ``ValueError`` naming it."""
    return _tuned_of(read_records(paths))


def read_records(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[str, dict[str, Any]]]:
    """``(path, record)`` of each ``best.json`` file of :func:`tune`, in the given order."""
    return [(str(p), json.loads(Path(p).read_text(encoding="utf-8"))) for p in paths]


def shipped_tuned() -> dict[tuple[str, str], dict[str, Any]]:
    """``(task, algo) -> algo_kwargs`` of the searches shipped in :data:`SHIPPED_TUNED`
    (none if the file does not exist): the tuned variants of the shipped config."""
    return _tuned_of((f"{SHIPPED_TUNED}[{i}]", r) for i, r in enumerate(shipped_records()))


def shipped_records() -> list[dict[str, Any]]:
    """The search records in :data:`SHIPPED_TUNED` (``[]`` if it does not exist)."""
    if not SHIPPED_TUNED.exists():
        return []
    return list(json.loads(SHIPPED_TUNED.read_text(encoding="utf-8")))


def ship_tuned(paths: Iterable[str | os.PathLike[str]]) -> Path:
    """Write the records of ``best.json`` files of :func:`tune` to :data:`SHIPPED_TUNED`
    (checked as :func:`read_tuned` checks them), in the ladder's task order; then
    ``config`` generates the shipped config with their tuned variants."""
    named = read_records(paths)
    _tuned_of(named)
    SHIPPED_TUNED.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_in_ladder_order(r for _, r in named), indent=1)
    SHIPPED_TUNED.write_text(text + "\n", encoding="utf-8")
    return SHIPPED_TUNED


def _in_ladder_order(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    order = {task: i for i, task in enumerate(_ladder_names())}
    return sorted(records, key=lambda r: (order.get(r["task"], len(order)), r["algo"]))


def _tuned_of(
    records: Iterable[tuple[str, Mapping[str, Any]]],
) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path, record in records:
        missing = [k for k in ("task", "algo", "algo_kwargs", "value") if k not in record]
        if missing:
            raise ValueError(f"{path}: not a best.json of tune (no {missing})")
        if not math.isfinite(float(record["value"])):
            raise ValueError(f"{path}: value={record['value']!r} is not a finite score")
        key = (record["task"], record["algo"])
        if key in out:
            raise ValueError(f"{path}: {key} is tuned twice")
        _preset(*key)
        out[key] = dict(record["algo_kwargs"])
    return out


def search_table(records: Iterable[Mapping[str, Any]]) -> str:
    """Search records (``best.json`` of :func:`tune`, :func:`shipped_records`) as a
    Markdown table: per (task, algorithm) the finished trials, the best trial, its
    validation score and parameters, and the CPU seconds of the trials that recorded
    them."""
    lines = [
        "| task | algorithm | trials x steps | best trial | validation score | parameters "
        "| CPU-s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in _in_ladder_order(records):
        params = ", ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["params"].items()
        )
        timed = r.get("cpu_trials", 0)
        cpu = f"{r['cpu_seconds']:,.0f}" if timed else "-"
        if 0 < timed < r["trials"]:
            cpu += f" ({timed} of {r['trials']} trials)"
        lines.append(
            f"| {r['task']} | {r['algo']} | {r['trials']} x {r['timesteps']:,} | {r['trial']} "
            f"| {r['value']:.4f} | {params} | {cpu} |"
        )
    return "\n".join(lines)


def _ladder_names() -> list[str]:
    from agents.learned.families import LADDER

    return list(LADDER)


def add_tune_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``tune`` sub-command of ``python -m topk_bench.experiments.rl_baselines``."""
    from agents.learned.families import LADDER
    from topk_bench.experiments.rl_plan import ALGOS

    p = sub.add_parser("tune", help="hyper-parameter search (Optuna) of one algorithm on one task")
    p.add_argument("--task", required=True, choices=list(LADDER))
    p.add_argument("--algo", required=True, choices=list(ALGOS))
    p.add_argument("--trials", type=int, required=True, help="finished trials to reach")
    p.add_argument("--timesteps", type=int, required=True, help="environment steps per trial")
    p.add_argument("--out", required=True, help="study directory (study.db, best.json)")
    p.add_argument("--seeds", type=int, default=1, help="training seeds per trial (default 1)")
    p.add_argument(
        "--eval-episodes", type=int, default=100, help="validation episodes (default 100)"
    )
    p.add_argument("--num-envs", type=int, default=8, help="parallel envs (default 8)")
    p.add_argument("--sampler-seed", type=int, default=0, help="seed of the TPE sampler")
    return p


def tune_from_args(args: Any) -> dict[str, Any]:
    """Run :func:`tune` from the parsed ``tune`` sub-command."""
    best = tune(
        args.task,
        args.algo,
        args.trials,
        args.timesteps,
        args.out,
        seeds=args.seeds,
        eval_episodes=args.eval_episodes,
        num_envs=args.num_envs,
        sampler_seed=args.sampler_seed,
    )
    print(
        f"best: trial {best['trial']} of {best['trials']}, validation score "
        f"{best['value']:.4f}, algo_kwargs {best['algo_kwargs']} -> {Path(args.out) / 'best.json'}"
    )
    return best
