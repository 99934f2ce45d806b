"""Saving a trained model with its metadata, and loading it back as a ``PolicyAgent``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stable_baselines3.common.base_class import BaseAlgorithm

from agents.learned.adapter import PolicyAgent, SampledPolicyAgent, check_observation
from agents.learned.algos import ALGOS
from agents.learned.metadata import (
    check_saved_algo,
    model_file,
    saved_agent_kwargs,
    sidecar_path,
)
from bandit_envs.wrappers import FlatObservation

__all__ = ["best_checkpoint_path", "load_policy", "policy_agent", "save_policy"]


def save_policy(model: BaseAlgorithm, path: str | Path, metadata: Mapping[str, Any]) -> Path:
    """Save ``model`` to ``path`` (``.zip`` added if missing) with its metadata.

    The metadata goes into the zip (attribute ``topk_policy``) and into the sidecar
    ``<path without .zip>.json``. Returns the zip's path.
    """
    path = Path(path)
    if path.suffix != ".zip":
        path = path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.topk_policy = dict(metadata)  # type: ignore[attr-defined]
    model.save(path)
    sidecar_path(path).write_text(json.dumps(metadata, indent=2, sort_keys=True) + "\n")
    return path


def best_checkpoint_path(save_path: str | Path) -> Path:
    """Where ``keep_best`` saves the best validated checkpoint of a model saved at
    ``save_path``: ``<save_path without .zip>-best.zip``."""
    save = Path(save_path)
    return save.with_name(save.name.removesuffix(".zip") + "-best.zip")


def policy_agent(
    model: Any, transform: FlatObservation | None, answer: str, **kwargs: Any
) -> PolicyAgent:
    """A ``PolicyAgent`` playing ``model`` with the training observation.

    ``deterministic=False`` gives a :class:`~agents.learned.adapter.SampledPolicyAgent`
    (seeded sampling).
    """
    if not kwargs.pop("deterministic", True):
        return SampledPolicyAgent(model, obs_transform=transform, answer=answer, **kwargs)
    return PolicyAgent(model, obs_transform=transform, answer=answer, deterministic=True, **kwargs)


def load_policy(path: str | Path, algo: str | None = None, **kwargs: Any) -> PolicyAgent:
    """Load a model saved by :func:`save_policy` as a ``PolicyAgent`` (CPU).

    ``algo`` defaults to the one in the metadata; ``kwargs`` override the stored
    ``PolicyAgent`` arguments. ``path`` may omit ``.zip``; a missing file is a
    ``FileNotFoundError`` naming ``path``, a model saved by another algorithm than
    ``algo`` a ``ValueError``, and so is a model saved without metadata whose policy
    takes a flat observation, unless ``obs_transform`` is given. The agent runs the
    network on one torch thread (``torch_threads=1``, see
    :class:`~agents.learned.adapter.PolicyAgent`).
    """
    given = path
    path = model_file(path)
    if algo is None:
        side = sidecar_path(path)
        if not side.exists():
            raise ValueError(f"no metadata next to {path}: pass algo='ppo'/'a2c'/'dqn'")
        algo = json.loads(side.read_text())["algo"]
    if algo not in ALGOS:
        raise ValueError(f"algo={algo!r} must be one of {sorted(ALGOS)}")
    check_saved_algo(path, algo)
    model = ALGOS[algo].load(path, device="cpu")
    params = saved_agent_kwargs(model, path)
    if not params and "obs_transform" not in kwargs:
        check_observation(model, path, algo)
    params.update(kwargs)
    params.setdefault("name", f"{algo}:{given}")
    transform = params.pop("obs_transform", None)
    answer = params.pop("answer", "auto")
    return policy_agent(model, transform, answer, **params)
