"""What a saved model carries to be played again: its metadata, and reading it back.

A model saved by :func:`agents.learned.saving.save_policy` stores
:func:`policy_metadata` twice: as the attribute ``topk_policy`` inside SB3's zip
(``PPO.load`` restores it) and as a JSON sidecar ``<model>.json``
(:func:`sidecar_path`) for people and tools. :func:`saved_agent_kwargs` turns it back
into ``PolicyAgent`` keyword arguments. No stable-baselines3 or torch here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.learned.families import evaluation_env
from bandit_envs.wrappers import FlatObservation, transform_from_config

__all__ = [
    "METADATA_FORMAT",
    "METADATA_VERSION",
    "jsonable",
    "policy_metadata",
    "saved_agent_kwargs",
    "sidecar_path",
]

METADATA_FORMAT = "topk-bandit-envs/learned-policy"
METADATA_VERSION = 1


def policy_metadata(
    algo: str,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    transform: FlatObservation,
    training: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a saved model needs to be played again (JSON-able)."""
    kwargs = {k: v for k, v in env_kwargs.items() if k != "render_mode"}
    if env_id.endswith("TopK-v0"):
        answer = "empirical"  # a scalar policy never answers
    else:
        answer = "policy" if kwargs.get("answer") == "agent" else "empirical"
    eval_id, eval_kwargs = evaluation_env(env_id, kwargs)
    return {
        "format": METADATA_FORMAT,
        "version": METADATA_VERSION,
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": jsonable(kwargs),
        "obs_transform": transform.config(),
        "policy_agent": {"answer": answer, "deterministic": True},
        "evaluation_env": {"env_id": eval_id, "env_kwargs": jsonable(eval_kwargs)},
        "training": jsonable(dict(training or {})),
    }


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (arrays as lists, anything else unknown as ``str``)."""
    return json.loads(
        json.dumps(value, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    )


def sidecar_path(path: str | Path) -> Path:
    """The JSON sidecar of a saved model: ``<path without .zip>.json``."""
    p = Path(path)
    return p.with_suffix(".json") if p.suffix == ".zip" else p.with_name(p.name + ".json")


def saved_agent_kwargs(model: Any, path: str | Path | None = None) -> dict[str, Any]:
    """``PolicyAgent`` keyword arguments stored with a saved model (empty if none).

    Reads the ``topk_policy`` attribute restored by ``Model.load``, else the JSON
    sidecar next to ``path``. Returns ``obs_transform``, ``answer`` and
    ``deterministic`` (``False``: play with
    :class:`~agents.learned.adapter.SampledPolicyAgent`).
    """
    meta = getattr(model, "topk_policy", None)
    if meta is None and path is not None and sidecar_path(path).exists():
        meta = json.loads(sidecar_path(path).read_text())
    if not meta:
        return {}
    if meta.get("format") != METADATA_FORMAT:
        raise ValueError(f"model metadata format {meta.get('format')!r} is not {METADATA_FORMAT!r}")
    out: dict[str, Any] = {}
    if meta.get("obs_transform"):
        out["obs_transform"] = transform_from_config(meta["obs_transform"])
    out.update(meta.get("policy_agent", {}))
    return out
