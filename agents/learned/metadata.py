"""What a saved model carries to be played again: its metadata, and reading it back.

A model saved by :func:`agents.learned.saving.save_policy` stores
:func:`policy_metadata` twice: as the attribute ``topk_policy`` inside SB3's zip
(``PPO.load`` restores it) and as a JSON sidecar ``<model>.json``
(:func:`sidecar_path`) for people and tools. :func:`saved_agent_kwargs` turns it back
into ``PolicyAgent`` keyword arguments. No stable-baselines3 or torch here.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.learned.families import PULL_BY_PULL_ID, evaluation_env
from bandit_envs.wrappers import FlatObservation, transform_from_config

__all__ = [
    "METADATA_FORMAT",
    "METADATA_VERSION",
    "check_saved_algo",
    "jsonable",
    "model_file",
    "policy_metadata",
    "saved_agent_kwargs",
    "saved_algo",
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
    playing: dict[str, Any] = {"answer": answer, "deterministic": True}
    if env_id.endswith(PULL_BY_PULL_ID):
        playing["pull_by_pull"] = True  # PolicyAgent composes each batch pull by pull
    return {
        "format": METADATA_FORMAT,
        "version": METADATA_VERSION,
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": jsonable(kwargs),
        "obs_transform": transform.config(),
        "policy_agent": playing,
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
    sidecar next to ``path``. Returns ``obs_transform``, ``answer``,
    ``deterministic`` (``False``: play with
    :class:`~agents.learned.adapter.SampledPolicyAgent`) and ``family``, the training
    env (``env_id``, ``env_kwargs``) the agent checks each problem against (it warns
    off that family).
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
    if isinstance(meta.get("env_id"), str) and isinstance(meta.get("env_kwargs"), Mapping):
        out["family"] = {"env_id": meta["env_id"], "env_kwargs": dict(meta["env_kwargs"])}
    return out


def model_file(path: str | Path) -> Path:
    """The saved model ``path`` names: ``path`` itself, else ``path + ".zip"``.

    (stable-baselines3's convention: ``PPO.load("model")`` reads ``model.zip``.)
    Raises ``FileNotFoundError`` naming the path as given (and the ``.zip`` tried).
    """
    p = Path(path)
    if p.is_file():
        return p
    if p.suffix != ".zip":
        with_zip = p.with_name(p.name + ".zip")
        if with_zip.is_file():
            return with_zip
        raise FileNotFoundError(f"model file {str(p)!r} does not exist (nor {str(with_zip)!r})")
    raise FileNotFoundError(f"model file {str(p)!r} does not exist")


#: Hyperparameters only one algorithm saves (stable-baselines3's ``data`` entry).
_OWN_KEYS = {"ppo": ("clip_range",), "dqn": ("exploration_initial_eps", "target_update_interval")}


#: Policy classes only one algorithm trains (sb3-contrib's; they save PPO's hyperparameters).
_POLICY_MARKS = {
    "recurrent_ppo": (b"sb3_contrib.common.recurrent",),
    "maskable_ppo": (b"sb3_contrib.common.maskable", b"MaskableArmSetPolicy"),
}


def _policy_class_text(data: Mapping[str, Any]) -> bytes:
    """The pickled reference of a saved model's policy class (module and name), or b""."""
    import base64
    import binascii

    entry = data.get("policy_class")
    if not isinstance(entry, Mapping):
        return b""
    text = str(entry.get("__module__", "")).encode()
    try:
        return text + base64.b64decode(str(entry.get(":serialized:", "")))
    except (binascii.Error, ValueError):
        return text


def saved_algo(path: str | Path) -> tuple[str, str] | None:
    """``(algo, evidence)``: which algorithm saved the model ``path``, and how it is known.

    In order: the metadata inside the zip (``topk_policy["algo"]``, written by
    :func:`agents.learned.saving.save_policy`), the JSON sidecar's ``algo``, the policy
    class (sb3-contrib's recurrent or masked policies, :class:`MaskableArmSetPolicy`),
    else the hyperparameters stable-baselines3 saved in the zip's ``data`` (only PPO
    saves ``clip_range``, only DQN ``exploration_initial_eps``; A2C saves ``n_steps``
    and neither). ``None`` if none of these tells (not a zip, another algorithm).
    """
    path = Path(path)
    data: dict[str, Any] = {}
    try:
        with zipfile.ZipFile(path) as zf:
            data = json.loads(zf.read("data"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        pass
    meta = data.get("topk_policy")
    if isinstance(meta, Mapping) and isinstance(meta.get("algo"), str):
        return meta["algo"], "its metadata"
    side = sidecar_path(path)
    if side.is_file():
        try:
            algo = json.loads(side.read_text()).get("algo")
        except (OSError, ValueError, AttributeError):
            algo = None
        if isinstance(algo, str):
            return algo, f"its metadata sidecar {side}"
    policy = _policy_class_text(data)
    for algo, marks in _POLICY_MARKS.items():
        if any(mark in policy for mark in marks):
            return algo, "its policy class"
    for algo, keys in _OWN_KEYS.items():
        if any(key in data for key in keys):
            return algo, "its saved hyperparameters"
    if "n_steps" in data:
        return "a2c", "its saved hyperparameters"
    return None


def check_saved_algo(path: str | Path, algo: str) -> None:
    """Raise ``ValueError`` if the model ``path`` was saved by another algorithm than ``algo``.

    (stable-baselines3 would load a PPO zip as A2C without a word: both have the same
    policy network.)
    """
    found = saved_algo(path)
    if found is not None and found[0] != algo.lower():
        saved, evidence = found
        raise ValueError(
            f"{path} holds a {saved.upper()} model ({evidence}), not {algo.upper()}: load it "
            f"as '{saved}:{path}'"
        )
