"""The schema of an experiment config, and its validator.

A config is data (bsuite style): TOML or YAML with the keys below. Every key is
checked before any work starts; an unknown key, a missing required key or a value of
the wrong type raises :class:`ConfigError` naming the key by its dotted path, e.g.
``sweeps[1].vary.k`` or ``agents[0].params``.

Top level::

    name         str, required    experiment name (results, seeds and plots use it)
    description  str              one paragraph
    reference    str              paper, section, figure/table
    metrics      [str], required  metrics to summarise and plot (see topk_bench.episodes.METRICS)
    runs         int >= 1, req.   episodes per (point, agent); --runs overrides
    env_id       str              default "TopK-Batch-v0"
    env          table            env kwargs shared by every point
    x            str              x-axis label of the plots
    agents       [table], req.    {name = str (req.), label = str, params = table, runs = int}
    sweeps       [table]          {panel, label, env_id, env, vary, zip, x, agents, common_seeds}
    points       [table]          {label (req.), panel, env_id, env, x, agents}
    reduced      table            {runs, env, vary, sweeps, points}: smoke-test mode
    data         table            {param = str, required = bool, help = str, drop = [str]}
    plot         table            {kind = "auto"|"line"|"bar", logx = bool, logy = [str], xlabel,
                                  diagonal = [str] (draw y = x), binary_ci = "wilson"|
                                  "clopper-pearson" (interval of 0/1 metrics)}
    summary      table            {ratio = {metric, reference_x, name}}
    train        [table]          models to train first (topk_bench.models): {model (req.),
                                  preset | env_id, env, algo, policy, timesteps (req.),
                                  num_envs, seed, algo_kwargs, reward_scale, eval_episodes,
                                  eval_every, keep_best, prior = [a, b] | "none" |
                                  "auto" (fast only), reward = "env"|"posterior"|"auto"
                                  (fast only), obs_options, imitate, validation =
                                  "agent"|"vector", fast = bool (agents.learned.fast)}
                                  (reduced.train overrides them in reduced mode)
    claims       [table]          the paper's claims, machine-checkable (topk_bench.claims):
                                  {text (req.), source, metric (req.), agents (req.),
                                  relation = "lower"|"higher" (req.), than (req.), panels,
                                  points, x, fraction, alpha}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ConfigError", "SCHEMA", "validate"]


class ConfigError(ValueError):
    """A bad experiment config; the message names the offending key."""


# A schema node is a type name, or a dict {"type": ..., "keys": {...}, "required": [...]},
# a one-item list (a list of such nodes), or a tuple of alternatives (any one of them).
_ENV = {"type": "table", "free": True}  # env kwargs: checked by building the env
_AGENT = {
    "type": "table",
    "keys": {
        "name": "str",
        "label": "str",
        "params": {"type": "table", "free": True},
        "runs": "int",
    },
    "required": ["name"],
}
_VARY = {"type": "table", "free": True, "values": "list"}
_SWEEP = {
    "type": "table",
    "keys": {
        "panel": "str",
        "label": "str",
        "env_id": "str",
        "env": _ENV,
        "vary": _VARY,
        "zip": _VARY,
        "x": "str",
        "agents": ["str"],
        "common_seeds": "bool",
    },
}
_POINT = {
    "type": "table",
    "keys": {
        "label": "str",
        "panel": "str",
        "env_id": "str",
        "env": _ENV,
        "x": "scalar",
        "agents": ["str"],
    },
    "required": ["label"],
}
_TRAIN_KEYS = {
    "model": "str",
    "preset": "str",
    "env_id": "str",
    "env": _ENV,
    "algo": "str",
    "policy": "str",
    "timesteps": "int",
    "num_envs": "posint",
    "seed": "int",
    "algo_kwargs": {"type": "table", "free": True},
    "reward_scale": "number",
    "eval_episodes": "int",
    "eval_every": "posint",
    "keep_best": "bool",
    "prior": ("str", ["number"]),  # [a, b], or "none" / "auto" (checked by topk_bench.models)
    "reward": "str",
    "obs_options": {"type": "table", "free": True},
    "imitate": {"type": "table", "free": True},
    "validation": "str",
    "fast": "bool",
}
_TRAIN = {"type": "table", "keys": _TRAIN_KEYS, "required": ["model", "timesteps"]}
_CLAIM = {
    "type": "table",
    "keys": {
        "text": "str",
        "source": "str",
        "metric": "str",
        "agents": ["str"],
        "relation": "str",
        "than": ["str"],
        "panels": ["str"],
        "points": ["str"],
        "x": ["scalar"],
        "fraction": "number",
        "alpha": "number",
    },
    "required": ["text", "metric", "agents", "relation", "than"],
}
_TRAIN_OVERRIDE = {"type": "table", "keys": {k: v for k, v in _TRAIN_KEYS.items() if k != "model"}}
SCHEMA: dict[str, Any] = {
    "type": "table",
    "keys": {
        "name": "str",
        "description": "str",
        "reference": "str",
        "metrics": ["str"],
        "runs": "posint",
        "env_id": "str",
        "env": _ENV,
        "x": "str",
        "agents": [_AGENT],
        "sweeps": [_SWEEP],
        "points": [_POINT],
        "reduced": {
            "type": "table",
            "keys": {
                "runs": "posint",
                "env": _ENV,
                "vary": _VARY,
                "sweeps": [_SWEEP],
                "points": [_POINT],
                "train": _TRAIN_OVERRIDE,
            },
        },
        "train": [_TRAIN],
        "claims": [_CLAIM],
        "fitted_by": "str",
        "data": {
            "type": "table",
            "keys": {"param": "str", "required": "bool", "help": "str", "drop": ["str"]},
        },
        "plot": {
            "type": "table",
            "keys": {
                "kind": "str",
                "logx": "bool",
                "logy": ["str"],
                "xlabel": "str",
                "diagonal": ["str"],
                "binary_ci": "str",
            },
        },
        "summary": {
            "type": "table",
            "keys": {
                "ratio": {
                    "type": "table",
                    "keys": {"metric": "str", "reference_x": "scalar", "name": "str"},
                    "required": ["metric", "reference_x"],
                }
            },
        },
    },
    "required": ["name", "metrics", "runs", "agents"],
}

_TYPES = {
    "str": (str,),
    "bool": (bool,),
    "scalar": (str, int, float),
    "list": (list, tuple),
}


def _type_name(value: Any) -> str:
    return {dict: "table", list: "list", tuple: "list", str: "string", bool: "bool"}.get(
        type(value), type(value).__name__
    )


def _check(node: Any, value: Any, path: str) -> None:
    where = path or "config"
    if isinstance(node, tuple):  # alternatives: a list value is checked as the list one
        lists = [a for a in node if isinstance(a, list)]
        if isinstance(value, (list, tuple)) and lists:
            _check(lists[0], value, path)
            return
        for alternative in node:
            try:
                _check(alternative, value, path)
            except ConfigError:
                continue
            return
        kinds = " or ".join("a list" if isinstance(a, list) else str(a) for a in node)
        raise ConfigError(f"{where}: expected {kinds}, got {_type_name(value)} {value!r}")
    if isinstance(node, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {_type_name(value)} {value!r}")
        for i, item in enumerate(value):
            _check(node[0], item, f"{path}[{i}]")
        return
    if isinstance(node, str):
        if node == "posint":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{where}: expected an integer >= 1, got {value!r}")
            return
        if node == "int":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{where}: expected an integer >= 0, got {value!r}")
            return
        if node == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: expected a number, got {_type_name(value)} {value!r}")
            return
        ok = isinstance(value, _TYPES[node]) and not (node == "scalar" and isinstance(value, bool))
        if not ok:
            raise ConfigError(f"{where}: expected {node}, got {_type_name(value)} {value!r}")
        return
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a table, got {_type_name(value)} {value!r}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigError(f"{where}: keys must be strings, got {key!r}")
    if node.get("free"):
        if "values" in node:
            for key, item in value.items():
                _check(node["values"], item, f"{path}.{key}" if path else key)
        return
    keys = node["keys"]
    for key in value:
        if key not in keys:
            accepted = ", ".join(keys)
            raise ConfigError(
                f"{path + '.' if path else ''}{key}: unknown key (accepted here: {accepted})"
            )
    for key in node.get("required", ()):
        if key not in value:
            raise ConfigError(f"{path + '.' if path else ''}{key}: required key is missing")
    for key, item in value.items():
        _check(keys[key], item, f"{path}.{key}" if path else key)


def validate(config: Mapping[str, Any]) -> None:
    """Check ``config`` against :data:`SCHEMA`; raise :class:`ConfigError` naming the key."""
    _check(SCHEMA, config, "")
