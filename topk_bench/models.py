"""Learned policies an experiment trains before it runs (its ``[[train]]`` tables).

An experiment that compares learned and scripted agents declares the models it needs::

    [[train]]
    model = "ppo-standard"        # name; saved as OUT/models/ppo-standard.zip (+ .json)
    preset = "standard"           # a family of agents.learned.families.PRESETS (or env_id + env)
    timesteps = 960000            # training steps, all parallel envs together
    num_envs = 32
    algo_kwargs = { n_steps = 64 }

    [[agents]]
    name = "trained:ppo-standard" # plays the model above through agents.PolicyAgent
    label = "PPO"

``topk-bench run`` first trains every declared model that ``OUT/models`` does not hold
yet (models in parallel processes, at most ``--jobs`` of them, one torch thread each),
then runs the episodes as usual; ``trained:NAME`` becomes ``ALGO:OUT/models/NAME.zip``.
A rerun finds the models and does not train again, so evaluation resumes with the
same models. Training is seeded by (base seed, experiment, model, ``seed``) and uses
a fixed number of steps, so the same command trains the same model (up to
floating-point differences across machines). A model is written under a temporary
name and renamed when complete: an interrupted training leaves no model (a rerun clears
its temporary directory and trains it again).

Keys of a ``[[train]]`` table (see :func:`agents.learned.training.train` for their meaning):
``model`` (required), ``preset`` or ``env_id`` (one of them required), ``env``, ``algo`` (``ppo``),
``policy`` (``arm-set``), ``timesteps`` (required), ``num_envs`` (8), ``seed`` (0), ``algo_kwargs``,
``reward_scale`` (10), ``eval_episodes`` (100: validation episodes at the end that choose whether
the policy plays its most likely action or samples), ``eval_every`` (none: validate only at the end;
else also every that many steps), ``keep_best`` (false: play the final model; true: play the
checkpoint with the lowest validation regret, kept as OUT/models/MODEL.zip, and keep the final one
as MODEL-final.zip, which the agent ``trained:MODEL-final`` plays), ``prior`` (``[a, b]``: the
family's means are drawn from Beta(a, b) and the
policy knows it: posterior features, answer with the posterior top k), ``reward`` (``"env"`` or
``"posterior"``, the change of the posterior top-k value at each step), ``obs_options`` (arguments
of the observation transform, e.g. ``{ features = ["post_gap", "post_std", "log_count"] }``) and
``imitate`` (DAgger settings: fit the policy to a prior-aware teacher before PPO, see
:mod:`agents.learned.imitation`; ``timesteps = 0`` then skips PPO). Validation seeds are disjoint
from the benchmark's, so choosing a checkpoint on them does not bias the benchmark.
``reduced.train`` overrides any of them but ``model`` for every model in reduced mode (e.g. ``{
timesteps = 2048 }``).

``fast = true`` trains the model on the fast path (:func:`agents.learned.fast.fast_train`,
PPO or A2C over a native vector env with a cheap arm-set network) instead::

    [[train]]
    model = "fast_ppo-one-pull-s0"
    preset = "one-pull"
    fast = true
    timesteps = 20000000          # FastConfig.total_timesteps
    eval_every = 4000000
    algo_kwargs = { learning_rate = 1e-3, compile = false }   # FastConfig fields

There ``algo`` is ``ppo`` or ``a2c``; ``timesteps``, ``num_envs`` (4096, FastConfig's
default), ``seed``, ``eval_episodes`` (1000), ``eval_every`` and ``reward_scale`` are the
FastConfig fields of those names; ``algo_kwargs`` sets any other FastConfig field
(``n_steps``, ``hidden``, ``learning_rate``, ``gamma``, ``compile``, ...); ``prior`` is
``[a, b]``, ``"auto"`` (the default: the family's own Beta prior, known to the policy) or
``"none"``; ``reward`` is ``"auto"`` (the default: the posterior reward when the policy
knows a prior and the task scores the aggregate regret, else the env's), ``"env"`` or
``"posterior"``; ``obs_options`` may hold only ``features``. Keys of the SB3 path that do
not apply (``policy`` other than ``arm-set``, ``validation``, ``imitate``) are refused;
``keep_best = true`` plays the checkpoint with the lowest validation score in the mode it
would play, as on the SB3 path. The model is saved, named, seeded, logged and resumed as any
other (it is a stable-baselines3 PPO/A2C model with ``ArmSetPolicy``); its sidecar's
``training.evaluations`` hold both modes' validation scores per evaluation.

Shipped models: ``topk_bench/pretrained/EXPERIMENT/MODEL.zip`` (+ ``.json``) holds
models trained by this command for a shipped experiment. A missing model is copied from
there instead of trained when the shipped one was trained from the same ``[[train]]``
table with the same training seed (the sidecar's ``bench`` entry records both), so
``topk-bench run`` plays the shipped models at once; ``--retrain`` (``retrain=True``)
trains anew. A changed table (or ``--seed``, or reduced mode) trains anew as well.

With ``--backend ray`` every training is a Ray task (one CPU, like an episode chunk):
the worker trains in a scratch directory of its machine and sends the model's files
back, and this process writes each model to ``OUT/models`` when it arrives, so an
interrupted run keeps every finished model and a rerun trains only the missing ones. A
worker killed during a training trains it again (Ray's retries); the same seed and step
count give the same model. Playing the learned agents' episodes on other machines needs
the results directory at the same path there (a shared file system): their agents load
``OUT/models/MODEL.zip``.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from queue import Empty as EmptyQueue
from typing import Any

from topk_bench import seeds
from topk_bench.schema import ConfigError

__all__ = [
    "TRAINED_PREFIX",
    "TrainSpec",
    "model_path",
    "parse_train",
    "shipped_model",
    "resolve_agent",
    "train_missing",
    "trained_model",
]

#: Agent names ``trained:MODEL`` refer to a model of the experiment's ``[[train]]``.
TRAINED_PREFIX = "trained:"
#: ``trained:MODEL-final``: the final model of a ``keep_best`` training (``MODEL`` plays
#: its best validated checkpoint).
FINAL_SUFFIX = "-final"
MODELS_DIR = "models"
#: Where shipped models live: ``PRETRAINED_DIR / EXPERIMENT / MODEL.zip``.
PRETRAINED_DIR = Path(__file__).parent / "pretrained"
_OVERRIDABLE = (
    "preset",
    "env_id",
    "env",
    "algo",
    "policy",
    "timesteps",
    "num_envs",
    "seed",
    "algo_kwargs",
    "reward_scale",
    "eval_episodes",
    "eval_every",
    "keep_best",
    "prior",
    "reward",
    "obs_options",
    "imitate",
    "validation",
    "fast",
)
#: Keys of a ``[[train]]`` table that a fast entry (``fast = true``) sets as FastConfig
#: fields (``algo_kwargs`` may not set them).
_FAST_TABLE_FIELDS = {
    "env_id": "preset or env_id",
    "env_kwargs": "env",
    "algo": "algo",
    "total_timesteps": "timesteps",
    "num_envs": "num_envs",
    "seed": "seed",
    "reward_scale": "reward_scale",
    "reward": "reward",
    "prior": "prior",
    "features": "obs_options.features",
    "eval_every": "eval_every",
    "eval_episodes": "eval_episodes",
    "save_path": None,
    "progress_bar": None,
}


@dataclass(frozen=True)
class TrainSpec:
    """One model to train: a family (env id + kwargs) and the training settings."""

    model: str
    env_id: str
    env_kwargs: Mapping[str, Any]
    timesteps: int
    algo: str = "ppo"
    policy: str = "arm-set"
    num_envs: int = 8
    seed: int = 0
    algo_kwargs: Mapping[str, Any] = field(default_factory=dict)
    reward_scale: float = 10.0
    eval_episodes: int = 100
    eval_every: int | None = None
    keep_best: bool = False
    #: ``(a, b)``, ``None``, or (fast entries only) ``"auto"``: the family's own prior.
    prior: tuple[float, float] | str | None = None
    reward: str = "env"
    obs_options: Mapping[str, Any] = field(default_factory=dict)
    imitate: Mapping[str, Any] | None = None
    validation: str = "agent"
    #: Trained by :func:`agents.learned.fast.fast_train` (``algo_kwargs``: FastConfig fields).
    fast: bool = False

    def describe(self) -> dict[str, Any]:
        """JSON-able form (stored in the results directory's manifest)."""
        out = asdict(self)
        out["env_kwargs"] = dict(self.env_kwargs)
        out["algo_kwargs"] = dict(self.algo_kwargs)
        out["obs_options"] = dict(self.obs_options)
        out["prior"] = list(self.prior) if isinstance(self.prior, tuple) else self.prior
        out["imitate"] = dict(self.imitate) if self.imitate is not None else None
        if self.validation == "agent":  # the default: tables written before it existed
            del out["validation"]
        if not self.fast:  # likewise: a non-fast table describes as before ``fast`` existed
            del out["fast"]
        return out


def _spec(entry: Mapping[str, Any], where: str) -> TrainSpec:
    from agents.learned.algos import ALGO_NAMES, ALGOS, DEFAULT_POLICY
    from agents.learned.families import PRESETS, PULL_BY_PULL_ID

    model = entry["model"]
    if not model or "/" in model or "\\" in model or model.startswith("."):
        raise ConfigError(f"{where}.model: {model!r} must be a plain file name (no path)")
    if ("preset" in entry) == ("env_id" in entry):
        raise ConfigError(
            f"{where}: give exactly one of preset (one of {sorted(PRESETS)}) and env_id"
        )
    if "preset" in entry:
        if entry["preset"] not in PRESETS:
            raise ConfigError(
                f"{where}.preset: unknown preset {entry['preset']!r} (known: {sorted(PRESETS)})"
            )
        env_id, base = PRESETS[entry["preset"]]
    else:
        env_id, base = entry["env_id"], {}
        if env_id not in ("TopK-v0", "TopK-Batch-v0", PULL_BY_PULL_ID):
            raise ConfigError(
                f"{where}.env_id: {env_id!r} must be 'TopK-v0', 'TopK-Batch-v0' or "
                f"{PULL_BY_PULL_ID!r}"
            )
    if entry.get("fast", False):
        return _fast_spec(entry, where, model, env_id, base)
    algo = entry.get("algo", "ppo")
    if algo not in ALGO_NAMES:
        raise ConfigError(f"{where}.algo: {algo!r} must be one of {sorted(ALGO_NAMES)}")
    if algo not in ALGOS:  # pragma: no cover - depends on the install
        raise ConfigError(
            f"{where}.algo: {algo!r} needs sb3-contrib: pip install 'topk-bandit-envs[rl]'"
        )
    policy = entry.get("policy", DEFAULT_POLICY[algo])
    if policy not in ("arm-set", "mlp"):
        raise ConfigError(f"{where}.policy: {policy!r} must be 'arm-set' or 'mlp'")
    if algo == "dqn" and (policy != "mlp" or env_id not in ("TopK-v0", PULL_BY_PULL_ID)):
        raise ConfigError(
            f"{where}.algo: DQN needs policy='mlp' and a Discrete action space (env_id "
            f"'TopK-v0', or {PULL_BY_PULL_ID!r} with invalid_action='project')"
        )
    reward_scale = entry.get("reward_scale", 10.0)
    if not reward_scale > 0:
        raise ConfigError(f"{where}.reward_scale: must be > 0, got {reward_scale!r}")
    eval_episodes = entry.get("eval_episodes", 100)
    keep_best = entry.get("keep_best", False)
    if keep_best and not eval_episodes:
        raise ConfigError(f"{where}.keep_best: needs eval_episodes > 0 to choose a checkpoint")
    prior = entry.get("prior")
    if isinstance(prior, str):
        if prior != "none":
            raise ConfigError(
                f"{where}.prior: {prior!r} must be [a, b], two positive numbers ('auto' is "
                "for fast = true entries)"
            )
        prior = None
    prior = _prior(prior, where)
    reward = entry.get("reward", "env")
    if reward not in ("env", "posterior"):
        raise ConfigError(f"{where}.reward: {reward!r} must be 'env' or 'posterior'")
    if reward == "posterior" and prior is None:
        raise ConfigError(f"{where}.reward: 'posterior' needs prior = [a, b]")
    validation = entry.get("validation", "agent")
    if validation not in ("agent", "vector"):
        raise ConfigError(f"{where}.validation: {validation!r} must be 'agent' or 'vector'")
    imitate = entry.get("imitate")
    if entry["timesteps"] == 0 and imitate is None:
        raise ConfigError(f"{where}.timesteps: 0 trains nothing (allowed only with imitate)")
    if imitate is not None:
        from agents.learned.imitation import ImitationSettings

        try:
            ImitationSettings.from_mapping(imitate)
        except (TypeError, ValueError) as err:
            raise ConfigError(f"{where}.{err}") from None
        if prior is None or env_id != "TopK-v0":
            raise ConfigError(f"{where}.imitate: needs prior = [a, b] and a one-pull family")
    spec = TrainSpec(
        model=model,
        env_id=env_id,
        env_kwargs={**base, **dict(entry.get("env", {}))},
        timesteps=entry["timesteps"],
        algo=algo,
        policy=policy,
        num_envs=entry.get("num_envs", 8),
        seed=entry.get("seed", 0),
        algo_kwargs=dict(entry.get("algo_kwargs", {})),
        reward_scale=float(reward_scale),
        eval_episodes=eval_episodes,
        eval_every=entry.get("eval_every"),
        keep_best=keep_best,
        prior=prior,
        reward=reward,
        obs_options=dict(entry.get("obs_options", {})),
        imitate=dict(imitate) if imitate is not None else None,
        validation=validation,
    )
    try:
        _config(spec, seed=0, save_path=None, progress=False)  # the rules of TrainConfig
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from None
    return spec


def _prior(prior: Any, where: str) -> tuple[float, float] | None:
    """``[a, b]`` (checked) as a tuple; ``None`` stays ``None``."""
    if prior is None:
        return None
    if len(prior) != 2 or not all(0 < float(v) < float("inf") for v in prior):
        raise ConfigError(f"{where}.prior: {prior!r} must be [a, b], two positive numbers")
    return (float(prior[0]), float(prior[1]))


def _fast_spec(
    entry: Mapping[str, Any], where: str, model: str, env_id: str, base: Mapping[str, Any]
) -> TrainSpec:
    """The :class:`TrainSpec` of a ``fast = true`` table, checked as :class:`FastConfig`."""
    from agents.learned.fast import FAST_ALGOS, FastConfig

    if env_id not in ("TopK-v0", "TopK-Batch-v0"):
        key = "preset" if "preset" in entry else "env_id"
        raise ConfigError(
            f"{where}.{key}: fast = true trains on 'TopK-v0' or 'TopK-Batch-v0' families, "
            f"not {env_id!r} (a pull-by-pull family needs action masks: MaskablePPO)"
        )
    algo = entry.get("algo", "ppo")
    if algo not in FAST_ALGOS:
        raise ConfigError(f"{where}.algo: {algo!r}: fast = true trains {' or '.join(FAST_ALGOS)}")
    not_fast = {
        "policy": entry.get("policy", "arm-set") != "arm-set",
        "validation": "validation" in entry,
        "imitate": "imitate" in entry,
    }
    for key, refused in not_fast.items():
        if refused:
            raise ConfigError(
                f"{where}.{key}: {entry[key]!r} is a setting of the SB3 path; fast = true "
                "trains the arm-set policy and validates both modes on its own episodes"
            )
    obs_options = dict(entry.get("obs_options", {}))
    other = sorted(set(obs_options) - {"features"})
    if other:
        raise ConfigError(
            f"{where}.obs_options.{other[0]}: fast = true takes only obs_options.features"
        )
    kwargs = dict(entry.get("algo_kwargs", {}))
    fields = set(FastConfig.__dataclass_fields__)
    for key in sorted(kwargs):
        if key not in fields:
            settable = sorted(fields - set(_FAST_TABLE_FIELDS))
            raise ConfigError(
                f"{where}.algo_kwargs.{key}: not a FastConfig field (fast = true: algo_kwargs "
                f"sets {', '.join(settable)})"
            )
        if key in _FAST_TABLE_FIELDS:
            table = _FAST_TABLE_FIELDS[key]
            how = f"the table's {table}" if table else "the runner"
            raise ConfigError(f"{where}.algo_kwargs.{key}: set by {how}, not by algo_kwargs")
    if kwargs.get("recurrent"):
        raise ConfigError(
            f"{where}.algo_kwargs.recurrent: the runner trains models it saves and plays, "
            "which are feed-forward; the recurrent variant is for measurement "
            "(benchmarks/fast_training.py)"
        )
    prior = entry.get("prior", "auto")
    if isinstance(prior, str):
        if prior not in ("auto", "none"):
            raise ConfigError(f"{where}.prior: {prior!r} must be [a, b], 'auto' or 'none'")
        prior = None if prior == "none" else prior
    else:
        prior = _prior(prior, where)
    reward = entry.get("reward", "auto")
    if reward not in ("auto", "env", "posterior"):
        raise ConfigError(f"{where}.reward: {reward!r} must be 'auto', 'env' or 'posterior'")
    reward_scale = entry.get("reward_scale", 10.0)
    if not reward_scale > 0:
        raise ConfigError(f"{where}.reward_scale: must be > 0, got {reward_scale!r}")
    if entry["timesteps"] == 0:
        raise ConfigError(f"{where}.timesteps: 0 trains nothing")
    defaults = FastConfig.__dataclass_fields__
    spec = TrainSpec(
        model=model,
        env_id=env_id,
        env_kwargs={**base, **dict(entry.get("env", {}))},
        timesteps=entry["timesteps"],
        algo=algo,
        num_envs=entry.get("num_envs", defaults["num_envs"].default),
        seed=entry.get("seed", 0),
        algo_kwargs=kwargs,
        reward_scale=float(reward_scale),
        eval_episodes=entry.get("eval_episodes", defaults["eval_episodes"].default),
        eval_every=entry.get("eval_every"),
        keep_best=bool(entry.get("keep_best", False)),
        prior=prior,
        reward=reward,
        obs_options=obs_options,
        fast=True,
    )
    try:
        _config(spec, seed=0, save_path=None, progress=False)  # the rules of FastConfig
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from None
    return spec


def parse_train(cfg: Mapping[str, Any], reduced: bool = False) -> tuple[TrainSpec, ...]:
    """The checked ``[[train]]`` tables of a validated config (``reduced.train`` applied)."""
    entries = cfg.get("train", [])
    if not entries:
        return ()
    try:
        import agents.learned.training  # noqa: F401
    except ImportError as err:
        raise ConfigError(
            f"train: training needs stable-baselines3 and torch ({err}); "
            f"install the extra: pip install 'topk-bandit-envs[rl]'"
        ) from None
    override = dict(cfg.get("reduced", {}).get("train", {})) if reduced else {}
    specs: list[TrainSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"train[{i}]"
        merged = {**entry, **override}
        if "preset" in override and "env_id" in entry:
            merged.pop("env_id")
        if "env_id" in override and "preset" in entry:
            merged.pop("preset")
        spec = _spec(merged, where)
        if spec.model in seen:
            raise ConfigError(f"{where}.model: model {spec.model!r} is declared twice")
        seen.add(spec.model)
        _check_family(spec, where)
        specs.append(spec)
    return tuple(specs)


def _check_family(spec: TrainSpec, where: str) -> None:
    """Build the training family once (bad env kwargs fail before any work starts)."""
    import gymnasium as gym

    import bandit_envs  # noqa: F401
    from agents.learned.families import training_kwargs

    try:
        kwargs = training_kwargs(spec.env_id, spec.env_kwargs)
    except ValueError as err:
        raise ConfigError(f"{where}.env: {err}") from None
    kwargs.pop("render_mode", None)
    try:
        gym.make(spec.env_id, disable_env_checker=True, **kwargs).close()
    except Exception as err:
        raise ConfigError(f"{where}.env: {err}") from None


def evaluation_kwargs(spec: TrainSpec) -> dict[str, Any]:
    """The ``TopK-Batch-v0`` kwargs a model of ``spec`` is played on (the benchmark form)."""
    from agents.learned.families import evaluation_env
    from agents.learned.families import training_kwargs as _training_kwargs

    _, kwargs = evaluation_env(spec.env_id, _training_kwargs(spec.env_id, spec.env_kwargs))
    return kwargs


def check_point(spec: TrainSpec, point_env: Mapping[str, Any], where: str) -> None:
    """A model plays only points of its family's shape (arms, k, batch, repeat limit).

    A one-pull model (``TopK-v0``) plays any batch shape: one pull is a valid action
    under every (b, r), and ``PolicyAgent`` maps it there.
    """
    family = evaluation_kwargs(spec)
    defaults = {"batch_size": None, "repeat_limit": None}
    keys = (
        ("n_arms", "k")
        if spec.env_id == "TopK-v0"
        else ("n_arms", "k", "batch_size", "repeat_limit")
    )
    for key in keys:
        want = family.get(key, defaults.get(key))
        got = point_env.get(key, defaults.get(key))
        if want != got:
            raise ConfigError(
                f"{where}: model {spec.model!r} was trained with {key}={want!r} but the point "
                f"has {key}={got!r}; restrict the point's agents (points[i].agents) or train "
                f"a model of that shape"
            )


def model_path(out: str | os.PathLike[str], model: str) -> Path:
    """Where the results directory ``out`` keeps ``model`` (``OUT/models/MODEL.zip``)."""
    return Path(out) / MODELS_DIR / f"{model}.zip"


def trained_model(name: str, specs: Sequence[TrainSpec]) -> tuple[TrainSpec, str] | None:
    """The training and the model file (without ``.zip``) an agent name ``trained:MODEL``
    plays: ``MODEL`` of ``specs``, or ``MODEL-final``, the final model of a ``keep_best``
    training ``MODEL``; ``None`` for any other name."""
    if not name.startswith(TRAINED_PREFIX):
        return None
    model = name[len(TRAINED_PREFIX) :]
    for spec in specs:
        if spec.model == model:
            return spec, model
    for spec in specs:
        if spec.keep_best and model == spec.model + FINAL_SUFFIX:
            return spec, model
    return None


def resolve_agent(name: str, specs: Sequence[TrainSpec], out: str | os.PathLike[str]) -> str:
    """``trained:MODEL`` -> ``ALGO:ABSOLUTE_PATH`` (other names unchanged);
    ``trained:MODEL-final`` -> the final model of the ``keep_best`` training ``MODEL``."""
    found = trained_model(name, specs)
    if found is None:
        return name
    spec, model = found
    path = model_path(out, model)
    if model != spec.model and not path.exists() and model_path(out, spec.model).exists():
        raise ConfigError(
            f"{name}: {path} is missing: the final model is kept by a keep_best training "
            f"in its results directory ({spec.model}.zip here was not trained in it: copied "
            "from the shipped models, or trained before keep_best was set)"
        )
    return f"{spec.algo}:{path.resolve()}"


def train_seed(experiment: str, spec: TrainSpec, base_seed: int = 0) -> int:
    """Training seed from (base seed, experiment, model, ``spec.seed``): 31 bits."""
    return seeds.derived_seed("train", base_seed, experiment, spec.model, spec.seed) % (2**31)


def _reporter(queue: Any, model: str, every: float = 1.0) -> Any:
    """An SB3 callback that puts ``(model, timesteps)`` on ``queue`` about every ``every`` s."""
    from stable_baselines3.common.callbacks import BaseCallback

    class _Report(BaseCallback):
        last = 0.0

        def _on_step(self) -> bool:
            now = time.monotonic()
            if now - self.last >= every:
                queue.put((model, self.num_timesteps))
                self.last = now
            return True

        def _on_training_end(self) -> None:
            queue.put((model, self.num_timesteps))

    return _Report()


def _train_one(
    spec: TrainSpec,
    experiment: str,
    out: str,
    base_seed: int,
    progress: bool,
    queue: Any = None,
) -> tuple[str, float, str]:
    """Train ``spec`` and save it atomically; returns (model, seconds, last log line).

    ``progress``: a tqdm bar in this process; ``queue``: report the steps there instead.
    """
    final = model_path(out, spec.model)
    tmp_dir = final.parent / f".tmp-{spec.model}-{os.getpid()}"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    log_path = final.with_suffix(".log")
    lines: list[str] = []
    with open(log_path, "a", encoding="utf-8") as log_file:

        def log(msg: str) -> None:
            lines.append(msg)
            log_file.write(msg + "\n")
            log_file.flush()

        start = time.perf_counter()
        config = _config(
            spec,
            seed=train_seed(experiment, spec, base_seed),
            save_path=tmp_dir / final.name,
            progress=progress,
        )
        if spec.fast:
            from agents.learned.fast import fast_train

            result = fast_train(config, log=log)
            log(_fast_summary(result))
            if queue is not None:  # no callbacks on the fast path: the steps at the end
                queue.put((spec.model, result.metadata["training"]["timesteps"]))
        else:
            from agents.learned.training import train

            train(
                config,
                log=log,
                callbacks=[_reporter(queue, spec.model)] if queue is not None else (),
            )
    tmp_model = tmp_dir / final.name
    best = tmp_dir / f"{spec.model}-best.zip"
    if spec.keep_best and best.exists():  # play the best checkpoint, keep the final one
        at = json.loads(best.with_suffix(".json").read_text())["training"]["best_at"]
        key = "score" if "score" in at else "regret"  # what the checkpoints were compared by
        with open(log_path, "a", encoding="utf-8") as log_file:
            log_file.write(
                f"plays the best checkpoint: t={at['timesteps']}, {at['mode']}, validation "
                f"{key} {at[key]:.4f} (the final model is {spec.model}-final.zip)\n"
            )
        last = final.with_name(f"{spec.model}-final.zip")
        os.replace(tmp_model.with_suffix(".json"), last.with_suffix(".json"))
        os.replace(tmp_model, last)
        os.replace(best.with_suffix(".json"), tmp_model.with_suffix(".json"))
        os.replace(best, tmp_model)
    sidecar = tmp_model.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    meta["bench"] = _bench_entry(spec, experiment, base_seed)
    sidecar.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    os.replace(sidecar, final.with_suffix(".json"))
    os.replace(tmp_model, final)  # last: the .zip marks a complete model
    shutil.rmtree(tmp_dir, ignore_errors=True)
    done = [line for line in lines if line.startswith("trained ")]
    return spec.model, time.perf_counter() - start, done[-1] if done else ""


def _config(spec: TrainSpec, *, seed: int, save_path: Any, progress: bool) -> Any:
    """The :class:`~agents.learned.training.TrainConfig` of ``spec`` (one torch thread);
    of a fast spec, its :class:`~agents.learned.fast.FastConfig` (fast_train uses one
    torch thread itself)."""
    if spec.fast:
        return _fast_config(spec, seed=seed, save_path=save_path, progress=progress)
    from agents.learned.training import TrainConfig

    return TrainConfig(
        spec.env_id,
        spec.env_kwargs,
        algo=spec.algo,
        policy=spec.policy,
        total_timesteps=spec.timesteps,
        num_envs=spec.num_envs,
        seed=seed,
        algo_kwargs=spec.algo_kwargs,
        reward_scale=spec.reward_scale,
        eval_episodes=spec.eval_episodes,
        eval_every=spec.eval_every,
        keep_best=spec.keep_best,
        prior=spec.prior,
        reward=spec.reward,
        obs_options=spec.obs_options,
        imitate=spec.imitate,
        validation=spec.validation,
        save_path=save_path,
        progress_bar=progress,
        torch_threads=1,
    )


def _fast_config(spec: TrainSpec, *, seed: int, save_path: Any, progress: bool) -> Any:
    """The :class:`~agents.learned.fast.FastConfig` of a fast spec: the table's keys as
    the fields of those names, ``algo_kwargs`` as the other fields."""
    from agents.learned.fast import FastConfig

    features = spec.obs_options.get("features")
    return FastConfig(
        spec.env_id,
        dict(spec.env_kwargs),
        algo=spec.algo,
        total_timesteps=spec.timesteps,
        num_envs=spec.num_envs,
        seed=seed,
        reward_scale=spec.reward_scale,
        reward=spec.reward,
        prior=spec.prior,
        features=tuple(features) if features is not None else None,
        eval_every=spec.eval_every,
        eval_episodes=spec.eval_episodes,
        keep_best=spec.keep_best,
        save_path=save_path,
        progress_bar=progress,
        **spec.algo_kwargs,
    )


def _fast_summary(result: Any) -> str:
    """The line a fast training ends with: steps, CPU time, and the last validation of
    the mode the model plays."""
    training = result.metadata["training"]
    line = (
        f"trained fast {result.metadata['algo']}: {training['timesteps']:,} steps in "
        f"{training['cpu_seconds']:.1f} CPU-s ({training['seconds']:.1f} s wall, validation "
        f"{training['validation_cpu_seconds']:.1f} CPU-s)"
    )
    if not result.curve:
        return line + ", not validated"
    mode = "deterministic" if result.metadata["policy_agent"]["deterministic"] else "sampled"
    last = result.curve[-1][mode]
    if result.best is not None:  # keep_best: the best checkpoint is played, not this one
        at = result.best.metadata["training"]["best_at"]
        return line + (
            f"; the final model plays {mode}: validation score {last['score']:.5f} ± "
            f"{last['score_ci']:.5f}; the best checkpoint ({at['timesteps']:,} steps) plays "
            f"{at['mode']}: {at['score']:.5f} ± {at[at['mode']]['score_ci']:.5f}"
        )
    return line + f"; plays {mode}: validation score {last['score']:.5f} ± {last['score_ci']:.5f}"


def _bench_entry(spec: TrainSpec, experiment: str, base_seed: int) -> dict[str, Any]:
    """What a model was trained from: the ``[[train]]`` table and the training seed."""
    return json.loads(
        json.dumps(
            {
                "experiment": experiment,
                "spec": spec.describe(),
                "train_seed": train_seed(experiment, spec, base_seed),
            }
        )
    )


def shipped_model(
    spec: TrainSpec, experiment: str, base_seed: int = 0, root: Path | None = None
) -> Path | None:
    """The shipped model trained from ``spec`` (same table, same seed), else ``None``."""
    path = (root or PRETRAINED_DIR) / experiment / f"{spec.model}.zip"
    side = path.with_suffix(".json")
    if not (path.exists() and side.exists()):
        return None
    stored = json.loads(side.read_text()).get("bench")
    return path if stored == _bench_entry(spec, experiment, base_seed) else None


def train_missing(
    specs: Sequence[TrainSpec],
    experiment: str,
    out: str | os.PathLike[str],
    *,
    jobs: int = 1,
    base_seed: int = 0,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    retrain: bool = False,
    pretrained: Path | None = None,
    ray: Any = None,
) -> list[str]:
    """Train the models of ``specs`` that ``out`` does not hold; return their names.

    A model shipped for this experiment and trained from the same table and seed
    (:func:`shipped_model`; ``pretrained`` overrides :data:`PRETRAINED_DIR`) is copied
    instead, unless ``retrain``. Up to ``jobs`` models train at once, each in its own
    process (one torch thread); with ``ray`` (a :class:`~topk_bench.backends.RayBackend`)
    each model is a Ray task instead (one CPU), trained in the worker's scratch directory
    and written to ``out`` by this process when it comes back (:func:`_train_returned`).
    Either way each model is saved as soon as its training finishes.
    """
    say = log or (lambda msg: print(msg, file=sys.stderr))
    todo = [s for s in specs if not model_path(out, s.model).exists()]
    if not retrain:
        for spec in list(todo):
            shipped = shipped_model(spec, experiment, base_seed, pretrained)
            if shipped is None:
                continue
            final = model_path(out, spec.model)
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shipped.with_suffix(".json"), final.with_suffix(".json"))
            tmp = final.with_name(f".tmp-{final.name}")
            shutil.copyfile(shipped, tmp)
            os.replace(tmp, final)  # the .zip marks a complete model
            say(f"{spec.model}: the shipped model {shipped} (--retrain to train it anew)")
            todo.remove(spec)
    if not todo:
        return []
    models_dir = model_path(out, todo[0].model).parent
    models_dir.mkdir(parents=True, exist_ok=True)
    for spec in todo:  # what a killed training left: never a complete model (no .zip)
        stale = re.compile(rf"\.tmp-{re.escape(spec.model)}-\d+")
        for left in models_dir.iterdir():
            if left.is_dir() and stale.fullmatch(left.name):
                shutil.rmtree(left, ignore_errors=True)
    for spec in todo:
        first = f"DAgger ({spec.imitate}), then " if spec.imitate is not None else ""
        first += "fast " if spec.fast else ""
        say(
            f"training {spec.model}: {first}{spec.algo} on {spec.env_id}, {spec.timesteps} "
            f"steps, {spec.num_envs} envs (log: {model_path(out, spec.model).with_suffix('.log')})"
        )
    workers = max(1, min(jobs, len(todo)))
    if ray is not None:
        results = _train_on_ray(ray, todo, experiment, str(out), base_seed, progress)
    elif workers == 1:
        results = [_train_one(s, experiment, str(out), base_seed, progress) for s in todo]
    else:
        results = _train_parallel(todo, experiment, str(out), base_seed, workers, progress)
    for model, seconds, last in results:
        say(f"{model}: {last} ({seconds:.0f} s in all, saved {model_path(out, model)})")
    return [s.model for s in todo]


def _train_parallel(
    todo: Sequence[TrainSpec],
    experiment: str,
    out: str,
    base_seed: int,
    workers: int,
    progress: bool,
) -> list[tuple[str, float, str]]:
    """Train ``todo`` in ``workers`` processes, with one progress bar over all their steps."""
    ctx = multiprocessing.get_context("spawn")  # torch and forked parents do not mix
    total = {s.model: s.timesteps for s in todo}
    seen = dict.fromkeys(total, 0)
    bar = _bar(sum(total.values()), progress)
    with ctx.Manager() as manager, ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        queue = manager.Queue()
        futures = [
            pool.submit(_train_one, s, experiment, out, base_seed, False, queue) for s in todo
        ]

        def drain(timeout: float) -> None:
            try:
                while True:
                    model, steps = queue.get(timeout=timeout)
                    steps = min(int(steps), total[model])
                    if bar is not None and steps > seen[model]:
                        bar.update(steps - seen[model])
                    seen[model] = max(seen[model], steps)
                    timeout = 0.0  # then take whatever else is there, without waiting
            except (EmptyQueue, EOFError):
                return

        try:
            while not all(f.done() for f in futures):
                drain(0.5)
            drain(0.0)
            return [f.result() for f in futures]
        finally:
            if bar is not None:
                bar.close()


def _train_returned(
    spec: TrainSpec, experiment: str, base_seed: int
) -> tuple[str, float, str, dict[str, bytes]]:
    """:func:`_train_one` in a scratch directory of the machine it runs on; returns its
    result and the files it wrote (model, sidecar, log, and with ``keep_best`` the final
    model) as bytes: a Ray worker on another machine needs no shared file system."""
    import socket
    import tempfile

    with tempfile.TemporaryDirectory(prefix="topk-train-") as scratch:
        model, seconds, last = _train_one(spec, experiment, scratch, base_seed, False)
        folder = model_path(scratch, spec.model).parent
        with open(model_path(scratch, spec.model).with_suffix(".log"), "a") as log:
            log.write(f"trained on {socket.gethostname()} (pid {os.getpid()}), files sent back\n")
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    return model, seconds, last, files


def _keep_files(out: str, model: str, files: Mapping[str, bytes]) -> None:
    """Write the files of :func:`_train_returned` into ``out``'s models: the log appended
    to any earlier one, the others under a temporary name and renamed, the model's
    ``.zip`` last (it marks a complete model)."""
    final = model_path(out, model)
    final.parent.mkdir(parents=True, exist_ok=True)
    for name in sorted(files, key=lambda n: n == final.name):
        target = final.parent / name
        if name.endswith(".log"):
            with open(target, "ab") as log:
                log.write(files[name])
            continue
        tmp = target.with_name(f".tmp-{name}")
        tmp.write_bytes(files[name])
        os.replace(tmp, target)


def _train_on_ray(
    backend: Any,
    todo: Sequence[TrainSpec],
    experiment: str,
    out: str,
    base_seed: int,
    progress: bool,
) -> list[tuple[str, float, str]]:
    """Train ``todo`` as tasks of ``backend`` (:class:`~topk_bench.backends.RayBackend`);
    each model is written to ``out`` as it comes back (the bar counts finished models'
    steps)."""
    from topk_bench.backends import TaskList

    bar = _bar(sum(s.timesteps for s in todo), progress)
    results = []
    try:
        with backend.session() as options:
            tasks = backend.stream(
                _train_returned,
                TaskList(todo),
                options,
                lambda s: f"the training of model {s.model!r}",
                extra=(experiment, base_seed),
            )
            with contextlib.closing(tasks):  # (an error here cancels the tasks in flight)
                for spec, (model, seconds, last, files) in tasks:
                    _keep_files(out, model, files)
                    results.append((model, seconds, last))
                    if bar is not None:
                        bar.update(spec.timesteps)
    finally:
        if bar is not None:
            bar.close()
    return results


def _bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ModuleNotFoundError:  # pragma: no cover - depends on the install
        return None
    return tqdm(total=total, desc="training", unit="step", unit_scale=True, smoothing=0.1)
