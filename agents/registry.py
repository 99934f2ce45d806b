"""Agent registry: :func:`available` names, :func:`make` builds one with the paper's defaults.

An agent is named in one of four ways (:func:`agent_class`, :func:`make`, and every
``name`` of a ``topk-bench`` config accept all of them):

* a built-in name (``"lucb"``, ``"sar"``, ...): the papers' algorithms of this package;
* a name given to :func:`register` (``register("mine", "mypkg.algo:Mine")``);
* a name an installed distribution declares in the entry-point group
  ``topk_bandit_envs.agents`` (:data:`ENTRY_POINT_GROUP`), e.g. in its
  ``pyproject.toml``::

      [project.entry-points."topk_bandit_envs.agents"]
      gap_ucbe = "myalgos.gap:GapUCBE"

  (discovered on first use; built-in and registered names come first);
* an import path ``"package.module:Class"``: any class importable from ``sys.path``
  (e.g. a module of your own next to the config, with ``PYTHONPATH=.``).

Names map to ``"module:Class"`` strings imported on first use, so that a missing
optional dependency of one agent never breaks the others. An import that fails is an
:class:`AgentImportError` naming the module, the class and the error; an object that
is not an agent class (no ``reset``/``act``/``observe``) is a ``TypeError``.
:func:`agent_source` tells where a class came from (module, file, distribution and
version, or a local module): ``topk-bench`` records it in the run's manifest.

``make("ppo:path/to/model.zip")`` (also ``a2c:``, ``dqn:``) loads a stable-baselines3
model and wraps it in :class:`agents.PolicyAgent`; these prefixes are not import paths.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agents.base import Agent

__all__ = [
    "AgentImportError",
    "ENTRY_POINT_GROUP",
    "agent_class",
    "agent_origin",
    "agent_source",
    "agent_target",
    "available",
    "class_source",
    "make",
    "refresh_entry_points",
    "register",
    "register_loader",
]

#: The entry-point group through which installed distributions register agents.
ENTRY_POINT_GROUP = "topk_bandit_envs.agents"

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
    "kg_batch": "agents.bayesian.batch_knowledge_gradient:BatchKnowledgeGradient",
    "bayes_ttts": "agents.bayesian.top_two_thompson:TopTwoThompson",
    "bayes_dp": "agents.bayesian.bayes_dp:BayesOptimalDP",
    # Learned stop: bayes_ttts' sampling, a fitted stopping boundary (fixed confidence)
    "learned_stop": "agents.bayesian.learned_stop:LearnedStop",
    # Learned batches: kg_batch's fantasy fill, a score fitted to the family (fixed budget)
    "learned_batch": "agents.bayesian.learned_batch:LearnedBatch",
    # One fitted agent for every instance: a KG-type score on an empirical-Bayes posterior
    # (fixed budget), a fitted Top-Two rule with GLR stopping (fixed confidence)
    "zero_shot": "agents.zero_shot.agent:ZeroShot",
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

_BUILTIN = frozenset(_REGISTRY)
#: ``"PREFIX:PATH"`` names: a loader and the class it returns, per prefix
#: (:func:`register_loader`; :mod:`agents.learned.adapter` registers the learned
#: policies' ``ppo``, ``a2c`` and ``dqn``).
_LOADERS: dict[str, tuple[Callable[..., Agent], type]] = {}
#: the methods an agent class must have (:class:`agents.base.AgentProtocol`).
_PROTOCOL = ("reset", "act", "observe")
#: name -> entry point of ``ENTRY_POINT_GROUP`` (``None``: not discovered yet).
_ENTRY_POINTS: dict[str, importlib.metadata.EntryPoint] | None = None


class AgentImportError(ImportError):
    """An agent's class cannot be imported (the message names module, class and error)."""


def register(name: str, target: str) -> None:
    """Register ``name`` for ``"module:Class"`` (third-party agents).

    The class is imported on first use. Process workers of ``topk-bench run`` that
    fork see the name; others (spawn, Ray) build the agent from ``target``, which the
    runner passes along.
    """
    _split_target(target, name)
    if name in _REGISTRY and _REGISTRY[name] != target:
        raise ValueError(f"agent name {name!r} is already registered for {_REGISTRY[name]}")
    _REGISTRY[name] = target


def register_loader(prefix: str, loader: Callable[..., Agent], cls: type) -> None:
    """Make ``make("PREFIX:PATH", **params)`` return ``loader(PATH, **params)``, a ``cls``."""
    if prefix in _LOADERS and _LOADERS[prefix][0] is not loader:
        raise ValueError(f"agent prefix {prefix!r} already has a loader")
    _LOADERS[prefix] = (loader, cls)


def refresh_entry_points() -> None:
    """Forget the discovered entry points (after installing a distribution at run time)."""
    global _ENTRY_POINTS
    _ENTRY_POINTS = None


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """Agents declared by installed distributions (:data:`ENTRY_POINT_GROUP`), by name."""
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in found and found[ep.name].value != ep.value:
                warnings.warn(
                    f"agent entry point {ep.name!r} = {ep.value!r} of {_dist_label(ep)} is "
                    f"ignored: {_dist_label(found[ep.name])} declares it as "
                    f"{found[ep.name].value!r}",
                    RuntimeWarning,
                    stacklevel=3,
                )
                continue
            if ep.name in _REGISTRY and ep.name not in found:
                warnings.warn(
                    f"agent entry point {ep.name!r} = {ep.value!r} of {_dist_label(ep)} is "
                    f"shadowed by the {agent_origin(ep.name)} agent {ep.name!r} "
                    f"({_REGISTRY[ep.name]})",
                    RuntimeWarning,
                    stacklevel=3,
                )
            found.setdefault(ep.name, ep)
        _ENTRY_POINTS = found
    return _ENTRY_POINTS


def _dist_label(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "an unknown distribution"
    return f"{dist.metadata['Name']} {dist.version}"


def _is_import_path(name: str) -> bool:
    prefix, sep, _ = name.partition(":")
    return bool(sep) and prefix not in _LOADERS and name not in _REGISTRY


def _split_target(target: str, name: str) -> tuple[str, str]:
    """``"module:Class"`` as ``(module, Class)``, else a ``ValueError``."""
    module, sep, attr = target.partition(":")
    if not (sep and module and attr) or ":" in attr:
        raise ValueError(
            f"agent {name!r}: {target!r} must be an import path 'package.module:Class'"
        )
    return module, attr


def agent_target(name: str) -> str:
    """The ``"module:Class"`` that agent ``name`` is imported from (no import)."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if not _is_import_path(name) and name in _entry_points():
        return _entry_points()[name].value
    if _is_import_path(name):
        _split_target(name, name)
        return name
    raise ValueError(_unknown(name))


def agent_origin(name: str) -> str:
    """Where the name ``name`` is defined: ``"built-in"``, ``"registered"`` (with
    :func:`register`), ``"entry point"`` or ``"import path"`` (no import)."""
    if name in _BUILTIN and _REGISTRY.get(name) is not None:
        return "built-in"
    if name in _REGISTRY:
        return "registered"
    if not _is_import_path(name) and name in _entry_points():
        return "entry point"
    if _is_import_path(name):
        return "import path"
    raise ValueError(_unknown(name))


def _unknown(name: str) -> str:
    msg = f"unknown agent {name!r}; available: {', '.join(available())}"
    head, dot, tail = name.rpartition(".")
    if dot and head and tail and ":" not in name:
        msg += f"; to import a class, write 'module:Class' (e.g. '{head}:{tail}')"
    else:
        msg += "; or an import path 'package.module:Class'"
    return msg


def _importable(target: str) -> bool:
    module = target.split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def available() -> list[str]:
    """Registered and entry-point agent names whose module exists, sorted.

    (Import paths ``"module:Class"`` are accepted everywhere but not listed.)
    """
    names = {name for name, target in _REGISTRY.items() if _importable(target)}
    names |= {name for name, ep in _entry_points().items() if _importable(ep.value)}
    return sorted(names)


def _load(target: str, name: str) -> Any:
    """Import ``"module:Class"`` (``Class`` may be dotted), with a clear error."""
    module_name, attr = _split_target(target, name)
    label = f"agent {name!r}"
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as err:
        hint = ""
        if isinstance(err, ModuleNotFoundError) and err.name == module_name.split(".")[0]:
            hint = (
                f" (module {err.name!r} is not on the Python path: install it, or add its "
                f"directory to PYTHONPATH)"
            )
        raise AgentImportError(
            f"{label}: cannot import class {attr!r} from module {module_name!r}: "
            f"{type(err).__name__}: {err}{hint}",
            name=module_name,
        ) from err
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as err:
            raise AgentImportError(
                f"{label}: cannot import class {attr!r} from module {module_name!r}: "
                f"AttributeError: {err}",
                name=module_name,
            ) from err
    missing = [m for m in _PROTOCOL if not callable(getattr(obj, m, None))]
    if not isinstance(obj, type) or missing:
        why = "not a class" if not isinstance(obj, type) else f"no {', '.join(missing)}"
        raise TypeError(
            f"{label}: {module_name}:{attr} is not an agent class ({why}): an agent has "
            f"reset(problem, seed=...), act(observation) and observe(...) "
            f"(agents.Agent, agents.ScriptedAgent, or any class with these methods)"
        )
    return obj


def agent_class(name: str) -> type[Agent]:
    """The class registered under ``name`` (or imported from ``"module:Class"``).

    Raises ``ValueError`` for an unknown name, :class:`AgentImportError` if the
    import fails, ``TypeError`` if the object is not an agent class.
    """
    return _load(agent_target(name), name)


def make(name: str, **params: Any) -> Agent:
    """Build agent ``name`` with the paper's default parameters, overridden by ``params``.

    ``name`` is any name of the module docstring: built-in, registered, an entry point,
    or an import path ``"package.module:Class"``. ``"ppo:PATH"`` (or ``a2c:``/``dqn:``)
    loads a saved stable-baselines3 model. Parameters the class does not take are a
    ``ValueError``.
    """
    prefix, sep, path = name.partition(":")
    if sep and prefix in _LOADERS:
        return _LOADERS[prefix][0](path, **params)
    cls = agent_class(name)
    try:
        return cls(**params)
    except TypeError as err:
        raise ValueError(f"bad parameters {params!r} for agent {name!r}: {err}") from err


# ----------------------------------------------------------------- provenance
def agent_source(name: str) -> dict[str, Any]:
    """Where agent ``name``'s class came from (JSON-able; imports the class).

    Keys: ``origin`` (:func:`agent_origin`; ``"saved model"`` for ``ppo:PATH``),
    ``target`` (``"module:Class"``), then those of :func:`class_source`; for an
    entry point also ``entry_point_of`` (the distribution declaring it), for
    ``ppo:PATH`` (``a2c:``, ``dqn:``) ``model`` (the file; the class is
    :class:`agents.PolicyAgent`).
    """
    prefix, sep, path = name.partition(":")
    if sep and prefix in _LOADERS:
        cls = _LOADERS[prefix][1]
        return {
            "origin": "saved model",
            "target": f"{cls.__module__}:{cls.__qualname__}",
            **class_source(cls),
            "model": os.path.abspath(path),
        }
    out: dict[str, Any] = {"origin": agent_origin(name), "target": agent_target(name)}
    out.update(class_source(agent_class(name)))
    if out["origin"] == "entry point":
        out["entry_point_of"] = _dist_label(_entry_points()[name])
    return out


def class_source(cls: type) -> dict[str, Any]:
    """Where class ``cls`` came from (JSON-able).

    Keys: ``class`` (qualified name), ``module``, ``file`` (absolute path of the
    module's file), ``sha256`` (of that file), and ``distribution`` / ``version``: the
    installed distribution the file belongs to (with ``editable: True`` for an
    editable install), or ``distribution: None`` with ``local: True`` for a module of
    no installed distribution (a file found on ``sys.path`` or ``PYTHONPATH``).
    """
    module = sys.modules.get(cls.__module__)
    file = getattr(module, "__file__", None)
    file = os.path.abspath(file) if file else None
    out: dict[str, Any] = {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "module": cls.__module__,
        "file": file,
        "sha256": _sha256(file) if file else None,
    }
    out.update(_distribution_of(cls.__module__, file))
    return out


def _sha256(file: str) -> str | None:
    try:
        return hashlib.sha256(Path(file).read_bytes()).hexdigest()
    except OSError:
        return None


#: top-level module names looked up again after a miss (once each per process).
_LOOKED_AGAIN: set[str] = set()


@functools.lru_cache(maxsize=1)
def _top_level_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distribution_of(module: str, file: str | None) -> dict[str, Any]:
    """``distribution``/``version`` of the installed distribution holding ``file``."""
    local = {"distribution": None, "version": None, "local": True}
    if file is None:
        return local
    real = os.path.realpath(file)
    top = module.split(".")[0]
    names = list(_top_level_distributions().get(top, []))
    if not names and top not in _LOOKED_AGAIN:  # installed after the first look: look again
        _LOOKED_AGAIN.add(top)
        _top_level_distributions.cache_clear()
        names = list(_top_level_distributions().get(top, []))
    for dist_name in dict.fromkeys(names):
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found = {"distribution": dist.metadata["Name"], "version": dist.version}
        for f in dist.files or ():
            if f.name == os.path.basename(real) and os.path.realpath(dist.locate_file(f)) == real:
                return found
        source = _editable_source(dist)
        if source is not None and (real + os.sep).startswith(source + os.sep):
            return {**found, "editable": True}
    return local


def _editable_source(dist: importlib.metadata.Distribution) -> str | None:
    """The source directory of an editable install (PEP 610 ``direct_url.json``)."""
    try:
        info = json.loads(dist.read_text("direct_url.json") or "null")
    except ValueError:
        return None
    if not isinstance(info, dict) or not info.get("dir_info", {}).get("editable"):
        return None
    url = urlparse(info.get("url", ""))
    if url.scheme != "file":
        return None
    return os.path.realpath(unquote(url.path))
