"""Agent registry: :func:`available` names, :func:`make` builds one with the paper's defaults.

Names map to ``"module:Class"`` strings imported on first use, so that a missing
optional dependency of one agent never breaks the others.

``make("ppo:path/to/model.zip")`` (also ``a2c:``, ``dqn:``) loads a stable-baselines3
model and wraps it in :class:`agents.PolicyAgent`.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from agents.base import Agent

__all__ = ["agent_class", "available", "make", "register", "register_loader"]

_REGISTRY: dict[str, str] = {
    # Baselines
    "uniform": "agents.elimination.uniform:Uniform",
    "lucb": "agents.lucb.lucb:LUCB",
    "lil_lucb": "agents.lucb.lil:LilLUCB",
    "lucb_pp": "agents.lucb.lil:LUCBPlusPlus",
    "lil_ucb": "agents.lucb.lil_ucb:LilUCB",
    "clucb_pac": "agents.lucb.clucb_pac:CLUCBPAC",
    "at_lucb": "agents.lucb.at_lucb:ATLUCB",
    # zhou2014
    "optmai": "agents.elimination.optmai:OptMAI",
    # chen2017
    "adaptive_topk": "agents.elimination.adaptive_topk:AdaptiveTopK",
    # shahrampour2017
    "nsar": "agents.elimination.nsar:NSAR",
    "sar": "agents.elimination.nsar:SAR",
    # jun2016
    "batch_racing": "agents.elimination.batch_racing:BatchRacing",
    "batch_sar": "agents.elimination.batch_sar:BatchSAR",
    "halving": "agents.elimination.halving:Halving",
    "round_robin": "agents.elimination.round_robin:RoundRobin",
    # jiang2017
    "lil_rand_lucb": "agents.lucb.lil:LilRandLUCB",
    "lil_clucb": "agents.lucb.lil:LilCLUCB",
    # Modern fixed confidence: GLR stopping (agents.glr.stopping) with Top-Two sampling rules
    "eb_tc": "agents.glr.top_two:EBTC",
    "eb_tci": "agents.glr.top_two:EBTCI",
    "t3c": "agents.glr.top_two:T3C",
    "ttts": "agents.glr.top_two:TTTS",
    "track_and_stop": "agents.glr.track_and_stop:TrackAndStop",
    # Prior-aware (Bayesian) yardsticks: Beta prior on Bernoulli means, fixed budget
    "kg": "agents.bayesian.knowledge_gradient:KnowledgeGradient",
    "bayes_ttts": "agents.bayesian.top_two_thompson:TopTwoThompson",
    "bayes_dp": "agents.bayesian.bayes_dp:BayesOptimalDP",
    # Classic best-arm baselines
    "successive_rejects": "agents.elimination.nsar:SuccessiveRejects",
    "sequential_halving": "agents.elimination.sequential_halving:SequentialHalving",
    # Classic PAC best-arm baselines (fixed confidence, k = 1)
    "median_elimination": "agents.pac.median_elimination:MedianElimination",
    "exp_gap": "agents.pac.exp_gap:ExpGap",
    # KL-based and gap-based LUCB variants
    "kl_lucb": "agents.lucb.kl_lucb:KLLUCB",
    "ugape_b": "agents.lucb.ugape:UGapEb",
    "ugape_c": "agents.lucb.ugape:UGapEc",
    # Game-based sampling (Degenne, Koolen, Menard 2019), GLR stopping
    "game_explorer": "agents.glr.game_explorer:GameExplorer",
    # Frank-Wolfe sampling on the lower bound, GLR stopping
    "frank_wolfe": "agents.glr.frank_wolfe:FrankWolfe",
}

#: ``"PREFIX:PATH"`` names: a loader per prefix (:func:`register_loader`; the learned
#: policies' ``ppo``, ``a2c`` and ``dqn`` are registered by :mod:`agents.learned.adapter`).
_LOADERS: dict[str, Callable[..., Agent]] = {}


def register_loader(prefix: str, loader: Callable[..., Agent]) -> None:
    """Make ``make("PREFIX:PATH", **params)`` return ``loader(PATH, **params)``."""
    if prefix in _LOADERS and _LOADERS[prefix] is not loader:
        raise ValueError(f"agent prefix {prefix!r} already has a loader")
    _LOADERS[prefix] = loader


def register(name: str, target: str) -> None:
    """Register ``name`` for ``"module:Class"`` (third-party agents)."""
    if name in _REGISTRY and _REGISTRY[name] != target:
        raise ValueError(f"agent name {name!r} is already registered for {_REGISTRY[name]}")
    _REGISTRY[name] = target


def _importable(target: str) -> bool:
    module = target.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def available() -> list[str]:
    """Registered agent names whose module exists, sorted."""
    return sorted(name for name, target in _REGISTRY.items() if _importable(target))


def agent_class(name: str) -> type[Agent]:
    """The class registered under ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; available: {', '.join(available())}")
    module, _, cls = _REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make(name: str, **params: Any) -> Agent:
    """Build agent ``name`` with the paper's default parameters, overridden by ``params``.

    ``"ppo:PATH"`` (or ``a2c:``/``dqn:``) loads a saved stable-baselines3 model.
    """
    prefix, sep, path = name.partition(":")
    if sep and prefix in _LOADERS:
        return _LOADERS[prefix](path, **params)
    cls = agent_class(name)
    try:
        return cls(**params)
    except TypeError as err:
        raise ValueError(f"bad parameters {params!r} for agent {name!r}: {err}") from err
