"""Load an experiment config (TOML/YAML or a shipped name) into a checked :class:`Experiment`.

Everything that can be wrong with a config is found here, before any episode runs:
the schema (:mod:`topk_bench.schema`: unknown or missing keys, wrong types), the
expressions (:mod:`topk_bench.expressions`), every point's environment (built once
with ``gym.make``), every agent (its parameters are checked against its constructor
and it is built once). Each error is a :class:`~topk_bench.schema.ConfigError` naming
the key, e.g. ``sweeps[0].env.budget`` or ``agents[2].params.beta``.

Two things are *not* errors but are reported through ``warn`` and left out: agents
that are not available (not implemented or not installed yet), and (point, agent)
pairs where the agent cannot play the point's setting (a fixed-budget-only agent on a
fixed-confidence point) or the point's ``k`` (lil'UCB, a best-arm algorithm, at k > 1).

Agents named ``trained:MODEL`` play a model of the config's ``[[train]]`` tables
(:mod:`topk_bench.models`), trained by the runner before the episodes; such an agent
may play only points of its training family's shape (n_arms, k, batch_size,
repeat_limit), which is checked here.

Points
------
A point is one environment configuration: an env id, its kwargs (instance, n_arms, k,
budget, ...), a ``panel`` (one subplot) and an ``x`` value (its position in the
panel). Points come from ``points`` (written out) and from ``sweeps``: a sweep's
``vary`` lists are crossed (cartesian product), its ``zip`` lists vary together, and
each combination is one point. Keys that start with ``_`` are labels, not env kwargs:
they can be used in the ``panel``/``label`` templates (``panel = "Q = {_Q}"``) and as
``x``. The env kwargs of a point are, from weakest to strongest: the runner's defaults
(:data:`DEFAULT_ENV`: ``answer = "agent"`` so that the agent's own answer is scored,
``paired = true`` so that all agents see the same rewards, ``batch_size = "none"``,
the standard model), the top-level ``env``, the sweep's ``env``, the
varied values, and (reduced mode) ``reduced.env``.

TOML has no null: the string ``"none"`` stands for ``None`` in env kwargs.
A string value starting with ``=`` is an expression evaluated per point with the names
``n`` (arms), ``k`` and the instance's hardness ``h1``, ``h2``
(:mod:`bandit_envs.hardness`; for an instance with random means, the median over 101
draws from a generator seeded by the instance name). ``n_arms`` may not use names,
``k`` only ``n``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import itertools
import json
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from topk_bench import expressions
from topk_bench.episodes import METRICS
from topk_bench.models import (
    FINAL_SUFFIX,
    TRAINED_PREFIX,
    TrainSpec,
    check_point,
    parse_train,
    trained_model,
)
from topk_bench.schema import ConfigError, validate
from topk_bench.seeds import name_hash

__all__ = [
    "AgentSpec",
    "ConfigError",
    "DEFAULT_ENV",
    "DEFAULT_ENV_ID",
    "Experiment",
    "Point",
    "load",
    "read_config",
    "shipped",
]

DEFAULT_ENV_ID = "TopK-Batch-v0"
#: Env kwargs the runner sets (per env id) unless a config does: give every agent the
#: same rewards (``paired``: common random numbers, see topk_bench.seeds), score the
#: agent's own answer (``answer="agent"``), and no batch limit (``batch_size=None``:
#: the standard model, where a round of pulls is one step; with paired rewards the
#: results equal those of one pull per step, only faster).
DEFAULT_ENV: dict[str, dict[str, Any]] = {
    "TopK-Batch-v0": {"answer": "agent", "paired": True, "batch_size": None},
    "TopK-v0": {"paired": True},
}
#: TOML has no null: this string stands for None in env kwargs (YAML may use null).
NONE = "none"
_HARDNESS_DRAWS = 101

Warn = Callable[[str], None]


@dataclass(frozen=True)
class AgentSpec:
    """An agent of the experiment: its ``name`` (see :mod:`agents.registry`: a built-in,
    registered or entry-point name, an import path ``module:Class``, ``ppo:PATH``,
    ``trained:MODEL``) with ``params``.

    ``target`` is the ``module:Class`` workers build a third-party agent from (``None``
    for built-in agents and saved models), so that spawned and Ray workers need not
    know names registered at run time; ``source`` is where the class came from
    (:func:`agents.registry.agent_source`), recorded in the manifest.
    """

    label: str
    name: str
    params: Mapping[str, Any]
    settings: frozenset[str]
    k_values: frozenset[int] | None = None
    distributions: frozenset[str] | None = None
    target: str | None = None
    source: Mapping[str, Any] = field(default_factory=dict)
    #: Play only the first ``runs`` runs of each point (an expensive agent), or all.
    runs: int | None = None


@dataclass(frozen=True)
class Point:
    """One environment configuration (resolved: no expressions left)."""

    label: str
    panel: str
    x: str
    x_value: float
    env_id: str
    env_kwargs: Mapping[str, Any]
    setting: str
    agents: tuple[str, ...]
    k: int = 0
    #: the name the episode seeds are derived from (:mod:`topk_bench.seeds`): the label,
    #: or, for a sweep with ``common_seeds = true``, one name for all its points.
    seed_label: str = ""
    #: agent parameters this point sets for every agent it plays (a sweep's
    #: ``vary``/``zip`` keys ``agent.NAME``, e.g. ``agent.delta``), over the agents' own.
    agent_params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seed_name(self) -> str:
        """The point name its episode seeds come from."""
        return self.seed_label or self.label


@dataclass(frozen=True)
class Experiment:
    """A checked experiment: points, agents, and which agent plays at which point."""

    name: str
    description: str
    reference: str
    metrics: tuple[str, ...]
    runs: int
    x_label: str
    points: tuple[Point, ...]
    agents: tuple[AgentSpec, ...]
    plot: Mapping[str, Any] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""
    reduced: bool = False
    data: str | None = None
    skipped: tuple[str, ...] = ()
    train: tuple[TrainSpec, ...] = ()
    claims: tuple[Mapping[str, Any], ...] = ()
    #: the module that fits this experiment's parameters and writes its config
    #: (``python -m MODULE train``); ``topk-bench run --retrain`` refits through it
    #: (:func:`topk_bench.run.refit_config`).
    fitted_by: str | None = None

    def runs_of(self, agent: AgentSpec) -> int:
        """How many runs ``agent`` plays per point: its own ``runs``, at most the config's."""
        return self.runs if agent.runs is None else min(agent.runs, self.runs)

    def episodes(self) -> int:
        """The number of episodes of the experiment (every pair, each agent's runs)."""
        return sum(self.runs_of(agent) for _, agent in self.pairs())

    def pairs(self) -> list[tuple[Point, AgentSpec]]:
        """Every (point, agent) that runs, in config order."""
        by_label = {a.label: a for a in self.agents}
        return [(p, by_label[a]) for p in self.points for a in p.agents if a in by_label]

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (what the results directory's manifest stores)."""
        return {
            "name": self.name,
            "description": self.description,
            "reference": self.reference,
            "metrics": list(self.metrics),
            "runs": self.runs,
            "x_label": self.x_label,
            "reduced": self.reduced,
            "data": self.data,
            "source": self.source,
            "plot": dict(self.plot),
            "summary": dict(self.summary),
            "points": [
                {
                    "label": p.label,
                    "panel": p.panel,
                    "x": p.x,
                    "x_value": None if math.isnan(p.x_value) else p.x_value,
                    "env_id": p.env_id,
                    "env": dict(p.env_kwargs),
                    "agents": list(p.agents),
                    **({"seed_label": p.seed_label} if p.seed_label else {}),
                    **({"agent_params": dict(p.agent_params)} if p.agent_params else {}),
                }
                for p in self.points
            ],
            "agents": [
                {
                    "label": a.label,
                    "name": a.name,
                    "params": dict(a.params),
                    **({"runs": a.runs} if a.runs is not None else {}),
                    **({"source": dict(a.source)} if a.source else {}),
                }
                for a in self.agents
            ],
            "train": [t.describe() for t in self.train],
            "claims": [dict(c) for c in self.claims],
        }


# --------------------------------------------------------------------------- reading


def shipped() -> dict[str, Path]:
    """Shipped experiment name -> config path (``topk_bench/experiments/*.toml``)."""
    root = resources.files("topk_bench.experiments")
    found = {}
    for entry in root.iterdir():
        if entry.name.endswith(".toml"):
            found[entry.name[: -len(".toml")]] = Path(str(entry))
    return dict(sorted(found.items()))


def read_config(source: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """Parse a shipped name or a TOML/YAML file; return ``(raw dict, source description)``."""
    text_source = os.fspath(source)
    path = Path(text_source)
    ships = shipped()
    if not path.is_file():
        if text_source in ships:
            path = ships[text_source]
        else:
            raise ConfigError(
                f"{text_source!r} is neither a config file nor a shipped experiment "
                f"(shipped: {', '.join(ships)})"
            )
    suffix = path.suffix.lower()
    raw_text = path.read_text(encoding="utf-8")
    try:
        if suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # pragma: no cover - Python 3.10
                import tomli as tomllib
            data = tomllib.loads(raw_text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ModuleNotFoundError as err:  # pragma: no cover - depends on install
                raise ConfigError(
                    "YAML configs need pyyaml: pip install 'topk-bandit-envs[bench]'"
                ) from err
            data = yaml.safe_load(raw_text)
        else:
            raise ConfigError(f"{path}: config files must end in .toml, .yaml or .yml")
    except ConfigError:
        raise
    except Exception as err:  # parse errors of either library
        raise ConfigError(f"{path}: cannot parse: {err}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a table/mapping at the top level")
    return data, str(path)


# ------------------------------------------------------------------------- expansion


def _label_value(value: Any) -> str:
    if expressions.is_expression(value):
        return value[1:].replace(" ", "")
    if isinstance(value, float) and value == int(value):
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _format(template: str, values: Mapping[str, Any], where: str) -> str:
    try:
        return template.format(**{k: _label_value(v) for k, v in values.items()})
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(f"{where}: template {template!r} cannot be filled: {err}") from None


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Merge env kwargs; ``instance_params`` tables merge key by key."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if (
            key == "instance_params"
            and isinstance(value, Mapping)
            and isinstance(out.get(key), Mapping)
        ):
            out[key] = {**out[key], **copy.deepcopy(dict(value))}
        else:
            out[key] = copy.deepcopy(value)
    return out


@dataclass
class _RawPoint:
    label: str
    panel: str
    x_key: str | None
    x_raw: Any
    env_id: str
    env: dict[str, Any]
    agents: list[str] | None
    where: str
    seed_label: str = ""
    agent_params: dict[str, Any] = field(default_factory=dict)


#: prefix of the sweep keys that set an agent parameter rather than an env argument.
AGENT_PREFIX = "agent."


def _expand_sweep(sweep: Mapping[str, Any], where: str, env_id: str) -> list[_RawPoint]:
    vary = dict(sweep.get("vary", {}))
    zipped = dict(sweep.get("zip", {}))
    for key, values in {**vary, **zipped}.items():
        if len(values) == 0:
            raise ConfigError(f"{where}.{'vary' if key in vary else 'zip'}.{key}: empty list")
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        raise ConfigError(
            f"{where}.zip: all lists must have the same length, got {sorted(lengths)}"
        )
    both = set(vary) & set(zipped)
    if both:
        raise ConfigError(f"{where}.zip.{sorted(both)[0]}: key is also in vary")
    rows = zip(*zipped.values(), strict=True)
    zip_rows = [dict(zip(zipped, row, strict=True)) for row in rows] if zipped else [{}]
    x_key = sweep.get("x")
    if x_key is not None and x_key not in vary and x_key not in zipped:
        raise ConfigError(f"{where}.x: {x_key!r} is not a key of vary or zip")
    common = sweep.get("common_seeds", False)
    if not isinstance(common, bool):
        raise ConfigError(f"{where}.common_seeds: {common!r} must be true or false")
    points = []
    combos = itertools.product(*vary.values()) if vary else [()]
    for combo in combos:
        for zrow in zip_rows:
            values = {**dict(zip(vary, combo, strict=True)), **zrow}
            env_values = {
                k: v
                for k, v in values.items()
                if not k.startswith("_") and not k.startswith(AGENT_PREFIX)
            }
            agent_values = {
                k[len(AGENT_PREFIX) :]: v for k, v in values.items() if k.startswith(AGENT_PREFIX)
            }
            panel = _format(sweep.get("panel", ""), values, f"{where}.panel")
            if "label" in sweep:
                label = _format(sweep["label"], values, f"{where}.label")
            else:
                parts = ", ".join(f"{k.lstrip('_')}={_label_value(v)}" for k, v in values.items())
                label = f"{panel}: {parts}" if panel else parts
            points.append(
                _RawPoint(
                    label=label,
                    panel=panel,
                    x_key=x_key,
                    x_raw=values.get(x_key) if x_key else None,
                    env_id=sweep.get("env_id", env_id),
                    env=_merge(sweep.get("env", {}), env_values),
                    agents=list(sweep["agents"]) if "agents" in sweep else None,
                    where=where,
                    seed_label=(f"common:{sweep.get('panel') or where}" if common else ""),
                    agent_params=agent_values,
                )
            )
    return points


def _raw_points(cfg: Mapping[str, Any], env_id: str) -> list[_RawPoint]:
    out: list[_RawPoint] = []
    for i, sweep in enumerate(cfg.get("sweeps", [])):
        out.extend(_expand_sweep(sweep, f"sweeps[{i}]", env_id))
    for i, point in enumerate(cfg.get("points", [])):
        out.append(
            _RawPoint(
                label=point["label"],
                panel=point.get("panel", ""),
                x_key=None,
                x_raw=point.get("x"),
                env_id=point.get("env_id", env_id),
                env=_merge({}, point.get("env", {})),
                agents=list(point["agents"]) if "agents" in point else None,
                where=f"points[{i}]",
            )
        )
    if not out:
        raise ConfigError("sweeps/points: the config defines no points")
    seen: dict[str, str] = {}
    for p in out:
        if p.label in seen:
            raise ConfigError(f"{p.where}: point label {p.label!r} is also used by {seen[p.label]}")
        seen[p.label] = p.where
    return out


# ------------------------------------------------------------------------ resolution


def _hardness(instance: Any, kind: str) -> float:
    from bandit_envs import hardness

    fn = hardness.h1 if kind == "h1" else hardness.h2
    if not instance.is_random:
        return float(fn(instance.means(), instance.k))
    rng = np.random.default_rng(name_hash(instance.name))
    return float(np.median([fn(instance.means(rng), instance.k) for _ in range(_HARDNESS_DRAWS)]))


def _resolve_env(env: dict[str, Any], where: str) -> dict[str, Any]:
    """Evaluate the ``=`` expressions of one point's env kwargs."""
    from bandit_envs import instances

    env = copy.deepcopy(env)
    exprs = [k for k, v in env.items() if expressions.is_expression(v)]
    params = env.get("instance_params") or {}
    if isinstance(params, Mapping):
        for key, value in params.items():
            if expressions.is_expression(value):
                raise ConfigError(
                    f"{where}.env.instance_params.{key}: expressions are not allowed here"
                )
    if not exprs:
        return env

    def fail(key: str, err: Exception) -> ConfigError:
        return ConfigError(f"{where}.env.{key}: {err}")

    if "n_arms" in exprs:
        try:
            env["n_arms"] = expressions.evaluate(env["n_arms"], {})
        except expressions.ExpressionError as err:
            raise fail("n_arms", err) from None
    name = env.get("instance")
    if not isinstance(name, str):
        if name is None:
            raise ConfigError(f"{where}.env.instance: expressions need a named instance")
        n_fixed = len(name) if isinstance(name, (list, tuple)) else None
    else:
        n_fixed = None

    def instance(k: Any) -> Any:
        try:
            if n_fixed is not None:  # inline means: only n, k and the hardness matter here
                return instances.from_means(name, k=3 if k is None else k)
            return instances.make(name, n_arms=env.get("n_arms"), k=k, **dict(params))
        except (ValueError, TypeError) as err:
            raise ConfigError(f"{where}.env.instance: {err}") from None

    def n_value() -> int:
        if isinstance(env.get("n_arms"), int):
            return env["n_arms"]
        if n_fixed is not None:
            return n_fixed
        k0 = env.get("k") if isinstance(env.get("k"), int) else None
        return instance(k0).n_arms

    if "k" in exprs:
        try:
            env["k"] = expressions.evaluate(env["k"], {"n": n_value})
        except expressions.ExpressionError as err:
            raise fail("k", err) from None
    rest = [k for k in exprs if k not in ("n_arms", "k")]
    if rest:
        cache: dict[str, Any] = {}

        def inst() -> Any:
            if "inst" not in cache:
                cache["inst"] = instance(env.get("k"))
            return cache["inst"]

        names: dict[str, Any] = {
            "n": lambda: inst().n_arms,
            "k": lambda: inst().k,
            "h1": lambda: _hardness(inst(), "h1"),
            "h2": lambda: _hardness(inst(), "h2"),
        }
        for key in rest:
            try:
                env[key] = expressions.evaluate(env[key], names)
            except ValueError as err:
                raise fail(key, err) from None
    return env


def _point_distribution(env_kwargs: Mapping[str, Any]) -> str | None:
    """A point's reward distribution: ``distribution=`` or its catalog instance's (else None)."""
    if env_kwargs.get("distribution") is not None:
        return str(env_kwargs["distribution"])
    instance = env_kwargs.get("instance", "uniform-random")
    if isinstance(instance, str):
        from bandit_envs.instances import catalog

        entry = catalog().get(instance)
        return None if entry is None else entry.distribution
    return getattr(instance, "distribution", None)


_BOTH_SETTINGS = frozenset({"fixed_budget", "fixed_confidence"})


def _agent_settings(name: str) -> frozenset[str]:
    import agents
    from agents.learned.adapter import LOADERS

    prefix, sep, _ = name.partition(":")
    if (sep and prefix in LOADERS) or name.startswith(TRAINED_PREFIX):
        from agents.learned.adapter import PolicyAgent

        return frozenset(PolicyAgent.settings)
    # a duck-typed agent without ``settings`` may play both
    return frozenset(getattr(agents.agent_class(name), "settings", _BOTH_SETTINGS))


def _policy_source(model: str) -> dict[str, Any]:
    """The manifest's ``source`` of a learned policy (``PolicyAgent`` playing ``model``)."""
    from agents.learned.adapter import PolicyAgent
    from agents.registry import class_source

    return {"origin": "saved model", "model": model, **class_source(PolicyAgent)}


def _check_agents(
    cfg: Mapping[str, Any], warn: Warn, train: tuple[TrainSpec, ...] = ()
) -> tuple[list[AgentSpec], list[str], set[str]]:
    import agents
    from agents import registry
    from agents.learned.adapter import LOADERS

    available = set(agents.available())
    specs: list[AgentSpec] = []
    skipped: list[str] = []
    labels: dict[str, str] = {}
    own_runs: dict[str, int] = {}
    for i, entry in enumerate(cfg["agents"]):
        where = f"agents[{i}]"
        name = entry["name"]
        params = dict(entry.get("params", {}))
        label = entry.get("label") or (
            name
            if not params
            else f"{name}({','.join(f'{k}={_label_value(v)}' for k, v in params.items())})"
        )
        if label in labels:
            raise ConfigError(
                f"{where}.label: agent label {label!r} is also used by {labels[label]}"
            )
        labels[label] = where
        if "runs" in entry:
            runs = entry["runs"]
            if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
                raise ConfigError(f"{where}.runs: {runs!r} must be an integer >= 1")
            own_runs[label] = runs
        if "seed" in params:
            raise ConfigError(
                f"{where}.params.seed: seeds are set by the runner (see topk_bench.seeds)"
            )
        if name.startswith(TRAINED_PREFIX):
            if trained_model(name, train) is None:
                raise ConfigError(
                    f"{where}.name: {name!r} names no model of the config's [[train]] "
                    f"(declared: {', '.join(t.model for t in train) or 'none'}; "
                    f"MODEL{FINAL_SUFFIX}: the final model of a keep_best training)"
                )
            source = _policy_source(name)
            specs.append(AgentSpec(label, name, params, _agent_settings(name), source=source))
            continue
        prefix, sep, path = name.partition(":")
        if sep and prefix in LOADERS:
            from agents.learned.metadata import check_saved_algo, model_file

            try:
                check_saved_algo(model_file(path), prefix)
            except (FileNotFoundError, ValueError) as err:
                raise ConfigError(f"{where}.name: {err}") from None
            source = _policy_source(os.path.abspath(path))
            specs.append(AgentSpec(label, name, params, _agent_settings(name), source=source))
            continue
        try:
            origin = registry.agent_origin(name)
        except ValueError as err:  # not registered at all: a typo, not a missing module
            raise ConfigError(f"{where}.name: {err}") from None
        if origin != "import path" and name not in available:
            msg = (
                f"agent {name!r} ({where}, label {label!r}) is not available "
                f"(not implemented or not installed): skipped"
            )
            warn(msg)
            skipped.append(msg)
            continue
        try:
            cls = agents.agent_class(name)
        except registry.AgentImportError as err:
            if origin == "built-in" and isinstance(err.__cause__, ModuleNotFoundError):
                msg = f"agent {name!r} ({where}, label {label!r}) is not available ({err}): skipped"
                warn(msg)
                skipped.append(msg)
                continue
            raise ConfigError(f"{where}.name: {err}") from None
        except (ValueError, TypeError) as err:
            raise ConfigError(f"{where}.name: {err}") from None
        sig = inspect.signature(cls.__init__)
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())
        if not takes_any:
            accepted = [p for p in sig.parameters if p not in ("self", "seed")]
            for key in params:
                if key not in accepted:
                    raise ConfigError(
                        f"{where}.params.{key}: unknown parameter of agent {name!r} "
                        f"(accepted: {', '.join(accepted) or 'none'})"
                    )
        try:
            agents.make(name, **params)
        except (ValueError, TypeError) as err:
            raise ConfigError(f"{where}.params: {err}") from None
        specs.append(
            AgentSpec(
                label, name, params, _agent_settings(name), getattr(cls, "k_values", None),
                getattr(cls, "distributions", None),
                target=None if origin == "built-in" else registry.agent_target(name),
                source=registry.agent_source(name),
            )
        )  # fmt: skip
    specs = [replace(s, runs=own_runs[s.label]) if s.label in own_runs else s for s in specs]
    return specs, skipped, set(labels)


def _x_value(x: Any) -> tuple[str, float]:
    if x is None:
        return "", math.nan
    if isinstance(x, bool):
        return str(x), math.nan
    if isinstance(x, (int, float)):
        return _label_value(x), float(x)
    return str(x), math.nan


def _build_point(raw: _RawPoint, env: dict[str, Any], all_labels: set[str]) -> Point:
    from topk_bench.episodes import make_env

    try:
        gym_env = make_env(raw.env_id, env)
    except Exception as err:  # gym.make raises ValueError/TypeError/gym errors
        raise ConfigError(f"{raw.where} (point {raw.label!r}).env: {err}") from None
    try:
        problem = getattr(gym_env.unwrapped, "problem", None)
        if problem is None:
            raise ConfigError(
                f"{raw.where}.env_id: {raw.env_id!r} is not a bandit_envs environment"
            )
        setting = problem.setting
        if setting == "fixed_confidence" and problem.max_batches is None:
            raise ConfigError(
                f"{raw.where}.env.max_batches: fixed-confidence point {raw.label!r} needs "
                f"max_batches (a truncation cap, so that no episode can run forever)"
            )
    finally:
        gym_env.close()
    if raw.x_key is None:
        x_text, x_val = _x_value(raw.x_raw) if raw.x_raw is not None else (raw.label, math.nan)
    elif raw.x_key.startswith("_") or raw.x_key.startswith(AGENT_PREFIX):
        x_text, x_val = _x_value(raw.x_raw)
    else:
        x_text, x_val = _x_value(env.get(raw.x_key))
    if raw.agents is not None:
        for name in raw.agents:
            if name not in all_labels:
                raise ConfigError(f"{raw.where}.agents: unknown agent label {name!r}")
    return Point(
        raw.label,
        raw.panel,
        x_text,
        x_val,
        raw.env_id,
        env,
        setting,
        tuple(raw.agents or ()),
        problem.k,
        raw.seed_label,
        dict(raw.agent_params),
    )


def _apply_reduced(cfg: dict[str, Any]) -> dict[str, Any]:
    red = cfg.get("reduced")
    if not red:
        raise ConfigError("reduced: this config defines no reduced mode")
    out = copy.deepcopy(cfg)
    if "runs" in red:
        out["runs"] = red["runs"]
    if "sweeps" in red or "points" in red:
        out["sweeps"] = copy.deepcopy(red.get("sweeps", []))
        out["points"] = copy.deepcopy(red.get("points", []))
    for key, values in red.get("vary", {}).items():
        used = False
        for sweep in out.get("sweeps", []):
            if key in sweep.get("vary", {}):
                sweep["vary"][key] = copy.deepcopy(values)
                used = True
        if not used:
            raise ConfigError(f"reduced.vary.{key}: no sweep varies {key!r}")
    return out


def load(
    source: str | os.PathLike[str] | Mapping[str, Any],
    *,
    reduced: bool = False,
    data: str | os.PathLike[str] | None = None,
    runs: int | None = None,
    warn: Warn | None = None,
) -> Experiment:
    """Read and check an experiment.

    Args:
        source: a shipped experiment name, a config path, or an already parsed mapping.
        reduced: apply the config's ``reduced`` table (smoke-test mode).
        data: a data table for real-data experiments (``data.param`` of the instance).
        runs: override ``runs``.
        warn: receives the messages about skipped agents and pairs (default: ignored).

    Raises:
        ConfigError: naming the bad key.
    """
    warn = warn or (lambda msg: None)
    if isinstance(source, Mapping):
        cfg, where = copy.deepcopy(dict(source)), "<mapping>"
    else:
        cfg, where = read_config(source)
    validate(cfg)
    for i, metric in enumerate(cfg["metrics"]):
        if metric not in METRICS:
            raise ConfigError(
                f"metrics[{i}]: unknown metric {metric!r} (known: {', '.join(METRICS)})"
            )
    full_cfg = cfg
    if reduced:
        cfg = _apply_reduced(cfg)
    if runs is not None:
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ConfigError(f"runs: --runs must be an integer >= 1, got {runs!r}")
        cfg["runs"] = runs
    plot = dict(cfg.get("plot", {}))
    if plot.get("kind", "auto") not in ("auto", "line", "bar"):
        raise ConfigError(f"plot.kind: must be 'auto', 'line' or 'bar', got {plot['kind']!r}")
    for key in ("logy", "diagonal"):
        for i, metric in enumerate(plot.get(key, [])):
            if metric not in METRICS:
                raise ConfigError(f"plot.{key}[{i}]: unknown metric {metric!r}")
    if plot.get("binary_ci", "wilson") not in ("wilson", "clopper-pearson"):
        raise ConfigError(
            f"plot.binary_ci: must be 'wilson' or 'clopper-pearson', got {plot['binary_ci']!r}"
        )
    ratio = cfg.get("summary", {}).get("ratio")
    if ratio and ratio["metric"] not in METRICS:
        raise ConfigError(f"summary.ratio.metric: unknown metric {ratio['metric']!r}")

    data_cfg = cfg.get("data")
    data_path = None
    if data is not None:
        if data_cfg is None:
            raise ConfigError(f"data: experiment {cfg['name']!r} takes no data table (--data)")
        data_path = os.path.abspath(os.fspath(data))
        if not os.path.exists(data_path):
            raise ConfigError(f"data: file {data_path!r} does not exist")
    elif data_cfg is not None and data_cfg.get("required", False):
        hint = data_cfg.get("help", "")
        raise ConfigError(
            f"data: experiment {cfg['name']!r} needs a data table: pass --data PATH"
            + (f" ({hint})" if hint else "")
        )

    train = parse_train(cfg, reduced)
    specs, skipped, all_labels = _check_agents(cfg, warn, train)
    env_id = cfg.get("env_id", DEFAULT_ENV_ID)
    top_env = cfg.get("env", {})
    red_env = cfg.get("reduced", {}).get("env", {}) if reduced else {}
    points: list[Point] = []
    for raw in _raw_points(cfg, env_id):
        env = _merge(_merge(_merge(DEFAULT_ENV.get(raw.env_id, {}), top_env), raw.env), red_env)
        env = {k: (None if v == NONE and k != "instance" else v) for k, v in env.items()}
        if data_path is not None:
            for key in data_cfg.get("drop", ["n_arms"]):
                env.pop(key, None)
            params = dict(env.get("instance_params") or {})
            params[data_cfg.get("param", "path")] = data_path
            env["instance_params"] = params
        env = _resolve_env(env, raw.where)
        points.append(_build_point(raw, env, all_labels))

    # Which agent plays where.
    final_points = []
    cannot: dict[str, list[str]] = {}
    wrong_k: dict[str, list[str]] = {}
    wrong_dist: dict[str, list[str]] = {}
    for p in points:
        allowed = p.agents or tuple(a.label for a in specs)
        playing = []
        for a in specs:
            if a.label not in allowed:
                continue
            if p.setting not in a.settings:
                cannot.setdefault(a.label, []).append(p.label)
                continue
            if a.k_values is not None and p.k not in a.k_values:
                wrong_k.setdefault(a.label, []).append(p.label)
                continue
            dist = _point_distribution(p.env_kwargs)
            if a.distributions is not None and dist is not None and dist not in a.distributions:
                wrong_dist.setdefault(a.label, []).append(p.label)
                continue
            if p.agent_params:
                import agents

                try:
                    agents.make(a.name, **{**a.params, **p.agent_params})
                except (ValueError, TypeError) as err:
                    keys = ", ".join(AGENT_PREFIX + k for k in p.agent_params)
                    raise ConfigError(
                        f"point {p.label!r} ({keys}): agent {a.label!r} does not take "
                        f"these parameters: {err}"
                    ) from None
            if (found := trained_model(a.name, train)) is not None:
                check_point(
                    found[0],
                    p.env_kwargs,
                    f"point {p.label!r}, agent {a.label!r}",
                )
            playing.append(a.label)
        final_points.append(dataclasses.replace(p, agents=tuple(playing)))
    for a in specs:
        if a.label in cannot:
            skipped_at = cannot[a.label]
            setting = next(p.setting for p in points if p.label == skipped_at[0])
            msg = (
                f"agent {a.label!r} cannot play {setting} (it supports "
                f"{', '.join(sorted(a.settings))}): skipped at {len(skipped_at)} point(s), "
                f"e.g. {skipped_at[0]!r}"
            )
            warn(msg)
            skipped.append(msg)
        if a.label in wrong_k:
            skipped_at = wrong_k[a.label]
            msg = (
                f"agent {a.label!r} identifies only k in {sorted(a.k_values or ())}: "
                f"skipped at {len(skipped_at)} point(s), e.g. {skipped_at[0]!r}"
            )
            warn(msg)
            skipped.append(msg)
        if a.label in wrong_dist:
            skipped_at = wrong_dist[a.label]
            msg = (
                f"agent {a.label!r} plays only {', '.join(sorted(a.distributions or ()))} "
                f"rewards: skipped at {len(skipped_at)} point(s), e.g. {skipped_at[0]!r}"
            )
            warn(msg)
            skipped.append(msg)
    claims = _claims(full_cfg, env_id, all_labels, final_points)
    if not any(p.agents for p in final_points):
        raise ConfigError(
            "agents: no available agent can play any point of this experiment"
            + (f" ({len(skipped)} skipped: {skipped[0]} ...)" if skipped else "")
        )
    return Experiment(
        name=cfg["name"],
        description=cfg.get("description", ""),
        reference=cfg.get("reference", ""),
        metrics=tuple(cfg["metrics"]),
        runs=cfg["runs"],
        x_label=cfg.get("x", plot.get("xlabel", "x")),
        points=tuple(final_points),
        agents=tuple(specs),
        plot=plot,
        summary=dict(cfg.get("summary", {})),
        source=where,
        reduced=reduced,
        data=data_path,
        skipped=tuple(skipped),
        train=train,
        claims=claims,
        fitted_by=cfg.get("fitted_by"),
    )


def _claims(
    full_cfg: Mapping[str, Any], env_id: str, agent_labels: set[str], points: list[Point]
) -> tuple[Mapping[str, Any], ...]:
    """The checked ``claims``: their labels may name points of either mode."""
    from topk_bench.claims import check_claims

    if not full_cfg.get("claims"):
        return ()
    raw = _raw_points(full_cfg, env_id)
    raw_x = [_x_value(r.x_raw)[0] if r.x_raw is not None or r.x_key else r.label for r in raw]
    return check_claims(
        full_cfg["claims"],
        agent_labels,
        [r.label for r in raw] + [p.label for p in points],
        [r.panel for r in raw] + [p.panel for p in points],
        raw_x + [p.x for p in points],
    )
